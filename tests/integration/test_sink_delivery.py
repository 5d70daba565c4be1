"""How sink tasks receive their batches against the real broker: SinkRecords built on first access, columns,
and the offsets committed for every partition, rewinds included."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import one_task_connector, wait_until

from connect_magics import ConnectRuntime
from connect_magics.api import SinkConnector, SinkRecords, SinkTask, TopicPartition
from connect_magics.api.config import java_str
from connect_magics.api.converters import ByteArrayConverter, StringConverter
from connect_magics.api.errors import RetriableException
from connect_magics.connectors import verifying
from connect_magics.storage import fence as fences
from connect_magics.storage.group_offsets import list_group_offsets

pytestmark = pytest.mark.broker

STRING = "org.apache.kafka.connect.storage.StringConverter"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
FAST = {"offset.flush.interval.ms": "200"}

SEEN: dict[str, dict[str, Any]] = {}


class RecordingSinkTask(SinkTask):
    """Keeps every value, read as a column or record by record (``read``), and can rewind once (``rewind``)."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.name, self.read = props["name"], props["read"]
        self.rewind = int(props.get("rewind", "-1"))  # once a batch reaches this offset, consume again from 0
        self.retries = int(props.get("retries", "0"))  # refuse the first non-empty batches with RetriableException
        self.fail = props.get("fail")  # raise this message from the first non-empty put
        self.open_at = int(props.get("open.at", "-1"))  # open() rewinds every partition it gets to this offset
        SEEN[self.name] = {"values": [], "headers": [], "types": set(), "refused": [], "delivered": [], "empty": 0}

    def put(self, records: SinkRecords) -> None:
        seen = SEEN[self.name]
        if not records:
            seen["empty"] += 1
            return
        if self.fail:
            raise ValueError(self.fail)
        first = (records[0].kafka_partition, records[0].kafka_offset, len(records))
        if self.retries > 0:
            self.retries -= 1
            seen["refused"].append(first)
            self.context.timeout(200)
            raise RetriableException("the target is busy")
        seen["delivered"].append(first)
        seen["types"].add(type(records))
        if self.read == "column":
            seen["values"].extend(records.values())
            seen.setdefault("frames", []).append(records.to_pandas())
            seen.setdefault("built", []).append(SinkRecords(list(records)).to_pandas())
        else:
            for r in records:
                seen["values"].append(r.value)
                seen["headers"].extend((h.key, h.value) for h in r.headers)
        if self.rewind >= 0 and any(r.kafka_offset >= self.rewind for r in records):
            self.context.offset({TopicPartition(records[0].topic, 0): 0})
            self.rewind = -1

    def open(self, partitions: list[TopicPartition]) -> None:
        if self.open_at >= 0:
            self.context.offset({tp: self.open_at for tp in partitions})

    def stop(self) -> None:
        pass


RecordingSink = one_task_connector("RecordingSink", SinkConnector, RecordingSinkTask)


@pytest.fixture
def rt(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    with ConnectRuntime(bootstrap, f"delivery-{unique}", FAST) as runtime:
        runtime.plugins.register(RecordingSink)
        yield runtime


def produce(bootstrap: str, topic: str, n: int, partitions: int, headers_every: int = 0) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference until the future is done
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(n):
        headers = [("n", str(i).encode())] if headers_every and i % headers_every == 0 else None
        p.produce(topic, f"v{i}".encode(), key=f"k{i}".encode(), partition=i % partitions, headers=headers)
    assert p.flush(30) == 0


def committed(bootstrap: str, connector: str) -> dict[int, int]:
    return {p: o for (_t, p), o in list_group_offsets({"bootstrap.servers": bootstrap}, f"connect-{connector}").items()}


@pytest.mark.parametrize("read", ["column", "records"])
def test_every_record_of_three_partitions_arrives_once_and_is_committed(rt, bootstrap, unique, read) -> None:
    topic, name = f"three-{unique}", f"rec-{read}-{unique}"
    produce(bootstrap, topic, 3000, partitions=3)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": read,
                               "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: committed(bootstrap, name) == {0: 1000, 1: 1000, 2: 1000}, 60,
               message=lambda: f"offsets of every partition committed (have {committed(bootstrap, name)})")
    values = SEEN[name]["values"]
    assert sorted(values) == sorted(f"v{i}" for i in range(3000))  # every record once, decoded by the converter
    assert SEEN[name]["types"] == {SinkRecords}
    if read == "column":  # columns read from the messages equal the same columns of the records built
        for frame, built in zip(SEEN[name]["frames"], SEEN[name]["built"], strict=True):
            assert frame.equals(built) and frame["timestamp"].notna().all()


