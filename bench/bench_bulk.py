"""Creating many connectors: in bulk (``rt.create_connectors``) and one at a time (``rt.create_connector``), with
the bulk stop, resume and delete, against the bare Kafka work they cannot avoid (measured in the same run).

Run:  python bench/bench_bulk.py [--connectors 1000] [--single 1000] [--bootstrap HOST:PORT]

Starts an embedded broker unless --bootstrap is given. Every connector is a FileStreamSource (one task) reading
an empty temporary file. Each measurement uses a group (and config topic) of its own:

* one at a time: ``--single`` creates, each timed; the table shows the mean, p50 and p95 per create, for all
  of them and for the first and last 100 (tasks of the earlier ones are running meanwhile), and the same for
  connectors created STOPPED (no task: the config topic and the herder alone);
* in bulk: one ``create_connectors`` call of ``--connectors`` connectors (also created STOPPED), then the time
  until every task is RUNNING, then ``stop_connectors(".*")``, ``resume_connectors(".*")`` and
  ``delete_connectors(".*")``.

Baselines (bare confluent-kafka on the same broker): what a create must do at least, two transactions of a
transactional producer (the connector config, then the task config and its commit) each read back by a
read_committed consumer; and what a bulk create must do at least, one transaction of every connector config and
one of every task config and commit, read back.

Goal (issue 30): 1,000 connectors in bulk under 10 s; one at a time under 50 ms each.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.storage.config_store import dumps


def file_source(path: str, topic: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": path, "topic": topic}


class BareRoundTrip:
    """A transactional producer and a read_committed consumer on a topic of one partition: a transaction of
    records, and the wait until the consumer has read past its commit marker."""

    def __init__(self, bootstrap: str) -> None:
        self.topic = f"bench-bulk-bare-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(self.topic, 1, 1, config={"cleanup.policy": "compact"})])[self.topic].result(60)
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": self.topic,
                                  "enable.idempotence": True, "linger.ms": 1})
        self.producer.init_transactions(60)
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": self.topic, "enable.auto.commit": False,
                                  "isolation.level": "read_committed", "fetch.wait.max.ms": 50})
        self.tp = TopicPartition(self.topic, 0, 0)
        self.consumer.assign([self.tp])

    def transaction(self, records: list[tuple[str, bytes]]) -> None:
        self.producer.begin_transaction()
        for key, value in records:
            while True:
                try:
                    self.producer.produce(self.topic, value, key)
                    break
                except BufferError:
                    self.producer.poll(0.05)
        self.producer.commit_transaction(60)
        _, end = self.consumer.get_watermark_offsets(self.tp, timeout=10, cached=False)
        while self.consumer.position([self.tp])[0].offset < end:
            self.consumer.consume(10_000, timeout=0.001)

    def close(self) -> None:
        self.consumer.close()


def bare_create(bare: BareRoundTrip, names: list[str], config: dict[str, str]) -> None:
    """The config topic records of creating ``names`` (one transaction of connector configs, one of task configs
    and commits), as a bare producer writes them."""
    bare.transaction([(f"connector-{n}", dumps({"properties": {**config, "name": n}})) for n in names])
    tasks: list[tuple[str, bytes]] = []
    for n in names:
        tasks += [(f"task-{n}-0", dumps({"properties": {**config, "name": n, "task.class": "x"}})),
                  (f"commit-{n}", dumps({"tasks": 1}))]
    bare.transaction(tasks)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def per_create(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"mean": statistics.fmean(times), "p50": ordered[len(ordered) // 2],
            "p95": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]}


def wait_for(condition: Callable[[], Any], timeout: float) -> float | None:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        if condition():
            return time.perf_counter() - start
        time.sleep(0.1)
    return None


def task_states(rt: ConnectRuntime) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in rt.connectors():
        try:
            tasks = rt.connector_status(name)["tasks"]
        except Exception:  # noqa: BLE001 - no status yet
            tasks = []
        for state in [t["state"] for t in tasks] or ["(no task yet)"]:
            counts[state] = counts.get(state, 0) + 1
    return counts


def one_at_a_time(bootstrap: str, path: str, count: int, initial_state: str | None) -> list[float]:
    with ConnectRuntime(bootstrap, f"bench-single-{uuid.uuid4().hex[:8]}") as rt:
        rt.create_connector("warm-up", file_source(path, "bench-bulk"))
        times = []
        for i in range(count):
            start = time.perf_counter()
            rt.create_connector(f"lines-{i}", file_source(path, "bench-bulk"), initial_state)
            times.append(time.perf_counter() - start)
        rt.delete_connectors(".*")
    return times


def bulk(bootstrap: str, path: str, count: int, initial_state: str | None, rows: list[tuple], baseline: float) -> None:
    label = "" if initial_state is None else f", created {initial_state}"
    with ConnectRuntime(bootstrap, f"bench-bulk-{uuid.uuid4().hex[:8]}") as rt:
        rt.create_connector("warm-up", file_source(path, "bench-bulk"))
        configs = {f"lines-{i}": file_source(path, "bench-bulk") for i in range(count)}
        start = time.perf_counter()
        rt.create_connectors(configs, initial_state)
        took = time.perf_counter() - start
        rows.append((f"create_connectors{label}", count, took, took / count, took / baseline))
        if initial_state is None:
            running = wait_for(lambda: task_states(rt) == {"RUNNING": count + 1}, 120)
            states = task_states(rt)
            rows.append(("  ... until every task RUNNING", count,
                         float("nan") if running is None else took + running, float("nan"), float("nan"),
                         ", ".join(f"{n} {s}" for s, n in sorted(states.items()))))
            for verb in ("stop", "resume"):
                start = time.perf_counter()
                getattr(rt, f"{verb}_connectors")(".*")
                took = time.perf_counter() - start
                rows.append((f"{verb}_connectors('.*')", count + 1, took, took / (count + 1), float("nan")))
        start = time.perf_counter()
        rt.delete_connectors(".*")
        took = time.perf_counter() - start
        rows.append((f"delete_connectors('.*'){label}", count + 1, took, took / (count + 1), float("nan")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connectors", type=int, default=1000, help="connectors created in bulk (default 1000)")
    parser.add_argument("--single", type=int, default=1000, help="connectors created one at a time (default 1000)")
    parser.add_argument("--stopped", type=int, default=200,
                        help="connectors created one at a time STOPPED, without tasks (default 200)")
    parser.add_argument("--bootstrap", help="an existing broker (default: start an embedded one)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # task failures at the process's client limit are counted below
    broker = None
    if args.bootstrap is None:
        broker = EmbeddedBroker()
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    empty = tempfile.NamedTemporaryFile(prefix="bench-bulk-", suffix=".txt", delete=False)
    empty.close()
    config = file_source(empty.name, "bench-bulk")
    try:
        bare = BareRoundTrip(bootstrap)
        bare_create(bare, ["warm-up"], config)
        singles = []
        for i in range(100):
            start = time.perf_counter()
            bare_create(bare, [f"bare-{i}"], config)
            singles.append(time.perf_counter() - start)
        bare_single = statistics.fmean(singles)
        start = time.perf_counter()
        bare_create(bare, [f"bare-bulk-{i}" for i in range(args.connectors)], config)
        bare_bulk = time.perf_counter() - start
        bare.close()

        rows: list[tuple] = [("bare Kafka: 2 transactions read back", 1, bare_single, bare_single, 1.0),
                             (f"bare Kafka: 2 transactions of {args.connectors}", args.connectors, bare_bulk,
                              bare_bulk / args.connectors, 1.0)]
        bulk(bootstrap, empty.name, args.connectors, "STOPPED", rows, bare_bulk)
        bulk(bootstrap, empty.name, args.connectors, None, rows, bare_bulk)
        singles_rows = []
        for count, state in ((args.stopped, "STOPPED"), (args.single, None)):
            if count <= 0:
                continue
            times = one_at_a_time(bootstrap, empty.name, count, state)
            label = "create_connector" + ("" if state is None else f", created {state}")
            parts = [("all", times)]
            if count > 200:
                parts += [("first 100", times[:100]), ("last 100", times[-100:])]
            for part, values in parts:
                stats = per_create(values)
                singles_rows.append((f"{label} ({part})", len(values), sum(values), stats, stats["mean"] / bare_single))
    finally:
        if broker is not None:
            broker.stop()

    print(f"\nBulk operations, FileStreamSource connectors (one task each) on {bootstrap}\n")
    print(f"{'operation':<44} {'connectors':>10} {'total s':>9} {'ms each':>9} {'vs bare':>8}  notes")
    for row in rows:
        name, count, total, each, ratio, *notes = row
        print(f"{name:<44} {count:>10} {total:>9.2f} {ms(each):>9} {ratio:>8.1f}  {' '.join(notes)}")
    print(f"\n{'one at a time':<44} {'connectors':>10} {'total s':>9} {'mean ms':>9} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'vs bare':>8}")
    for name, count, total, stats, ratio in singles_rows:
        print(f"{name:<44} {count:>10} {total:>9.2f} {ms(stats['mean']):>9} {ms(stats['p50']):>8} "
              f"{ms(stats['p95']):>8} {ratio:>8.1f}")
    print(f"\nbare Kafka per create (2 transactions read back): {ms(bare_single)} ms")


if __name__ == "__main__":
    main()
