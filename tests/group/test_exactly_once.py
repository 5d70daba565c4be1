"""KIP-618: with exactly.once.source.support=enabled, a read_committed consumer sees every sequence number of
a source task exactly once, even when the process hosting the task is killed (SIGKILL) mid-stream, with each
transaction boundary."""

from __future__ import annotations

import collections

import pytest
from confluent_kafka import Consumer, TopicPartition
from group_members import Member
from helpers import wait_until
from raw_topics import create_topics

RECORDS = 20_000
BOUNDARIES = {"poll": {}, "interval": {"transaction.boundary.interval.ms": "200"},
              "connector": {"transaction.records": "300"}}
pytestmark = pytest.mark.slow


class Sequences:
    """Every sequence number in a topic, read ``read_committed`` or ``read_uncommitted``."""

    def __init__(self, bootstrap: str, topic: str, isolation: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"seq-{isolation}",
                                  "isolation.level": isolation, "enable.auto.commit": False})
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.counts: collections.Counter[int] = collections.Counter()

    def read(self) -> int:
        import json

        for m in self.consumer.consume(10_000, timeout=0.2):
            if not m.error():
                self.counts[json.loads(m.value())["seq"]] += 1
        return len(self.counts)

    def close(self) -> None:
        self.consumer.close()


@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_a_killed_source_task_leaves_every_record_exactly_once(bootstrap: str, unique: str, boundary: str,
                                                               members: list[Member]) -> None:
    group, topic = f"eos-{boundary}-{unique}", f"eos-{boundary}-{unique}"
    create_topics(bootstrap, topic)
    worker = {"exactly.once.source.support": "enabled"}
    first = Member(bootstrap, group, worker)
    members.append(first)
    wait_until(lambda: first.role == "leader", 60, message="the runtime to lead")
    config = {"connector.class": "SequenceSource", "topic": topic, "records": str(RECORDS), "rate": "4000",
              "batch.size": "200", "exactly.once.support": "required", "transaction.boundary": boundary,
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false", **BOUNDARIES[boundary]}
    status, body, _ = first.rest("POST", "/connectors", {"name": "seq", "config": config})
    assert status == 201, body
    committed = Sequences(bootstrap, topic, "read_committed")
    everything = Sequences(bootstrap, topic, "read_uncommitted")
    try:
        wait_until(lambda: committed.read() >= RECORDS // 5, 120, message="a fifth of the records")
        first.proc.kill()  # mid-stream: an open transaction is left behind
        assert committed.read() < RECORDS
        second = Member(bootstrap, group, worker)
        members.append(second)
        wait_until(lambda: committed.read() >= RECORDS, 180, message=lambda: f"all records ({len(committed.counts)})")
        assert sorted(committed.counts) == list(range(RECORDS))
        assert max(committed.counts.values()) == 1, [s for s, n in committed.counts.items() if n > 1][:10]
        wait_until(lambda: everything.read() >= RECORDS, 60, message="every record, read_uncommitted")
        print(f"boundary={boundary}: read_uncommitted saw {sum(everything.counts.values()) - RECORDS} records of "
              "aborted transactions; read_committed none")
    finally:
        committed.close()
        everything.close()
