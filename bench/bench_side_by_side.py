"""connect_magics' worker side by side with a real Apache Kafka Connect worker and a bare confluent-kafka loop.

Run:  python bench/bench_side_by_side.py [--records 1000000] [--rounds 3] [--bootstrap HOST:PORT] [--quick]
      [--no-java] [--no-proc] [--acked-bare] [--only PATTERN[,PATTERN...]]

One run starts (unless --bootstrap is given) an embedded broker, a Java ``ConnectDistributed`` worker
(connect_magics.local.connect_worker, the interop suite's oracle) and two ``connect-magics worker``
subprocesses, one with its tasks on threads (``ours``, the default executor) and one with each task in a
process of its own (``ours/proc``, ``--executor processes``), all driven over REST with identical
connector configs, and measures on the same broker:

- sources: FileStreamSource reading a file of ``--records`` lines of 100 characters into a new topic
  (StringConverter, JsonConverter with and without schemas; ByteArrayConverter cannot take the
  source's STRING values, in Java as here); for ByteArrayConverter, ``LinesBytesSource`` (ours only, a
  ``plugin.path`` installation this bench writes): the same file's lines as schemaless bytes, each record
  with its position as offset and the poll's time as timestamp, as FileStreamSource's; SequenceSource
  (ours only: Apache Kafka's jars have no generator whose tasks do not print every record) with 1 and 4
  tasks;
- sinks: FileStreamSink writing a pre-filled topic (1 or 4 partitions; values encoded for each
  converter) to a file, with 1 and 4 tasks, for the four converters. The verifying sink keeps its
  records in the worker's memory, where a separate process cannot time it: it is not measured.

The embedded broker keeps Kafka's default ``group.initial.rebalance.delay.ms`` (3 s; the test broker
sets 0), so that a sink's four tasks, whose task processes start up to a few tenths of a second apart
(``--executor processes``), get their partitions in one generation, as on a real cluster.
Throughput is counted from the first record seen (in the topic's end offset for sources, in the
output file's lines for sinks, counted from its size) to the last, so that connector start-up is not
measured; a million records by default, so that the sinks' fastest cases last more than half a second.
The bare loops, in this process: read a file's lines and produce each (idempotent, acks=all), the file holding
for each line the bytes the case's converter writes for it (JSON: quoted, in its envelope), so that the bare
topic holds what the connector's does and the loop converts nothing / consume
batches of 500 and write the raw values as lines: ``bare`` with one consumer whatever the task count,
``bare/task`` (sinks with more than one task) with a consumer per task, each on a thread of its own, as
the worker runs its tasks. Each round runs every case on each system in a
rotating order; the table gives medians over the rounds and ratios of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics.local import EmbeddedBroker
from connect_magics.local.broker import HOST, free_port
from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.storage.kafka_log import CONSUMER_DEFAULTS

CHARS = 100
TEXT = "x" * CHARS
JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS: dict[str, dict[str, str]] = {
    "String": {"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
    "ByteArray": {"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"},
    "Json": {"value.converter": JSON, "value.converter.schemas.enable": "false"},
    "Json+schema": {"value.converter": JSON, "value.converter.schemas.enable": "true"},
}
# How each converter's sink topic holds the 100-character value (as Kafka's converters write it).
ENCODED = {"String": TEXT.encode(), "ByteArray": TEXT.encode(), "Json": json.dumps(TEXT).encode(),
           "Json+schema": b'{"schema":{"type":"string","optional":false},"payload":"' + TEXT.encode() + b'"}'}
TIMEOUT = 300.0
CPU_PER_RECORD: list[float] = []  # sources: the last run's CPU seconds per record (the bare loop's, or the worker's)

# A plugin.path installation for the ByteArray source case: FileStreamSource's work without its decoding.
LINES_BYTES_PLUGIN = '''
import itertools
import time

from connect_magics.api import SourceConnector, SourceRecord, SourceTask


class LinesBytesSourceTask(SourceTask):
    """A file's lines (without their newline) as schemaless bytes, 2,000 a poll, offsets as FileStreamSource's."""

    def version(self):
        return "1"

    def start(self, props):
        self.topic, self.partition, self.position = props["topic"], {"filename": props["file"]}, 0
        self.stream = open(props["file"], "rb")

    def poll(self):
        lines = self.stream.readlines(2000 * 101)
        if not lines:
            time.sleep(0.1)
            return None
        timestamp, partition, topic = int(time.time() * 1000), self.partition, self.topic
        positions = itertools.accumulate(map(len, lines), initial=self.position)
        next(positions)
        records = [SourceRecord(partition, {"position": p}, topic, None, None, None, None, line.rstrip(b"\\r\\n"),
                                timestamp) for line, p in zip(lines, positions, strict=True)]
        self.position = records[-1].source_offset["position"]
        return records

    def stop(self):
        self.stream.close()


class LinesBytesSource(SourceConnector):
    def version(self):
        return "1"

    def start(self, props):
        self.props = props

    def task_class(self):
        return LinesBytesSourceTask

    def task_configs(self, max_tasks):
        return [dict(self.props)]

    def stop(self):
        pass
'''


@dataclass(frozen=True)
class Case:
    path: str  # "source" or "sink"
    connector: str  # "file" or "sequence"
    converter: str
    tasks: int

    @property
    def label(self) -> str:
        return f"{self.path} {self.connector} {self.converter} x{self.tasks}"

    @property
    def java(self) -> bool:
        return self.connector == "file"


def all_cases() -> list[Case]:
    cases = [Case("source", "file", c, 1) for c in ("String", "Json", "Json+schema")]
    cases += [Case("source", "lines", "ByteArray", 1)]
    cases += [Case("source", "sequence", "Json", t) for t in (1, 4)]
    cases += [Case("sink", "file", c, t) for t in (1, 4) for c in CONVERTERS]
    return cases


QUICK = [Case("source", "file", "String", 1), Case("source", "lines", "ByteArray", 1),
         Case("sink", "file", "Json+schema", 1)]


# ------------------------------------------------------------------------------------------ workers

class Rest:
    """A Kafka Connect REST API: create and delete connectors."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _call(self, method: str, path: str, body: object = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data, {"Content-Type": "application/json"}, method=method)
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read()
        return json.loads(text) if text else None

    def create(self, name: str, config: dict[str, str]) -> None:
        self._call("POST", "/connectors", {"name": name, "config": config})

    def delete(self, name: str) -> None:
        self._call("DELETE", f"/connectors/{name}")
        deadline = time.monotonic() + 60
        while name in self._call("GET", "/connectors") and time.monotonic() < deadline:  # type: ignore[operator]
            time.sleep(0.1)

    def ready(self) -> bool:
        try:
            self._call("GET", "/connectors")
            return True
        except (OSError, ValueError):
            return False


