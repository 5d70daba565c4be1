"""Exactly-once sources (KIP-618) against at-least-once, in the same run on the same broker.

Run:  python bench/bench_exactly_once.py [--records 200000] [--rounds 5] [--bootstrap HOST:PORT]

One SequenceSource task writes ``--records`` JSON records (schemaless) into a fresh topic; a round measures
the time from the connector's creation until a ``read_committed`` consumer can read every record (the
topic's last stable offset reaches the end), for an at-least-once runtime and for exactly-once runtimes
with ``transaction.boundary`` ``poll`` (a transaction per batch of 2,000) and ``interval`` (1 s), in
interleaved order. Prints the median records/s of each and its ratio to at-least-once.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker

MODES = {"at-least-once": ({"exactly.once.source.support": "disabled"}, {}),
         "exactly-once, poll": ({"exactly.once.source.support": "enabled"}, {"transaction.boundary": "poll"}),
         "exactly-once, interval 1 s": ({"exactly.once.source.support": "enabled"},
                                        {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "1000"})}


def stable_end(consumer: Consumer, topic: str) -> int:
    """The topic's last stable offset: what a read_committed consumer can read up to."""
    return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]


def one_round(rt: ConnectRuntime, bootstrap: str, connector: dict[str, str], records: int) -> float:
    topic = f"eos-bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the topic is created
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    meta = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-bench", "isolation.level": "read_committed"})
    name = f"seq-{topic}"
    start = time.perf_counter()
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": topic, "records": str(records),
                               "batch.size": "2000", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                               "value.converter.schemas.enable": "false", **connector})
    while stable_end(meta, topic) < records:  # markers add offsets: the end is at least `records`
        time.sleep(0.01)
    elapsed = time.perf_counter() - start
    rt.delete_connector(name)
    meta.close()
    return records / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bootstrap")
    args = ap.parse_args()
    broker = None
    if args.bootstrap is None:
        broker = EmbeddedBroker().start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    group = uuid.uuid4().hex[:6]
    runtimes = {mode: ConnectRuntime(bootstrap, f"eos-bench-{group}-{i}", {"offset.flush.interval.ms": "1000", **worker})
                for i, (mode, (worker, _)) in enumerate(MODES.items())}
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    try:
        for mode in MODES:  # warm-up: each runtime's first transactional ids and topics
            one_round(runtimes[mode], bootstrap, MODES[mode][1], 10_000)
        for r in range(args.rounds):
            order = list(MODES) if r % 2 == 0 else list(reversed(MODES))
            for mode in order:
                rates[mode].append(one_round(runtimes[mode], bootstrap, MODES[mode][1], args.records))
    finally:
        for rt in runtimes.values():
            rt.close()
        if broker is not None:
            broker.stop()
    base = statistics.median(rates["at-least-once"])
    print(f"{args.records} records per round, {args.rounds} rounds, one task, JSON schemaless values")
    print("| mode | median records/s | ratio to at-least-once |")
    print("|---|---:|---:|")
    for mode, values in rates.items():
        print(f"| {mode} | {statistics.median(values):,.0f} | {statistics.median(values) / base:.2f} |")


if __name__ == "__main__":
    main()
