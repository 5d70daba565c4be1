"""An exactly-once source with ``transaction.boundary=interval`` ends its transactions as Kafka Connect does
(runtime/worker/exactly_once_source.py): on a cadence from the task's start (tests/unit/test_transaction_cadence.py),
and when the task is paused, so that no transaction hangs open, and times out, while it waits."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker

pytestmark = pytest.mark.broker
RECORDS = 50


def written(bootstrap: str, topic: str) -> int:
    """Records in the topic, committed or not (transaction markers included)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "uncommitted", "isolation.level":
                         "read_uncommitted"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()


def test_pausing_the_connector_commits_its_open_transaction(broker: EmbeddedBroker, unique: str) -> None:
    bootstrap, topic = broker.bootstrap_servers, f"eos-pause-{unique}"
    create_topics(bootstrap, topic)
    with ConnectRuntime(bootstrap, f"eos-pause-{unique}", {"exactly.once.source.support": "enabled"}) as rt:
        rt.create_connector("seq", {"connector.class": "SequenceSource", "topic": topic, "records": str(RECORDS),
                                    "transaction.boundary": "interval",
                                    "transaction.boundary.interval.ms": "600000"})
        wait_until(lambda: written(bootstrap, topic) >= RECORDS, 60, message="the records sent")
        assert read_records(bootstrap, topic) == []  # in a transaction that the interval ends in 10 minutes
        rt.pause_connector("seq")
        # before: the transaction stayed open, paused, until the interval passed or the broker timed it out
        wait_until(lambda: len(read_records(bootstrap, topic)) == RECORDS, 60, message="the records committed")
        assert rt.task_status("seq", 0)["state"] == "PAUSED"
