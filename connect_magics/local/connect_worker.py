"""A real Apache Kafka Connect worker (distributed mode) as a Java subprocess: the tests' oracle.

Its jars (``connect-runtime``, ``connect-file``, ``connect-json``, same Kafka version as the
embedded broker) are resolved once into the per-user cache like the broker's (:mod:`.jars`).
The FileStream connectors are on the classpath, so no ``plugin.path`` is needed.

>>> with JavaConnectWorker("127.0.0.1:9092", group_id="java-connect") as worker:  # doctest: +SKIP
...     urllib.request.urlopen(worker.url + "/connectors").read()
b'[]'

A data directory holds ``worker.properties``, ``log4j2.properties``, ``worker.log`` (the Java log)
and ``worker.out`` (its stdout and stderr).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from connect_magics.local.broker import HOST, file_tail, free_port
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION, connect_classpath
from connect_magics.local.java import find_java, java_command

DEFAULT_HEAP = "768m"
MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"


class ConnectWorkerError(RuntimeError):
    """The Java worker could not be started; the message has the tail of its log."""


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
    """

    def __init__(self, bootstrap_servers: str, group_id: str = "java-connect",
                 data_dir: str | Path | None = None, port: int | None = None,
                 kafka_version: str = DEFAULT_KAFKA_VERSION, heap: str = DEFAULT_HEAP, java: str | None = None,
                 worker_properties: Mapping[str, str] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="connect-magics-java-worker-"))
        self.port = port or free_port()
        self.group_id = group_id
        self.kafka_version = kafka_version
        self.heap = heap
        self._java = java
        self.progress = progress
        self.properties = {**distributed_worker_properties(bootstrap_servers, group_id, self.port),
                           **(worker_properties or {})}
        self._proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "worker.log"

    def log_tail(self, lines: int = 40) -> str:
        return file_tail(self.log_file, lines, "(no worker log)")

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _write_configs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "worker.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in self.properties.items()))
        (self.data_dir / "log4j2.properties").write_text(
            "appender.file.type = File\nappender.file.name = FILE\n"
            f"appender.file.fileName = {self.log_file}\nappender.file.append = true\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n"
            "logger.reflections.name = org.reflections\nlogger.reflections.level = ERROR\n")

    def start(self, timeout: float = 120.0) -> JavaConnectWorker:
        """Start the worker; return once its REST API answers and it has joined its group."""
        if self.is_running():
            return self
        java = find_java(self._java)
        classpath = connect_classpath(self.kafka_version, java.executable, self.progress)
        self._write_configs()
        cmd = java_command(java.executable, self.heap, self.data_dir / "log4j2.properties", classpath,
                           MAIN_CLASS, str(self.data_dir / "worker.properties"))
        with open(self.data_dir / "worker.out", "ab") as out:
            self._proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop(timeout=10)
            raise
        return self

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
