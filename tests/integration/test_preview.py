"""Previews against the real broker: a sink's chain of transformations with a predicate and a failing record
gives, after the transformations, exactly what the sink task then receives; a source's task is polled without
producing; nothing is written and no offset moves; bad requests are refused naming the field."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until
from IPython.core.interactiveshell import InteractiveShell

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.connectors import verifying

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def rt(bootstrap: str) -> Iterator[ConnectRuntime]:
    runtime = ConnectRuntime(bootstrap, f"preview-{uuid.uuid4().hex[:8]}", {"offset.flush.interval.ms": "200"})
    try:
        yield runtime
    finally:
        runtime.close()


def make_topic(bootstrap: str, topic: str, values: list[bytes | None]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        producer.produce(topic, value, f"k{i}".encode())
    assert producer.flush(30) == 0


def end_offsets(bootstrap: str, *topics: str) -> dict[str, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "preview-ends"})
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        existing = admin.list_topics(timeout=30).topics
        return {t: consumer.get_watermark_offsets(TopicPartition(t, 0), 30)[1] if t in existing else -1
                for t in topics}
    finally:
        consumer.close()


def sink_config(topic: str, dlq: str) -> dict[str, str]:
    return {"connector.class": "VerifyingSink", "topics": topic, "key.converter": STRING, "value.converter": JSON,
            "value.converter.schemas.enable": "false", "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.topic.replication.factor": "1",
            "transforms": "dropTombstones,origin,hide",
            "transforms.dropTombstones.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.dropTombstones.predicate": "isTombstone",
            "predicates": "isTombstone",
            "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
            "transforms.origin.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.origin.static.field": "origin", "transforms.origin.static.value": "kafka",
            "transforms.hide.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
            "transforms.hide.exclude": "secret"}


def test_a_sinks_preview_equals_what_its_task_receives_and_writes_nothing(rt: ConnectRuntime, bootstrap: str) -> None:
    topic, dlq, name = f"preview-{uuid.uuid4().hex[:8]}", f"preview-dlq-{uuid.uuid4().hex[:8]}", "preview-sink"
    values: list[bytes | None] = [json.dumps({"id": i, "secret": f"s{i}"}).encode() for i in range(6)]
    values[3] = b"{not json"  # fails in the value converter
    values[5] = None  # a tombstone, filtered out by the predicate
    make_topic(bootstrap, topic, values)
    config = sink_config(topic, dlq)

    result = rt.preview(config, name=name, records=10)  # before the connector exists
    assert list(result.before["offset"]) == [0, 1, 2, 4, 5]
    assert result.failures.to_dict("records") == [{
        "topic": topic, "partition": 0, "offset": 3, "stage": "VALUE_CONVERTER", "class": "JsonConverter",
        "error": result.failures.loc[0, "error"], "action": "skipped (errors.tolerance=all)"}]
    assert "DataException" in result.failures.loc[0, "error"]
    assert list(result.after["value"]) == [{"id": i, "origin": "kafka"} for i in (0, 1, 2, 4)]
    assert list(result.after["key"]) == ["k0", "k1", "k2", "k4"]
    assert end_offsets(bootstrap, topic, dlq) == {topic: 6, dlq: -1}  # nothing written, no DLQ topic made
    assert name not in rt.connectors()

    rt.create_connector(name, config)
    wait_until(lambda: len(verifying.received(name)) == 4, 30, message="the 4 records put")
    received = [(r.topic, r.kafka_partition, r.kafka_offset, r.key, r.value) for r in verifying.received(name)]
    after = list(result.after[["topic", "partition", "offset", "key", "value"]].itertuples(index=False, name=None))
    assert received == after

    # a preview of the running connector moves nothing either
    wait_until(lambda: rt.get_offsets(name)["offsets"], 30, message="the sink's offsets committed")
    offsets, status, ends = rt.get_offsets(name), rt.connector_status(name), end_offsets(bootstrap, topic, dlq)
    again = rt.preview(name, position="committed")
    assert again.before.empty and again.failures.empty  # everything is consumed: nothing after its offsets
    latest = rt.preview(name, records=2, position="latest")
    assert list(latest.before["offset"]) == [4, 5] and list(latest.after["offset"]) == [4]
    assert (rt.get_offsets(name), rt.connector_status(name), end_offsets(bootstrap, topic, dlq)) == \
        (offsets, status, ends)
    rt.delete_connector(name)


def test_a_sources_preview_polls_its_task_and_produces_nothing(rt: ConnectRuntime, bootstrap: str,
                                                               tmp_path: Path) -> None:
    lines, topic = tmp_path / "in.txt", f"preview-src-{uuid.uuid4().hex[:8]}"
    lines.write_text("".join(f"line {i}\n" for i in range(5)))
    config = {"connector.class": "FileStreamSource", "file": str(lines), "topic": topic,
              "value.converter": STRING, "transforms": "route",
              "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
              "transforms.route.regex": "preview-src-(.*)", "transforms.route.replacement": "routed-$1"}
    result = rt.preview(config, records=3)
    assert list(result.before["value"]) == ["line 0", "line 1", "line 2"]
    assert list(result.before["topic"]) == [topic] * 3
    assert list(result.after["topic"]) == [topic.replace("preview-src-", "routed-")] * 3
    assert result.failures.empty
    assert end_offsets(bootstrap, topic, topic.replace("preview-src-", "routed-")) == \
        {topic: -1, topic.replace("preview-src-", "routed-"): -1}


def test_bad_previews_are_refused_naming_the_field(rt: ConnectRuntime) -> None:
    cases = [
        (lambda: rt.preview("no-such-connector"), 404, "Connector no-such-connector not found"),
        (lambda: rt.preview({"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x"}, records=0), 400,
         "Invalid value 0 for records: must be at least 1"),
        (lambda: rt.preview({"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x"},
                            position="middle"), 400, "Invalid value middle for position"),
        (lambda: rt.preview({"connector.class": "FileStreamSink", "file": "/tmp/x"}), 400, "topics"),
        (lambda: rt.preview({"connector.class": "NoSuchConnector"}), 400, "NoSuchConnector"),
    ]
    for call, status, message in cases:
        with pytest.raises(ConnectRestError) as info:
            call()
        assert info.value.status == status and message in info.value.message, info.value.message


def test_the_preview_magics(bootstrap: str, tmp_path: Path) -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    ip.run_line_magic("config", f"ConnectMagics.bootstrap_servers = {bootstrap!r}")
    ip.run_line_magic("config", f"ConnectMagics.group_id = 'preview-magic-{uuid.uuid4().hex[:8]}'")
    try:
        ip.run_line_magic("connect", "start")
        topic = f"preview-magic-{uuid.uuid4().hex[:8]}"
        make_topic(bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(4)])
        result = ip.run_cell_magic("connect", "preview -n 2 -o p", f"""
connector.class=FileStreamSink
topics={topic}
file={tmp_path / 'out.txt'}
key.converter={STRING}
value.converter={JSON}
value.converter.schemas.enable=false
""")
        result = ip.user_ns["p"]
        assert list(result.after["value"]) == [{"id": 0}, {"id": 1}], result.failures.to_dict("records")
        assert not (tmp_path / "out.txt").exists()
        with pytest.raises(Exception, match="needs a connector NAME"):
            ip.run_line_magic("connect", "preview")
        with pytest.raises(Exception, match="must be an integer >= 1"):
            ip.run_line_magic("connect", "preview x -n 0")
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")
