"""Source and sink throughput of one task (100-byte records) against a bare confluent-kafka loop.

Run:  python bench/bench_throughput.py [--records 300000] [--rounds 11] [--bootstrap HOST:PORT]

Starts an embedded broker unless --bootstrap is given. Each round measures, on the same broker, the
bare producer and consumer loops (the ceiling for Python) and a connector task doing the same work
through the runtime. The sink is measured three ways: a task that only counts its batches (against a
bare loop that only checks each message for an error), one that reads every record's value, and one
that reads the values as a column (both against a bare loop that reads every message's value). Prints the median records/s of each over the rounds, the ratio of the medians,
and the range of the per-round ratios (single runs on a shared 2-core machine vary by 2-4x).
Both consumers use the same client settings (the runtime's CONSUMER_DEFAULTS), so that the
comparison is between the loops, not between librdkafka configurations.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.api import SinkConnector, SinkRecords, SinkTask, SourceConnector, SourceRecord, SourceTask
from connect_magics.local import EmbeddedBroker
from connect_magics.storage.kafka_log import CONSUMER_DEFAULTS

PAYLOAD = b"x" * 100
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
PRODUCER = {"enable.idempotence": True, "acks": "all"}


class BytesSourceTask(SourceTask):
    """Emits ``records`` 100-byte values in batches, with an offset per record."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.topic, self.left, self.n, self.name = props["topic"], int(props["records"]), 0, props["name"]
        self.partition = {"p": 0}

    def poll(self) -> list[SourceRecord] | None:
        FIRST_POLL.setdefault(self.name, time.perf_counter())
        if self.left <= 0:  # done: idle briefly, so that the last acknowledgements are served without delay
            time.sleep(0.005)
            return None
        batch = min(self.left, 2000)
        self.left -= batch
        out = [SourceRecord(self.partition, {"n": n}, self.topic, value=PAYLOAD) for n in range(self.n, self.n + batch)]
        self.n += batch
        return out

    def stop(self) -> None:
        pass


class BytesSource(SourceConnector):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type:
        return BytesSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


COUNTS: dict[str, int] = {}
FIRST_POLL: dict[str, float] = {}  # when each source task first polled: startup is not throughput


