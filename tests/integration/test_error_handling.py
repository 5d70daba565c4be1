"""Record error handling against the real broker: tolerance, retries and the sink dead letter queue."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import one_task_connector, wait_until

from connect_magics import ConnectRuntime
from connect_magics.api import SinkConnector, SinkTask
from connect_magics.api.errors import RetriableException
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation
from connect_magics.connectors import verifying

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
FAST = {"offset.flush.interval.ms": "200"}


class FailEveryTenth(Transformation):
    """Raises on every record whose ``seq`` is a multiple of 10 (for a SequenceSource with JSON values)."""

    def configure(self, props: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        if record.value["seq"] % 10 == 0:
            raise ValueError(f"seq {record.value['seq']} is not allowed")
        return record


FLAKY_CALLS: dict[str, int] = {}


class FlakyTransform(Transformation):
    """Raises RetriableException on the first two calls for each record value, then passes it on."""

    def configure(self, props: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        FLAKY_CALLS[record.value] = FLAKY_CALLS.get(record.value, 0) + 1
        if FLAKY_CALLS[record.value] <= 2:
            raise RetriableException("try again")
        return record


WRITTEN: dict[str, list[str]] = {}


class RejectingSinkTask(SinkTask):
    """Writes string values, except those starting with "bad", which it hands to the errant record reporter."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        self.reporter = self.context.errant_record_reporter()
        WRITTEN.setdefault(self.name, [])

    def put(self, records: list) -> None:
        for record in records:
            if record.value.startswith("bad"):
                self.reporter.report(record, ValueError(f"cannot write {record.value}"))
            else:
                WRITTEN[self.name].append(record.value)

    def stop(self) -> None:
        pass


RejectingSink = one_task_connector("RejectingSink", SinkConnector, RejectingSinkTask)


@pytest.fixture
def rt(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    with ConnectRuntime(bootstrap, f"err-{unique}", FAST) as runtime:
        runtime.plugins.register(FailEveryTenth)
        runtime.plugins.register(FlakyTransform)
        runtime.plugins.register(RejectingSink)
        yield runtime


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap})
    for i, v in enumerate(values):
        p.produce(topic, v, key=f"k{i}".encode(), headers=[("origin", b"test")], partition=i % partitions)
    assert p.flush(30) == 0


def read_all(bootstrap: str, topic: str, expect: int) -> list:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "dlq-reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list = []

    def enough() -> bool:
        out.extend(m for m in c.consume(500, timeout=0.2) if not m.error())
        return len(out) >= expect
    try:
        wait_until(enough, 60, message=lambda: f"{expect} records in {topic} (have {len(out)})")
        assert not [m for m in c.consume(500, timeout=0.5) if not m.error()]  # and no more
    finally:
        c.close()
    return out


def committed(bootstrap: str, group: str, topic: str, partitions: int = 1) -> list[int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)]
    finally:
        c.close()


def status(rt: ConnectRuntime, name: str) -> Callable[[], tuple]:
    def states() -> tuple:
        st = rt.connector_status(name)
        return st["connector"]["state"], [t["state"] for t in st["tasks"]]
    return states


