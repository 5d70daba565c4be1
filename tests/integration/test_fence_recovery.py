"""A fence tells a real successor from a broken producer (runtime/worker/fencing.py, issue 31).

A broker outage or a transaction coordinator that timed a transaction out bumps the producer's epoch, and the
producer then fails with the errors a successor's claim causes. Here another producer claims the task's
transactional id without writing a newer generation to the task control topic: to the fence that is exactly
such a broken producer, so it claims the id again and goes on. Only a newer generation in the control topic
stops it.
"""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.runtime.worker.fencing import TaskFence, TaskFencedError, TaskOwnership, transactional_id
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.storage.fence import ProducerFence, TransactionLostError
from connect_magics.storage.group_offsets import list_group_offsets
from connect_magics.storage.task_control import TaskControlStore


def bump_epoch(bootstrap: str, txn_id: str) -> None:
    """What a coordinator's abort after an outage does to a transactional producer: a new epoch for its id
    (here by another producer's ``init_transactions``), with no successor behind it."""
    Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id}).init_transactions(30)


@pytest.fixture
def control(bootstrap: str, unique: str):
    topic = f"control-{unique}"
    create_topics(bootstrap, topic)
    store = TaskControlStore(topic, {"bootstrap.servers": bootstrap}).start()
    yield store
    store.stop()


def owned_fence(bootstrap: str, control: TaskControlStore, group: str, task: TaskId) -> TaskFence:
    generation = control.reserve_generation(task.connector, task.task)
    fence = TaskFence(group, task, {"bootstrap.servers": bootstrap},
                      owner=TaskOwnership(control, task, generation))
    fence.claim()
    return fence


def test_a_broken_producer_is_replaced_when_no_newer_generation_exists(bootstrap, unique, control) -> None:
    topic, group, task = f"recover-{unique}", f"g-{unique}", TaskId("c", 0)
    create_topics(bootstrap, topic)
    fence = owned_fence(bootstrap, control, group, task)
    assert control.newest_generation("c", 0, 10) == 1  # written before the claim
    with fence.transaction() as producer:
        producer.produce(topic, b"before", b"k")
    bump_epoch(bootstrap, transactional_id(group, task))
    with pytest.raises(TransactionLostError, match="claims transactional id .* again"):
        with fence.transaction() as producer:
            producer.produce(topic, b"lost", b"k")
    assert wait_until(lambda: fence.wait_claimed(1.0), 60, message="the fence claimed again")
    with fence.transaction() as producer:
        producer.produce(topic, b"after", b"k")
    assert [v for _, v in read_records(bootstrap, topic)] == [b"before", b"after"]  # read_committed
    assert fence.reclaims == 1
    fence.close()


def test_a_newer_generation_is_a_real_successor(bootstrap, unique, control) -> None:
    topic, group, task = f"succeeded-{unique}", f"g-{unique}", TaskId("c", 0)
    create_topics(bootstrap, topic)
    old = owned_fence(bootstrap, control, group, task)
    successor_store = TaskControlStore(control.topic, {"bootstrap.servers": bootstrap}).start()
    new = owned_fence(bootstrap, successor_store, group, task)  # generation 2, written, then claimed
    with pytest.raises(TransactionLostError):
        with old.transaction() as producer:
            producer.produce(topic, b"zombie", b"k")
    with pytest.raises(TaskFencedError, match="a newer instance of it started"):
        old.wait_claimed(60)  # the owner finds generation 2 and claims nothing
    with new.transaction() as producer:
        producer.produce(topic, b"successor", b"k")
    assert [v for _, v in read_records(bootstrap, topic)] == [b"successor"]
    assert old.reclaims == 1 and new.reclaims == 0
    successor_store.stop()


