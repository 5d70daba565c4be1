"""Reading an internal topic raw, with a plain confluent-kafka consumer (not through the runtime)."""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until


def create_topics(bootstrap: str, *names: str, partitions: int = 1) -> None:
    """Create topics (the session broker does not auto-create them)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        future.result(30)


def read_records(bootstrap: str, topic: str, timeout: float = 30.0) -> list[tuple[str, bytes | None]]:
    """``(key, value)`` of every record of ``topic`` up to its current end, partition after partition, in order
    within each (so that two reads of an unchanged topic are equal: consumption interleaves partitions at random)."""
    records = sorted(read_partitioned(bootstrap, topic, timeout), key=lambda record: record[0])  # stable
    return [(key, value) for _, key, value in records]


def read_partitioned(bootstrap: str, topic: str, timeout: float = 30.0) -> list[tuple[int, str, bytes | None]]:
    """``(partition, key, value)`` of every record of ``topic`` up to its current end (read_committed)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "raw-reader", "enable.auto.commit": False})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        parts = [TopicPartition(topic, p, 0) for p in sorted(md.partitions)]
        ends = {p.partition: c.get_watermark_offsets(p, timeout=10)[1] for p in parts}
        c.assign(parts)
        out: list[tuple[int, str, bytes | None]] = []
        positions = dict.fromkeys(ends, 0)

        def done() -> bool:
            for m in c.consume(1000, timeout=0.2):
                if m.error():
                    continue
                out.append((m.partition(), m.key().decode() if m.key() is not None else None, m.value()))
            for tp in c.position(parts):  # past transaction markers too
                positions[tp.partition] = max(positions[tp.partition], tp.offset)
            return all(positions[p] >= end for p, end in ends.items())

        if any(ends.values()):
            wait_until(done, timeout, message=lambda: f"the records of {topic} (read {len(out)})")
        return out
    finally:
        c.close()


def latest(records: list[tuple[str, bytes | None]]) -> dict[str, Any]:
    """The newest value of every key, JSON-decoded (None for a tombstone)."""
    out: dict[str, Any] = {}
    for key, value in records:
        out[key] = json.loads(value) if value is not None else None
    return out