def test_sink_tolerates_bad_records_into_the_dead_letter_queue(rt: ConnectRuntime, bootstrap: str,
                                                               unique: str) -> None:
    topic, dlq, name = f"in-{unique}", f"dlq-{unique}", f"sink-{unique}"
    values = [b"not json" if i % 7 == 3 else json.dumps({"n": i}).encode() for i in range(100)]
    produce(bootstrap, topic, values, partitions=2)
    bad = [i for i in range(100) if i % 7 == 3]
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "key.converter": STRING,
                               "value.converter": JSON,
                               "value.converter.schemas.enable": "false", "errors.tolerance": "all",
                               "errors.log.enable": "true", "errors.deadletterqueue.topic.name": dlq,
                               "errors.deadletterqueue.topic.replication.factor": "1",
                               "errors.deadletterqueue.context.headers.enable": "true"})
    wait_until(lambda: len(verifying.received(name)) >= 100 - len(bad), 60, message="the good records")
    assert sorted(r.value["n"] for r in verifying.received(name)) == [i for i in range(100) if i not in bad]

    dead = read_all(bootstrap, dlq, len(bad))
    assert sorted(m.value() for m in dead) == [b"not json"] * len(bad)
    assert sorted(int(m.key()[1:]) for m in dead) == bad  # the original keys
    headers = dict(dead[0].headers())
    assert headers["origin"] == b"test"  # the original headers come first
    assert headers["__connect.errors.topic"] == topic.encode()
    assert int(headers["__connect.errors.partition"]) in (0, 1)
    assert headers["__connect.errors.connector.name"] == name.encode()
    assert headers["__connect.errors.task.id"] == b"0"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    # Kafka Connect's class names for our equivalents, so DLQ triage tools see the same values (issue 14)
    assert headers["__connect.errors.class.name"] == b"org.apache.kafka.connect.json.JsonConverter"
    assert headers["__connect.errors.exception.class.name"] == b"org.apache.kafka.connect.errors.DataException"
    assert b"Traceback" in headers["__connect.errors.exception.stacktrace"]
    offsets = {(m.partition(), m.offset()) for m in dead}
    assert {(int(dict(m.headers())["__connect.errors.partition"]), int(dict(m.headers())["__connect.errors.offset"]))
            for m in dead} == {(i % 2, i // 2) for i in bad} and len(offsets) == len(bad)
    # Every record, good or dead-lettered, is committed.
    wait_until(lambda: committed(bootstrap, f"connect-{name}", topic, 2) == [50, 50], 30, message="all committed")
    metrics = rt.metrics()[f"task-error-metrics,connector={name},task=0"]
    assert {k: metrics[k] for k in ("total-record-errors", "total-records-skipped", "total-errors-logged",
                                    "deadletterqueue-produce-requests", "deadletterqueue-produce-failures")} == {
        "total-record-errors": len(bad), "total-records-skipped": len(bad), "total-errors-logged": len(bad),
        "deadletterqueue-produce-requests": len(bad), "deadletterqueue-produce-failures": 0}
    assert metrics["last-error-timestamp"] > 0


def test_sink_with_no_tolerance_fails_at_the_first_bad_record_after_dead_lettering_it(
        rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic, dlq, name = f"in-{unique}", f"dlq-{unique}", f"strict-{unique}"
    produce(bootstrap, topic, [json.dumps({"n": 0}).encode(), b"{broken", json.dumps({"n": 2}).encode()])
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "key.converter": STRING,
                               "value.converter": JSON,
                               "value.converter.schemas.enable": "false",
                               "errors.deadletterqueue.topic.name": dlq,
                               "errors.deadletterqueue.topic.replication.factor": "1"})
    wait_until(lambda: status(rt, name)()[1] == ["FAILED"], 60, message="the task FAILED")
    trace = rt.connector_status(name)["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace and "DataException" in trace
    assert [m.value() for m in read_all(bootstrap, dlq, 1)] == [b"{broken"]
    assert read_all(bootstrap, dlq, 1)[0].headers() == [("origin", b"test")]  # no context headers unless enabled
    assert verifying.received(name) == []  # the batch with the bad record was never put
    assert committed(bootstrap, f"connect-{name}", topic) == [-1001]  # nothing committed: no record lost


def test_source_skips_records_a_transformation_rejects(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic, name = f"src-{unique}", f"src-{unique}"
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": topic, "records": "100",
                               "value.converter": JSON, "value.converter.schemas.enable": "false",
                               "transforms": "picky", "transforms.picky.type": "FailEveryTenth",
                               "errors.tolerance": "all",
                               "topic.creation.default.replication.factor": "1",
                               "topic.creation.default.partitions": "1"})
    got = read_all(bootstrap, topic, 90)
    assert sorted(json.loads(m.value())["seq"] for m in got) == [s for s in range(100) if s % 10]
    # The offset of the last record is committed although record 90 was skipped before it.
    wait_until(lambda: rt.get_offsets(name)["offsets"] == [{"partition": {"task": 0}, "offset": {"seq": 99}}],
               30, message="offset 99 committed")


def test_retriable_transformation_failures_are_retried_within_the_timeout(rt: ConnectRuntime, bootstrap: str,
                                                                         unique: str) -> None:
    topic, name = f"flaky-{unique}", f"flaky-{unique}"
    values = [f"{unique}-{i}".encode() for i in range(3)]
    produce(bootstrap, topic, values)
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "key.converter": STRING,
                               "value.converter": STRING,
                               "transforms": "flaky", "transforms.flaky.type": "FlakyTransform",
                               "errors.retry.timeout": "30000", "errors.retry.delay.max.ms": "1000"})
    wait_until(lambda: len(verifying.received(name)) >= 3, 60, message="all three after retries")
    assert [r.value for r in verifying.received(name)] == [v.decode() for v in values]
    assert status(rt, name)() == ("RUNNING", ["RUNNING"])
    metrics = rt.metrics()[f"task-error-metrics,connector={name},task=0"]
    # Per record: the fast path fails, the staged re-run fails, one retry after a backoff succeeds.
    assert metrics["total-retries"] == 3 and metrics["total-record-errors"] == 0


