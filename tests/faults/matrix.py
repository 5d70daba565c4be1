"""The fault matrix: FileStream pipelines through broker faults, counted end to end.

:func:`run_case` runs one case on a Kafka cluster of its own and returns a :class:`CaseResult`:

- ``fault``: ``stop`` (broker stopped for ``outage_s``, started again on the same directory and port),
  ``kill`` (SIGKILL, then started again), ``pause`` (SIGSTOP for longer than the sink consumer's and the
  worker's session timeouts, then SIGCONT), ``coordinator`` (a two-broker cluster; the broker holding the
  task's coordinator is stopped, and started again ``outage_s`` later) or ``slow-fsync`` (every fsync of the
  broker's data logs waits ``fsync_delay_ms`` for ``outage_s``).
- ``executor``: ``threads``, ``processes``, ``spark`` (a :class:`~connect_magics.ConnectRuntime`) or ``java``
  (Apache Kafka Connect's distributed worker, driven over its REST API with the same configs).
- ``kind``: ``source`` (a FileStreamSource reads a file of ``line-{i}`` lines into a topic; counted in the
  topic, read_committed), ``sink`` (a FileStreamSink writes the topic into a file; the topic is filled by
  the harness's own producer, so only the sink is measured; counted in the file) or ``pipeline`` (both,
  counted in the output file: the issue's reproduction).

The input is fed at an even rate over ``feed_s`` seconds (lines appended to the file, or produced), so
that the fault, injected once about 40 % of the records arrived, hits a connector in the middle of its
work whatever the record count; ``feed_s=None`` writes it all before the connectors start.

Measured: records lost (ids missing at the end), duplicated (extra copies), the time from the fault's
end until the count grows again, every task's final state (and trace), whether the case completed
within its deadline, and whether, within ``bound_s`` after the fault, every task was progressing or
visibly FAILED (a task that stopped while its status says RUNNING is "stalled").
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import faulthandler
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import RestClient, wait_until

from connect_magics.local import EmbeddedBroker
from connect_magics.local.cluster import EmbeddedCluster
from connect_magics.local.connect_worker import JavaConnectWorker

FAULTS = ("stop", "kill", "pause", "coordinator", "slow-fsync")
EXECUTORS = ("threads", "processes", "spark", "java")
KINDS = ("source", "sink")
STRING = "org.apache.kafka.connect.storage.StringConverter"
FLUSH_MS = 500
#: The sinks' consumer session timeout in the matrix (the broker's minimum), so that a pause outlasts it.
SINK_SESSION_TIMEOUT_MS = 6000
#: A pause lasts at least this long: beyond the sink consumer's and the worker's (10 s) session timeouts.
MIN_PAUSE_S = 12.0
FSYNC_DELAY_MS = 2000
INJECT_AT = 0.4

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------ results

@dataclass
class CaseResult:
    """What one case measured (see the module's docs)."""

    fault: str
    executor: str
    kind: str
    exactly_once: bool
    records: int
    outage_s: float
    injected_at: int = 0  # records counted when the fault started
    lost: int = 0
    duplicated: int = 0
    recover_s: float | None = None  # fault end -> the count grows again (None: it never did)
    tasks: dict[str, list[dict]] = field(default_factory=dict)  # connector -> its tasks' statuses at the end
    completed: bool = False  # every record arrived within the deadline
    visible: bool = True  # within bound_s of the fault's end, every task progressed or was FAILED with a trace
    stalled: str = ""  # what the tasks said when nothing progressed within bound_s
    elapsed_s: float = 0.0
    error: str = ""  # the harness could not run the case
    notes: list[str] = field(default_factory=list)
    workdir: str = ""  # kept (logs) when the case did not pass

    @property
    def duplicates_allowed(self) -> bool:
        """At least once everywhere but in the topic of an exactly-once source (read read_committed)."""
        return not (self.kind == "source" and self.exactly_once)

    @property
    def states(self) -> list[str]:
        return [t.get("state", "?") for tasks in self.tasks.values() for t in tasks]

    @property
    def final_state(self) -> str:
        if not self.tasks:
            return "no tasks"
        return " ".join(f"{name}:{'/'.join(t.get('state', '?') for t in tasks) or 'none'}"
                        for name, tasks in self.tasks.items())

    def problems(self) -> list[str]:
        """Why this case fails the matrix's expectations (empty: it passes)."""
        out = [f"harness error: {self.error}"] if self.error else []
        if not self.visible:
            out.append(f"no progress within the bound after the fault while the status said {self.stalled}")
        failed_silently = [t for tasks in self.tasks.values() for t in tasks
                           if t.get("state") == "FAILED" and not t.get("trace")]
        if failed_silently:
            out.append("FAILED without a trace")
        if self.completed and any(s != "RUNNING" for s in self.states):
            out.append(f"every record arrived but the tasks are {self.final_state}")
        if not self.completed:
            out.append(f"incomplete after the deadline ({self.final_state})")
        if self.lost:
            out.append(f"{self.lost} records lost")
        if self.duplicated and not self.duplicates_allowed:
            out.append(f"{self.duplicated} duplicates where exactly once was promised")
        return out

    @property
    def passed(self) -> bool:
        return not self.problems()

    @property
    def label(self) -> str:
        return f"{self.fault}/{self.executor}/{self.kind}{'-eos' if self.exactly_once else ''}"

    def summary(self) -> str:
        recover = "never" if self.recover_s is None else f"{self.recover_s:.1f} s"
        text = (f"{self.label}: {self.records} records, fault after {self.injected_at}, outage {self.outage_s:.0f} s; "
                f"lost {self.lost}, duplicated {self.duplicated}, recovered {recover}, {self.final_state}, "
                f"{'completed' if self.completed else 'INCOMPLETE'} in {self.elapsed_s:.0f} s")
        problems = self.problems()
        return text + (f"; PROBLEMS: {'; '.join(problems)}" if problems else "") + (
            f"; notes: {'; '.join(self.notes)}" if self.notes else "") + (
            f"; logs in {self.workdir}" if self.workdir else "")


# ------------------------------------------------------------------------------------------ counting

class Count:
    """How often each id was seen, read by a monitor thread; ``timeline`` holds ``(time, distinct)``."""

    def __init__(self) -> None:
        self.counts: collections.Counter[int] = collections.Counter()
        self.total = 0
        self.garbage = 0
        self.timeline: list[tuple[float, int]] = [(time.monotonic(), 0)]
        self.lock = threading.Lock()

    def add(self, values: list[bytes]) -> None:
        with self.lock:
            for v in values:
                try:
                    self.counts[int(v.rsplit(b"-", 1)[-1])] += 1
                except (ValueError, AttributeError):  # AttributeError: a null value  # not a line-{i} (a torn line): counted as garbage
                    self.garbage += 1
            self.total += len(values)
            if values:
                self.timeline.append((time.monotonic(), len(self.counts)))

    @property
    def distinct(self) -> int:
        with self.lock:
            return len(self.counts)

    def grew_after(self, t: float) -> float | None:
        """When the count first grew after time ``t`` (None: not yet)."""
        with self.lock:
            before = max((n for when, n in self.timeline if when <= t), default=0)
            return next((when for when, n in self.timeline if when > t and n > before), None)


class Monitor:
    """A thread counting ids as they arrive: in a topic (read_committed) or in a file's lines."""

    def __init__(self, read: Callable[[], list[bytes]], close: Callable[[], None] = lambda: None) -> None:
        self.count = Count()
        self.reader: TopicReader | None = None
        self.errors = 0
        self._read, self._close = read, close
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fault-matrix-monitor", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                values: list[bytes] = []
                try:
                    values = self._read()
                    self.count.add(values)
                except Exception as e:  # noqa: BLE001 - a broker fault: read again
                    self.errors += 1
                    log.info("monitor read failed: %r", e)
                if not values:
                    self._stop.wait(0.05)
        finally:
            self._close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    @classmethod
    def topic(cls, bootstrap: str, topic: str) -> Monitor:
        reader = TopicReader(bootstrap, topic)
        monitor = cls(reader.read, reader.close)
        monitor.reader = reader
        return monitor

    @classmethod
    def file(cls, path: Path) -> Monitor:
        state = {"position": 0, "rest": b""}

        def read() -> list[bytes]:
            if not path.exists():
                return []
            with open(path, "rb") as f:
                f.seek(state["position"])
                chunk = f.read(8 << 20)
            state["position"] += len(chunk)
            lines = (state["rest"] + chunk).split(b"\n")
            state["rest"] = lines.pop()
            return [line for line in lines if line]
        return cls(read)


class TopicReader:
    """Reads partition 0 of a topic (read_committed) from where it stopped, through broker faults: a consumer
    that returns nothing for ``STUCK_S`` while the partition has records past its position is replaced by a
    new one assigned at that position (and the replacement is logged), so that a confused client never
    passes for a stalled connector."""

    STUCK_S = 5.0

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.next_offset = 0
        self.replaced = 0
        self._idle_since = time.monotonic()
        self.consumer = self._consumer()

    def _consumer(self) -> Consumer:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"matrix-count-{uuid.uuid4().hex[:6]}",
                             "enable.auto.commit": False, "isolation.level": "read_committed",
                             "auto.offset.reset": "error", "reconnect.backoff.max.ms": 500, "logger": _QUIET})
        consumer.assign([TopicPartition(self.topic, 0, self.next_offset)])
        return consumer

    def read(self) -> list[bytes]:
        values = []
        for m in self.consumer.consume(10_000, timeout=0.2):
            if m.error():
                log.info("monitor of %s: %s", self.topic, m.error())
                continue
            values.append(m.value())
            self.next_offset = m.offset() + 1
        now = time.monotonic()
        if values:
            self._idle_since = now
        elif now - self._idle_since > self.STUCK_S:
            self._idle_since = now
            end = self.consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=2, cached=False)[1]
            position = self.consumer.position([TopicPartition(self.topic, 0)])[0].offset
            if end > max(self.next_offset, position):  # records (or an open transaction) past the position
                log.warning("monitor of %s: nothing read for %.0f s at offset %d while the partition ends at %d: "
                            "a new consumer", self.topic, self.STUCK_S, self.next_offset, end)
                self.consumer.close()
                self.consumer = self._consumer()
                self.replaced += 1
        return values

    def close(self) -> None:
        self.consumer.close()


