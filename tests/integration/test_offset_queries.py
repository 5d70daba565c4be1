"""Offsets asked of a consumer kept for queries (storage/offset_queries.py), against real brokers: starts, ends
(the last stable offset under an open transaction), times; and a stream of short queries across a broker that
stalls and restarts, which must each answer or fail with a Kafka error, never take the process down (the admin
client's list_offsets could: confluentinc/librdkafka#4605)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics.local import EmbeddedBroker
from connect_magics.storage.kafka_log import KafkaLog
from connect_magics.storage.offset_queries import EARLIEST, LATEST, query_config, query_offsets

pytestmark = pytest.mark.broker


def _topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


@pytest.fixture
def queries(bootstrap: str) -> Iterator[Consumer]:
    consumer = Consumer(query_config({"bootstrap.servers": bootstrap}))
    yield consumer
    consumer.close()


def test_starts_ends_and_times_in_one_query(bootstrap: str, unique: str, queries: Consumer) -> None:
    topic = f"queries-{unique}"
    _topic(bootstrap, topic, 2)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce(topic, b"old", partition=0, timestamp=1_000 + i)
    producer.produce(topic, b"new", partition=0, timestamp=2_000)
    assert producer.flush(30) == 0
    both = [(topic, 0), (topic, 1)]
    assert query_offsets(queries, dict.fromkeys(both, EARLIEST), 10) == {(topic, 0): 0, (topic, 1): 0}
    assert query_offsets(queries, dict.fromkeys(both, LATEST), 10) == {(topic, 0): 6, (topic, 1): 0}
    assert query_offsets(queries, {(topic, 0): 1_003, (topic, 1): 1_003}, 10) == {(topic, 0): 3, (topic, 1): -1}
    assert query_offsets(queries, {(topic, 0): 3_000}, 10) == {(topic, 0): -1}  # nothing that recent
    assert query_offsets(queries, {}, 10) == {}


def test_the_end_is_the_last_stable_offset(bootstrap: str, unique: str, queries: Consumer) -> None:
    topic = f"stable-{unique}"
    _topic(bootstrap, topic, 1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"stable-{unique}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed", partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"open", partition=0)
    assert producer.flush(30) == 0
    # The committed record and its marker, not the open transaction's record (the high watermark is 3).
    wait_until(lambda: query_offsets(queries, {(topic, 0): LATEST}, 10) == {(topic, 0): 2}, 30,
               message="the end before the open transaction")
    producer.commit_transaction(30)  # the broker writes the markers after it answers
    wait_until(lambda: query_offsets(queries, {(topic, 0): LATEST}, 10) == {(topic, 0): 4}, 30,
               message="the end past the committed transaction")


def test_a_missing_partition_is_a_kafka_error_naming_it(bootstrap: str, unique: str, queries: Consumer) -> None:
    topic = f"missing-{unique}"
    _topic(bootstrap, topic, 1)
    with pytest.raises(KafkaException) as raised:
        query_offsets(queries, {(topic, 0): LATEST, (topic, 7): LATEST}, 5)
    assert raised.value.args[0].code() in (KafkaError._UNKNOWN_PARTITION, KafkaError.UNKNOWN_TOPIC_OR_PART)


@pytest.fixture
def stalling_broker(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    b = EmbeddedBroker(tmp_path / "broker").start()
    yield b
    b.start()  # a no-op when running: a failed test must not leave it stopped
    b.stop()


def test_short_queries_across_stalls_and_restarts_answer_or_fail_but_never_abort(stalling_broker: EmbeddedBroker,
                                                                                  unique: str) -> None:
    bootstrap = stalling_broker.bootstrap_servers
    topic = f"stalls-{unique}"
    _topic(bootstrap, topic, 3)
    log = KafkaLog(topic, {"bootstrap.servers": bootstrap, "socket.timeout.ms": 1000,
                           "reconnect.backoff.max.ms": 500}, lambda k, v, p, o: None)
    log.start()
    answered, failed, unexpected = [0], [0], []
    stop = threading.Event()
    rng = random.Random(7)

    def ask() -> None:
        while not stop.is_set():
            try:
                log.read_to_end(rng.choice([0.05, 0.2, 0.5, 1.0]))
                answered[0] += 1
            except (KafkaException, TimeoutError):
                failed[0] += 1
            except Exception as e:  # noqa: BLE001 - anything else is the bug this test looks for
                unexpected.append(e)

    askers = [threading.Thread(target=ask, daemon=True) for _ in range(3)]
    try:
        for t in askers:
            t.start()
        for fault in ("pause", "restart", "pause", "restart"):
            seen = failed[0]
            if fault == "pause":
                stalling_broker.pause()
                wait_until(lambda s=seen: failed[0] > s, 30, message="a query failing during the stall")
                stalling_broker.resume()
            else:
                stalling_broker.stop()
                wait_until(lambda s=seen: failed[0] > s, 30, message="a query failing while the broker is down")
                stalling_broker.start()
            done = answered[0]
            wait_until(lambda d=done: answered[0] > d, 60, message=f"queries answered again after the {fault}")
    finally:
        stop.set()
        for t in askers:
            t.join(30)
    assert not unexpected
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"after", partition=2)
    assert producer.flush(30) == 0
    log.read_to_end(30)
    assert log.end_offsets(30) == {2: 1}
    log.stop()


def test_a_query_after_a_restart_is_asked_again_on_fresh_metadata(stalling_broker: EmbeddedBroker,
                                                                 unique: str) -> None:
    """The restarted broker leads its partitions with a newer leader epoch than the consumer knew: it refuses the
    first query (FENCED_LEADER_EPOCH) and the consumer must ask again once it has the new metadata."""
    bootstrap = stalling_broker.bootstrap_servers
    topic = f"restarted-{unique}"
    _topic(bootstrap, topic, 2)
    queries = Consumer(query_config({"bootstrap.servers": bootstrap}))
    try:
        assert query_offsets(queries, {(topic, 0): LATEST, (topic, 1): LATEST}, 10) == {(topic, 0): 0, (topic, 1): 0}
        stalling_broker.stop()
        stalling_broker.start()
        assert query_offsets(queries, {(topic, 0): LATEST, (topic, 1): LATEST}, 60) == {(topic, 0): 0, (topic, 1): 0}
    finally:
        queries.close()