def test_validation_of_the_error_settings(rt: ConnectRuntime, unique: str) -> None:
    infos = rt.validate_connector_config({
        "name": "v", "connector.class": "VerifyingSink", "topics": "a,dead", "errors.tolerance": "some",
        "errors.deadletterqueue.topic.name": "dead", "errors.retry.timeout": "soon"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert errors["errors.deadletterqueue.topic.name"] == [
        "The DLQ topic 'dead' may not be included in the list of topics ('topics=[a, dead]') consumed by the "
        "connector"]
    assert errors["errors.tolerance"] == ["Invalid value some for configuration errors.tolerance: String must be "
                                          "one of (case insensitive): ALL, NONE"]
    assert "errors.retry.timeout" in errors
    regex = rt.validate_connector_config({"name": "v", "connector.class": "VerifyingSink", "topics.regex": "d.*",
                                          "errors.deadletterqueue.topic.name": "dead"})
    dlq = next(c for c in regex["configs"] if c["value"]["name"] == "errors.deadletterqueue.topic.name")
    assert dlq["value"]["errors"] == ["The DLQ topic 'dead' may not be included in the regex matching the topics "
                                      "('topics.regex=d.*') consumed by the connector"]
    groups = {c["definition"]["group"] for c in infos["configs"] if c["definition"]["name"].startswith("errors.")}
    assert groups == {"Error Handling"}


def test_a_sink_task_reports_errant_records_to_the_dead_letter_queue(rt: ConnectRuntime, bootstrap: str,
                                                                      unique: str) -> None:
    topic, dlq, name = f"in-{unique}", f"dlq-{unique}", f"rej-{unique}"
    values = [f"{'bad' if i % 4 == 0 else 'good'}-{i}".encode() for i in range(20)]
    produce(bootstrap, topic, values)
    rt.create_connector(name, {"connector.class": "RejectingSink", "topics": topic, "key.converter": STRING,
                               "value.converter": STRING, "errors.tolerance": "all",
                               "errors.deadletterqueue.topic.name": dlq,
                               "errors.deadletterqueue.topic.replication.factor": "1",
                               "errors.deadletterqueue.context.headers.enable": "true"})
    dead = read_all(bootstrap, dlq, 5)
    assert [m.value() for m in dead] == [v for v in values if v.startswith(b"bad")]
    assert [m.key() for m in dead] == [f"k{i}".encode() for i in range(0, 20, 4)]
    headers = dict(dead[1].headers())
    assert headers["origin"] == b"test" and headers["__connect.errors.offset"] == b"4"
    assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert headers["__connect.errors.class.name"].endswith(b"RejectingSinkTask")
    assert headers["__connect.errors.exception.message"] == b"cannot write bad-4"
    assert WRITTEN[name] == [v.decode() for v in values if v.startswith(b"good")]
    wait_until(lambda: committed(bootstrap, f"connect-{name}", topic) == [20], 30, message="all committed")


def test_no_errant_record_reporter_without_a_dead_letter_queue_or_error_log(rt: ConnectRuntime, bootstrap: str,
                                                                             unique: str) -> None:
    topic, name = f"in-{unique}", f"norep-{unique}"
    produce(bootstrap, topic, [b"good"])
    rt.create_connector(name, {"connector.class": "RejectingSink", "topics": topic, "key.converter": STRING,
                               "value.converter": STRING})
    wait_until(lambda: WRITTEN.get(name) == ["good"], 30, message="the record written")
    assert rt.herder.task_handle(name, 0).runner.task.reporter is None
