"""A config write is read back up to its own records (KafkaLog.read_own_writes), without asking the broker for the
config topic's end: the config topic has one partition, so everything written before the write is read too. The
group's leader waited for two such answers per create (storage/config_store.py)."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics.storage.config_store import ConfigStore
from connect_magics.storage.kafka_log import KafkaLog

pytestmark = pytest.mark.broker


def _topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": "compact"})])[name].result(30)


def _no_end_offsets(*_: object, **__: object) -> None:
    raise AssertionError("asked the broker for the topic's end")


def test_own_writes_are_read_back_without_asking_for_the_end(bootstrap: str, unique: str) -> None:
    topic, seen = f"own-writes-{unique}", []
    _topic(bootstrap, topic)
    writer = KafkaLog(topic, {"bootstrap.servers": bootstrap}, lambda k, v, p, o: None)
    reader = KafkaLog(topic, {"bootstrap.servers": bootstrap}, lambda k, v, p, o: seen.append(k))
    writer.start()
    reader.start()
    try:
        writer.write([(b"earlier", b"1")])  # another writer's record, before ours
        reader.read_own_writes()  # it wrote nothing: nothing to wait for
        reader._offsets = _no_end_offsets  # type: ignore[method-assign]
        reader.write([(b"a", b"1"), (b"b", b"2")])
        reader.read_own_writes()
        assert seen == [b"earlier", b"a", b"b"]
    finally:
        writer.stop()
        reader.stop()


def test_a_connector_config_write_is_read_back_without_asking_for_the_end(bootstrap: str, unique: str) -> None:
    topic = f"configs-{unique}"
    _topic(bootstrap, topic)
    store = ConfigStore(topic, {"bootstrap.servers": bootstrap})
    store.start()
    try:
        store.log._offsets = _no_end_offsets  # type: ignore[method-assign]
        store.put_connector_config("c", {"connector.class": "FileStreamSource"})
        assert store.connector_config("c") == {"connector.class": "FileStreamSource"}
    finally:
        store.stop()
