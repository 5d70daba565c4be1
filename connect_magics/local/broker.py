"""The embedded Apache Kafka broker: one KRaft node (broker + controller) on 127.0.0.1.

Used by the quickstart and the tests; users with their own cluster never start it.

>>> with EmbeddedBroker() as broker:  # doctest: +SKIP
...     print(broker.bootstrap_servers)
127.0.0.1:40123

A data directory holds everything: ``kafka-logs/`` (the data), ``server.properties``,
``log4j2.properties``, ``broker.log`` and ``broker.json`` (pid and ports of a running broker, so
that ``connect-magics broker stop`` can find it). Restarting on the same directory keeps the data
and the ports.

Faults for tests (:mod:`connect_magics.local.faults`, :mod:`connect_magics.local.cluster`): :meth:`EmbeddedBroker.kill`
(SIGKILL), :meth:`~EmbeddedBroker.pause` / :meth:`~EmbeddedBroker.resume` (SIGSTOP / SIGCONT) and slow fsync
(``EmbeddedBroker(slow_fsync_ms=0)``, then :meth:`~EmbeddedBroker.set_fsync_delay` or
:meth:`~EmbeddedBroker.slow_fsync`).
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from connect_magics.local.jars import DEFAULT_KAFKA_VERSION, cache_dir, kafka_classpath
from connect_magics.local.java import find_java, java_command
from connect_magics.local.orphan_guard import end_with_this_process

FSYNC_DELAY_FILE = "fsync-delay-ms"  # in a broker's data directory: the slow-fsync shim's delay

HOST = "127.0.0.1"
DEFAULT_HEAP = "768m"


class BrokerError(RuntimeError):
    """The broker could not be started or stopped; the message says why and what to do."""


class PortTakenError(BrokerError):
    """A port of the broker is in use by another process."""


#: How many sets of ports a first start with ports picked by :func:`free_port` tries (see ``EmbeddedBroker.start``).
PORT_ATTEMPTS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _free_port_but(taken: int) -> int:
    port = free_port()
    while port == taken:
        port = free_port()
    return port


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return True
        return False


def file_tail(path: Path, lines: int, missing: str) -> str:
    """The last ``lines`` lines of a log file, or ``missing`` if it cannot be read."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return missing


def default_data_dir() -> Path:
    return cache_dir() / "broker"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as dead
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


_RUNNING: weakref.WeakSet[EmbeddedBroker] = weakref.WeakSet()
_STATE_FILE = "broker.json"  # in a broker's data directory: its pid and ports
_TEMPORARY_DIRS: set[Path] = set()  # data directories made for brokers given none


def _state_in(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / _STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}


@atexit.register
def _stop_all() -> None:
    for broker in list(_RUNNING):
        broker.stop()
    for directory in _TEMPORARY_DIRS:  # a detached broker still running keeps its directory
        pid = _state_in(directory).get("pid")
        if not (pid and _pid_alive(pid)):
            shutil.rmtree(directory, ignore_errors=True)