def test_headers_reach_the_task(rt, bootstrap, unique) -> None:
    topic, name = f"headed-{unique}", f"headed-{unique}"
    produce(bootstrap, topic, 300, partitions=1, headers_every=3)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                               "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: committed(bootstrap, name) == {0: 300}, 60, message="all offsets committed")
    assert len(SEEN[name]["values"]) == 300
    assert sorted(SEEN[name]["headers"]) == sorted(("n", i) for i in range(0, 300, 3))


def test_a_task_that_rewinds_is_redelivered_and_commits_the_end(rt, bootstrap, unique) -> None:
    """A rewind that ends on the partition's old position still counts as consumed: the end is committed."""
    topic, name = f"rewind-{unique}", f"rewind-{unique}"
    produce(bootstrap, topic, 100, partitions=1)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                               "rewind": "99", "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: len(SEEN.get(name, {}).get("values", [])) >= 200, 60, message="the partition read twice")
    wait_until(lambda: committed(bootstrap, name) == {0: 100}, 60,
               message=lambda: f"the end offset committed (have {committed(bootstrap, name)})")
    values = SEEN[name]["values"]
    assert len(values) == 200 and sorted(values) == sorted(f"v{i}" for i in range(100) for _ in range(2))


def test_a_rewind_in_open_comes_before_any_record(rt, bootstrap, unique) -> None:
    """librdkafka refuses a seek (_STATE) until it applied the assignment; records fetched meanwhile from the
    committed offset are not delivered, as Kafka Connect seeks before its first poll (they were a batch written
    twice when a partition lost in an outage came back to its sink). The group starts at a committed offset,
    which librdkafka fetches from at once."""
    topic, name = f"open-at-{unique}", f"open-at-{unique}"
    produce(bootstrap, topic, 5000, partitions=1)
    committer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"connect-{name}"})
    committer.commit(offsets=[KafkaTopicPartition(topic, 0, 1000)], asynchronous=False)
    committer.close()
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                               "open.at": "4000", "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: len(SEEN.get(name, {}).get("values", [])) >= 1000, 60, message="the records after 4000")
    wait_until(lambda: committed(bootstrap, name) == {0: 5000}, 60,
               message=lambda: f"the end offset committed (have {committed(bootstrap, name)})")
    assert SEEN[name]["delivered"][0][1] == 4000
    assert sorted(SEEN[name]["values"]) == sorted(f"v{i}" for i in range(4000, 5000))


def test_a_sink_created_before_its_topic_waits_for_it(rt, bootstrap, unique, caplog) -> None:
    """As in Kafka Connect: a subscribed topic that does not exist yet is waited for, not a task failure."""
    topic, name = f"later-{unique}", f"later-{unique}"
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "column",
                               "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: any(topic in r.getMessage() and "carrying on" in r.getMessage() for r in caplog.records),
               30, message="the consumer's report of the missing topic")
    produce(bootstrap, topic, 50, partitions=1)
    wait_until(lambda: len(SEEN.get(name, {}).get("values", [])) == 50, 60, message="the records of the new topic")
    assert [t["state"] for t in rt.connector_status(name)["tasks"]] == ["RUNNING"]


