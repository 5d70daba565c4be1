"""A task reads the offsets topic up to its high watermark before it starts, not up to its last stable offset, as
Kafka Connect's ``KafkaBasedLog`` does for a read_committed log: a transaction still open in a partition of the
offsets topic (another task's commit under way, or left open by a killed worker until its successor's claim
aborts it) hides every offset committed after it began. Read to the last stable offset, a restarted exactly-once
task started from the offsets before it and wrote its records again (bench/bench_scale.py: 8 duplicates after a
group restart)."""

from __future__ import annotations

import json
import logging

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime

pytestmark = pytest.mark.broker

JSON = "org.apache.kafka.connect.json.JsonConverter"


def offsets_partition(bootstrap: str, topic: str, connector: str) -> int:
    """The partition of the offsets topic holding ``connector``'s offsets."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "offsets-partition", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_uncommitted"})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([KafkaTopicPartition(topic, p, 0) for p in partitions])
        found: list[int] = []

        def look() -> bool:
            found.extend(m.partition() for m in consumer.consume(500, 0.5)
                         if m.error() is None and m.key() and json.loads(m.key())[0] == connector)
            return bool(found)
        wait_until(look, 30, message=f"{connector}'s offsets in {topic}")
        return found[0]
    finally:
        consumer.close()


def committed_seqs(bootstrap: str, topic: str) -> list[int]:
    return [json.loads(value)["seq"] for _, value in read_records(bootstrap, topic)]


def test_a_task_started_again_sees_offsets_committed_after_a_transaction_still_open(bootstrap, unique,
                                                                                      caplog) -> None:
    """The task runs again in a new runtime of the group (a restarted worker): it knows nothing of what the
    previous one wrote, only what it reads."""
    topic, group = f"lso-{unique}", f"lso-{unique}"
    create_topics(bootstrap, topic)
    worker = {"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "200"}
    config = {"connector.class": "SequenceSource", "topic": topic, "rate": "100", "value.converter": JSON,
              "value.converter.schemas.enable": "false", "transaction.boundary": "interval",
              "transaction.boundary.interval.ms": "200"}
    orphan = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"orphan-{unique}"})
    with ConnectRuntime(bootstrap, group, worker) as rt:
        rt.create_connector("gen", config)
        offsets_topic = rt.worker_config["offset.storage.topic"]
        partition = offsets_partition(bootstrap, offsets_topic, "gen")
        # A transaction left open in that partition: a worker killed between writing offsets and committing them.
        orphan.init_transactions(30)
        orphan.begin_transaction()
        orphan.produce(offsets_topic, key=json.dumps(["orphan", {"p": 0}]).encode(), value=b'{"o": 1}',
                       partition=partition)
        assert orphan.flush(30) == 0
        seen = len(committed_seqs(bootstrap, topic))
        wait_until(lambda: len(committed_seqs(bootstrap, topic)) >= seen + 200, 60,
                   message="transactions committed after the open one")
    caplog.set_level(logging.INFO, logger="connect_magics")
    with ConnectRuntime(bootstrap, group, worker) as rt:
        wait_until(lambda: "waits for transactions still open" in caplog.text, 60,
                   message="the task waiting for the open transaction before it reads its offsets")
        orphan.abort_transaction(30)  # as its writer's successor would
        wait_until(lambda: rt.task_status("gen", 0)["state"] == "RUNNING", 60, message="the task RUNNING")
        seen = len(committed_seqs(bootstrap, topic))
        wait_until(lambda: len(committed_seqs(bootstrap, topic)) >= seen + 100, 60, message="records after the start")
        rt.stop_connector("gen")
    seqs = committed_seqs(bootstrap, topic)
    assert len(seqs) == len(set(seqs)), f"{len(seqs) - len(set(seqs))} records written twice"
    assert set(seqs) == set(range(len(seqs)))  # none lost