class CountingSinkTask(SinkTask):
    """Counts what it receives; ``read`` says how it reads the records (see SINK_MODES)."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.name, self.read = props["name"], SINK_MODES[props["mode"]]

    def put(self, records: SinkRecords) -> None:
        self.read(records)
        COUNTS[self.name] = COUNTS.get(self.name, 0) + len(records)

    def stop(self) -> None:
        pass


def _read_each_value(records: SinkRecords) -> None:
    for r in records:
        r.value  # noqa: B018 - reading is the work measured


# How the sink task reads a batch, each against a bare loop doing the same to the raw messages.
SINK_MODES = {
    "count": len,  # only counts, as the bare loop that only checks each message for an error
    "records": _read_each_value,  # reads each record's value; the bare loop reads each message's value
    "column": SinkRecords.values,  # reads the values as a column; the same bare loop
}


class CountingSink(SinkConnector):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type:
        return CountingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass


def make_topic(bootstrap: str, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def end_offset(bootstrap: str, topic: str) -> int:
    from confluent_kafka import TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-meta"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def bare_produce(bootstrap: str, topic: str, n: int) -> float:
    p = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    acked = [0]

    def cb(err: object, msg: object) -> None:
        acked[0] += 1
    start = time.perf_counter()
    for _ in range(n):
        while True:
            try:
                p.produce(topic, PAYLOAD, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    p.flush(120)
    elapsed = time.perf_counter() - start
    assert acked[0] == n
    return n / elapsed


def bare_consume(bootstrap: str, topic: str, n: int, read_values: bool) -> float:
    c = Consumer({**CONSUMER_DEFAULTS, "bootstrap.servers": bootstrap, "group.id": f"bare-{uuid.uuid4().hex}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got, start = 0, None
    while got < n:
        msgs = c.consume(500, timeout=1)
        if msgs and start is None:
            start = time.perf_counter()
        if read_values:
            got += sum(1 for m in msgs if not m.error() and m.value() is not None)
        else:
            got += sum(1 for m in msgs if not m.error())
    elapsed = time.perf_counter() - start
    c.close()
    return n / elapsed


def runtime_source(rt: ConnectRuntime, bootstrap: str, topic: str, n: int) -> float:
    name = f"src-{uuid.uuid4().hex[:6]}"
    rt.create_connector(name, {"connector.class": "BytesSource", "topic": topic, "records": str(n),
                               "value.converter": BYTES, "key.converter": BYTES})
    def runner():  # the task's runner, on a thread of this process (ThreadExecutor's handle)
        return getattr(rt.herder.task_handle(name, 0), "runner", None)

    task = runner()
    while task is None or task.task_metrics.written.total < n or task.submitted.outstanding > 0:
        time.sleep(0.005)
        task = task or runner()
    elapsed = time.perf_counter() - FIRST_POLL[name]
    rt.delete_connector(name)
    assert end_offset(bootstrap, topic) >= n
    return n / elapsed


def runtime_sink(rt: ConnectRuntime, topic: str, n: int, mode: str) -> float:
    name = f"sink-{uuid.uuid4().hex[:6]}"
    rt.create_connector(name, {"connector.class": "CountingSink", "topics": topic, "mode": mode,
                               "value.converter": BYTES, "key.converter": BYTES})
    while COUNTS.get(name, 0) == 0:
        time.sleep(0.001)
    start = time.perf_counter()
    first = COUNTS[name]
    while COUNTS.get(name, 0) < n:
        time.sleep(0.005)
    elapsed = time.perf_counter() - start
    rt.delete_connector(name)
    return (n - first) / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--bootstrap")
    args = ap.parse_args()
    broker = None
    bootstrap = args.bootstrap
    if not bootstrap:
        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap_servers
    try:
        n, tag = args.records, uuid.uuid4().hex[:6]
        paths = [("source", "bare_p", "ours_p")] + [(f"sink ({mode})", "bare_v" if mode != "count" else "bare_c",
                                                       f"ours_{mode}") for mode in SINK_MODES]
        rates: dict[str, list[float]] = {key: [] for _, *keys in paths for key in keys}
        with ConnectRuntime(bootstrap, f"bench-{tag}", {"offset.flush.interval.ms": "1000"}) as rt:
            rt.plugins.register(BytesSource)
            rt.plugins.register(CountingSink)
            for r in range(args.rounds):
                bare_topic = make_topic(bootstrap, f"bare-{tag}-{r}")
                rates["bare_p"].append(bare_produce(bootstrap, bare_topic, n))
                rates["ours_p"].append(runtime_source(rt, bootstrap, make_topic(bootstrap, f"src-{tag}-{r}"), n))
                rates["bare_c"].append(bare_consume(bootstrap, bare_topic, n, read_values=False))
                rates["bare_v"].append(bare_consume(bootstrap, bare_topic, n, read_values=True))
                for mode in SINK_MODES:
                    rates[f"ours_{mode}"].append(runtime_sink(rt, bare_topic, n, mode))
        print(f"{'path':<16}{'bare confluent-kafka':>24}{'connect_magics task':>24}{'ratio':>8}{'per-round ratios':>20}")
        for path, bare, ours in paths:
            per_round = [o / b for o, b in zip(rates[ours], rates[bare], strict=True)]
            b_med, o_med = statistics.median(rates[bare]), statistics.median(rates[ours])
            print(f"{path:<16}{b_med:>20,.0f} r/s{o_med:>20,.0f} r/s{o_med / b_med:>8.2f}"
                  f"{min(per_round):>13.2f} - {max(per_round):.2f}")
        print(f"(medians of {args.rounds} rounds; {n:,} records of 100 bytes, one task, one partition, "
              "acks=all idempotent producer)")
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