def _quiet_logger() -> logging.Logger:
    """The harness's own clients log here, not to stderr: their reconnect chatter during a fault is expected."""
    logger = logging.getLogger("fault_matrix.clients")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


_QUIET = _quiet_logger()


# ------------------------------------------------------------------------------------------ feeding

class Feeder:
    """Writes ``line-{i}`` for i in range(records) into the input (``write(lines)``), all at once when
    ``feed_s`` is None, else evenly over ``feed_s`` seconds on a thread."""

    def __init__(self, records: int, feed_s: float | None, write: Callable[[list[str]], None]) -> None:
        self.records, self.feed_s, self.write = records, feed_s, write
        self.fed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Feeder:
        if not self.feed_s:
            self._feed_to(self.records)
        else:
            self._thread = threading.Thread(target=self._run, name="fault-matrix-feeder", daemon=True)
            self._thread.start()
        return self

    def _feed_to(self, n: int) -> None:
        if n > self.fed:
            self.write([f"line-{i}" for i in range(self.fed, n)])
            self.fed = n

    def _run(self) -> None:
        start = time.monotonic()
        while not self._stop.is_set() and self.fed < self.records:
            share = min(1.0, (time.monotonic() - start) / self.feed_s)
            self._feed_to(int(self.records * share))
            self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)