def test_a_reserved_generation_never_goes_backwards(bootstrap, unique, control) -> None:
    """A generation reserved here is not undone by an older record read afterwards."""
    control.put_control("c", 0, 4, "STARTED")
    assert control.reserve_generation("c", 0) == 5
    assert control.reserved("c", 0, 5)
    control.read_to_end()
    assert control.control("c", 0)["generation"] == 5


@pytest.mark.parametrize("executor", ["threads", "processes"])
@pytest.mark.parametrize("kind", ["source", "exactly-once-source", "sink"])
def test_tasks_go_on_after_their_producer_epoch_was_bumped(bootstrap, unique, tmp_path, kind, executor) -> None:
    """The runtime's own tasks keep running and committing, on threads and in task processes (whose fences ask
    the task control topic as well): nothing stops silently."""
    topic, group = f"bump-{kind}-{unique}", f"g-{unique}"
    create_topics(bootstrap, topic)
    worker = {"offset.flush.interval.ms": "200",
              "exactly.once.source.support": "enabled" if kind.startswith("exactly") else "disabled"}
    with ConnectRuntime(bootstrap, group, worker, executor=executor) as rt:
        if kind.endswith("source"):
            rt.create_connector("t", {"connector.class": "SequenceSource", "topic": topic, "rate": "500"})
            committed = lambda: rt.get_offsets("t")["offsets"]  # noqa: E731
            progress = lambda: rt.get_offsets("t")["offsets"][0]["offset"]["seq"]  # noqa: E731
        else:
            Producer({"bootstrap.servers": bootstrap}).produce(topic, b"0")
            rt.create_connector("t", {"connector.class": "FileStreamSink", "topics": topic,
                                      "file": str(tmp_path / "out.txt"),
                                      "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
            feed = Producer({"bootstrap.servers": bootstrap})

            def progress() -> int:
                feed.produce(topic, b"x")
                feed.flush(10)
                return sum(list_group_offsets({"bootstrap.servers": bootstrap}, "connect-t").values())
            committed = progress
        wait_until(committed, 60, message="a first commit")
        handle = rt.herder.task_handle("t", 0)
        bump_epoch(bootstrap, transactional_id(group, TaskId("t", 0)))
        if executor == "threads":
            wait_until(lambda: handle.runner.fence.reclaims >= 1, 60, message="the fence claiming its id again")
        before = progress()
        wait_until(lambda: progress() > before, 60, message="commits after the producer epoch was bumped")
        if executor == "threads":
            assert not handle.runner.done.is_set() and not handle.runner.fenced
        else:  # the same instance goes on: it did not end (as fenced) nor run again
            assert handle.result is None and handle.runs == 1
        assert rt.task_status("t", 0)["state"] == "RUNNING"
    if kind == "exactly-once-source":  # started again from its committed offsets: each number once
        seqs = [json.loads(v)["payload"]["seq"] for _, v in read_records(bootstrap, topic)]  # read_committed
        assert len(seqs) == len(set(seqs)), "a number was read committed twice"


def test_a_claim_that_timed_out_resumes_on_the_same_producer(tmp_path, unique) -> None:
    """A claim against a frozen broker times out; librdkafka goes on with that producer, and the claim tried again
    once the broker answers is that producer's (init_transactions called again resumes it: "retry call to
    resume"), not a new producer's starting over, which would also fence it."""
    broker = EmbeddedBroker(tmp_path / "broker").start()
    fence = ProducerFence(f"resume-{unique}", {"bootstrap.servers": broker.bootstrap_servers}, timeout=2.0)
    try:
        broker.pause()
        try:
            fence.claim(wait=False)  # in the background, tried again after each failure
            wait_until(lambda: fence._resuming is not None, 30, message="a claim timed out")
            timed_out = fence._resuming
        finally:
            broker.resume()
        wait_until(lambda: fence.wait_claimed(1.0), 60, message="the claim done")
        assert fence.producer is timed_out
        with fence.transaction() as producer:
            producer.produce(f"resumed-{unique}", b"written")
    finally:
        fence.close()
        broker.stop()