class EmbeddedBroker:
    """A single-node KRaft Apache Kafka broker run as a Java subprocess.

    ``data_dir`` defaults to a fresh temporary directory, removed when the process exits (unless a
    detached broker still runs there); the CLI uses a persistent one under the user cache. ``port`` defaults to the port used last time on this data directory, else a
    free one. ``server_properties`` override or extend the generated ``server.properties``.
    A broker started by this process is stopped when the process exits unless ``detach=True``
    is given to :meth:`start`.

    ``slow_fsync_ms`` (0 or more) loads the slow-fsync shim (:mod:`connect_magics.local.faults`, needs ``cc``)
    and sets ``log.flush.interval.messages=1``, so that every append fsyncs; each fsync of a data log then
    waits the delay, which :meth:`set_fsync_delay` changes while the broker runs.

    ``node_id``, ``roles`` (``process.roles``), ``quorum_voters`` (``controller.quorum.voters``, default:
    this node alone) and ``cluster_id`` make the node one of several (:class:`~connect_magics.local.cluster.EmbeddedCluster`).
    """

    def __init__(self, data_dir: str | os.PathLike | None = None, port: int | None = None,
                 kafka_version: str = DEFAULT_KAFKA_VERSION, heap: str = DEFAULT_HEAP,
                 java: str | None = None, server_properties: Mapping[str, str] | None = None,
                 progress: Callable[[str], None] | None = None, slow_fsync_ms: int | None = None,
                 node_id: int = 1, roles: str = "broker,controller", quorum_voters: str | None = None,
                 cluster_id: str | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="connect-magics-broker-"))
        if not data_dir:
            _TEMPORARY_DIRS.add(self.data_dir)
        self.kafka_version = kafka_version
        self.heap = heap
        self._java = java
        self.server_properties = dict(server_properties or {})
        self.progress = progress
        self.slow_fsync_ms = slow_fsync_ms
        self.node_id = node_id
        self.roles = roles
        self.quorum_voters = quorum_voters
        self.cluster_id = cluster_id
        self._paused = False
        self._had_data = False  # this handle saw its data directory formatted: a restart needs it still there
        state = self._read_state()
        # Ports picked here can be taken by another process before the JVM binds them (free ports are only free
        # when asked: another test worker's broker, a client's outgoing connection): a first start then picks
        # others. Ports given, kept from an earlier run, or named by a quorum are never changed.
        self._ports_picked = port is None and not state.get("port") and quorum_voters is None
        self.port = port or state.get("port") or free_port()
        self.controller_port = state.get("controller_port") or _free_port_but(self.port)
        self._proc: subprocess.Popen | None = None

    # -- paths -----------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "broker.log"

    @property
    def _state_file(self) -> Path:
        return self.data_dir / _STATE_FILE

    def _read_state(self) -> dict:
        return _state_in(self.data_dir)

    def log_tail(self, lines: int = 30) -> str:
        return file_tail(self.log_file, lines, "(no broker log)")

    # -- lifecycle -------------------------------------------------------------------------
    def is_running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        pid = self._read_state().get("pid")
        return bool(pid) and _pid_alive(pid)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    def _write_configs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        listeners = ([f"PLAINTEXT://{HOST}:{self.port}"] if self.is_broker else []) + (
            [f"CONTROLLER://{HOST}:{self.controller_port}"] if self.is_controller else [])
        props = {
            "process.roles": self.roles,
            "node.id": str(self.node_id),
            "listeners": ",".join(listeners),
            **({"advertised.listeners": f"PLAINTEXT://{HOST}:{self.port}",
                "inter.broker.listener.name": "PLAINTEXT"} if self.is_broker else {}),
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.quorum.voters": self.quorum_voters or f"{self.node_id}@{HOST}:{self.controller_port}",
            "log.dirs": str(self.data_dir / "kafka-logs"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "5",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "5",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.flush.interval.messages": "1" if self.slow_fsync_ms is not None else "9223372036854775807",
            "controlled.shutdown.enable": "true",
        }
        props.update(self.server_properties)
        (self.data_dir / "server.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        (self.data_dir / "log4j2.properties").write_text(
            "appender.file.type = File\nappender.file.name = FILE\n"
            f"appender.file.fileName = {self.log_file}\nappender.file.append = true\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n"
            "logger.kafka.name = kafka\nlogger.kafka.level = INFO\n"
            "logger.state.name = state.change.logger\nlogger.state.level = WARN\n")

    def _java_cmd(self, java: str, classpath: str, main: str, *args: str) -> list[str]:
        return java_command(java, self.heap, self.data_dir / "log4j2.properties", classpath, main, *args)

    @property
    def _meta_file(self) -> Path:
        return self.data_dir / "kafka-logs" / "meta.properties"

    def _format(self, java: str, classpath: str) -> None:
        if self._meta_file.exists():
            return
        cluster_id = self.cluster_id or new_cluster_id()
        out = subprocess.run(
            self._java_cmd(java, classpath, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}",
                           "-c", str(self.data_dir / "server.properties"), "--ignore-formatted"),
            capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise BrokerError(f"Formatting the Kafka data directory {self.data_dir} failed:\n"
                              f"{(out.stdout + out.stderr).strip()[-2000:]}")

    def start(self, timeout: float = 90.0, detach: bool = False) -> EmbeddedBroker:
        """Start the broker and return once it answers a metadata request."""
        if self.is_running():
            return self
        if self._ports_picked and not self._had_data and not self._meta_file.exists():  # a first start
            for _ in range(PORT_ATTEMPTS - 1):
                try:
                    return self._start(timeout, detach)
                except PortTakenError:
                    self._pick_ports()
        return self._start(timeout, detach)

    def _pick_ports(self) -> None:
        """Other ports for a first start whose picked ones were taken (its data formatted for them goes too)."""
        shutil.rmtree(self.data_dir / "kafka-logs", ignore_errors=True)
        self._had_data = False
        self.port = free_port()
        self.controller_port = _free_port_but(self.port)

    def _start(self, timeout: float, detach: bool) -> EmbeddedBroker:
        ports = [(self.port, "broker")] if self.is_broker else []
        ports += [(self.controller_port, "controller")] if self.is_controller else []
        for port, what in ports:
            if port_in_use(port):
                raise PortTakenError(f"Port {port} on {HOST} (the {what} port) is already in use. Choose another "
                                     "port (--port), or stop whatever listens there.")
        if self._had_data and not self._meta_file.exists():
            raise BrokerError(f"The Kafka data directory {self.data_dir} vanished or was emptied since this broker last "
                              "ran: a restart would format a new, empty cluster in its place and the clients would "
                              "find their topics gone. Something else removed it; start a new EmbeddedBroker instead.")
        java = find_java(self._java)
        classpath = kafka_classpath(self.kafka_version, java.executable, self.progress)
        self._write_configs()
        self._format(java.executable, classpath)
        self._had_data = True
        env = None
        if self.slow_fsync_ms is not None:
            from connect_magics.local.faults import shim_environment, write_delay

            write_delay(self._fsync_delay_file, self.slow_fsync_ms)  # the delay set last, as a restart keeps it
            env = {**os.environ, **shim_environment(self._fsync_delay_file)}
        with open(self.data_dir / "broker.out", "ab") as out:
            self._proc = subprocess.Popen(
                self._java_cmd(java.executable, classpath, "kafka.Kafka", str(self.data_dir / "server.properties")),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        self._paused = False
        self._state_file.write_text(json.dumps({"pid": self._proc.pid, "port": self.port,
                                                "controller_port": self.controller_port}))
        if not detach:
            _RUNNING.add(self)
            end_with_this_process(self._proc.pid)  # even if this process is killed and runs no exit handler
        try:
            self._wait_ready(timeout)
        except BaseException as e:
            self.stop(timeout=10)
            if isinstance(e, BrokerError) and "BindException: Address already in use" in str(e):
                raise PortTakenError(str(e)) from e  # taken between the check above and the JVM's bind
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient

        if not self.is_broker:  # a controller alone answers no metadata request: its port is enough
            self._wait_listening(timeout)
            return
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 0,
                             "logger": _SILENT})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                out = (self.data_dir / "broker.out").read_text(errors="replace")[-3000:]
                raise BrokerError(f"The Kafka broker exited with code {self._proc.returncode} while starting. "
                                  f"Tail of its log ({self.log_file}):\n{self.log_tail()}\n{out}")
            try:
                if admin.list_topics(timeout=1).brokers:
                    return
            except Exception:  # noqa: BLE001 - not up yet
                continue
        raise BrokerError(f"The Kafka broker did not answer within {timeout:.0f} s. Tail of its log "
                          f"({self.log_file}):\n{self.log_tail()}")

    def _wait_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise BrokerError(f"The Kafka controller exited with code {self._proc.returncode} while starting. "
                                  f"Tail of its log ({self.log_file}):\n{self.log_tail()}")
            try:
                socket.create_connection((HOST, self.controller_port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise BrokerError(f"The Kafka controller did not listen within {timeout:.0f} s. Tail of its log "
                          f"({self.log_file}):\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop gracefully (SIGTERM, a controlled shutdown), then forcibly after ``timeout`` seconds."""
        _RUNNING.discard(self)
        pid = self._proc.pid if self._proc is not None else self._read_state().get("pid")
        if pid and _pid_alive(pid):
            try:
                os.kill(pid, signal.SIGTERM)
                if self._paused:  # a stopped process handles SIGTERM once continued
                    os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and _pid_alive(pid):
                if self._proc is not None:
                    try:
                        self._proc.wait(timeout=0.1)
                    except subprocess.TimeoutExpired:
                        pass
                else:
                    time.sleep(0.1)
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
                if self._proc is not None:
                    self._proc.wait(timeout=10)
        self._proc = None
        self._paused = False
        state = self._read_state()
        state.pop("pid", None)
        if self.data_dir.exists():
            self._state_file.write_text(json.dumps(state))

    def kill(self) -> None:
        """Stop at once (SIGKILL), as a crash would."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=10)
        self.stop(timeout=0)

    # -- faults ----------------------------------------------------------------------------
    def _signal(self, sig: signal.Signals) -> None:
        pid = self._proc.pid if self._proc is not None else self._read_state().get("pid")
        if not (pid and _pid_alive(pid)):
            raise BrokerError(f"The Kafka broker in {self.data_dir} is not running.")
        os.killpg(pid, sig)  # started with start_new_session: its process group is its own

    def pause(self) -> None:
        """Freeze the broker's JVM (SIGSTOP): its sockets stay open but nothing answers, as in a long GC pause
        or a hung host. :meth:`resume` continues it; :meth:`stop` and :meth:`kill` work on a paused broker."""
        self._signal(signal.SIGSTOP)
        self._paused = True

    def resume(self) -> None:
        """Continue a paused broker (SIGCONT)."""
        self._signal(signal.SIGCONT)
        self._paused = False

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def _fsync_delay_file(self) -> Path:
        return self.data_dir / FSYNC_DELAY_FILE

    def set_fsync_delay(self, delay_ms: int) -> None:
        """Make every fsync of the broker's data logs wait ``delay_ms`` (0: full speed), at once. Needs a broker
        created with ``slow_fsync_ms`` (the shim is loaded when the JVM starts)."""
        if self.slow_fsync_ms is None:
            raise BrokerError("Slow fsync needs the shim loaded at start: create the broker with "
                              "EmbeddedBroker(..., slow_fsync_ms=0) and start it again.")
        from connect_magics.local.faults import write_delay

        self.data_dir.mkdir(parents=True, exist_ok=True)
        write_delay(self._fsync_delay_file, delay_ms)
        self.slow_fsync_ms = max(0, int(delay_ms))

    @contextmanager
    def slow_fsync(self, delay_ms: int) -> Iterator[EmbeddedBroker]:
        """``with broker.slow_fsync(3000): ...``: fsyncs wait ``delay_ms`` inside the block, none after it."""
        self.set_fsync_delay(delay_ms)
        try:
            yield self
        finally:
            self.set_fsync_delay(0)

    def restart(self, timeout: float = 90.0) -> EmbeddedBroker:
        self.stop()
        return self.start(timeout)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"EmbeddedBroker({self.bootstrap_servers}, {state}, data_dir={str(self.data_dir)!r})"


def new_cluster_id() -> str:
    """A random KRaft cluster id (22 characters of URL-safe base64)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class _SilentLogger:
    """A logger for librdkafka that drops its connection-refused chatter while the broker starts."""

    def log(self, *args: object, **kwargs: object) -> None:
        pass


_SILENT = _SilentLogger()
