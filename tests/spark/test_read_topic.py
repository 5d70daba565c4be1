"""rt.read_topic: a topic's records as a Spark DataFrame, decoded by converters, through Spark's Kafka source
and through the runtime's own consumer, with the same rows either way."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.api.converters import JsonConverter
from connect_magics.api.data import INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder, Struct
from connect_magics.errors import BadRequestError, NotFoundError
from connect_magics.spark.topic_frame import has_kafka_source

READERS = ("consumer", "kafka-source")
WITH_SCHEMAS = {"key.converter": "StringConverter", "value.converter": "JsonConverter"}
SCHEMALESS = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false",
              "key.converter": "StringConverter"}
ORDER = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("name", STRING_SCHEMA).build()


def make_topic(bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes | None]]) -> None:
    """``topic`` with 2 partitions holding ``records`` (partition, key, value), every one acknowledged."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, key, value in records:
        producer.produce(topic, value, key, partition=partition, headers=[("h", b"1")] if partition else None)
    assert producer.flush(30) == 0


@pytest.fixture(scope="module")
def rt(bootstrap: str, spark):
    with ConnectRuntime(bootstrap, group_id="read-topic", spark=spark) as runtime:
        yield runtime


@pytest.fixture(scope="module")
def orders(bootstrap: str) -> str:
    """Six orders written by JsonConverter with schemas, keyed by their id as text."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    records = [(i % 2, str(i).encode(), converter.from_connect_data(
        "orders", ORDER, Struct(ORDER).put("id", i).put("name", f"n{i}"))) for i in range(6)]
    make_topic(bootstrap, "orders-json", records)
    return "orders-json"


def test_the_session_has_the_kafka_source(spark) -> None:
    assert has_kafka_source(spark)


@pytest.mark.parametrize("reader", READERS)
def test_json_with_schemas_is_decoded_into_typed_columns(rt: ConnectRuntime, orders: str, reader: str) -> None:
    df = rt.read_topic(orders, WITH_SCHEMAS, reader=reader)
    assert [f.name for f in df.schema.fields] == ["topic", "partition", "offset", "timestamp", "key", "value",
                                                  "headers"]
    assert df.schema["value"].dataType.simpleString() == "struct<id:bigint,name:string>"
    assert df.schema["key"].dataType.simpleString() == "string"
    rows = sorted(df.select("partition", "offset", "key", "value.id", "value.name").collect(),
                  key=lambda r: r["id"])
    assert [tuple(r) for r in rows] == [(i % 2, i // 2, str(i), i, f"n{i}") for i in range(6)]
    headers = {r["partition"]: r["headers"] for r in df.select("partition", "headers").collect()}
    assert headers[0] is None and [(h["key"], h["value"]) for h in headers[1]] == [("h", b"1")]


def test_both_readers_give_the_same_rows(rt: ConnectRuntime, orders: str) -> None:
    frames = [rt.read_topic(orders, WITH_SCHEMAS, reader=r).orderBy("partition", "offset") for r in READERS]
    assert frames[0].schema == frames[1].schema
    assert frames[0].collect() == frames[1].collect()


@pytest.mark.parametrize("reader", READERS)
def test_schemaless_json_gets_the_types_of_all_its_records(rt: ConnectRuntime, bootstrap: str, unique: str,
                                                           reader: str) -> None:
    topic = f"schemaless-{reader}-{unique}"
    values = [b'{"id": 1, "tags": ["a"]}', b'{"id": 2.5, "extra": {"n": 1}}', b'{"id": 3, "extra": "text"}']
    make_topic(bootstrap, topic, [(0, None, v) for v in values] + [(1, None, None)])  # partition 1: only a null
    df = rt.read_topic(topic, SCHEMALESS, reader=reader).orderBy("partition", "offset")
    assert df.schema["value"].dataType.simpleString() == "struct<id:double,tags:array<string>,extra:string>"
    assert [r["value"] and tuple(r["value"]) for r in df.collect()] == [
        (1.0, ["a"], None), (2.5, None, '{"n":1}'), (3.0, None, "text"), None]


@pytest.mark.parametrize("reader", READERS)
def test_bounds_and_max_records(rt: ConnectRuntime, orders: str, reader: str) -> None:
    first = rt.read_topic(orders, "StringConverter", max_records=3, reader=reader)
    assert sorted((r["partition"], r["offset"]) for r in first.collect()) == [(0, 0), (0, 1), (1, 0)]
    assert first.schema["value"].dataType.simpleString() == "string"
    later = rt.read_topic(orders, "ByteArrayConverter", starting={1: 2}, ending={0: 1}, reader=reader)
    assert sorted((r["partition"], r["offset"]) for r in later.collect()) == [(0, 0), (1, 2)]
    assert later.schema["value"].dataType.simpleString() == "binary"


def test_bad_input_is_refused_with_the_reason(rt: ConnectRuntime, orders: str) -> None:
    with pytest.raises(NotFoundError, match="Topic 'no-such-topic' does not exist"):
        rt.read_topic("no-such-topic")
    with pytest.raises(BadRequestError, match="Invalid value NoSuchConverter for key.converter: Class "
                                              "NoSuchConverter could not be found"):
        rt.read_topic(orders, "NoSuchConverter")
    with pytest.raises(BadRequestError, match="Invalid value 'fastest' for reader"):
        rt.read_topic(orders, reader="fastest")
    with pytest.raises(BadRequestError, match=r"Invalid value \{7: 0\} for starting: the topic has no partition"):
        rt.read_topic(orders, starting={7: 0})
    with pytest.raises(BadRequestError, match="Invalid value -1 for max_records"):
        rt.read_topic(orders, max_records=-1)
    with pytest.raises(ValueError, match=r"Cannot decode the key of orders-json-\d@0 with JsonConverter"):
        rt.read_topic(orders, "JsonConverter", reader="consumer")  # the keys are not JSON with schemas