class MagicsWorker:
    """``connect-magics worker`` as a subprocess (its own process and GIL, like the Java worker)."""

    def __init__(self, bootstrap: str, group: str, data_dir: Path, executor: str) -> None:
        self.port = free_port()
        props = data_dir / f"magics-worker-{executor}.properties"
        plugins = data_dir / "plugins"
        (plugins / "bench-lines").mkdir(parents=True, exist_ok=True)
        (plugins / "bench-lines" / "bench_lines.py").write_text(LINES_BYTES_PLUGIN)
        props.write_text(f"offset.flush.interval.ms=1000\nrest.advertised.host.name={HOST}\nplugin.path={plugins}\n")
        self.out = open(data_dir / f"magics-worker-{executor}.out", "wb")  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from connect_magics.cli import main; sys.exit(main())", "worker",
             "--bootstrap-servers", bootstrap, "--group-id", group, "--rest-port", str(self.port),
             "--config", str(props), "--executor", executor], stdout=self.out, stderr=subprocess.STDOUT)
        self.rest = Rest(f"http://{HOST}:{self.port}")
        deadline = time.monotonic() + 120
        while not self.rest.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"connect-magics worker did not start; see {self.out.name}")
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.out.close()


# ------------------------------------------------------------------------------------------ helpers

def make_topic(admin: AdminClient, name: str, partitions: int) -> str:
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    return name


