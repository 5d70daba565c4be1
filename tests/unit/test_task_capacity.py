"""How many Kafka clients a task builds, how many the process can still build, and the clear error past that
(runtime/worker/capacity.py, storage/client_limit.py)."""

from __future__ import annotations

import ctypes
import gc

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from connect_magics.runtime.worker.capacity import (
    check_connector_fits,
    clients_per_task,
    reserve_task_clients,
)
from connect_magics.storage import client_limit
from connect_magics.storage.client_limit import ClientLimitError, new_client


@pytest.fixture(autouse=True, scope="module")
def _clients_initialised() -> None:
    """The first clients of a process also take the keys of librdkafka's and OpenSSL's one-time set-up (about
    ten): take them before counting, as a runtime has when its tasks start."""
    for cls in (Producer, Consumer, AdminClient):
        cls({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "log_level": 0})


TOPIC_CREATION = {"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1"}
EOS = {"exactly.once.source.support": "enabled"}


@pytest.mark.parametrize(("kind", "config", "worker", "fenced", "expected"), [
    ("source", {}, {}, True, 2),                        # its producer and its fence's producer
    ("source", {}, {}, False, 1),
    ("source", TOPIC_CREATION, {}, True, 2),            # KIP-158's admin client is the worker's, shared
    ("source", {}, EOS, True, 1),                       # the fence's producer writes the records too
    ("source", TOPIC_CREATION, EOS, True, 1),
    ("sink", {}, {}, True, 2),                          # its consumer and its fence's producer
    ("sink", {}, {}, False, 1),
    ("sink", {"errors.deadletterqueue.topic.name": "dlq"}, {}, True, 3),  # the DLQ's producer (admin: shared)
    ("sink", {"errors.deadletterqueue.topic.name": " "}, {}, True, 2),
])
def test_clients_per_task(kind, config, worker, fenced, expected) -> None:
    assert clients_per_task(kind, {"connector.class": "X", **config}, worker, fenced) == expected


def test_a_lowered_limit_counts_as_keys_in_use_and_cannot_raise_the_real_one(monkeypatch) -> None:
    real = client_limit.os_keys_max()
    free = client_limit.free_keys(10_000)
    assert 0 < free < real
    monkeypatch.setenv(client_limit.KEYS_ENV, str(real - 100))
    assert client_limit.keys_max() == real - 100
    assert client_limit.free_keys(10_000) == free - 100
    monkeypatch.setenv(client_limit.KEYS_ENV, str(real + 100))
    assert client_limit.keys_max() == real
    monkeypatch.setenv(client_limit.KEYS_ENV, "many")
    with pytest.raises(ValueError, match="CONNECT_MAGICS_THREAD_KEYS_MAX must be an integer"):
        client_limit.keys_max()


def _allow(monkeypatch, clients: int) -> None:
    """Lower the limit so that ``clients`` more clients can be promised (besides the reserve). Clients that
    earlier tests of the process left as garbage are collected first: their keys would come free mid-test."""
    gc.collect()
    used = client_limit.os_keys_max() - client_limit.free_keys(10_000)
    monkeypatch.setenv(client_limit.KEYS_ENV, str(used + client_limit.RESERVE + clients))


def test_promised_clients_count_until_built_or_released(monkeypatch) -> None:
    _allow(monkeypatch, 5)
    assert client_limit.available() == 5
    first = reserve_task_clients("Task a-0", 3)
    try:
        assert client_limit.available() == 2
        with pytest.raises(ClientLimitError) as refused:
            reserve_task_clients("Task b-0", 3)
    except BaseException:
        first.release()  # a promise left behind would count against the next tests
        raise
    message = str(refused.value)
    assert message.startswith("Task b-0 cannot start: it needs 3 more Kafka clients and this process can build 2 "
                              "more.")
    for part in ("thread-specific-data keys (PTHREAD_KEYS_MAX)", "another worker of the group",
                 'executor="processes"', 'executor="spark"'):
        assert part in message
    producer = new_client(Producer, {"bootstrap.servers": "127.0.0.1:1", "log_level": 0}, "Task a-0", first)
    assert first.remaining == 2 and client_limit.outstanding() == 2
    assert client_limit.available() == 2  # built: now a key in use instead of a promise
    first.release()
    assert client_limit.outstanding() == 0 and client_limit.available() == 4
    del producer
    assert client_limit.available() == 5  # its key is free again once the client is gone


def test_a_connector_whose_tasks_do_not_fit_is_refused_with_how_many_would(monkeypatch) -> None:
    _allow(monkeypatch, 7)
    check_connector_fits("fits", 3, 2)
    with pytest.raises(ClientLimitError) as refused:
        check_connector_fits("big", 4, 2)
    assert str(refused.value).startswith("Connector big cannot be created: its 4 tasks (tasks.max) need 8 more "
                                         "Kafka clients (2 each) and this runtime's process can build 7 more, "
                                         "enough for 3 such tasks.")


@pytest.mark.parametrize("cls", [Producer, Consumer, AdminClient])
def test_no_key_left_is_the_clear_error_not_confluent_kafkas_runtime_error(cls) -> None:
    create, delete, key_t = client_limit._PTHREAD
    held, key = [], key_t()
    try:
        while create(ctypes.byref(key), None) == 0:
            held.append(key.value)
        with pytest.raises(RuntimeError, match="thread local storage"):  # what confluent-kafka raises
            cls({"bootstrap.servers": "127.0.0.1:1", "group.id": "g"})
        with pytest.raises(ClientLimitError) as refused:
            new_client(cls, {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}, "Task lines-3")
    finally:
        for k in held:
            delete(k)
    assert str(refused.value).startswith("Task lines-3 cannot start: it needs 1 more Kafka client and this process "
                                         "can build 0 more.")
    assert isinstance(refused.value.__cause__, RuntimeError)


def test_topic_creating_sources_share_one_admin_client_per_admin_config() -> None:
    from connect_magics.runtime.worker.task_runner import TaskServices

    services = TaskServices(None, None, None)
    config = {"bootstrap.servers": "127.0.0.1:1", "log_level": 0}
    first = services.shared_admin(config, "Task a-0")
    assert services.shared_admin(dict(config), "Task b-0") is first
    assert services.shared_admin({**config, "client.id": "override"}, "Task c-0") is not first
