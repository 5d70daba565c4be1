"""A source's values reach the topic as its converter writes each one, whether the converter converted the
batch at once (JsonConverter: strings with nothing to escape, ``Converter.from_connect_column``) or a record in
the batch sent it back to the one-by-one path (a string to escape, a transformation, several topics)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.api.converters import JsonConverter
from connect_magics.api.data import STRING_SCHEMA

pytestmark = pytest.mark.broker

JSON = "org.apache.kafka.connect.json.JsonConverter"
LINES = ["plain", "x" * 100, "é日本", 'a "quoted" word', "a\ttab", "back\\slash", "last"]


def _raw_values(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[bytes] = []
        wait_until(lambda: values.extend(m.value() for m in consumer.consume(100, 1) if not m.error())
                   or len(values) >= count, 60, message=lambda: f"{len(values)} of {count} records read")
        return values
    finally:
        consumer.close()


@pytest.mark.parametrize("schemas", ["true", "false"])
@pytest.mark.parametrize("transform", [False, True])
def test_json_values_are_written_as_the_converter_writes_each(bootstrap: str, unique: str, tmp_path: Path,
                                                              schemas: str, transform: bool) -> None:
    topic, source = f"conv-{schemas}-{transform}-{unique}", tmp_path / "in.txt"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    plain = [f"line {i}" for i in range(500)]
    source.write_text("\n".join(plain) + "\n")
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
              "value.converter": JSON, "value.converter.schemas.enable": schemas}
    if transform:
        config |= {"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                   "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1"}
    with ConnectRuntime(bootstrap, f"conv-{unique}-{schemas}-{transform}") as rt:
        rt.create_connector("src", config)
        assert len(_raw_values(bootstrap, topic, len(plain))) == len(plain)
        with source.open("a") as f:
            f.write("\n".join(LINES) + "\n")  # read as one batch or a few: escaped and plain strings mixed
        values = _raw_values(bootstrap, topic, len(plain) + len(LINES))
        assert rt.task_status("src", 0)["state"] == "RUNNING"
    converter = JsonConverter()
    converter.configure({"schemas.enable": schemas}, is_key=False)
    assert values == [converter.from_connect_data(topic, STRING_SCHEMA, line) for line in plain + LINES]
