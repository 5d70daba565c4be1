"""Fault injection of the embedded brokers, against real brokers: a paused broker (SIGSTOP) answers nothing
until resumed, slow fsync holds back a produce's acknowledgement, a killed broker starts again on its data,
and a two-broker cluster keeps transactions working when the transaction coordinator's node stops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics.local import BrokerError, EmbeddedBroker
from connect_magics.local.cluster import EmbeddedCluster, coordinator_partition, java_string_hash
from connect_magics.local.faults import ShimBuildError, fsync_shim


class Acks:
    """A producer (acks=all) that counts the acknowledgements of the records it sent."""

    def __init__(self, bootstrap: str, **config: object) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, **config})
        self.acked: list[bytes] = []
        self.errors: list[KafkaError] = []

    def _delivered(self, err: KafkaError | None, msg: object) -> None:
        (self.errors.append(err) if err else self.acked.append(msg.value()))  # type: ignore[attr-defined]

    def send(self, topic: str, value: bytes) -> None:
        self.producer.produce(topic, value, callback=self._delivered)

    def unacked_after(self, seconds: float) -> int:
        """How many records are still waiting for an acknowledgement after ``seconds``."""
        return self.producer.flush(seconds)


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1)])[topic].result(30)


def committed_values(bootstrap: str, topic: str) -> list[bytes]:
    """Every committed value of partition 0 of ``topic`` (read_committed)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "faults-reader", "enable.auto.commit": False,
                  "isolation.level": "read_committed"})
    try:
        end = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        c.assign([TopicPartition(topic, 0, 0)])
        got: list[bytes] = []

        def read_to_end() -> bool:
            got.extend(m.value() for m in c.consume(100, timeout=0.2) if not m.error())
            return c.position([TopicPartition(topic, 0)])[0].offset >= end
        wait_until(read_to_end, 30, message=f"the records of {topic}")
        return got
    finally:
        c.close()


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    b = EmbeddedBroker(tmp_path / "broker", slow_fsync_ms=0).start()
    yield b
    b.stop()


@pytest.mark.broker
def test_a_paused_broker_answers_nothing_until_resumed(own_broker: EmbeddedBroker) -> None:
    create_topic(own_broker.bootstrap_servers, "paused")
    acks = Acks(own_broker.bootstrap_servers)
    own_broker.pause()
    try:
        assert own_broker.paused and own_broker.is_running()
        acks.send("paused", b"during the pause")
        assert acks.unacked_after(2) == 1
        with pytest.raises(Exception):  # noqa: B017 - any error: a timeout, as nothing answers
            AdminClient({"bootstrap.servers": own_broker.bootstrap_servers}).list_topics(timeout=1)
    finally:
        own_broker.resume()
    assert not own_broker.paused
    assert acks.unacked_after(30) == 0 and acks.acked == [b"during the pause"] and not acks.errors


@pytest.mark.broker
def test_a_paused_broker_can_be_stopped_and_a_killed_one_starts_on_its_data(own_broker: EmbeddedBroker) -> None:
    create_topic(own_broker.bootstrap_servers, "kept")
    acks = Acks(own_broker.bootstrap_servers)
    acks.send("kept", b"before")
    assert acks.unacked_after(30) == 0
    own_broker.pause()
    own_broker.stop(timeout=30)  # SIGTERM reaches a stopped JVM once it is continued
    assert not own_broker.is_running() and not own_broker.paused
    own_broker.start()
    own_broker.kill()
    assert not own_broker.is_running()
    own_broker.start()
    assert committed_values(own_broker.bootstrap_servers, "kept") == [b"before"]
    with pytest.raises(BrokerError, match="not running"):
        own_broker.kill()
        own_broker.pause()


@pytest.mark.broker
def test_slow_fsync_holds_back_acknowledgements_until_it_is_removed(own_broker: EmbeddedBroker) -> None:
    create_topic(own_broker.bootstrap_servers, "slow")
    acks = Acks(own_broker.bootstrap_servers)
    acks.send("slow", b"warm-up")
    assert acks.unacked_after(30) == 0
    with own_broker.slow_fsync(3000):
        acks.send("slow", b"under a 3 s fsync")
        assert acks.unacked_after(1) == 1  # not acknowledged within 1 s
    assert acks.unacked_after(30) == 0  # acknowledged once the delay is gone
    assert acks.acked == [b"warm-up", b"under a 3 s fsync"] and not acks.errors
    own_broker.set_fsync_delay(0)
    acks.send("slow", b"at full speed")
    assert acks.unacked_after(1) == 0


@pytest.mark.broker
def test_slow_fsync_needs_the_shim_loaded_at_start(tmp_path: Path) -> None:
    with pytest.raises(BrokerError, match="slow_fsync_ms=0"):
        EmbeddedBroker(tmp_path).set_fsync_delay(100)


def test_without_a_c_compiler_the_shim_says_what_is_missing(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ShimBuildError, match="neither `cc` nor `gcc`"):
        fsync_shim()


def test_coordinator_partitions_are_computed_as_kafka_does() -> None:
    assert java_string_hash("hello") == 99162322  # "hello".hashCode() in Java
    assert java_string_hash("nb-lines-0") == 115445193
    assert java_string_hash("é€𝄞") == ((0xE9 * 31 + 0x20AC) * 31 + 0xD834) * 31 + 0xDD1E  # UTF-16 units
    assert coordinator_partition("nb-lines-0", 5) == 115445193 % 5


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedCluster]:
    c = EmbeddedCluster(nodes=2, data_dir=tmp_path_factory.mktemp("cluster")).start()
    yield c
    c.stop()


@pytest.mark.broker
def test_transactions_go_on_when_the_coordinator_node_stops(cluster: EmbeddedCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    create_topic(bootstrap, "txn")
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "faults-txn"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("txn", b"one")
    producer.commit_transaction(30)

    coordinator = cluster.transaction_coordinator("faults-txn")
    cluster.node(coordinator).stop()
    try:
        wait_until(lambda: cluster.transaction_coordinator("faults-txn") != coordinator, 30,
                   message="the coordinator to move")
        producer.begin_transaction()
        producer.produce("txn", b"two")
        producer.commit_transaction(60)
        assert committed_values(bootstrap, "txn") == [b"one", b"two"]
    finally:
        cluster.node(coordinator).start()
        cluster.wait_for_brokers()
    assert {cluster.node(i).node_id for i in range(2)} == set(range(2))
