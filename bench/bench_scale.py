"""Many connectors over a group of worker processes (issue 30): tasks spread over the workers, one run.

Run:  python bench/bench_scale.py [--connectors 1000] [--tasks 2] [--workers 4] [--rate 1]
                                 [--transaction-interval-ms 5000] [--bootstrap HOST:PORT] [--logs DIR]
                                 [--java [--java-heap 768m]]

Starts an embedded broker unless --bootstrap is given, then ``--workers`` ``connect-magics worker`` processes of
one new group (``session.timeout.ms`` 6 s, ``scheduled.rebalance.max.delay.ms`` 2 s, offsets flushed every
second). Every connector is a SequenceSource with ``--tasks`` tasks writing ``--rate`` small records a second per
task to one topic. Measured, in order:

1. create rate: ``POST /connectors`` one at a time to the leader's REST API (what Kafka Connect's clients do),
   then the time until every task is RUNNING, and how the tasks are spread (per worker);
2. resident memory and threads of each worker process, per task it runs;
3. status latency: ``GET /connectors?expand=status`` (every connector's status, one call) on a follower;
4. a killed worker (SIGKILL): the time until its tasks are RUNNING on the others (bound: session timeout +
   delay + one look of the leader, 1 s), then a new worker at its address and the time until it has its share;
5. a group restart: every worker stopped (SIGTERM, all at once) and started again at its address; the time from the first
   start until every task is RUNNING again;
6. the count: every record read back (read committed), each (connector, task)'s sequence numbers checked to be
   0..n once each (the sources run with exactly-once support unless --at-least-once: one Kafka client per task,
   records and offsets in transactions every ``--transaction-interval-ms``).

With ``--java`` the same steps run on Apache Kafka Connect's own distributed workers (``ConnectDistributed``,
Kafka 4.1.1 from Maven Central, :class:`connect_magics.local.connect_worker.JavaConnectWorker`, ``--java-heap``
each) with the same worker settings, for the issue's side-by-side figures: the connectors are then
bench/java/SequenceSourceConnector.java, compiled into a temporary plugin jar on the workers' ``plugin.path``,
which writes the same records (value, source partition and offset) as SequenceSource.

The baseline of each time is what the group cannot do faster: 1. the bare broker round trips of a create (two
transactions read back), measured by bench/bench_bulk.py; 4. session timeout + delay; 5. a worker's start-up
alone (its REST API answering), measured here for the first worker.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

from connect_magics.local.broker import HOST
from connect_magics.local.connect_worker import DEFAULT_HEAP, JavaConnectWorker
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION, connect_classpath
from connect_magics.local.java import find_java

SESSION_MS, DELAY_MS = 6000, 2000
JAVA_CONNECTOR = "bench.SequenceSourceConnector"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rest(url: str, method: str = "GET", body: Any = None, timeout: float = 60.0) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)  # a benchmark polling a REST API, not a test's synchronisation


class Worker:
    """One worker process of the group at ``port``, either kind (:class:`PythonWorker`, :class:`JavaWorker`):
    started when made, measured from ``/proc``, stopped by a signal."""

    logs: str | None = None  # a directory for the workers' logs (--logs)
    proc: subprocess.Popen

    def __init__(self, port: int, worker_id: str) -> None:
        self.port, self.url, self.worker_id = port, f"http://127.0.0.1:{port}", worker_id
        self.started = time.monotonic()

    def ready(self) -> bool:
        """Its REST API answers (GET /, both kinds); an error if the process ended."""
        if self.proc.poll() is not None:
            raise RuntimeError(f"worker :{self.port} exited with code {self.proc.returncode}{self.log_tail()}")
        try:
            return rest(self.url + "/", timeout=2)[0] == 200
        except OSError:
            return False

    def log_tail(self) -> str:
        return ""

    def usage(self) -> tuple[float, int]:
        """Resident MB and threads of the process."""
        fields = dict(line.split(":", 1) for line in open(f"/proc/{self.proc.pid}/status"))
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["Threads"])

    def cpu(self) -> float:
        """CPU seconds (user and system, all threads) the process has used so far."""
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def send(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.send(sig)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class PythonWorker(Worker):
    """A ``connect-magics worker`` process with the worker properties file ``config``."""

    def __init__(self, bootstrap: str, group: str, port: int, config: str) -> None:
        super().__init__(port, f"{socket.gethostname()}:{port}")
        log = subprocess.DEVNULL if self.logs is None else \
            open(os.path.join(self.logs, f"worker-{port}-{time.time():.0f}.log"), "w")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "connect_magics.cli", "worker", "--bootstrap-servers",
                                      bootstrap, "--group-id", group, "--rest-port", str(port), "--config", config],
                                     stdout=log, stderr=log)


class JavaWorker(Worker):
    """An Apache Kafka Connect ``ConnectDistributed`` JVM with ``properties`` over the fixture's defaults (its own
    group's topics, JSON converters, a REST listener on 127.0.0.1: worker id ``127.0.0.1:port``), its data and log
    under ``directory``."""

    heap = DEFAULT_HEAP  # -Xmx of each worker (--java-heap)

    def __init__(self, bootstrap: str, group: str, port: int, properties: dict[str, str], directory: str) -> None:
        super().__init__(port, f"{HOST}:{port}")
        data = os.path.join(self.logs or directory, f"java-worker-{port}-{time.time_ns()}")
        # Not waited for here: the bench waits for a whole restarting group at once (start() would wait for each
        # worker in turn, and stop one slow to answer).
        self.java = JavaConnectWorker(bootstrap, group, data_dir=data, port=port, heap=self.heap,
                                      worker_properties=properties).start(wait=False)
        self.proc = self.java.process

    def log_tail(self) -> str:
        return f"; its log ({self.java.log_file}):\n{self.java.log_tail()}"


def build_java_plugin(directory: str) -> str:
    """bench/java/SequenceSourceConnector.java compiled (``javac --release 17`` against the Kafka Connect jars)
    into a plugin jar with its ServiceLoader manifest (the fixture's workers discover plugins that way), in
    ``directory``/plugins: the ``plugin.path`` to give the workers."""
    java = find_java()
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java", "SequenceSourceConnector.java")
    classes, plugins = os.path.join(directory, "classes"), os.path.join(directory, "plugins")
    subprocess.run([os.path.join(java.home, "bin", "javac"), "--release", "17", "-cp",
                    connect_classpath(java=java.executable), "-d", classes, source], check=True)
    services = os.path.join(classes, "META-INF", "services")
    os.makedirs(services)
    with open(os.path.join(services, "org.apache.kafka.connect.source.SourceConnector"), "w") as f:
        f.write(f"{JAVA_CONNECTOR}\n")
    os.makedirs(plugins)
    subprocess.run([os.path.join(java.home, "bin", "jar"), "--create", "--file",
                    os.path.join(plugins, "bench-sequence-source.jar"), "-C", classes, "."], check=True)
    return plugins


def stop_all(workers: list[Worker]) -> None:
    """SIGTERM to every worker at once, then wait for each: stopped one after the other, the members still up
    took the tasks of those that left, hundreds each, while they were about to stop too."""
    for w in workers:
        w.send()
    for w in workers:
        w.stop()


def placement(url: str) -> dict[tuple[str, int], str | None] | None:
    """Every task's worker while RUNNING (None otherwise), from one expanded status call."""
    try:
        status, body = rest(url + "/connectors?expand=status", timeout=30)
    except OSError:
        return None
    if status != 200:
        return None
    out = {}
    for name, entry in body.items():
        for task in entry["status"]["tasks"]:
            out[(name, task["id"])] = task["worker_id"] if task["state"] == "RUNNING" else None
    return out


def all_running(url: str, tasks: int, exclude: str | None = None) -> Callable[[], dict | None]:
    """A check that every task is RUNNING in the REST API of ``url`` (none on worker ``exclude``)."""

    def check() -> dict | None:
        placed = placement(url)
        if placed is None or len(placed) != tasks or None in placed.values() or exclude in placed.values():
            return None
        return placed
    return check


def milestones(curve: list[tuple[float, int]], tasks: int) -> str:
    """When a quarter, half and three quarters of ``tasks`` were RUNNING, from a curve of (time, count)."""
    times = [next((f"{t:.1f}" for t, n in curve if n >= tasks * q), "-") for q in (0.25, 0.5, 0.75)]
    return f"a quarter, half, three quarters RUNNING at {', '.join(times)} s"


class StatusWatcher:
    """Every task's last status as the workers wrote it to the group's status topic, read on a thread of its own:
    when tasks run, without a REST call to a worker busy starting hundreds of tasks in between (such a call
    answered only after 30 s in a group restart)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        config = {"bootstrap.servers": bootstrap, "group.id": f"watch-{uuid.uuid4().hex[:8]}",
                  "enable.auto.commit": False}
        self._consumer, self._ends = Consumer(config), Consumer(config)  # a query waits while the other consumes
        partitions = self._ends.list_topics(topic, timeout=30).topics[topic].partitions
        self._partitions = [TopicPartition(topic, p) for p in partitions]
        self._consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        self._last: dict[bytes, tuple[int, int, str | None, str | None]] = {}  # key: partition, offset, state, worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for msg in self._consumer.consume(1000, timeout=0.2):
                key = msg.key()
                if msg.error() is None and key and key.startswith(b"status-task-"):
                    value = json.loads(msg.value()) if msg.value() else {}
                    self._last[key] = (msg.partition(), msg.offset(), value.get("state"), value.get("worker_id"))
        self._consumer.close()

    def mark(self) -> dict[int, int]:
        """The topic's end now: a task counts as RUNNING after the mark only once it wrote RUNNING past it."""
        return {tp.partition: self._ends.get_watermark_offsets(tp, timeout=30)[1] for tp in self._partitions}

    def curve(self, tasks: int, mark: dict[int, int], exclude: str | None, curve: list[tuple[float, int]],
              start: float) -> Callable[[], bool]:
        """A check that ``tasks`` wrote RUNNING past ``mark`` (on no worker ``exclude``); each look's count goes
        to ``curve`` with its time after ``start``."""
        def check() -> bool:
            running = sum(offset >= mark[partition] and state == "RUNNING" and worker != exclude
                          for partition, offset, state, worker in list(self._last.values()))
            curve.append((time.monotonic() - start, running))
            return running >= tasks
        return check

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._ends.close()


def count_sequences(bootstrap: str, topic: str) -> tuple[int, int, int]:
    """Reads ``topic`` to its end (read committed) and counts, over every (connector, task), the sequence
    numbers missing below the highest one seen and those seen more than once: (lost, duplicated, records)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"count-{uuid.uuid4().hex[:8]}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen: dict[tuple[str, int], collections.Counter] = collections.defaultdict(collections.Counter)
        records = 0
        while consumer.position([TopicPartition(topic, 0)])[0].offset < end:
            batch = consumer.consume(10000, timeout=10)
            if not batch:  # the last stable offset: the rest is in transactions still open
                break
            for msg in batch:
                if msg.error() is None:
                    value = json.loads(msg.value())
                    seen[(value["connector"], value["task"])][value["seq"]] += 1
                    records += 1
    finally:
        consumer.close()
    lost = sum(max(c) + 1 - len(c) for c in seen.values())
    duplicated = sum(n - 1 for c in seen.values() for n in c.values())
    return lost, duplicated, records


def per_second(rate: float) -> str:
    """A rate as a whole number, with one decimal below 10 (0.4/s rather than 0/s)."""
    return f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"


class Rows(list):
    """The table's rows, each also printed as soon as it is measured (a run stopped midway keeps them)."""

    def add(self, row: tuple[str, str, str]) -> None:
        self.append(row)
        print("measured:", " | ".join(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connectors", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=2, help="tasks per connector")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--bootstrap")
    parser.add_argument("--at-least-once", action="store_true",
                        help="source tasks without exactly-once support (two Kafka clients each, not one; "
                             "duplicates after a kill are then expected and counted)")
    parser.add_argument("--rate", type=float, default=1.0, help="records a second per task (default 1)")
    parser.add_argument("--transaction-interval-ms", type=int, default=5000,
                        help="exactly-once: how often each task commits a transaction (default 5000)")
    parser.add_argument("--logs", help="a directory to keep each worker process's log in")
    parser.add_argument("--java", action="store_true",
                        help="the same on Apache Kafka Connect's Java workers (ConnectDistributed) instead of ours")
    parser.add_argument("--java-heap", default=DEFAULT_HEAP, help=f"--java: each worker's -Xmx (default {DEFAULT_HEAP})")
    args = parser.parse_args()
    Worker.logs, JavaWorker.heap = args.logs, args.java_heap
    group, topic = f"scale-{uuid.uuid4().hex[:8]}", f"scale-{uuid.uuid4().hex[:8]}"
    scratch = tempfile.mkdtemp(prefix="bench-scale-")  # the worker config or Java plugin, Java workers' data
    try:
        plugin_path = build_java_plugin(scratch) if args.java else None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    # Kafka Connect's worker keys, the same for both kinds
    settings = {"session.timeout.ms": str(SESSION_MS), "heartbeat.interval.ms": "1000",
                "scheduled.rebalance.max.delay.ms": str(DELAY_MS), "offset.flush.interval.ms": "1000",
                **({} if args.at_least_once else {"exactly.once.source.support": "enabled"})}
    start_worker: Callable[[int], Worker]
    if args.java:
        settings["plugin.path"] = plugin_path
        connector_class = JAVA_CONNECTOR

        def start_worker(port: int) -> Worker:
            return JavaWorker(bootstrap, group, port, settings, scratch)
    else:
        settings["leader.request.timeout.ms"] = "120000"  # ours only
        config = os.path.join(scratch, "worker.properties")
        with open(config, "w") as f:
            f.writelines(f"{key}={value}\n" for key, value in settings.items())
        connector_class = "SequenceSource"

        def start_worker(port: int) -> Worker:
            return PythonWorker(bootstrap, group, port, config)
    broker = None
    if args.bootstrap is None:
        from connect_magics.local import EmbeddedBroker

        broker = EmbeddedBroker()
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    total = args.connectors * args.tasks
    rows = Rows()
    workers: list[Worker] = []
    completed = False
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: a collected client cancels its requests
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        ports = [free_port() for _ in range(args.workers)]
        for port in ports:  # one after the other: the first leads
            workers.append(start_worker(port))
            wait_for(workers[-1].ready, 120, f"worker {port}")
            if len(workers) == 1:
                rows.add(("worker start-up (REST API answering)", f"{time.monotonic() - workers[0].started:.1f} s",
                             "baseline of the restart"))
        leader = workers[0]

        # 1. create rate
        times = []
        for i in range(args.connectors):
            body = {"name": f"seq-{i}", "config": {
                "connector.class": connector_class, "topic": topic, "tasks.max": str(args.tasks),
                "rate": str(args.rate),
                "batch.size": "1", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false",
                # the connector's name in each record, for the count at the end
                "transforms": "name", "transforms.name.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.name.static.field": "connector", "transforms.name.static.value": f"seq-{i}",
                **({} if args.at_least_once else {"transaction.boundary": "interval",
                                                  "transaction.boundary.interval.ms": str(args.transaction_interval_ms)})}}
            start = time.perf_counter()
            status, answer = rest(leader.url + "/connectors", "POST", body)
            times.append(time.perf_counter() - start)
            if status != 201:
                raise RuntimeError(f"creating seq-{i}: {status} {answer}")
        created = time.monotonic()
        rows.add((f"create {args.connectors} connectors one at a time (REST)",
                     f"{sum(times):.1f} s, {per_second(args.connectors / sum(times))}/s",
                     f"p50 {statistics.median(times) * 1000:.0f} ms, "
                     f"p95 {sorted(times)[int(len(times) * 0.95)] * 1000:.0f} ms"))
        placed = wait_for(all_running(workers[-1].url, total), 600, "every task RUNNING")
        counts = collections.Counter(placed.values())
        rows.add((f"all {total} tasks RUNNING after the last create", f"{time.monotonic() - created:.1f} s",
                     "tasks per worker: " + ", ".join(str(counts[w.worker_id]) for w in workers)))

        # 2. memory and threads
        for w in workers:
            rss, threads = w.usage()
            n = max(1, counts[w.worker_id])
            rows.add((f"worker :{w.port} ({counts[w.worker_id]} tasks)", f"{rss:.0f} MB, {threads} threads",
                         f"{rss / n:.2f} MB and {threads / n:.1f} threads per task"))

        # 2b. CPU of the running group over 10 s (each task writes one record a second)
        before, start = [w.cpu() for w in workers], time.monotonic()
        time.sleep(10)  # the measuring window
        used = [(w.cpu() - b) / (time.monotonic() - start) for w, b in zip(workers, before, strict=True)]
        rows.add(("CPU of each worker, running", " ".join(f"{u:.2f}" for u in used),
                     f"cores; per task {sum(used) / max(1, total) * 1000:.2f} ms/s"))

        # 3. status latency on a follower
        latencies = []
        for _ in range(5):
            start = time.perf_counter()
            placement(workers[-1].url)
            latencies.append(time.perf_counter() - start)
        rows.add(("GET /connectors?expand=status on a follower", f"{statistics.median(latencies) * 1000:.0f} ms",
                     f"median of 5, {args.connectors} connectors"))

        # 4. a killed worker
        victim = workers[-1]
        moved = counts[victim.worker_id]
        watcher = StatusWatcher(bootstrap, f"{group}-status")
        victim.stop(signal.SIGKILL)
        killed, curve, mark = time.monotonic(), [], watcher.mark()
        wait_for(watcher.curve(moved, mark, victim.worker_id, curve, killed), 600, "the killed worker's tasks elsewhere")
        moved_in = time.monotonic() - killed
        wait_for(all_running(leader.url, total, exclude=victim.worker_id), 600, "the move in the REST API")
        rows.add((f"a killed worker's {moved} tasks RUNNING elsewhere", f"{moved_in:.1f} s",
                  f"bound: session {SESSION_MS / 1000:g} s + delay {DELAY_MS / 1000:g} s + 1 s; "
                  + milestones(curve, moved) + f"; all in the REST API at {time.monotonic() - killed:.1f} s"))
        workers[-1] = start_worker(victim.port)
        wait_for(workers[-1].ready, 120, "the killed worker back")
        back = time.monotonic()

        def balanced() -> bool:  # every worker within a task of the others: the restart starts from a full share each
            placed = placement(leader.url)
            counts = collections.Counter(placed.values()) if placed and None not in placed.values() else {}
            return len(counts) == len(workers) and max(counts.values()) - min(counts.values()) <= 1
        wait_for(balanced, 300, "the group balanced again")
        rows.add(("the replaced worker given its share", f"{time.monotonic() - back:.1f} s",
                  "after its REST API answered"))

        # 5. a group restart
        stop_all(workers)
        restarted, curve, mark = time.monotonic(), [], watcher.mark()
        workers = [start_worker(port) for port in ports]
        wait_for(watcher.curve(total, mark, None, curve, restarted), 900, "every task RUNNING after the restart")
        all_in = time.monotonic() - restarted
        wait_for(all_running(workers[0].url, total), 900, "the restart in the REST API")
        counts = collections.Counter(placement(workers[0].url).values())
        first = next((f"{t:.1f}" for t, n in curve if n), "-")
        rows.add((f"group restart ({args.workers} workers): all {total} tasks RUNNING", f"{all_in:.1f} s",
                  "tasks per worker: " + ", ".join(str(counts[w.worker_id]) for w in workers)
                  + f"; first RUNNING at {first} s, " + milestones(curve, total)
                  + f"; all in the REST API at {time.monotonic() - restarted:.1f} s"))

        watcher.close()

        # 6. every record of every task, read committed, once the group has stopped: each task's sequence
        # numbers 0..n, once each
        stop_all(workers)
        lost, duplicated, records = count_sequences(bootstrap, topic)
        rows.add((f"records read back ({'at least once' if args.at_least_once else 'exactly once'})",
                     f"{records:,}", f"{lost} lost, {duplicated} duplicated, over {total} tasks' sequences"))
        completed = True
    finally:
        for w in workers:
            w.stop(signal.SIGKILL)
        shutil.rmtree(scratch, ignore_errors=True)
        if broker is not None:
            broker.stop()
        kind = f"Kafka Connect {DEFAULT_KAFKA_VERSION} (Java, -Xmx{args.java_heap})" if args.java else "connect-magics"
        print(f"\n{args.connectors} connectors x {args.tasks} tasks over {args.workers} {kind} workers, {args.rate:g} "
              f"record(s)/s per task ({os.cpu_count()} cores, shared)"
              f"{'' if completed else ': stopped by the error below'}\n")
        width = max((len(r[0]) for r in rows), default=0)
        for what, value, note in rows:
            print(f"{what:<{width}}  {value:>22}  {note}")


if __name__ == "__main__":
    main()