def file_writer(path: Path) -> Callable[[list[str]], None]:
    def write(lines: list[str]) -> None:
        with open(path, "a") as f:
            f.write("".join(f"{line}\n" for line in lines))
    return write


class TopicWriter:
    """The sink cases' input: an idempotent producer that never gives a record up (it waits out faults)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.errors: list[str] = []
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "message.timeout.ms": 0, "linger.ms": 5, "reconnect.backoff.max.ms": 500,
                                  "queue.buffering.max.messages": 2_000_000, "logger": _QUIET})

    def __call__(self, lines: list[str]) -> None:
        for line in lines:
            self.producer.produce(self.topic, line.encode(), on_delivery=self._delivered)
            self.producer.poll(0)

    def _delivered(self, err: object, msg: object) -> None:
        if err is not None:
            self.errors.append(str(err))

    def flush(self, timeout: float) -> int:
        return self.producer.flush(timeout)


# ------------------------------------------------------------------------------------------ the cluster and its faults

class Target:
    """The Kafka cluster of one case and its fault: one broker, or a two-broker cluster for ``coordinator``."""

    def __init__(self, fault: str, workdir: Path) -> None:
        self.fault = fault
        self.cluster: EmbeddedCluster | None = None
        self.broker: EmbeddedBroker | None = None
        self._closing = threading.Event()
        self._restarting: threading.Thread | None = None
        if fault == "coordinator":
            self.cluster = EmbeddedCluster(2, workdir / "cluster").start()
        else:
            self.broker = EmbeddedBroker(workdir / "broker",
                                         slow_fsync_ms=0 if fault == "slow-fsync" else None).start()

    @property
    def bootstrap_servers(self) -> str:
        return (self.cluster or self.broker).bootstrap_servers  # type: ignore[union-attr]

    def inject(self, outage_s: float, fsync_delay_ms: int, coordinator: Callable[[], int],
               notes: list[str]) -> tuple[float, float]:
        """Make the fault; return ``(the outage's real length, the time it ended)``. For ``coordinator`` the
        fault ends when the node stopped (the other one takes over then); it is started again after
        ``outage_s``, while the pipeline is measured."""
        start = time.monotonic()
        if self.cluster is not None:
            node = self.cluster.node(coordinator())
            notes.append(f"stopped node {node.node_id}")
            node.stop()
            ended = time.monotonic()
            self._restarting = threading.Thread(target=self._restart_later, args=(node, outage_s), daemon=True)
            self._restarting.start()
            return ended - start, ended
        broker = self.broker
        assert broker is not None
        if self.fault == "stop":
            broker.stop()
            time.sleep(outage_s)  # the outage itself
            broker.start()
        elif self.fault == "kill":
            broker.kill()
            time.sleep(outage_s)
            broker.start()
        elif self.fault == "pause":
            broker.pause()
            time.sleep(max(outage_s, MIN_PAUSE_S))
            broker.resume()
        elif self.fault == "slow-fsync":
            with broker.slow_fsync(fsync_delay_ms):
                time.sleep(outage_s)
        else:
            raise ValueError(f"unknown fault {self.fault!r}: one of {', '.join(FAULTS)}")
        ended = time.monotonic()
        return ended - start, ended

    def _restart_later(self, node: EmbeddedBroker, delay: float) -> None:
        if self._closing.wait(delay):  # the node's outage; the case may end first
            return
        try:
            node.start()
        except Exception:  # noqa: BLE001 - reported by the case's own checks
            log.exception("restarting node %s failed", node.node_id)

    def coordinator_of_transactions(self, transactional_id: str) -> int:
        assert self.cluster is not None
        return self.cluster.transaction_coordinator(transactional_id)

    def coordinator_of_group(self, group_id: str) -> int:
        assert self.cluster is not None
        return self.cluster.group_coordinator(group_id)

    def close(self) -> None:
        self._closing.set()
        if self._restarting is not None:
            self._restarting.join(120)
        if self.cluster is not None:
            for node in self.cluster.nodes:  # a node restarted late, or still stopped
                if node.paused:
                    node.resume()
            self.cluster.stop(timeout=15)
        if self.broker is not None:
            self.broker.stop(timeout=15)


# ------------------------------------------------------------------------------------------ workers

class Driver:
    """Creating connectors and reading their statuses on one worker."""

    def create(self, name: str, config: dict[str, str]) -> None:
        raise NotImplementedError

    def status(self, name: str) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RuntimeDriver(Driver):
    """connect_magics' :class:`ConnectRuntime` on the ``threads``, ``processes`` or ``spark`` executor."""

    def __init__(self, bootstrap: str, group_id: str, worker_config: dict[str, str], executor: str,
                 spark: Any = None, notes: list[str] | None = None) -> None:
        from connect_magics import ConnectRuntime

        self.executor, self.notes = executor, notes if notes is not None else []
        self.rt = ConnectRuntime(bootstrap, group_id, worker_config, spark=spark, executor=executor)

    def create(self, name: str, config: dict[str, str]) -> None:
        self.rt.create_connector(name, config)

    def status(self, name: str) -> dict:
        return self.rt.connector_status(name)

    def close(self) -> None:
        self.rt.close()
        if self.executor == "spark":
            self._cancel_leftover_jobs()

    def _cancel_leftover_jobs(self) -> None:
        """A task that outlived close() keeps its Spark job, and with it an executor slot the next case needs:
        noted, and cancelled."""
        try:
            context = self.rt.spark.sparkContext
            active = context.statusTracker().getActiveJobsIds()
        except Exception:  # noqa: BLE001 - Spark Connect: no SparkContext here
            return
        if active:
            self.notes.append(f"{len(active)} Spark jobs still ran after close(): cancelled")
            context.cancelAllJobs()


class JavaDriver(Driver):
    """Apache Kafka Connect's distributed worker (:class:`JavaConnectWorker`) over its REST API."""

    def __init__(self, bootstrap: str, group_id: str, worker_config: dict[str, str], workdir: Path,
                 replicated: bool) -> None:
        props = dict(worker_config)
        if replicated:  # the cluster's default replication factor for the internal topics
            props.update({f"{t}.storage.replication.factor": "-1" for t in ("config", "offset", "status")})
        self.worker = JavaConnectWorker(bootstrap, group_id, workdir / "java-worker", worker_properties=props)
        self.worker.start()
        self.rest = RestClient(self.worker.url)

    def create(self, name: str, config: dict[str, str]) -> None:
        status, body, _ = self.rest("POST", "/connectors", {"name": name, "config": config})
        if status >= 300:
            raise RuntimeError(f"creating {name} on the Java worker: {status} {body}")

    def status(self, name: str) -> dict:
        status, body, _ = self.rest("GET", f"/connectors/{name}/status")
        if status != 200:
            raise RuntimeError(f"status of {name} on the Java worker: {status} {body}")
        return body

    def close(self) -> None:
        self.worker.stop(timeout=20)


def call_with_timeout(call: Callable[[], Any], timeout: float, what: str, notes: list[str]) -> Any:
    """``call()`` on a daemon thread; a note (and None) if it did not return within ``timeout`` s."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = call()
        except Exception as e:  # noqa: BLE001
            result["error"] = e

    thread = threading.Thread(target=run, name=f"matrix-{what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        notes.append(f"{what} did not return within {timeout:.0f} s")
        return None
    if "error" in result:
        notes.append(f"{what} failed: {result['error']!r}"[:300])
        return None
    return result.get("value")


# ------------------------------------------------------------------------------------------ one case

@contextlib.contextmanager
def runtime_log(workdir: Path) -> Iterator[None]:
    """connect_magics' log of the case into ``workdir/runtime.log`` (for the fences and errors of a failure)."""
    handler = logging.FileHandler(workdir / "runtime.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    loggers = [logging.getLogger("connect_magics"), log]  # the runtime's and the harness's
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        if not logger.level or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
        handler.close()


def connector_configs(kind: str, topic: str, infile: Path, outfile: Path,
                      sink_session_timeout_ms: int | None) -> dict[str, dict[str, str]]:
    """The FileStream connectors of a case (the same configs for connect_magics and Kafka Connect)."""
    converters = {"key.converter": STRING, "value.converter": STRING, "tasks.max": "1"}
    configs = {}
    if kind in ("source", "pipeline"):
        configs["source"] = {"connector.class": "FileStreamSource", "file": str(infile), "topic": topic, **converters}
    if kind in ("sink", "pipeline"):
        configs["sink"] = {"connector.class": "FileStreamSink", "file": str(outfile), "topics": topic, **converters}
        if sink_session_timeout_ms:
            configs["sink"]["consumer.override.session.timeout.ms"] = str(sink_session_timeout_ms)
    return configs


def coordinator_finder(target: Target, executor: str, kind: str, exactly_once: bool, group_id: str,
                       name: str) -> Callable[[], int]:
    """The node of the task's coordinator: its transaction coordinator where it uses a transactional id
    (``{group}-{connector}-0``: every connect_magics task, Kafka Connect's exactly-once sources), else the
    group coordinator of a Kafka Connect sink's consumer group (``connect-{name}``) or of the worker group."""
    if executor != "java" or (kind != "sink" and exactly_once):
        return lambda: target.coordinator_of_transactions(f"{group_id}-{name}-0")
    if kind == "sink":
        return lambda: target.coordinator_of_group(f"connect-{name}")
    return lambda: target.coordinator_of_group(group_id)


def dump_task_processes() -> list[int]:
    """Ask this process's task processes (the ``processes`` executor's) to print their threads' stacks to their
    stderr, which is this process's (SIGUSR1, their faulthandler); returns their pids."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) != os.getpid():
                continue
            if b"connect_magics.runtime.executors.processes" in (stat.parent / "cmdline").read_bytes():
                os.kill(int(stat.parent.name), signal.SIGUSR1)
                pids.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    return pids


_RUN_ROOT: list[Path] = []


def run_root() -> Path:
    """This process's own directory for its cases (``$CONNECT_MAGICS_FAULT_DIR`` or the temporary directory, then a
    unique ``connect-magics-fault-matrix-{pid}-*``): a clean-up of ``/tmp/fault-*`` by other work on the machine
    once removed a case's broker directory during its outage. Removed at exit when no kept case is left in it."""
    if not _RUN_ROOT:
        parent = os.environ.get("CONNECT_MAGICS_FAULT_DIR") or None
        if parent:
            Path(parent).mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix=f"connect-magics-fault-matrix-{os.getpid()}-", dir=parent))
        _RUN_ROOT.append(root)
        atexit.register(_remove_if_empty, root)
    return _RUN_ROOT[0]