def test_a_batch_refused_as_retriable_is_redelivered_whole(rt, bootstrap, unique) -> None:
    """Kafka's pausedForRedelivery: the same batch comes back after context.timeout(), nothing else comes
    in between, and every record is written and committed once."""
    topic, name = f"retry-{unique}", f"retry-{unique}"
    produce(bootstrap, topic, 600, partitions=2)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                               "retries": "3", "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: committed(bootstrap, name) == {0: 300, 1: 300}, 60,
               message=lambda: f"every offset committed (have {committed(bootstrap, name)})")
    seen = SEEN[name]
    assert sorted(seen["values"]) == sorted(f"v{i}" for i in range(600))
    assert len(seen["refused"]) == 3 and len(set(seen["refused"])) == 1  # the same batch, three times
    assert seen["delivered"][0] == seen["refused"][0]  # then delivered, before any other batch
    assert [t["state"] for t in rt.connector_status(name)["tasks"]] == ["RUNNING"]


def test_put_is_called_when_there_is_nothing_to_deliver(rt, bootstrap, unique) -> None:
    """As Kafka Connect, which calls put after every poll: tasks that flush on time see the clock."""
    topic, name = f"idle-{unique}", f"idle-{unique}"
    produce(bootstrap, topic, 10, partitions=1)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "column",
                               "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: len(SEEN.get(name, {}).get("values", [])) == 10, 60, message="the records")
    wait_until(lambda: SEEN[name]["empty"] >= 3, 30, message="empty puts while idle")


def test_an_unrecoverable_put_failure_is_reported_as_kafka_connect_does(rt, bootstrap, unique) -> None:
    topic, name = f"boom-{unique}", f"boom-{unique}"
    produce(bootstrap, topic, 10, partitions=1)
    rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                               "fail": "disk full", "value.converter": STRING, "key.converter": BYTES})
    task = wait_until(lambda: next((t for t in rt.connector_status(name)["tasks"] if t["state"] == "FAILED"), None),
                      60, message="the task FAILED")
    assert "ValueError: disk full" in task["trace"]
    assert "ConnectException: Exiting WorkerSinkTask due to unrecoverable exception." in task["trace"]
    assert committed(bootstrap, name) == {}


def test_three_tasks_share_three_partitions_through_rebalances(rt, bootstrap, unique) -> None:
    """Tasks joining one by one rebalance the group while records flow: every record arrives (at least once,
    as in Kafka Connect) and every partition's end offset is committed."""
    topic, name = f"shared-{unique}", f"shared-{unique}"
    produce(bootstrap, topic, 3000, partitions=3)
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "tasks.max": "3",
                               "value.converter": STRING, "key.converter": BYTES})
    wait_until(lambda: committed(bootstrap, name) == {0: 1000, 1: 1000, 2: 1000}, 90,
               message=lambda: f"every partition's end committed (have {committed(bootstrap, name)})")
    got = verifying.received(name)
    assert {r.value for r in got} == {f"v{i}" for i in range(3000)}
    assert {(r.kafka_partition, r.kafka_offset) for r in got} == {(p, o) for p in range(3) for o in range(1000)}
    assert [t["state"] for t in rt.connector_status(name)["tasks"]] == ["RUNNING"] * 3


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("converter", [STRING, BYTES])
def test_file_sink_writes_the_same_bytes_with_and_without_building_records(rt, bootstrap, unique, tmp_path,
                                                                         converter, nulls) -> None:
    """Without transformations, FileStreamSink's text comes from the consumed bytes (one decoding per batch for
    StringConverter, unless a value is null); with one, from the records built. Both are what decoding each value
    and printing it gives."""
    topic = f"text-{unique}"
    values = [b"plain", "日本 é".encode(), b"\xff", b"a\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"",
              b"x\ny", b"it's", b"back\\slash", b"\x00\x7f", "\U0001F600".encode(), *([None] if nulls else [])] * 20
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for v in values:
        p.produce(topic, v)
    assert p.flush(30) == 0
    plugin = StringConverter() if converter == STRING else ByteArrayConverter()
    expected = "".join(java_str(plugin.to_connect_data(topic, v).value) + "\n" for v in values).encode()
    same = {"transforms": "same", "transforms.same.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.same.regex": "no-such-topic", "transforms.same.replacement": "other"}
    outputs = {}
    for name, extra in (("fast", {}), ("records", same)):
        outputs[name] = tmp_path / f"{name}.txt"
        rt.create_connector(f"{name}-{unique}", {"connector.class": "FileStreamSink", "topics": topic,
                                                 "file": str(outputs[name]), "value.converter": converter, **extra})
    for name, out in outputs.items():
        wait_until(lambda out=out: out.exists() and len(out.read_bytes()) >= len(expected), 60,
                   message=f"every record in the {name} file")
        assert out.read_bytes() == expected, name


