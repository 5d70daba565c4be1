"""A real Apache Kafka Connect worker (distributed mode) as a Java subprocess: the tests' oracle.

Its jars (``connect-runtime``, ``connect-file``, ``connect-json``, same Kafka version as the
embedded broker) are resolved once into the per-user cache like the broker's (:mod:`.jars`).
The FileStream connectors are on the classpath, so no ``plugin.path`` is needed.

>>> with JavaConnectWorker("127.0.0.1:9092", group_id="java-connect") as worker:  # doctest: +SKIP
...     urllib.request.urlopen(worker.url + "/connectors").read()
b'[]'

A data directory holds ``worker.properties``, ``log4j2.properties``, ``worker.log`` (the Java log)
and ``worker.out`` (its stdout and stderr).

A worker.properties file of a deployment runs as it is written with :meth:`JavaConnectWorker.from_file`:
its security settings (top level for the internal topics' clients, ``producer.``/``consumer.``/``admin.``
for the tasks' ones), config providers and REST ``listeners`` included; nothing is added to it.

>>> with JavaConnectWorker.from_file("/etc/kafka/connect-distributed.properties") as worker:  # doctest: +SKIP
...     worker.url
'http://127.0.0.1:8083'
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from connect_magics.local.broker import HOST, file_tail, free_port
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION, connect_classpath, jmx_exporter_jar
from connect_magics.local.java import find_java, java_command
from connect_magics.local.orphan_guard import end_with_this_process

DEFAULT_HEAP = "768m"
MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"


class ConnectWorkerError(RuntimeError):
    """The Java worker could not be started; the message has the tail of its log."""


#: The first ``http://`` listener of Kafka Connect's ``listeners``: its host (may be empty) and port.
_HTTP_LISTENER = re.compile(r"^\s*http://(\[[^\]]*\]|[^:/,\s]*):(\d+)\s*$", re.IGNORECASE)


def read_worker_properties(path: str | Path) -> dict[str, str]:
    """A Java ``.properties`` file's keys and values (comments, escapes and continued lines as Java reads them)."""
    from jproperties import Properties

    props = Properties()
    with open(path, "rb") as f:
        props.load(f, "utf-8")
    return {key: value.data for key, value in props.items()}


def _rest_address(props: Mapping[str, str], path: str | Path) -> tuple[str, int]:
    """The host (``HOST`` for a wildcard or empty one) and port of the worker's first ``http://`` listener
    (``listeners``, else the removed ``rest.host.name`` / ``rest.port`` that Kafka Connect 3 knew)."""
    for listener in props.get("listeners", "").split(","):
        if match := _HTTP_LISTENER.match(listener):
            host = match.group(1).strip("[]")
            return (HOST if host in ("", "0.0.0.0", "::", "localhost") else host), int(match.group(2))
    if "listeners" not in props and "rest.port" in props:
        host = props.get("rest.host.name", "")
        return (HOST if host in ("", "0.0.0.0", "::", "localhost") else host), int(props["rest.port"])
    raise ValueError(f"{path}: no http:// listener with a port in listeners={props.get('listeners', '')!r}; "
                     "the harness talks to the worker over plain HTTP")


def distributed_worker_properties(bootstrap_servers: str, group_id: str, port: int) -> dict[str, str]:
    """A distributed-mode worker's properties: its own group and ``{group_id}-configs/-offsets/-status``
    topics (replication factor 1), JSON converters, a REST listener on ``127.0.0.1:port``."""
    return {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group_id,
        "config.storage.topic": f"{group_id}-configs",
        "offset.storage.topic": f"{group_id}-offsets",
        "status.storage.topic": f"{group_id}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "listeners": f"http://{HOST}:{port}",
        "rest.advertised.host.name": HOST,
        "rest.advertised.port": str(port),
        "offset.flush.interval.ms": "1000",
        # Plugins are found through their ServiceLoader manifests: no classpath scan at start.
        "plugin.discovery": "service_load",
        # One worker: a worker that left comes back at once rather than after a delay.
        "scheduled.rebalance.max.delay.ms": "0",
    }


