"""A source task's offsets pass a record only once the broker acknowledged it. The task's producer reports
failed deliveries only; records count as acknowledged once it holds none of them (runtime/worker/source_runner.py):
a record the broker refuses still fails the task, and no offset commit passes it or an unacknowledged one."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRuntime

pytestmark = pytest.mark.broker

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _topic(bootstrap: str, name: str, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=config or {})])[name].result(30)


def _values(bootstrap: str, topic: str) -> list[str]:
    """Every value in the topic, from the start."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "enable.auto.commit": False})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[str] = []
        while len(values) < end:
            msg = consumer.poll(10)
            assert msg is not None, f"{len(values)} of {end} records read"
            if not msg.error():
                values.append(msg.value().decode())
        return values
    finally:
        consumer.close()


def _position(rt: ConnectRuntime, name: str) -> int | None:
    offsets = rt.get_offsets(name)["offsets"]
    return offsets[0]["offset"]["position"] if offsets else None


def test_a_record_the_broker_refuses_fails_the_task_and_no_offset_passes_it(bootstrap: str, unique: str,
                                                                          tmp_path: Path) -> None:
    topic, source = f"refused-{unique}", tmp_path / "in.txt"
    _topic(bootstrap, topic, {"max.message.bytes": "2000"})
    first = "one\ntwo\nthree\n"
    source.write_text(first)
    with ConnectRuntime(bootstrap, f"refused-{unique}", {"offset.flush.interval.ms": "100"}) as rt:
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "value.converter": STRING})
        wait_until(lambda: _position(rt, "src") == len(first), 60, message="the first lines' offset committed")
        with source.open("a") as f:
            f.write("x" * 10_000 + "\nfour\n")  # the broker refuses a record over the topic's 2,000 bytes
        wait_until(lambda: rt.task_status("src", 0)["state"] == "FAILED", 60, message="the task FAILED")
        trace = rt.task_status("src", 0)["trace"]
        assert "Unrecoverable exception from producer send callback" in trace and "MSG_SIZE_TOO_LARGE" in trace, \
            trace
        assert _position(rt, "src") == len(first)  # not past the refused record, nor past any record after it
    assert _values(bootstrap, topic)[:3] == ["one", "two", "three"]


def test_a_busy_source_commits_offsets_only_for_records_in_the_topic(bootstrap: str, unique: str) -> None:
    """A source that never lets its producer run dry still commits (each commit flushes the producer first), and
    every committed offset is of a record already in the topic."""
    topic = f"busy-{unique}"
    _topic(bootstrap, topic)
    with ConnectRuntime(bootstrap, f"busy-{unique}", {"offset.flush.interval.ms": "100"}) as rt:
        rt.create_connector("seq", {"connector.class": "SequenceSource", "topic": topic, "records": "2000000",
                                    "batch.size": "500", "value.converter": STRING})
        seen: list[int] = []

        def committed_and_in_topic() -> bool:
            offsets = rt.get_offsets("seq")["offsets"]
            if offsets:
                committed = offsets[0]["offset"]["seq"]
                consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"end-{unique}"})
                try:
                    end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
                finally:
                    consumer.close()
                assert committed < end, f"offset of record {committed} committed, {end} records in the topic"
                if not seen or committed > seen[-1]:
                    seen.append(committed)
            return len(seen) >= 5

        wait_until(committed_and_in_topic, 120, message=lambda: f"five offset commits (have {seen})")
        assert rt.task_status("seq", 0)["state"] == "RUNNING"
