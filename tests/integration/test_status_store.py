"""The status store's consistency rules against the real broker: Kafka Connect's generation and worker
rules for overwriting a status, and our own writes never being undone when they are read back."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics, latest, read_records

from connect_magics import ConnectRuntime

OTHER = "other-host:8083"


@pytest.fixture
def rt(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    with ConnectRuntime(bootstrap, f"ss-{unique}", {"offset.flush.interval.ms": "200"}) as runtime:
        yield runtime


def write_raw(rt: ConnectRuntime, records: list[tuple[str, dict | None]]) -> None:
    """Write as another worker would (Java's murmur2 partitioner), then let the runtime read it all."""
    producer = Producer({"bootstrap.servers": rt.worker_config["bootstrap.servers"],
                         "partitioner": "murmur2_random"})
    for key, value in records:
        producer.produce(rt.worker_config["status.storage.topic"], key=key,
                         value=None if value is None else json.dumps(value).encode())
    assert producer.flush(30) == 0
    rt.status_store.log.read_to_end()


def status(state: str, generation: int, worker: str = OTHER) -> dict:
    return {"state": state, "trace": None, "worker_id": worker, "generation": generation}


def test_statuses_of_another_worker_follow_the_reference_rules(rt: ConnectRuntime, bootstrap: str) -> None:
    store, g = rt.status_store, rt.status_store.generation
    write_raw(rt, [("status-connector-ghost", status("RUNNING", g + 5)),
                   ("status-task-ghost-0", status("RUNNING", g + 5))])
    assert (store.connector("ghost").worker_id, store.tasks("ghost")[0].state) == (OTHER, "RUNNING")

    # On read, an UNASSIGNED task status does not replace a RUNNING one of the same or a newer generation...
    write_raw(rt, [("status-task-ghost-0", status("UNASSIGNED", g + 5))])
    assert store.tasks("ghost")[0].state == "RUNNING"
    # ... but does replace an older one.
    write_raw(rt, [("status-task-ghost-0", status("UNASSIGNED", g + 6))])
    assert (store.tasks("ghost")[0].state, store.tasks("ghost")[0].generation) == ("UNASSIGNED", g + 6)

    # putSafe (FAILED, UNASSIGNED) never overwrites a newer generation of another worker...
    store.put_task("ghost", 0, "FAILED", "boom")
    store.put_connector("ghost", "UNASSIGNED")
    assert store.tasks("ghost")[0].worker_id == OTHER and store.connector("ghost").state == "RUNNING"
    # ... while a plain put (RUNNING, PAUSED, ...) always writes.
    store.put_task("ghost", 0, "RUNNING")
    assert store.flush(30)
    ours = store.tasks("ghost")[0]
    assert (ours.state, ours.worker_id, ours.generation) == ("RUNNING", rt.worker_config.worker_id, g)
    records = read_records(bootstrap, rt.worker_config["status.storage.topic"])
    ghost = [json.loads(v) for k, v in records if k in ("status-connector-ghost", "status-task-ghost-0")]
    mine = [value["state"] for value in ghost if value["worker_id"] != OTHER]
    assert mine == ["RUNNING"]  # the FAILED and UNASSIGNED were not written
    # A FAILED status over our own status is fine (same worker).
    store.put_task("ghost", 0, "FAILED", "boom")
    assert store.tasks("ghost")[0].state == "FAILED"


def test_records_of_other_writers_are_read(rt: ConnectRuntime) -> None:
    write_raw(rt, [("status-topic-orders:connector-ext", {"topic": {
        "name": "orders", "connector": "ext", "task": 2, "discoverTimestamp": 1}})])
    assert rt.connector_topics("ext") == {"ext": {"topics": ["orders"]}}
    write_raw(rt, [("status-topic-orders:connector-ext", None),
                   ("status-topic-:connector-ext", {"topic": {"name": ""}}),  # invalid keys are skipped
                   ("status-topic-bad:connector-ext", {"not-a-topic": 1})])
    assert rt.connector_topics("ext") == {"ext": {"topics": []}}


def test_own_writes_are_not_undone_when_read_back(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    create_topics(bootstrap, f"own-{unique}")
    config = {"connector.class": "SequenceSource", "topic": f"own-{unique}", "rate": "1"}
    rt.create_connector("c", config)
    wait_until(lambda: rt.connector_status("c")["tasks"], 30, message="a task status")
    # Delete then create again at once: the tombstones read back must not erase the new statuses.
    rt.delete_connector("c")
    rt.create_connector("c", config)
    store = rt.status_store
    # Hold the reader at the tombstone of task 7 to make "written, not read back yet" certain.
    reached, release = threading.Event(), threading.Event()
    read = store.log._on_record

    def slow_reader(key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        if key == b"status-task-c-7" and value is None:
            reached.set()
            release.wait(30)
        read(key, value, partition, offset)

    store.put_task("c", 7, "RUNNING")
    assert store.flush(30)
    store.log._on_record = slow_reader
    store.remove_task("c", 7)
    wait_until(reached.is_set, 30, message="the tombstone at the reader")
    store.put_task("c", 7, "PAUSED")  # newer than the tombstone the reader is about to apply
    release.set()
    store.log.read_to_end()
    assert store.tasks("c")[7].state == "PAUSED"
    store.log._on_record = read
    store.remove_task("c", 7)
    store.put_topic("c", "x", 0)
    store.reset_topics("c")
    store.put_topic("c", "x", 0)  # used again right after a reset
    assert store.flush(30)
    store.log.read_to_end()
    # the connector created again runs its task (which reports RUNNING once started): no tombstone erased them
    status = wait_until(lambda: (s := rt.connector_status("c"))["tasks"] and s, 30,
                        message=lambda: f"the task of the connector created again: {rt.connector_status('c')}")
    assert status["connector"]["state"] == "RUNNING" and [t["id"] for t in status["tasks"]] == [0]
    # "x" is back after the reset; the running source may also have recorded its own topic again.
    assert "x" in store.topics("c") and set(store.topics("c")) <= {"x", config.get("topic")}
    state = latest(read_records(bootstrap, rt.worker_config["status.storage.topic"]))
    assert state["status-connector-c"]["state"] == "RUNNING"
    assert state["status-topic-x:connector-c"]["topic"]["name"] == "x"


def test_each_runtime_writes_a_newer_generation(bootstrap: str, unique: str) -> None:
    group = f"gen-{unique}"
    create_topics(bootstrap, f"gen-{unique}")
    with ConnectRuntime(bootstrap, group) as first:
        first.create_connector("c", {"connector.class": "SequenceSource", "topic": f"gen-{unique}", "rate": "1"})
        g1 = first.status_store.generation
    with ConnectRuntime(bootstrap, group) as second:
        assert second.status_store.generation == g1 + 1
        wait_until(lambda: second.status_store.connector("c").generation == g1 + 1, 30,
                   message="the restored connector's status in the new generation")
        assert second.status_store.flush(30)
        state = latest(read_records(bootstrap, second.worker_config["status.storage.topic"]))
        assert state["status-connector-c"]["generation"] == g1 + 1


@pytest.mark.parametrize(("props", "key"), [
    ({"status.storage.retry.initial.backoff.ms": "20000"}, "status.storage.retry.initial.backoff.ms"),
    ({"status.storage.retry.jitter.factor": "1.5"}, "status.storage.retry.jitter.factor"),
    ({"status.storage.retry.backoff.multiplier": "0.5"}, "status.storage.retry.backoff.multiplier"),
    ({"status.storage.retry.max.retries": "-1"}, "status.storage.retry.max.retries"),
    ({"status.storage.retry.max.backoff.ms": "-1"}, "status.storage.retry.max.backoff.ms"),
    ({"status.storage.request.timeout.ms": "0"}, "status.storage.request.timeout.ms"),
])
def test_invalid_status_settings_stop_the_runtime_from_starting(bootstrap: str, unique: str, props: dict,
                                                                 key: str) -> None:
    from confluent_kafka.admin import AdminClient

    from connect_magics.api.config import ConfigException

    group = f"bad-{unique}"
    with pytest.raises(ConfigException) as e:
        ConnectRuntime(bootstrap, group, props)
    assert f"for configuration {key}: " in str(e.value)
    existing = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    assert not [t for t in existing if t.startswith(group)], "nothing is created"