def _remove_if_empty(root: Path) -> None:
    with contextlib.suppress(OSError):
        root.rmdir()


def tasks_of(driver: Driver, names: list[str], notes: list[str]) -> dict[str, list[dict]]:
    statuses = {}
    for name in names:
        status = call_with_timeout(lambda n=name: driver.status(n), 30, f"status of {name}", notes)
        statuses[name] = list((status or {}).get("tasks", []))
    return statuses


def run_case(fault: str, executor: str, kind: str, exactly_once: bool = False, records: int = 20_000,
             outage_s: float = 5.0, *, feed_s: float | None = 8.0, fsync_delay_ms: int = FSYNC_DELAY_MS,
             bound_s: float = 60.0, deadline_s: float = 180.0, spark: Any = None,
             sink_session_timeout_ms: int | None = SINK_SESSION_TIMEOUT_MS, patient: bool = False,
             keep: str = "failed") -> CaseResult:
    """Run one case of the matrix (see the module's docs) and measure it.

    ``bound_s``: after the fault's end, how long the tasks have to progress (or fail visibly);
    ``deadline_s``: after the fault's end, how long until every record must have arrived (a case that made no
    progress within ``bound_s`` is not waited for any longer unless ``patient``). ``keep``
    (``failed``, ``always``, ``never``) says when the case's directory (broker, worker and runtime logs)
    is kept."""
    if fault not in FAULTS or executor not in EXECUTORS or kind not in (*KINDS, "pipeline"):
        raise ValueError(f"unknown case {fault}/{executor}/{kind}")
    result = CaseResult(fault, executor, kind, exactly_once, records, outage_s)
    workdir = Path(tempfile.mkdtemp(prefix=f"{fault}-{executor}-{kind}-", dir=run_root()))
    started = time.monotonic()
    target: Target | None = None
    driver: Driver | None = None
    feeder: Feeder | None = None
    monitors: list[Monitor] = []
    writer: TopicWriter | None = None
    try:
        with runtime_log(workdir):
            target = Target(fault, workdir)
            bootstrap = target.bootstrap_servers
            group_id = f"matrix-{uuid.uuid4().hex[:8]}"
            topic = f"{group_id}-lines"
            admin = AdminClient({"bootstrap.servers": bootstrap, "logger": _QUIET})
            admin.create_topics([NewTopic(topic, 1)])[topic].result(30)  # the cluster's replication factor
            infile, outfile = workdir / "in.txt", workdir / "out.txt"
            infile.touch()
            worker = {"offset.flush.interval.ms": str(FLUSH_MS),
                      "exactly.once.source.support": "enabled" if exactly_once else "disabled"}
            if executor == "java":
                driver = JavaDriver(bootstrap, group_id, worker, workdir, replicated=target.cluster is not None)
            else:
                driver = RuntimeDriver(bootstrap, group_id, worker, executor, spark, result.notes)
            configs = connector_configs(kind, topic, infile, outfile, sink_session_timeout_ms)
            measured = Monitor.topic(bootstrap, topic) if kind == "source" else Monitor.file(outfile)
            monitors.append(measured)
            trigger = measured
            if kind == "pipeline":  # the fault is injected on the topic's count, as in the issue
                trigger = Monitor.topic(bootstrap, topic)
                monitors.append(trigger)
            if kind == "sink":
                writer = TopicWriter(bootstrap, topic)
            feeder = Feeder(records, feed_s, writer or file_writer(infile))
            if not feed_s:  # every record in place before the connectors start
                feeder.start()
                if writer is not None:
                    wait_until(lambda: writer.flush(1) == 0, 120, message="the sink's input in the topic")
            for name, config in configs.items():
                driver.create(name, config)
            names = list(configs)
            if feed_s:  # fed once every task runs, so that a slow start (a Spark job) does not meet a backlog
                wait_until(lambda: all(ts and all(t.get("state") == "RUNNING" for t in ts)
                                       for ts in tasks_of(driver, names, []).values()),
                           120, interval=0.1, message="every task RUNNING")
                feeder.start()
            main = "source" if kind == "source" else "sink"

            wait_until(lambda: trigger.count.distinct >= records * INJECT_AT, max(120.0, (feed_s or 0) * 3),
                       interval=0.01, message=lambda: f"{INJECT_AT:.0%} of the records ({trigger.count.distinct})")
            result.injected_at = trigger.count.distinct
            finder = coordinator_finder(target, executor, kind, exactly_once, group_id, main)
            result.outage_s, ended = target.inject(outage_s, fsync_delay_ms, finder, result.notes)
            at_end = measured.count.distinct

            def progressed() -> bool:
                return at_end >= records or measured.count.grew_after(ended) is not None

            def failed_visibly() -> bool:
                states = tasks_of(driver, names, [])  # a status call failing during the fault is no news
                return any(t.get("state") == "FAILED" and t.get("trace") for ts in states.values() for t in ts)

            try:
                wait_until(lambda: progressed() or failed_visibly(), bound_s, interval=0.2,
                           message="progress or a FAILED task after the fault")
            except AssertionError:
                result.visible = False
                with open(workdir / "stacks.txt", "w") as stacks:  # where this process's threads are stuck
                    faulthandler.dump_traceback(stacks, all_threads=True)
                dumped = dump_task_processes()
                if dumped:
                    result.notes.append(f"task processes {dumped} printed their stacks on stderr")
                result.stalled = " ".join(f"{n}:{'/'.join(t.get('state', '?') for t in ts)}"
                                          for n, ts in tasks_of(driver, names, result.notes).items())
            if at_end >= records:
                result.recover_s = 0.0
                result.notes.append("every record had arrived before the fault ended")
            elif (grew := measured.count.grew_after(ended)) is not None:
                result.recover_s = grew - ended
            remaining = max(1.0, deadline_s - (time.monotonic() - ended))
            if not (result.visible or patient):
                remaining = 1.0
            with contextlib.suppress(AssertionError):  # a stalled task may still come back before the deadline
                wait_until(lambda: measured.count.distinct >= records or failed_visibly(), remaining,
                           interval=0.2, message="every record")
            result.completed = measured.count.distinct >= records
            if result.recover_s is None and (grew := measured.count.grew_after(ended)) is not None:
                result.recover_s = grew - ended
            if result.completed:  # late duplicates: wait until nothing new arrived for four flush intervals
                last = [measured.count.total, time.monotonic()]

                def quiet() -> bool:
                    if measured.count.total != last[0]:
                        last[:] = [measured.count.total, time.monotonic()]
                    return time.monotonic() - last[1] >= 4 * FLUSH_MS / 1000
                wait_until(quiet, 60, interval=0.1, message="no new records")
            result.tasks = tasks_of(driver, names, result.notes)
            with measured.count.lock:
                counts = dict(measured.count.counts)
            result.lost = sum(1 for i in range(records) if i not in counts)
            result.duplicated = sum(n - 1 for n in counts.values() if n > 1)
            if kind == "pipeline":
                with trigger.count.lock:
                    topic_counts = dict(trigger.count.counts)
                result.notes.append(f"topic: {sum(1 for i in range(records) if i not in topic_counts)} lost, "
                                    f"{sum(n - 1 for n in topic_counts.values() if n > 1)} duplicated")
            replaced = sum(m.reader.replaced for m in monitors if m.reader is not None)
            if replaced:
                result.notes.append(f"the harness's topic reader was stuck and replaced {replaced} times")
            if measured.count.garbage:
                result.notes.append(f"{measured.count.garbage} lines that are no line-{{i}}")
            if writer is not None and writer.errors:
                result.notes.append(f"the harness's producer lost records: {writer.errors[:3]}")
    except Exception as e:  # noqa: BLE001 - the case could not run: reported as such
        log.exception("fault case %s failed to run", result.label)
        result.error = f"{type(e).__name__}: {e}"[:500]
    finally:
        if feeder is not None:
            feeder.stop()
        for m in monitors:
            m.stop()
        if writer is not None:
            writer.flush(5)
        if driver is not None:
            call_with_timeout(driver.close, 60, "closing the worker", result.notes)
        if target is not None:
            call_with_timeout(target.close, 60, "stopping the brokers", result.notes)
        result.elapsed_s = time.monotonic() - started
        if keep == "always" or (keep == "failed" and not result.passed):
            result.workdir = str(workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return result


# ------------------------------------------------------------------------------------------ tables

HEADER = ("case", "executor", "connector", "eos", "lost", "duplicated", "time to recover", "final state",
          "completed")


def table(results: list[CaseResult]) -> str:
    """A markdown table of results: case x executor x connector type x eos -> the measurements."""
    rows = [HEADER, tuple("---" for _ in HEADER)]
    for r in results:
        recover = "never" if r.recover_s is None else f"{r.recover_s:.1f} s"
        state = r.final_state + ("" if r.visible else f" (stalled as {r.stalled})")
        done = "yes" if r.completed else ("error" if r.error else "NO")
        rows.append((r.fault, r.executor, r.kind, "yes" if r.exactly_once else "no", str(r.lost),
                     str(r.duplicated), recover, state, done))
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def runtime_state() -> str:
    """The commit of connect_magics under test, and whether its working tree differs (a digest of the diff)."""
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        return out.stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    diff = git("diff", "HEAD", "--", "connect_magics")
    if not diff:
        return f"{head} (clean)"
    import hashlib

    files = len(git("diff", "HEAD", "--name-only", "--", "connect_magics").splitlines())
    return f"{head} + uncommitted changes in {files} files (diff sha {hashlib.sha256(diff.encode()).hexdigest()[:10]})"


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")