def test_file_sink_subscribed_to_two_topics_writes_both(rt, bootstrap, unique, tmp_path) -> None:
    """Batches may mix topics: the text of one of a single topic comes from its bytes, of a mixed one from records."""
    topics = [f"first-{unique}", f"second-{unique}"]
    for topic in topics:
        produce(bootstrap, topic, 500, partitions=1)
    out = tmp_path / "both.txt"
    rt.create_connector(f"both-{unique}", {"connector.class": "FileStreamSink", "topics": ",".join(topics),
                                           "file": str(out), "value.converter": STRING, "key.converter": STRING})
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 1000, 60, message="every line")
    assert sorted(out.read_text().splitlines()) == sorted(f"v{i}" for i in range(500) for _ in topics)


def test_partitions_revoked_while_the_claim_goes_on_are_committed_once_it_is_done(rt, bootstrap, unique,
                                                                                    caplog) -> None:
    """A sink task's fence claim goes on in the background while its records are delivered. Partitions revoked
    meanwhile (another member joined its group) wait for the claim and commit what the task took, so that their
    next owner does not consume all of it again (CI: four process sinks wrote one partition twice, its revoke's
    commit skipped because the claim was under way)."""
    topic, name = f"revoked-{unique}", f"revoked-{unique}"
    produce(bootstrap, topic, 2000, partitions=2)
    turns, held = fences.claim_turns(bootstrap), 0
    stop, assigned = threading.Event(), []
    joiner = Consumer({"bootstrap.servers": bootstrap, "group.id": f"connect-{name}", "enable.auto.commit": False})

    def poll() -> None:
        joiner.subscribe([topic], on_assign=lambda _c, partitions: assigned.extend(partitions))
        while not stop.is_set() and not assigned:
            joiner.poll(0.1)
    thread = threading.Thread(target=poll, daemon=True)
    try:
        for _ in range(fences.CONCURRENT_CLAIMS):  # every turn taken: the task's claim waits
            turns.acquire()
            held += 1
        caplog.set_level(logging.INFO, logger="connect_magics")
        rt.create_connector(name, {"connector.class": "RecordingSink", "topics": topic, "read": "records",
                                   "value.converter": STRING, "key.converter": BYTES})
        wait_until(lambda: len(SEEN.get(name, {}).get("values", [])) == 2000, 60, message="every record delivered")
        assert committed(bootstrap, name) == {}  # a periodic commit does not wait for the claim
        thread.start()  # the joiner's rebalance revokes the task's partitions
        wait_until(lambda: "to commit the offsets of its revoked partitions" in caplog.text, 60,
                   message="the revoke waiting for the claim")
        while held:  # the claim takes its turn and ends; the revoke commits
            turns.release()
            held -= 1
        wait_until(lambda: assigned, 60, message="the joiner's partitions")
        assert committed(bootstrap, name) == {0: 1000, 1: 1000}
        assert sorted(SEEN[name]["values"]) == sorted(f"v{i}" for i in range(2000))  # each once
    finally:
        while held:
            turns.release()
            held -= 1
        stop.set()
        if thread.is_alive() or thread.ident:
            thread.join(30)
        joiner.close()