def fill_topic(bootstrap: str, topic: str, partitions: int, value: bytes, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(n):
        while True:
            try:
                p.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(120) == 0


CPU_TICKS_WORTH = 5  # a span that used fewer of the kernel's CPU ticks gives no CPU figure


def process_cpu(pid: int) -> float:
    """The CPU seconds (user and system, all threads) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_progress(count: Callable[[], int], n: int, what: str, cpu: Callable[[], float] | None = None) -> float:
    """Records per second from the first record ``count()`` reports to the n-th; with ``cpu`` (a process's CPU
    seconds so far), the CPU time per record over the same span goes to ``CPU_PER_RECORD``."""
    deadline = time.monotonic() + TIMEOUT
    first = 0
    while first == 0:
        first = count()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: no record within {TIMEOUT:.0f} s")
        if first == 0:
            time.sleep(0.005)
    start = time.perf_counter()
    cpu_start = cpu() if cpu is not None else 0.0
    done = first
    while done < n:
        time.sleep(0.01)
        done = count()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: {done} of {n} records after {TIMEOUT:.0f} s")
    elapsed = time.perf_counter() - start
    used = cpu() - cpu_start if cpu is not None else 0.0
    if used >= CPU_TICKS_WORTH / os.sysconf("SC_CLK_TCK") and n > first:  # fewer ticks are no measure
        CPU_PER_RECORD.append(used / (n - first))
    return (n - first) / elapsed if elapsed > 0 and n > first else float("nan")


class FileLines:
    """Counts the lines of a file that other processes append to. Lines ``alike`` (the same value in every
    record) are counted from the file's size, the first line's length read once: reading every byte written
    would take CPU from the worker under test. Otherwise (Java's ByteArray lines, ``[B@<hash>``) what is new
    is read and its newlines counted. :meth:`check` reads the whole file afterwards, outside the timing."""

    def __init__(self, path: Path, alike: bool = True) -> None:
        self.path, self.alike, self.line, self.pos, self.lines = path, alike, 0, 0, 0

    def __call__(self) -> int:
        try:
            if self.alike:
                size = os.stat(self.path).st_size
                if not self.line:
                    with open(self.path, "rb") as f:
                        first = f.readline()
                    self.line = len(first) if first.endswith(b"\n") else 0
                return size // self.line if self.line else 0
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                chunk = f.read()
        except FileNotFoundError:
            return 0
        self.pos += len(chunk)
        self.lines += chunk.count(b"\n")
        return self.lines

    def check(self, n: int) -> None:
        lines = self.path.read_bytes().splitlines(keepends=True)
        if len(lines) != n or len(set(lines)) != 1:
            raise RuntimeError(f"{self.path}: {len(lines)} lines ({len(set(lines))} distinct), expected {n} alike")


class EndOffsets:
    """The number of records in a topic (the sum of its partitions' end offsets)."""

    def __init__(self, bootstrap: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-meta"})

    def __call__(self, topic: str, partitions: int) -> int:
        return sum(self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                   for p in range(partitions))


# -------------------------------------------------------------------------------------- bare loops

def bare_source(bootstrap: str, topic: str, source_file: Path, n: int, acked: bool = False) -> float:
    """``acked``: with a delivery callback per record counting the acknowledgements (what a source that commits
    offsets only for acknowledged records needs at least), else only the final flush's count of failures."""
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    count = [0]

    def delivered(err: KafkaError | None, msg: object) -> None:
        if err is None:
            count[0] += 1

    options = {"on_delivery": delivered} if acked else {}
    p.list_topics(topic, timeout=30)  # connected, as the workers' producers are when their first record comes
    start, cpu_start = time.perf_counter(), time.process_time()
    with open(source_file, "rb") as f:
        for line in f:
            while True:
                try:
                    p.produce(topic, line[:-1], **options)
                    break
                except BufferError:
                    p.poll(0.01)
            p.poll(0)
    assert p.flush(120) == 0 and count[0] == (n if acked else 0)
    CPU_PER_RECORD.append((time.process_time() - cpu_start) / n)  # this process: the loop and its client's threads
    return n / (time.perf_counter() - start)


def bare_sink(bootstrap: str, topic: str, n: int, out: Path, consumers: int) -> float:
    """``consumers`` consumers of one group, a thread each, appending batches of 500 raw values as lines."""
    group = f"bare-{uuid.uuid4().hex}"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    lock, done, got, start = threading.Lock(), threading.Event(), [0], [0.0]

    def commit_written(consumer: Consumer, _: object) -> None:
        """What a consumer wrote is committed when its partitions move to another (as the worker does), so
        that a rebalance while the consumers join does not write records twice."""
        try:
            consumer.commit(asynchronous=False)
        except KafkaException as e:
            if e.args[0].code() != KafkaError._NO_OFFSET:
                raise

    def consume() -> None:
        c = Consumer({**CONSUMER_DEFAULTS, "bootstrap.servers": bootstrap, "group.id": group,
                      "auto.offset.reset": "earliest", "enable.auto.commit": False})
        c.subscribe([topic], on_revoke=commit_written)
        try:
            while not done.is_set():
                msgs = [m for m in c.consume(500, timeout=0.1) if not m.error()]
                if msgs:
                    start[0] = start[0] or time.perf_counter()
                    os.write(fd, b"".join(m.value() + b"\n" for m in msgs))
                    with lock:
                        got[0] += len(msgs)
                        if got[0] >= n:
                            done.set()
        finally:
            c.close()

    threads = [threading.Thread(target=consume) for _ in range(consumers)]
    try:
        for t in threads:
            t.start()
        if not done.wait(TIMEOUT):
            raise TimeoutError(f"bare sink: {got[0]} of {n} records after {TIMEOUT:.0f} s")
        return n / (time.perf_counter() - start[0])
    finally:
        done.set()
        for t in threads:
            t.join()
        os.close(fd)


# ------------------------------------------------------------------------------------------ runs

class Bench:
    def __init__(self, bootstrap: str, n: int, data: Path, workers: dict[str, Rest], pids: dict[str, int]) -> None:
        self.bootstrap, self.n, self.data, self.workers, self.pids = bootstrap, n, data, workers, pids
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.count = EndOffsets(bootstrap)
        self.source_file = data / "lines.txt"
        self.source_file.write_text((TEXT + "\n") * n)
        self.sink_topics: dict[tuple[str, int], str] = {}

    def bare_source_file(self, converter: str) -> Path:
        """The bare loop's lines: the bytes the case's converter writes for each line of the source file, encoded
        before the timing, so that its topic holds what the connector's does and the loop converts nothing."""
        if ENCODED[converter] == TEXT.encode():
            return self.source_file
        path = self.data / f"bare-{converter.replace('+', '-')}.txt"
        if not path.exists():
            path.write_bytes((ENCODED[converter] + b"\n") * self.n)
        return path

    def sink_topic(self, converter: str, partitions: int) -> str:
        key = (converter, partitions)
        if key not in self.sink_topics:
            topic = make_topic(self.admin, f"sink-{converter.replace('+', '-')}-{partitions}-{uuid.uuid4().hex[:6]}",
                               partitions)
            fill_topic(self.bootstrap, topic, partitions, ENCODED[converter], self.n)
            self.sink_topics[key] = topic
        return self.sink_topics[key]

    def run(self, case: Case, system: str) -> float:
        """Records/s of ``case`` on ``system``; a sink's output file is removed afterwards (a million lines
        of each case and system would fill the disk)."""
        tag = uuid.uuid4().hex[:8]
        out = self.data / f"out-{tag}.txt"
        try:
            return self._run(case, system, tag, out)
        finally:
            out.unlink(missing_ok=True)

    def _run(self, case: Case, system: str, tag: str, out: Path) -> float:
        if case.path == "source":
            topic = make_topic(self.admin, f"src-{tag}", 1)
            if system in ("bare", "bare+dr"):
                return bare_source(self.bootstrap, topic, self.bare_source_file(case.converter), self.n,
                                   acked=system == "bare+dr")
            if case.connector in ("file", "lines"):
                config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector"
                          if case.connector == "file" else "LinesBytesSource",
                          "file": str(self.source_file), "topic": topic}
            else:
                config = {"connector.class": "SequenceSourceConnector", "topic": topic,
                          "records": str(self.n // case.tasks), "value.size": "70", "key.mode": "none"}
            measure = lambda: self.count(topic, 1)  # noqa: E731
        else:
            topic = self.sink_topic(case.converter, case.tasks)
            if system in ("bare", "bare/task"):
                rate = bare_sink(self.bootstrap, topic, self.n, out, case.tasks if system == "bare/task" else 1)
                FileLines(out).check(self.n)
                return rate
            config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                      "file": str(out), "topics": topic}
            measure = FileLines(out, alike=not (system == "java" and case.converter == "ByteArray"))
        config.update({"tasks.max": str(case.tasks), "key.converter": CONVERTERS[case.converter]["value.converter"],
                       **CONVERTERS[case.converter]})
        rest, name = self.workers[system], f"bench-{tag}"
        rest.create(name, config)
        try:
            expected = self.n // case.tasks * case.tasks
            pid = self.pids.get(system) if case.path == "source" else None  # ours/proc: the tasks' own processes
            rate = wait_progress(measure, expected, f"{system} {case.label}",
                                 None if pid is None else lambda: process_cpu(pid))
            if isinstance(measure, FileLines) and measure.alike:
                measure.check(expected)
            return rate
        finally:
            rest.delete(name)


def _ratios(mine: list[float], other: list[float]) -> str:
    """The ratio of the medians, and the range of the per-round ratios (both ran once in each round)."""
    per_round = [m / o for m, o in zip(mine, other, strict=True)] if len(mine) == len(other) else []
    spread = f" ({min(per_round):.2f}-{max(per_round):.2f})" if len(per_round) > 1 else ""
    return f"{statistics.median(mine) / statistics.median(other):.2f}{spread}"


def table(cases: list[Case], rates: dict[tuple[Case, str], list[float]], systems: list[str]) -> str:
    med = {k: statistics.median(v) for k, v in rates.items() if v}
    mine = [s for s in systems if s.startswith("ours")]
    pairs = [(m, s) for m in mine for s in systems if s not in mine]
    lines = [f"| path | {' | '.join(systems)} | {' | '.join(f'{m} / {s}' for m, s in pairs)} |",
             "|---" * (len(systems) + len(pairs) + 1) + "|"]
    for case in cases:
        cells = [f"{med[(case, s)]:,.0f}" if (case, s) in med else "-" for s in systems]
        ratios = [_ratios(rates[(case, m)], rates[(case, s)]) if (case, m) in med and (case, s) in med else "-"
                  for m, s in pairs]
        lines.append(f"| {case.label} | {' | '.join(cells + ratios)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bootstrap")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 20,000 records, one round, three cases")
    ap.add_argument("--no-java", action="store_true", help="without the Java worker")
    ap.add_argument("--only", help="only the cases whose label contains this text (or one of these, comma-separated)")
    ap.add_argument("--no-proc", action="store_true", help="without the worker running each task in a process")
    ap.add_argument("--acked-bare", action="store_true",
                    help="sources also against bare+dr: the bare loop with a delivery callback per record")
    args = ap.parse_args(argv)
    if args.quick:
        args.records, args.rounds = min(args.records, 20_000), 1
    cases = QUICK if args.quick else all_cases()
    if args.only:
        cases = [c for c in cases if any(pattern in c.label for pattern in args.only.split(","))]
    systems = ["bare"] + (["bare+dr"] if args.acked_bare else []) + ["bare/task", "ours"] \
        + ([] if args.no_proc else ["ours/proc"]) + ([] if args.no_java else ["java"])
    data = Path(tempfile.mkdtemp(prefix="bench-side-by-side-"))
    broker = java = bench = None
    magics: list[MagicsWorker] = []
    try:
        bootstrap = args.bootstrap
        if not bootstrap:
            # Kafka's default initial rebalance delay, as a real cluster has (the test broker's 0 starts tests
            # sooner): a new sink group's first assignment then waits for all of its tasks to join
            broker = EmbeddedBroker(data / "broker", server_properties={"group.initial.rebalance.delay.ms": "3000"}
                                    ).start()
            bootstrap = broker.bootstrap_servers
        tag = uuid.uuid4().hex[:6]
        workers, pids = {}, {}
        for system, executor in (("ours", "threads"), ("ours/proc", "processes")):
            if system not in systems:
                continue
            magics.append(MagicsWorker(bootstrap, f"bench-magics-{executor}-{tag}", data, executor))
            workers[system] = magics[-1].rest
            if executor == "threads":
                pids[system] = magics[-1].proc.pid
        if not args.no_java:
            java = JavaConnectWorker(bootstrap, f"bench-java-{tag}", data / "java",
                                     worker_properties={"offset.flush.interval.ms": "1000"}).start()
            workers["java"] = Rest(java.url)
        bench = Bench(bootstrap, args.records, data, workers, pids)
        rates: dict[tuple[Case, str], list[float]] = {}
        cpu: dict[tuple[Case, str], list[float]] = {}
        for r in range(args.rounds):
            for i, case in enumerate(cases):
                order = [s for s in systems if (s != "java" or case.java)
                         and (s != "bare/task" or (case.path == "sink" and case.tasks > 1))
                         and (s != "bare+dr" or case.path == "source")]
                shift = (r + i) % len(order)
                for system in order[shift:] + order[:shift]:
                    CPU_PER_RECORD.clear()
                    rate = bench.run(case, system)
                    rates.setdefault((case, system), []).append(rate)
                    if CPU_PER_RECORD:
                        cpu.setdefault((case, system), []).append(CPU_PER_RECORD[-1])
                    print(f"round {r + 1} {case.label:<28} {system:<10} {rate:>12,.0f} r/s", flush=True)
        print()
        print(table(cases, rates, systems))
        cpu_cases = [c for c in cases if (c, "bare") in cpu and (c, "ours") in cpu]
        if cpu_cases:
            bares = [b for b in ("bare", "bare+dr") if (cpu_cases[0], b) in cpu]
            print("\nCPU time per record, in microseconds (sources; the bare loop's process, the threads worker's "
                  "process, all threads; a ratio is bare / ours, as for records/s: above 1 is cheaper than bare):\n")
            print(f"| path | {' | '.join(bares)} | ours | {' | '.join(f'{b} / ours' for b in bares)} |\n"
                  + "|---" * (2 * len(bares) + 2) + "|")
            for c in cpu_cases:
                us = [f"{statistics.median(cpu[(c, b)]) * 1e6:.2f}" for b in (*bares, "ours")]
                print(f"| {c.label} | {' | '.join(us)} | "
                      f"{' | '.join(_ratios(cpu[(c, b)], cpu[(c, 'ours')]) for b in bares)} |")
        print(f"\n(medians of {args.rounds} interleaved rounds, in brackets the range of the per-round ratios; "
              f"{args.records:,} records of {CHARS} characters; "
              "connect-magics workers (tasks on threads; ours/proc: a process per task) and Java ConnectDistributed "
              "over REST, the bare loops in the bench process)")
    finally:
        if bench is not None:
            bench.count.consumer.close()
        if java is not None:
            java.stop()
        for worker in magics:
            worker.stop()
        if broker is not None:
            broker.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
