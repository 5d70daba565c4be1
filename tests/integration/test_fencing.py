"""Fencing (runtime/worker/fencing.py): once a newer instance of a task claimed it, an older instance's
commits are refused, for source offsets (the offsets topic) and sink offsets (the consumer group), and an
instance whose generation was superseded before it started runs nothing."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics, read_partitioned, read_records

from connect_magics import ConnectRuntime
from connect_magics.runtime.executors.threads import ThreadExecutor
from connect_magics.runtime.worker.fencing import TaskFence, TaskFencedError
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.storage.group_offsets import list_group_offsets

FAST = {"offset.flush.interval.ms": "200"}


def test_a_fence_refuses_the_transactions_of_an_older_claim(bootstrap, unique) -> None:
    topic = f"fenced-{unique}"
    create_topics(bootstrap, topic)
    old = TaskFence(f"g-{unique}", TaskId("c", 0), {"bootstrap.servers": bootstrap})
    old.claim()
    with old.transaction() as producer:
        producer.produce(topic, b"before", b"k")
    new = TaskFence(f"g-{unique}", TaskId("c", 0), {"bootstrap.servers": bootstrap})
    new.claim()
    with pytest.raises(TaskFencedError, match="a newer instance of it started"):
        with old.transaction() as producer:
            producer.produce(topic, b"zombie", b"k")
    with new.transaction() as producer:
        producer.produce(topic, b"after", b"k")
    assert [v for _, v in read_records(bootstrap, topic)] == [b"before", b"after"]  # read_committed


def test_an_old_source_instance_commits_nothing_after_its_successor_started(bootstrap, unique) -> None:
    topic = f"src-{unique}"
    create_topics(bootstrap, topic)
    group = f"g-{unique}"
    with ConnectRuntime(bootstrap, group, FAST, executor=ThreadExecutor(fence_tasks=True)) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "rate": "500"})
        wait_until(lambda: rt.get_offsets("gen")["offsets"], 60, message="committed offsets")
        old = rt.herder.task_handle("gen", 0).runner
        successor = TaskFence(group, TaskId("gen", 0), {"bootstrap.servers": bootstrap})
        successor.claim()  # a newer instance of gen-0 started somewhere
        wait_until(lambda: old.fenced and old.done.is_set(), 60, message="the old instance fenced and stopped")
        offsets_topic = f"{group}-offsets"
        committed = len(read_records(bootstrap, offsets_topic))
        status = rt.task_status("gen", 0)
        assert status["state"] == "RUNNING"  # the fenced instance leaves the status to its successor
        rt.herder.offsets.read_to_end()
        assert len(read_records(bootstrap, offsets_topic)) == committed  # nothing more from the old one


def test_offsets_committed_through_a_fence_share_their_partition_with_altered_ones(bootstrap, unique,
                                                                                  tmp_path) -> None:
    """A fenced source task's offsets and KIP-875's go to the same partition of the offsets topic (murmur2, as
    Java's producers), so the newest is the one read: a rewind after a stop is what the task resumes from."""
    topic, group, src = f"rewind-{unique}", f"g-{unique}", tmp_path / "in.txt"
    create_topics(bootstrap, topic)
    src.write_text("".join(f"a{i}\n" for i in range(10)))  # 30 bytes
    with ConnectRuntime(bootstrap, group, FAST, executor=ThreadExecutor(fence_tasks=True)) as rt:
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": str(src), "topic": topic,
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        wait_until(lambda: rt.get_offsets("src")["offsets"] == [
            {"partition": {"filename": str(src)}, "offset": {"position": 30}}], 60, message="the task's commit")
        rt.stop_connector("src")
        rt.alter_offsets("src", {"offsets": [{"partition": {"filename": str(src)}, "offset": {"position": 12}}]})
        key = json.dumps(["src", {"filename": str(src)}], separators=(",", ":"))
        partitions = {p for p, k, _ in read_partitioned(bootstrap, f"{group}-offsets") if k == key}
        assert len(partitions) == 1, f"the offsets of one source partition are in partitions {partitions}"
        rt.resume_connector("src")  # a4..a9 again (a0..a3 are the 12 bytes kept)
        wait_until(lambda: len(read_records(bootstrap, topic)) == 16, 60, message="the records after the rewind")
        assert [v for _, v in read_records(bootstrap, topic)][10:] == [f"a{i}".encode() for i in range(4, 10)]


def test_an_old_sink_instance_commits_no_group_offsets_after_its_successor_started(bootstrap, unique) -> None:
    topic = f"sink-{unique}"
    create_topics(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap})
    group = f"g-{unique}"
    with ConnectRuntime(bootstrap, group, FAST, executor=ThreadExecutor(fence_tasks=True)) as rt:
        rt.create_connector("sink", {"connector.class": "VerifyingSink", "topics": topic,
                                     "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        for i in range(10):
            producer.produce(topic, b"%d" % i)
        producer.flush(30)
        offsets = {"bootstrap.servers": bootstrap}
        wait_until(lambda: list_group_offsets(offsets, "connect-sink").get((topic, 0)) == 10, 60,
                   message="the sink's first commit")
        old = rt.herder.task_handle("sink", 0).runner
        TaskFence(group, TaskId("sink", 0), {"bootstrap.servers": bootstrap}).claim()
        for i in range(10, 20):
            producer.produce(topic, b"%d" % i)
        producer.flush(30)
        wait_until(lambda: old.fenced and old.done.is_set(), 60, message="the old sink instance fenced")
        assert list_group_offsets(offsets, "connect-sink").get((topic, 0)) == 10  # its later commit refused


def test_a_transaction_left_open_by_a_killed_task_does_not_hold_up_the_next_start(bootstrap, unique) -> None:
    """A process killed mid-commit leaves its transaction open on the offsets topic until the broker's
    transaction timeout (a minute); the next runtime reads to the last stable offset and starts at once,
    and the task's new instance aborts the open transaction when it claims its fence."""
    topic, group = f"src-{unique}", f"g-{unique}"
    create_topics(bootstrap, topic)
    with ConnectRuntime(bootstrap, group, FAST) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "rate": "500"})
        wait_until(lambda: rt.get_offsets("gen")["offsets"], 60, message="committed offsets")
        partition = rt.get_offsets("gen")["offsets"][0]["partition"]
    killed = TaskFence(group, TaskId("gen", 0), {"bootstrap.servers": bootstrap})
    killed.claim()
    producer = killed.producer
    producer.begin_transaction()
    producer.produce(f"{group}-offsets", json.dumps({"seq": 10**9}).encode(),
                     json.dumps(["gen", partition]).encode())
    producer.flush(30)  # written, never committed: as if the process had died here
    with ConnectRuntime(bootstrap, group, FAST) as rt:  # before the fix: TimeoutError reading the offsets
        offsets = rt.get_offsets("gen")["offsets"]
        assert offsets and offsets[0]["offset"] != {"seq": 10**9}, "the open transaction's offset was read"