class JavaConnectWorker:
    """One Apache Kafka Connect worker (``ConnectDistributed``) on ``bootstrap_servers``.

    ``worker_properties`` override or extend :func:`distributed_worker_properties`. ``port``
    defaults to a free one. The worker is stopped by :meth:`stop` or on leaving a ``with`` block.
    :meth:`from_file` runs a worker.properties file unchanged instead.
    """

    def __init__(self, bootstrap_servers: str, group_id: str = "java-connect",
                 data_dir: str | Path | None = None, port: int | None = None,
                 kafka_version: str = DEFAULT_KAFKA_VERSION, heap: str = DEFAULT_HEAP, java: str | None = None,
                 worker_properties: Mapping[str, str] | None = None,
                 progress: Callable[[str], None] | None = None, prometheus_port: int | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="connect-magics-java-worker-"))
        self.port = port or free_port()
        self.group_id = group_id
        self.kafka_version = kafka_version
        self.heap = heap
        self._java = java
        self.progress = progress
        #: With a port: Prometheus' JMX exporter runs in the worker as a Java agent, serving :attr:`metrics_url`.
        self.prometheus_port = prometheus_port
        self.properties = {**distributed_worker_properties(bootstrap_servers, group_id, self.port),
                           **(worker_properties or {})}
        self._proc: subprocess.Popen | None = None
        self.host = HOST
        #: A worker.properties the worker runs as written (:meth:`from_file`); None: made from ``properties``.
        self.properties_file: Path | None = None

    @classmethod
    def from_file(cls, properties_file: str | Path, data_dir: str | Path | None = None, **kwargs: object,
                  ) -> JavaConnectWorker:
        """A worker that runs ``properties_file`` (a distributed worker's properties, as a deployment has them)
        unchanged: nothing is added or overridden. The harness reaches the REST API through the file's first
        ``http://`` listener (``listeners``, else ``rest.host.name`` / ``rest.port``); :attr:`properties` are
        the file's, as read. ``kwargs``: ``kafka_version``, ``heap``, ``java``, ``progress``.

        >>> JavaConnectWorker.from_file(tmp / "worker.properties").start()  # doctest: +SKIP
        """
        path = Path(properties_file)
        props = read_worker_properties(path)
        missing = [key for key in ("bootstrap.servers", "group.id") if not props.get(key, "").strip()]
        if missing:
            raise ValueError(f"{path}: {' and '.join(missing)} missing: a distributed worker needs them")
        host, port = _rest_address(props, path)
        worker = cls(props["bootstrap.servers"], props["group.id"], data_dir, port=port, **kwargs)  # type: ignore[arg-type]
        worker.properties = props
        worker.properties_file = path.resolve()
        worker.host = host
        return worker

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def metrics_url(self) -> str | None:
        """The JMX exporter's ``/metrics`` (Prometheus' text format), if started with ``prometheus_port``."""
        return None if self.prometheus_port is None else f"http://{HOST}:{self.prometheus_port}/metrics"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "worker.log"

    def log_tail(self, lines: int = 40) -> str:
        return file_tail(self.log_file, lines, "(no worker log)")

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def worker_properties_path(self) -> Path:
        """The worker.properties the worker runs: :attr:`properties_file`, else ``<data_dir>/worker.properties``."""
        return self.properties_file or self.data_dir / "worker.properties"

    def _write_configs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.properties_file is None:
            (self.data_dir / "worker.properties").write_text(
                "".join(f"{k}={v}\n" for k, v in self.properties.items()))
        (self.data_dir / "log4j2.properties").write_text(
            "appender.file.type = File\nappender.file.name = FILE\n"
            f"appender.file.fileName = {self.log_file}\nappender.file.append = true\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n"
            "logger.reflections.name = org.reflections\nlogger.reflections.level = ERROR\n")

    def start(self, timeout: float = 120.0, wait: bool = True) -> JavaConnectWorker:
        """Start the worker; return once its REST API answers and it has joined its group (at once without
        ``wait``: a group of workers started together is waited for together, see :attr:`process`)."""
        if self.is_running():
            return self
        java = find_java(self._java)
        classpath = connect_classpath(self.kafka_version, java.executable, self.progress)
        self._write_configs()
        options = []
        if self.prometheus_port is not None:  # the exporter's default names for every MBean
            exporter = self.data_dir / "jmx-exporter.yaml"
            exporter.write_text('rules:\n- pattern: ".*"\n')
            agent = jmx_exporter_jar(java.executable, self.progress)
            options.append(f"-javaagent:{agent}={HOST}:{self.prometheus_port}:{exporter}")
        cmd = java_command(java.executable, self.heap, self.data_dir / "log4j2.properties", classpath,
                           MAIN_CLASS, str(self.worker_properties_path), options=options)
        with open(self.data_dir / "worker.out", "ab") as out:
            self._proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        end_with_this_process(self._proc.pid)  # even if this process is killed and runs no exit handler
        if not wait:
            return self
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop(timeout=10)
            raise
        return self

    @property
    def process(self) -> subprocess.Popen | None:
        """The worker's JVM once started here (None before, or for a worker found running)."""
        return self._proc

    def _answers(self, path: str) -> bool:
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as response:
                json.load(response)
                return response.status == 200
        except (OSError, ValueError):
            return False

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                out = (self.data_dir / "worker.out").read_text(errors="replace")[-3000:]
                raise ConnectWorkerError(f"The Kafka Connect worker exited with code {self._proc.returncode} "
                                         f"while starting. Tail of its log ({self.log_file}):\n"
                                         f"{self.log_tail()}\n{out}")
            # GET / answers as soon as the REST server runs; GET /connectors once the worker joined.
            if self._answers("/") and self._answers("/connectors"):
                return
            time.sleep(0.2)
        raise ConnectWorkerError(f"The Kafka Connect worker did not answer within {timeout:.0f} s. Tail of its "
                                 f"log ({self.log_file}):\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop gracefully (SIGTERM: the worker leaves its group and stops its tasks), forcibly after
        ``timeout`` seconds."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        self._proc = None

    def __enter__(self) -> JavaConnectWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"JavaConnectWorker({self.url}, group {self.group_id}, {state})"
