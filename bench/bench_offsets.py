"""KIP-875 offsets: get, alter and reset of a source connector with 100,000 partitions and a sink connector
with 1,000 topic-partitions, against bare confluent-kafka doing the same Kafka work.

Run:  python bench/bench_offsets.py [--partitions 100000] [--sink-partitions 1000] [--repeat 3]
                                     [--bootstrap HOST:PORT]

Starts an embedded broker unless --bootstrap is given. Each operation runs ``--repeat`` times (alter → get →
reset, on a STOPPED connector); the table shows the median. Baselines, measured in the same run on the same
broker:

* source: a bare idempotent producer writing the same number of offset records (same keys and values) to a
  25-partition topic, then a bare consumer reading them back to the end (what alter/reset must do at least);
  ``get`` is compared with the read alone.
* sink: bare ``AdminClient`` calls on a consumer group of the same size: alter, list, delete group, on a client
  that is already connected (the runtime, like Kafka Connect, makes its clients per request).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.storage.group_offsets import alter_group_offsets, delete_group


def timed(fn: Callable[[], object]) -> float:
    return measured(fn)[0]


CPU: dict[str, list[float]] = {}
"""Process CPU seconds (every thread: the runtime's readers and librdkafka's too) of the source operations and
their baselines, by label: on a shared machine, the part of the time that does not depend on the load."""


def measured(fn: Callable[[], object], cpu: str | None = None) -> tuple[float, object]:
    start, start_cpu = time.perf_counter(), time.process_time()
    result = fn()
    if cpu is not None:
        CPU.setdefault(cpu, []).append(time.process_time() - start_cpu)
    return time.perf_counter() - start, result


def create_topic(admin: AdminClient, name: str, partitions: int) -> None:
    admin.create_topics([NewTopic(name, partitions, 1, config={"cleanup.policy": "compact"})])[name].result(120)


def source_baseline(bootstrap: str, admin: AdminClient, records: list[tuple[bytes, bytes]]) -> tuple[float, float]:
    """Seconds to produce ``records`` (until acknowledged) and to read them back to the end."""
    topic = f"bench-raw-{uuid.uuid4().hex[:8]}"
    create_topic(admin, topic, 25)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 1})

    def produce() -> None:
        for key, value in records:
            while True:
                try:
                    producer.produce(topic, value, key)
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(60) == 0

    def read() -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"raw-{uuid.uuid4().hex}",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "fetch.wait.max.ms": 50})
        parts = [TopicPartition(topic, p, 0) for p in range(25)]
        ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in parts}
        consumer.assign(parts)
        seen = {p: 0 for p in ends}
        while any(seen[p] < ends[p] for p in ends):
            for m in consumer.consume(1000, timeout=0.1):
                if not m.error():
                    json.loads(m.key())
                    json.loads(m.value())
                    seen[m.partition()] = m.offset() + 1
        consumer.close()

    return measured(produce, "raw produce")[0], measured(read, "raw read")[0]


def sink_baseline(admin: AdminClient, topic: str, n: int) -> tuple[float, float, float]:
    group = f"bench-raw-{uuid.uuid4().hex[:8]}"
    offsets = {(topic, p): p + 1 for p in range(n)}
    return (timed(lambda: alter_group_offsets(admin, group, offsets)),
            timed(lambda: admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(60)),
            timed(lambda: delete_group(admin, group)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--sink-partitions", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    broker = None
    if args.bootstrap is None:
        print("starting an embedded broker ...", flush=True)
        broker = EmbeddedBroker(server_properties={"auto.create.topics.enable": "false"})
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    try:
        run(bootstrap, args.partitions, args.sink_partitions, args.repeat)
    finally:
        if broker is not None:
            broker.stop()


def run(bootstrap: str, n_source: int, n_sink: int, repeat: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    suffix = uuid.uuid4().hex[:8]
    sink_topic = f"bench-sink-{suffix}"
    create_topic(admin, sink_topic, n_sink)
    body = {"offsets": [{"partition": {"filename": f"/data/part-{i:06d}.csv"},
                         "offset": {"position": i * 1000}} for i in range(n_source)]}
    sink_body = {"offsets": [{"partition": {"kafka_topic": sink_topic, "kafka_partition": p},
                              "offset": {"kafka_offset": p + 1}} for p in range(n_sink)]}
    records = [(json.dumps(["bench-source", e["partition"]], separators=(",", ":")).encode(),
                json.dumps(e["offset"], separators=(",", ":")).encode()) for e in body["offsets"]]
    times: dict[str, list[float]] = {k: [] for k in ("src alter", "src get", "src reset", "sink alter", "sink get",
                                                      "sink reset", "raw produce", "raw read", "raw alter",
                                                      "raw list", "raw delete")}
    with ConnectRuntime(bootstrap, f"bench-offsets-{suffix}") as rt:
        rt.create_connector("bench-source", {"connector.class": "FileStreamSource", "file": "/data/in.csv",
                                             "topic": "unused"}, initial_state="STOPPED")
        rt.create_connector("bench-sink", {"connector.class": "VerifyingSink", "topics": sink_topic},
                            initial_state="STOPPED")
        for i in range(repeat):
            print(f"round {i + 1}/{repeat} ...", flush=True)
            for kind, name, request, n in (("src", "bench-source", body, n_source),
                                           ("sink", "bench-sink", sink_body, n_sink)):
                times[f"{kind} alter"].append(measured(lambda: rt.alter_offsets(name, request),  # noqa: B023
                                                       f"{kind} alter")[0])
                seconds, got = measured(lambda: rt.get_offsets(name), f"{kind} get")  # noqa: B023
                times[f"{kind} get"].append(seconds)
                assert len(got["offsets"]) == n
                times[f"{kind} reset"].append(measured(lambda: rt.reset_offsets(name),  # noqa: B023
                                                       f"{kind} reset")[0])
                assert rt.get_offsets(name) == {"offsets": []}
            produce, read = source_baseline(bootstrap, admin, records)
            times["raw produce"].append(produce)
            times["raw read"].append(read)
            raw = sink_baseline(admin, sink_topic, n_sink)
            for key, value in zip(("raw alter", "raw list", "raw delete"), raw, strict=True):
                times[key].append(value)
    med = {k: statistics.median(v) for k, v in times.items()}
    raw_write = med["raw produce"] + med["raw read"]
    raw_sink = {"alter": med["raw alter"], "get": med["raw list"], "reset": med["raw delete"]}
    rows = [(f"source {op}", n_source, med[f"src {op}"], base, label) for op, base, label in (
        ("alter", raw_write, "produce+read"), ("get", med["raw read"], "read"), ("reset", raw_write, "produce+read"))]
    rows += [(f"sink {op}", n_sink, med[f"sink {op}"], raw_sink[op], f"admin {name}") for op, name in (
        ("alter", "alter"), ("get", "list"), ("reset", "delete group"))]
    print()
    print(f"{'operation':<14}{'partitions':>11}{'time (s)':>11}{'baseline (s)':>14}  {'baseline':<20}{'ratio':>7}")
    for name, n, t, base, label in rows:
        print(f"{name:<14}{n:>11,}{t:>11.3f}{base:>14.3f}  {label:<20}{t / base:>7.2f}")
    print(f"\nbaseline parts: bare produce of the {n_source:,} records {med['raw produce']:.3f} s (ratio of alter "
          f"to it {med['src alter'] / med['raw produce']:.2f}, of reset {med['src reset'] / med['raw produce']:.2f}), "
          f"bare read back {med['raw read']:.3f} s")
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    print("process CPU seconds (median): " + ", ".join(f"{k} {cpu[k]:.3f}" for k in (
        "src alter", "src get", "src reset", "raw produce", "raw read")))
    print(f"median of {repeat} runs; ratio = time / baseline (1.00 = as fast as bare confluent-kafka)")


if __name__ == "__main__":
    main()
