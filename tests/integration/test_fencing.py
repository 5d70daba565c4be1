"""Fencing (runtime/worker/fencing.py): once a newer instance of a task claimed it, an older instance's
commits are refused, for source offsets (the offsets topic) and sink offsets (the consumer group), and an
instance whose generation was superseded before it started runs nothing."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.runtime.worker.executor import ThreadExecutor
from connect_magics.runtime.worker.fencing import TaskFence, TaskFencedError
from connect_magics.runtime.worker.task_runner import TaskId
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
