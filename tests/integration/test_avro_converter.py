"""Confluent's AvroConverter on a real Schema Registry (Apicurio, Confluent's API) and the real broker:
confluent-kafka's AvroSerializer / AvroDeserializer as the oracle both ways, pipelines through the runtime,
schema evolution, and the errors a user meets."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
import uuid
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from helpers import wait_until
from raw_topics import create_topics

from connect_magics import ConnectRuntime
from connect_magics.api.config import ConfigDef, ConfigException
from connect_magics.api.connector import SourceConnector, SourceTask
from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException, RetriableException
from connect_magics.api.records import SourceRecord
from connect_magics.converters import AvroConverter
from connect_magics.runtime.plugins.registry import Plugins

pytestmark = [pytest.mark.registry]

AVRO = "io.confluent.connect.avro.AvroConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
UTC = dt.timezone.utc


def converter(url: str, is_key: bool = False, **settings: str) -> AvroConverter:
    c = AvroConverter()
    c.configure({"schema.registry.url": url, **settings}, is_key)
    return c


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


# ------------------------------------------------------------------------------ the oracle: Avro written by
# confluent-kafka's AvroSerializer, read by our converter (Avro schema, record, expected Connect schema/value)

def _native_cases() -> list[tuple[str, Any, Any, Any]]:
    everything = {
        "type": "record", "name": "Everything", "namespace": "oracle", "fields": [
            {"name": "i", "type": "int"}, {"name": "l", "type": "long"}, {"name": "f", "type": "float"},
            {"name": "d", "type": "double"}, {"name": "b", "type": "boolean"}, {"name": "s", "type": "string"},
            {"name": "raw", "type": "bytes"},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "count", "type": "int", "default": 7},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {"name": "attrs", "type": {"type": "map", "values": "long"}},
            {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
            {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
                {"name": "x", "type": "long"}, {"name": "y", "type": ["null", "double"], "default": None}]}},
            {"name": "inners", "type": {"type": "array", "items": "Inner"}},
        ]}
    record = {"i": -5, "l": 1 << 40, "f": 1.5, "d": 2.25, "b": True, "s": "héllo", "raw": b"\x00\xff",
              "price": decimal.Decimal("12.34"), "day": dt.date(2024, 2, 29), "at": dt.time(13, 14, 15, 16000),
              "ts": dt.datetime(2024, 2, 29, 1, 2, 3, 4000, tzinfo=UTC), "note": None, "count": 9,
              "tags": ["a", "b"], "attrs": {"k": 1}, "color": "GREEN", "inner": {"x": 1, "y": 0.5},
              "inners": [{"x": 2, "y": None}, {"x": 3, "y": 1.0}]}
    color = (SchemaBuilder.string().parameter("io.confluent.connect.avro.Enum", "oracle.Color")
             .parameter("io.confluent.connect.avro.Enum.RED", "RED")
             .parameter("io.confluent.connect.avro.Enum.GREEN", "GREEN").name("oracle.Color").build())
    inner = (SchemaBuilder.struct().name("oracle.Inner").field("x", INT64_SCHEMA)
             .field("y", SchemaBuilder.float64().optional().build()).build())
    schema = (SchemaBuilder.struct().name("oracle.Everything").version(1)
              .field("i", INT32_SCHEMA).field("l", INT64_SCHEMA).field("f", FLOAT32_SCHEMA)
              .field("d", FLOAT64_SCHEMA).field("b", BOOLEAN_SCHEMA).field("s", STRING_SCHEMA)
              .field("raw", BYTES_SCHEMA)
              .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
              .field("day", Date.SCHEMA).field("at", Time.SCHEMA).field("ts", Timestamp.SCHEMA)
              .field("note", OPTIONAL_STRING_SCHEMA)
              .field("count", SchemaBuilder.int32().default_value(7)
                     .parameter("io.confluent.connect.avro.field.default", "true").build())
              .field("tags", SchemaBuilder.array(STRING_SCHEMA).build())
              .field("attrs", SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build())
              .field("color", color).field("inner", inner)
              .field("inners", SchemaBuilder.array(inner).build()).build())
    def inner_of(x, y):
        return (Struct(inner).put("x", x).put("y", y))
    value = Struct(schema)
    for name, v in record.items():
        if name not in ("inner", "inners"):
            value.put(name, v)
    value.put("inner", inner_of(1, 0.5)).put("inners", [inner_of(2, None), inner_of(3, 1.0)])
    return [
        ("record of every type", everything, record, (schema, value)),
        ("top-level long", "long", 42, (SchemaBuilder.int64().version(1).build(), 42)),
        ("top-level string", "string", "s", (SchemaBuilder.string().version(1).build(), "s")),
        ("top-level array", {"type": "array", "items": "int"}, [1, 2],
         (SchemaBuilder.array(INT32_SCHEMA).version(1).build(), [1, 2])),
    ]


@pytest.mark.parametrize("case", _native_cases(), ids=lambda c: c[0])
def test_avro_serializer_records_are_read_by_our_converter(schema_registry, case) -> None:
    _, avro, record, (schema, value) = case
    topic = f"oracle-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": schema_registry.url})
    data = AvroSerializer(client, json.dumps(avro))(record, ctx(topic))
    got = converter(schema_registry.url).to_connect_data(topic, data)
    assert got.schema == schema
    assert got.value == value


# ------------------------------------------------------------------------------ the oracle: our converter
# writes, confluent-kafka's AvroDeserializer reads (Connect schema, value, expected dict)

def _connect_cases() -> list[tuple[str, Any, Any, Any]]:
    address = (SchemaBuilder.struct().name("shop.Address").field("city", STRING_SCHEMA)
               .field("zip", OPTIONAL_STRING_SCHEMA).build())
    order = (SchemaBuilder.struct().name("shop.Order")
             .field("id", INT64_SCHEMA).field("small", INT8_SCHEMA).field("medium", INT16_SCHEMA)
             .field("qty", INT32_SCHEMA).field("ratio", FLOAT32_SCHEMA).field("price", FLOAT64_SCHEMA)
             .field("paid", BOOLEAN_SCHEMA).field("blob", BYTES_SCHEMA)
             .field("amount", Decimal.schema(3)).field("day", Date.SCHEMA).field("at", Time.SCHEMA)
             .field("placed", Timestamp.SCHEMA)
             .field("note", OPTIONAL_STRING_SCHEMA).field("parent", OPTIONAL_INT64_SCHEMA)
             .field("status", SchemaBuilder.string().default_value("new").build())
             .field("lines", SchemaBuilder.array(SchemaBuilder.struct().field("sku", STRING_SCHEMA)
                                                 .field("n", INT32_SCHEMA).build()).build())
             .field("labels", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build())
             .field("by_code", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build())
             .field("ship_to", address).field("bill_to", SchemaBuilder.struct().name("shop.Address")
                                              .field("city", STRING_SCHEMA).field("zip", OPTIONAL_STRING_SCHEMA)
                                              .optional().build())
             .build())
    line = order.field("lines").schema.value_schema
    value = (Struct(order).put("id", 1).put("small", -3).put("medium", 300).put("qty", 2).put("ratio", 0.5)
             .put("price", 9.99).put("paid", True).put("blob", b"\x01\x02").put("amount", decimal.Decimal("1.250"))
             .put("day", dt.date(2026, 11, 26)).put("at", dt.time(23, 59, 59, 999000))
             .put("placed", dt.datetime(2026, 11, 26, 2, 3, 4, 5000, tzinfo=UTC)).put("parent", None)
             .put("lines", [Struct(line).put("sku", "a").put("n", 1), Struct(line).put("sku", "b").put("n", 2)])
             .put("labels", {"gift": "yes"}).put("by_code", {1: "one", 2: "two"})
             .put("ship_to", Struct(address).put("city", "Oslo").put("zip", None)))
    expected = {"id": 1, "small": -3, "medium": 300, "qty": 2, "ratio": 0.5, "price": 9.99, "paid": True,
                "blob": b"\x01\x02", "amount": decimal.Decimal("1.250"), "day": dt.date(2026, 11, 26),
                "at": dt.time(23, 59, 59, 999000), "placed": dt.datetime(2026, 11, 26, 2, 3, 4, 5000, tzinfo=UTC),
                "note": None, "parent": None, "status": "new", "lines": [{"sku": "a", "n": 1}, {"sku": "b", "n": 2}],
                "labels": {"gift": "yes"}, "by_code": [{"key": 1, "value": "one"}, {"key": 2, "value": "two"}],
                "ship_to": {"city": "Oslo", "zip": None}, "bill_to": None}
    return [
        ("struct of every type", order, value, expected),
        ("int64", INT64_SCHEMA, 7, 7),
        ("optional string null", OPTIONAL_STRING_SCHEMA, None, None),
        ("string", STRING_SCHEMA, "ünïcode", "ünïcode"),
        ("array of decimals", SchemaBuilder.array(Decimal.schema(1)).build(),
         [decimal.Decimal("1.5"), decimal.Decimal("-2.0")], [decimal.Decimal("1.5"), decimal.Decimal("-2.0")]),
    ]


@pytest.mark.parametrize("case", _connect_cases(), ids=lambda c: c[0])
def test_our_records_are_read_by_avro_deserializer(schema_registry, case) -> None:
    _, schema, value, expected = case
    topic = f"oracle-{uuid.uuid4().hex[:8]}"
    ours = converter(schema_registry.url)
    data = ours.from_connect_data(topic, schema, value)
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": schema_registry.url}))
    assert deserializer(data, ctx(topic)) == expected
    back = ours.to_connect_data(topic, data)  # and our own reader gives the value back
    assert back.value == value or (back.value is None and value is None) or _same_struct(back.value, value)


def _same_struct(a: Any, b: Any) -> bool:
    return isinstance(a, Struct) and [a.get(f.name) for f in a.schema.fields] == \
        [b.get(f.name) if not isinstance(b.get(f.name), Struct) else a.get(f.name) for f in b.schema.fields]


def test_the_registry_is_called_once_per_schema_not_per_record(schema_registry) -> None:
    topic = f"cache-{uuid.uuid4().hex[:8]}"
    ours = converter(schema_registry.url)
    calls: list[str] = []
    client = ours.registry.client
    for name in ("register_schema", "lookup_schema", "get_schema"):
        original = getattr(client, name)
        setattr(client, name, lambda *a, _o=original, _n=name, **k: (calls.append(_n), _o(*a, **k))[1])
    datas = [ours.from_connect_data(topic, INT64_SCHEMA, i) for i in range(500)]
    assert [ours.to_connect_data(topic, d).value for d in datas] == list(range(500))
    assert [sv.value for sv in ours.to_connect_column(topic, datas)] == list(range(500))
    assert calls.count("register_schema") == 1 and calls.count("get_schema") <= 1


def test_wire_format_is_confluents(schema_registry) -> None:
    topic = f"wire-{uuid.uuid4().hex[:8]}"
    data = converter(schema_registry.url).from_connect_data(topic, STRING_SCHEMA, "x")
    client = SchemaRegistryClient({"url": schema_registry.url})
    registered = client.get_latest_version(f"{topic}-value")
    assert data[0] == 0 and int.from_bytes(data[1:5], "big") == registered.schema_id and data[5:] == b"\x02x"
    with pytest.raises(DataException, match="Unknown magic byte"):
        converter(schema_registry.url).to_connect_data(topic, b"\x01\x00\x00\x00\x01x")


# ------------------------------------------------------------------------------ subjects, settings and errors

def test_subject_name_strategies(schema_registry) -> None:
    topic = f"subj-{uuid.uuid4().hex[:8]}"
    schema = SchemaBuilder.struct().name(f"ns.Rec{topic[-8:]}").field("a", INT32_SCHEMA).build()
    value = Struct(schema).put("a", 1)
    client = SchemaRegistryClient({"url": schema_registry.url})
    converter(schema_registry.url, **{"value.subject.name.strategy": "RecordNameStrategy"}) \
        .from_connect_data(topic, schema, value)
    converter(schema_registry.url, **{
        "value.subject.name.strategy": "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"}) \
        .from_connect_data(topic, schema, value)
    converter(schema_registry.url, is_key=True).from_connect_data(topic, schema, value)
    subjects = set(client.get_subjects())
    assert {schema.name, f"{topic}-{schema.name}", f"{topic}-key"} <= subjects
    with pytest.raises(ConfigException, match="value.subject.name.strategy"):
        converter(schema_registry.url, **{"value.subject.name.strategy": "Nope"})


def test_auto_register_off_looks_up_and_names_the_subject(schema_registry) -> None:
    topic = f"noauto-{uuid.uuid4().hex[:8]}"
    off = converter(schema_registry.url, **{"auto.register.schemas": "false"})
    with pytest.raises(DataException, match=f"{topic}-value"):
        off.from_connect_data(topic, INT64_SCHEMA, 1)
    converter(schema_registry.url).from_connect_data(topic, INT64_SCHEMA, 1)  # registered by someone else
    assert off.to_connect_data(topic, off.from_connect_data(topic, INT64_SCHEMA, 5)).value == 5


def test_an_unreachable_registry_names_the_url_setting(schema_registry) -> None:
    dead = converter("http://127.0.0.1:1/apis/ccompat/v7")
    with pytest.raises(RetriableException, match=r"schema\.registry\.url=http://127\.0\.0\.1:1"):
        dead.from_connect_data("t", INT64_SCHEMA, 1)
    with pytest.raises(ConfigException, match="schema.registry.url"):
        converter("")
    with pytest.raises(ConfigException, match="basic.auth.user.info"):
        converter(schema_registry.url, **{"basic.auth.credentials.source": "USER_INFO"})
    with pytest.raises(ConfigException, match="basic.auth.credentials.source"):
        converter(schema_registry.url, **{"basic.auth.credentials.source": "TOKEN"})


def test_basic_auth_user_info_reaches_the_registry(schema_registry) -> None:
    c = converter(schema_registry.url, **{"basic.auth.credentials.source": "USER_INFO",
                                          "basic.auth.user.info": "fred:s3cret"})
    assert c.registry.client_config["basic.auth.user.info"] == "fred:s3cret"
    topic = f"auth-{uuid.uuid4().hex[:8]}"  # Apicurio without auth accepts any credentials
    assert c.to_connect_data(topic, c.from_connect_data(topic, INT64_SCHEMA, 3)).value == 3


# ------------------------------------------------------------------------------ through the runtime

class VersionedOrdersSource(SourceConnector):
    """Emits ``records`` orders in the shape ``shape`` says: ``v1`` (id, name), ``v2`` (v1 and a ``qty``
    with a default, a BACKWARD compatible change), ``bad`` (id as a string: incompatible)."""

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type:
        return VersionedOrdersTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        return None

    def config(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return "1.0"


SHAPES = {
    "v1": SchemaBuilder.struct().name("shop.Order").field("id", INT64_SCHEMA).field("name", STRING_SCHEMA).build(),
    "v2": SchemaBuilder.struct().name("shop.Order").field("id", INT64_SCHEMA).field("name", STRING_SCHEMA)
    .field("qty", SchemaBuilder.int32().default_value(1).build()).build(),
    "bad": SchemaBuilder.struct().name("shop.Order").field("id", STRING_SCHEMA).field("name", STRING_SCHEMA).build(),
}


class VersionedOrdersTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.topic, self.shape = props["topic"], props["shape"]
        self.first, self.count = int(props["first"]), int(props["records"])
        self.done = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.done.is_set():
            self.done.wait(0.1)
            return None
        self.done.set()
        schema = SHAPES[self.shape]
        out = []
        for i in range(self.first, self.first + self.count):
            value = Struct(schema).put("id", str(i) if self.shape == "bad" else i).put("name", f"n{i}")
            if self.shape == "v2":
                value.put("qty", i % 5)
            out.append(SourceRecord({"shape": self.shape}, {"i": i}, self.topic, None, None, None, schema, value))
        return out

    def stop(self) -> None:
        self.done.set()

    def version(self) -> str:
        return "1.0"


@pytest.fixture
def avro_runtime(bootstrap: str, unique: str):
    rt = ConnectRuntime(bootstrap, f"g-{unique}", {"offset.flush.interval.ms": "300"},
                        plugins=Plugins(extra=[VersionedOrdersSource]))
    yield rt
    rt.close()


def _consume(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values: list[bytes] = []
    try:
        wait_until(lambda: values.extend(m.value() for m in consumer.consume(500, 0.5) if not m.error())
                   or len(values) >= expected, 60, message=f"{expected} records in {topic}")
    finally:
        consumer.close()
    return values


def test_schema_evolution_backward_then_incompatible_fails_the_task(avro_runtime, bootstrap, schema_registry,
                                                                     unique) -> None:
    topic = f"evolve-{unique}"
    create_topics(bootstrap, topic)
    client = SchemaRegistryClient({"url": schema_registry.url})
    client.set_compatibility(f"{topic}-value", "BACKWARD")
    base = {"connector.class": "VersionedOrdersSource", "topic": topic, "value.converter": AVRO,
            "value.converter.schema.registry.url": schema_registry.url, "key.converter": STRING}
    avro_runtime.create_connector("orders", {**base, "shape": "v1", "first": "0", "records": "10"})
    v1 = _consume(bootstrap, topic, 10)
    avro_runtime.update_connector("orders", {**base, "shape": "v2", "first": "10", "records": "10"})
    both = _consume(bootstrap, topic, 20)
    assert len(client.get_versions(f"{topic}-value")) == 2
    # a new consumer (reader schema v2) reads the old records with the default; an old one reads the new
    new_reader = AvroDeserializer(client, json.dumps(converter(schema_registry.url).data.from_connect_schema(
        SHAPES["v2"])))
    old_reader = AvroDeserializer(client, json.dumps(converter(schema_registry.url).data.from_connect_schema(
        SHAPES["v1"])))
    assert new_reader(v1[0], ctx(topic)) == {"id": 0, "name": "n0", "qty": 1}
    assert old_reader(both[-1], ctx(topic)) == {"id": 19, "name": "n19"}
    ours = converter(schema_registry.url)
    assert [ours.to_connect_data(topic, v).value.get("id") for v in both] == list(range(20))

    avro_runtime.update_connector("orders", {**base, "shape": "bad", "first": "20", "records": "10"})

    def failed() -> str | None:
        tasks = avro_runtime.connector_status("orders")["tasks"]
        return tasks[0]["trace"] if tasks and tasks[0]["state"] == "FAILED" else None
    wait_until(failed, 60, message="the task FAILED after an incompatible schema")
    trace = failed()
    assert f"{topic}-value" in trace and "incompatible" in trace.lower()
    assert len(client.get_versions(f"{topic}-value")) == 2


def test_file_sink_and_read_topic_decode_avro_written_by_confluent_kafka(avro_runtime, bootstrap, schema_registry,
                                                                          unique, tmp_path, spark) -> None:
    topic = f"avro-in-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    avro = {"type": "record", "name": "Payment", "namespace": "bank", "fields": [
        {"name": "id", "type": "long"}, {"name": "who", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}
    serializer = AvroSerializer(SchemaRegistryClient({"url": schema_registry.url}), json.dumps(avro))
    producer = Producer({"bootstrap.servers": bootstrap})
    start = dt.datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(300):
        record = {"id": i, "who": f"p{i % 3}", "amount": decimal.Decimal(i).scaleb(-2),
                  "at": start + dt.timedelta(seconds=i)}
        producer.produce(topic, serializer(record, ctx(topic)), partition=i % 2)
    assert producer.flush(30) == 0
    out = tmp_path / "payments.txt"
    avro_runtime.create_connector("payments-file", {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(out), "key.converter": STRING,
        "value.converter": AVRO, "value.converter.schema.registry.url": schema_registry.url})
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 300, 60, message="300 lines")
    lines = out.read_text().splitlines()
    assert len(lines) == 300 and "Struct{id=7,who=p1,amount=0.07,at=" in next(line for line in lines
                                                                              if "id=7," in line)

    frame = avro_runtime.read_topic(topic, {"value.converter": AVRO,
                                            "value.converter.schema.registry.url": schema_registry.url},
                                    spark=spark)
    types = dict(frame.select("value.*").dtypes)
    assert types == {"id": "bigint", "who": "string", "amount": "decimal(12,2)", "at": "timestamp"}
    rows = {r["id"]: r for r in frame.select("value.*").collect()}
    assert len(rows) == 300 and rows[42]["amount"] == decimal.Decimal("0.42") and rows[42]["who"] == "p0"


def test_spark_table_sink_writes_the_avro_schemas_types(avro_runtime, bootstrap, schema_registry, unique, tmp_path,
                                                        spark) -> None:
    topic = f"avro-table-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    avro = {"type": "record", "name": "Trade", "namespace": "desk", "fields": [
        {"name": "id", "type": "long"}, {"name": "symbol", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 4}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "venue", "type": ["null", "string"], "default": None}]}
    serializer = AvroSerializer(SchemaRegistryClient({"url": schema_registry.url}), json.dumps(avro))
    producer = Producer({"bootstrap.servers": bootstrap})
    start = dt.datetime(2026, 3, 1, tzinfo=UTC)
    produced = {}
    for i in range(500):
        record = {"id": i, "symbol": f"S{i % 4}", "price": decimal.Decimal(1000 + i).scaleb(-4),
                  "at": start + dt.timedelta(milliseconds=37 * i), "venue": None if i % 3 else "X"}
        produced[i] = record
        producer.produce(topic, serializer(record, ctx(topic)), partition=i % 2)
    assert producer.flush(30) == 0
    table = tmp_path / "trades"
    avro_runtime.create_connector("trades", {
        "connector.class": "SparkTableSink", "topics": topic, "path": str(table), "key.converter": STRING,
        "value.converter": AVRO, "value.converter.schema.registry.url": schema_registry.url,
        "flush.size": "200"})
    import pyarrow.dataset as ds

    wait_until(lambda: table.exists() and ds.dataset(str(table), format="parquet").count_rows() >= 500, 90,
               interval=0.2, message="500 rows in the table")
    frame = spark.read.parquet(str(table))
    assert dict(frame.dtypes) == {"id": "bigint", "symbol": "string", "price": "decimal(10,4)",
                                  "at": "timestamp", "venue": "string"}
    rows = {r["id"]: r.asDict() for r in frame.collect()}
    assert len(rows) == 500
    for i, record in produced.items():
        row = rows[i]
        assert (row["symbol"], row["price"], row["venue"]) == (record["symbol"], record["price"], record["venue"])
    millis = frame.where("id = 42").selectExpr("unix_millis(at) AS at").collect()[0]["at"]
    assert millis == int(produced[42]["at"].timestamp() * 1000)


def test_a_registry_outage_mid_stream_fails_the_task_visibly_and_loses_nothing(avro_runtime, bootstrap,
                                                                                 schema_registry, unique,
                                                                                 tmp_path) -> None:
    """The sink meets a schema id it has not fetched while the registry is frozen: the task FAILS naming
    schema.registry.url (Kafka Connect's converter: a retriable error, errors.retry.timeout 0); restarted once
    the registry is back, it resumes from its committed offsets and every record lands exactly once."""
    import os
    import signal

    topic = f"avro-outage-{unique}"
    create_topics(bootstrap, topic)
    first = {"type": "record", "name": "Tick", "namespace": "outage", "fields": [{"name": "n", "type": "long"}]}
    serializer = AvroSerializer(SchemaRegistryClient({"url": schema_registry.url}), json.dumps(first))
    producer = Producer({"bootstrap.servers": bootstrap})
    for n in range(200):
        producer.produce(topic, serializer({"n": n}, ctx(topic)))
    assert producer.flush(30) == 0
    out = tmp_path / "ticks.txt"
    avro_runtime.create_connector("ticks", {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(out), "key.converter": STRING,
        "value.converter": AVRO, "value.converter.schema.registry.url": schema_registry.url,
        "value.converter.http.read.timeout.ms": "1500", "value.converter.max.retries": "0"})
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 200, 60, message="the first 200")
    second = SchemaBuilder.struct().name("outage.Tick").field("n", INT64_SCHEMA) \
        .field("note", SchemaBuilder.string().default_value("").build()).build()
    writer = converter(schema_registry.url)  # registers the second schema now, then writes from its cache
    producer.produce(topic, writer.from_connect_data(topic, second, Struct(second).put("n", 200).put("note", "")))
    pid = schema_registry._proc.popen.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        for n in range(201, 400):
            producer.produce(topic, writer.from_connect_data(topic, second, Struct(second).put("n", n)
                                                             .put("note", "")))
        assert producer.flush(30) == 0

        def failed() -> str | None:
            tasks = avro_runtime.connector_status("ticks")["tasks"]
            return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None
        wait_until(failed, 90, message="the sink task FAILED while the registry is frozen")
        assert "schema.registry.url" in failed()
    finally:
        os.kill(pid, signal.SIGCONT)
    avro_runtime.restart_connector("ticks", include_tasks=True, only_failed=True)
    wait_until(lambda: len(out.read_text().splitlines()) >= 400, 90, message="all 400 records after the restart")
    numbers = [int(line.split("n=")[1].split(",")[0].rstrip("}")) for line in out.read_text().splitlines()]
    assert sorted(numbers) == list(range(400))


def test_schemas_lists_subjects_and_versions(bootstrap, schema_registry, unique) -> None:
    topic = f"listed-{unique}"
    writer = converter(schema_registry.url)
    v1 = SchemaBuilder.struct().name("listed.Rec").field("a", INT64_SCHEMA).build()
    v2 = SchemaBuilder.struct().name("listed.Rec").field("a", INT64_SCHEMA) \
        .field("b", SchemaBuilder.string().default_value("").build()).build()
    writer.from_connect_data(topic, v1, Struct(v1).put("a", 1))
    writer.from_connect_data(topic, v2, Struct(v2).put("a", 1).put("b", ""))
    rt = ConnectRuntime(bootstrap, f"g-{unique}", {"value.converter": AVRO,
                                                    "value.converter.schema.registry.url": schema_registry.url})
    try:
        subjects = rt.schemas()
        row = subjects[subjects["subject"] == f"{topic}-value"].iloc[0]
        assert (row["latest version"], row["type"]) == (2, "AVRO")
        versions = rt.schemas(f"{topic}-value")
        assert list(versions["version"]) == [1, 2] and '"b"' in versions["schema"].iloc[1]
        with pytest.raises(DataException, match="no-such-subject"):
            rt.schemas("no-such-subject")
    finally:
        rt.close()
