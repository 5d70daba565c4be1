"""JsonSchemaConverter on a real Schema Registry, with confluent-kafka's own JSON Schema serializers as the oracle
both ways: records ``JSONSerializer`` writes are read by our converter into the expected Connect values, and
records our converter writes are read by ``JSONDeserializer`` (which validates them against the schema we
registered) into the expected JSON, for every Connect type and logical type, optional and default values,
nested and repeated structures. No broker is needed: the serializers' output is just bytes."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pickle
import uuid
from typing import Any

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException, RetriableException
from connect_magics.converters import JsonSchemaConverter
from connect_magics.converters.json_schema import DRAFT_7
from connect_magics.converters.json_schema_data import (
    JSON_TYPE_ENUM,
    JSON_TYPE_ONE_OF,
    JsonSchemaData,
    java_hash_order,
)

pytestmark = [pytest.mark.registry]

UTC = dt.timezone.utc


@pytest.fixture
def client(schema_registry: Any) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient({"url": schema_registry.url})


def topic_name(case: str) -> str:
    return f"jsonschema-{case}-{uuid.uuid4().hex[:10]}"


def converter(schema_registry: Any, is_key: bool = False, **settings: Any) -> JsonSchemaConverter:
    c = JsonSchemaConverter()
    c.configure({"schema.registry.url": schema_registry.url, **settings}, is_key=is_key)
    return c


def context(topic: str, is_key: bool = False) -> Any:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(topic, MessageField.KEY if is_key else MessageField.VALUE)


def serialize(client: Any, topic: str, schema_str: str, obj: Any, is_key: bool = False, **conf: Any) -> bytes:
    """What confluent-kafka's JSONSerializer writes for ``obj`` (it registers ``schema_str`` and validates)."""
    from confluent_kafka.schema_registry import topic_subject_name_strategy
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    serializer = JSONSerializer(schema_str, client, conf={"subject.name.strategy": topic_subject_name_strategy,
                                                          **conf})
    return serializer(obj, context(topic, is_key))


def deserialize(client: Any, topic: str, data: bytes, is_key: bool = False) -> Any:
    """What confluent-kafka's JSONDeserializer reads from ``data`` (validating it against the writer's schema)."""
    from confluent_kafka.schema_registry import topic_subject_name_strategy
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer

    deserializer = JSONDeserializer(None, schema_registry_client=client,
                                    conf={"subject.name.strategy": topic_subject_name_strategy})
    return deserializer(data, context(topic, is_key))


# ------------------------------------------------------------------------------------ the cases

PRIMITIVES = (SchemaBuilder.struct().name("shop.Primitives")
              .field("i8", INT8_SCHEMA).field("i16", INT16_SCHEMA).field("i32", INT32_SCHEMA)
              .field("i64", INT64_SCHEMA).field("f32", FLOAT32_SCHEMA).field("f64", FLOAT64_SCHEMA)
              .field("flag", BOOLEAN_SCHEMA).field("text", STRING_SCHEMA).field("raw", BYTES_SCHEMA).build())
PRIMITIVES_VALUE = (Struct(PRIMITIVES).put("i8", -128).put("i16", 32767).put("i32", -2147483648)
                    .put("i64", 9223372036854775807).put("f32", 1.5).put("f64", -2.25e-10).put("flag", True)
                    .put("text", "héllo \"world\"\n").put("raw", b"\x00\xff\x10"))
PRIMITIVES_JSON = {"i8": -128, "i16": 32767, "i32": -2147483648, "i64": 9223372036854775807, "f32": 1.5,
                   "f64": -2.25e-10, "flag": True, "text": "héllo \"world\"\n", "raw": "AP8Q"}

LOGICAL = (SchemaBuilder.struct().name("shop.Logical")
           .field("amount", Decimal.schema(2)).field("day", Date.SCHEMA).field("at", Time.SCHEMA)
           .field("ts", Timestamp.SCHEMA).field("maybe_day", Date.builder().optional().build()).build())
LOGICAL_VALUE = (Struct(LOGICAL).put("amount", decimal.Decimal("-1234.56")).put("day", dt.date(2024, 2, 29))
                 .put("at", dt.time(23, 59, 59, 999000)).put("ts", dt.datetime(2024, 2, 29, 12, 0, 0, 1000, UTC)))
LOGICAL_JSON = {"amount": "/h3A", "day": 19782, "at": 86399999, "ts": 1709208000001, "maybe_day": None}

ADDRESS = (SchemaBuilder.struct().name("shop.Address").field("street", STRING_SCHEMA)
           .field("zip", OPTIONAL_STRING_SCHEMA).build())
LINE = SchemaBuilder.struct().name("shop.Line").field("sku", STRING_SCHEMA).field("qty", INT32_SCHEMA).build()
NESTED = (SchemaBuilder.struct().name("shop.Order")
          .field("id", INT64_SCHEMA)
          .field("note", OPTIONAL_STRING_SCHEMA)
          .field("priority", SchemaBuilder.int32().default_value(3).build())
          .field("discount", SchemaBuilder.float64().optional().default_value(0.5).build())
          .field("ship_to", SchemaBuilder.struct().name("shop.Address").field("street", STRING_SCHEMA)
                 .field("zip", OPTIONAL_STRING_SCHEMA).optional().build())
          .field("bill_to", ADDRESS)
          .field("lines", SchemaBuilder.array(LINE).build())
          .field("matrix", SchemaBuilder.array(SchemaBuilder.array(INT32_SCHEMA).build()).build())
          .field("attrs", SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_INT64_SCHEMA).build())
          .field("by_slot", SchemaBuilder.map(INT32_SCHEMA, LINE).build())
          .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build())
          .build())
NESTED_VALUE = (Struct(NESTED).put("id", 7).put("bill_to", Struct(ADDRESS).put("street", "Main St"))
                .put("lines", [Struct(LINE).put("sku", "a").put("qty", 1), Struct(LINE).put("sku", "b").put("qty", 2)])
                .put("matrix", [[1, 2], [], [3]]).put("attrs", {"x": 1, "y": None})
                .put("by_slot", {1: Struct(LINE).put("sku", "c").put("qty", 3)}))
NESTED_JSON = {"id": 7, "note": None, "priority": 3, "discount": 0.5, "ship_to": None,
               "bill_to": {"street": "Main St", "zip": None},
               "lines": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}], "matrix": [[1, 2], [], [3]],
               "attrs": {"x": 1, "y": None}, "by_slot": [{"key": 1, "value": {"sku": "c", "qty": 3}}], "tags": None}

ENUM = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "").parameter(JSON_TYPE_ENUM + ".red", "red") \
    .parameter(JSON_TYPE_ENUM + ".green", "green").build()
UNION = (SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(JSON_TYPE_ONE_OF + ".field.0", OPTIONAL_STRING_SCHEMA)
         .field(JSON_TYPE_ONE_OF + ".field.1", OPTIONAL_INT64_SCHEMA).build())
CHOICES = SchemaBuilder.struct().name("Choices").field("color", ENUM).field("either", UNION).build()
CHOICES_VALUE = Struct(CHOICES).put("color", "green").put("either", Struct(UNION).put(JSON_TYPE_ONE_OF + ".field.1", 5))
CHOICES_JSON = {"color": "green", "either": 5}

CASES = {
    "primitives": (PRIMITIVES, PRIMITIVES_VALUE, PRIMITIVES_JSON),
    "logical": (LOGICAL, LOGICAL_VALUE, LOGICAL_JSON),
    "nested": (NESTED, NESTED_VALUE, NESTED_JSON),
    "choices": (CHOICES, CHOICES_VALUE, CHOICES_JSON),
    "string": (STRING_SCHEMA, "just text", "just text"),
    "int64": (INT64_SCHEMA, -5, -5),
    "optional-double": (OPTIONAL_FLOAT64_SCHEMA, 2.5, 2.5),
    "array": (SchemaBuilder.array(OPTIONAL_INT32_SCHEMA).build(), [1, None, 3], [1, None, 3]),
    "map": (SchemaBuilder.map(STRING_SCHEMA, BYTES_SCHEMA).build(), {"k": b"v"}, {"k": "dg=="}),
    "timestamp": (Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 0, UTC), -1000),
}


# ------------------------------------------------------------------------------------ ours -> JSONDeserializer

@pytest.mark.parametrize("case", list(CASES))
def test_json_deserializer_reads_what_we_write(schema_registry: Any, client: Any, case: str) -> None:
    schema, value, expected_json = CASES[case]
    topic = topic_name(case)
    ours = converter(schema_registry)
    data = ours.from_connect_data(topic, schema, value)
    assert data[0] == 0 and len(data) > 5
    assert deserialize(client, topic, data) == expected_json
    # the registered schema is the document JsonSchemaData gives, and records are registered once
    registered = client.get_latest_version(f"{topic}-value")
    document = json.loads(registered.schema.schema_str)
    if schema.type is not SchemaType.STRUCT:  # Apicurio takes these only with $schema (Confluent's registry without)
        assert document.pop("$schema") == DRAFT_7
    assert document == JsonSchemaData().from_connect_schema(schema)
    assert registered.schema_id == int.from_bytes(data[1:5], "big")
    assert ours.from_connect_data(topic, schema, value) == data
    assert len(client.get_versions(f"{topic}-value")) == 1


def test_numeric_decimals_are_json_numbers(schema_registry: Any, client: Any) -> None:
    topic = topic_name("numeric")
    ours = converter(schema_registry, **{"decimal.format": "NUMERIC"})
    data = ours.from_connect_data(topic, LOGICAL, LOGICAL_VALUE)
    assert b'"amount":-1234.56' in data
    assert deserialize(client, topic, data) == {**LOGICAL_JSON, "amount": -1234.56}
    assert ours.to_connect_data(topic, data).value.get("amount") == decimal.Decimal("-1234.56")


def test_keys_use_the_key_subject(schema_registry: Any, client: Any) -> None:
    topic = topic_name("key")
    data = converter(schema_registry, is_key=True).from_connect_data(topic, INT64_SCHEMA, 42)
    assert deserialize(client, topic, data, is_key=True) == 42
    assert client.get_latest_version(f"{topic}-key").schema_id == int.from_bytes(data[1:5], "big")


# ------------------------------------------------------------------------------------ JSONSerializer -> ours

@pytest.mark.parametrize("case", list(CASES))
def test_we_read_what_json_serializer_writes(schema_registry: Any, client: Any, case: str) -> None:
    """confluent-kafka's serializer, given the document JsonSchemaData makes for a Connect schema, writes records
    our converter reads into the Connect value (the registry's version becomes the top-level schema's)."""
    schema, value, expected_json = CASES[case]
    topic = topic_name(case)
    document = {"$schema": DRAFT_7, **JsonSchemaData().from_connect_schema(schema)}  # as users write them
    data = serialize(client, topic, json.dumps(document), expected_json)
    got = converter(schema_registry).to_connect_data(topic, data)
    versioned = got.schema.version == 1 and (schema.version is None)
    expected_schema = _with_version(schema, 1) if versioned else schema
    assert got.schema == expected_schema
    if isinstance(value, Struct):
        assert got.value == _restamp(value, expected_schema)
    else:
        assert got.value == value


def _with_version(schema: Schema, version: int) -> Schema:
    return Schema(schema.type, schema.optional, schema.default_value, schema.name, version, schema.doc,
                  schema.parameters, schema.fields if schema.type is SchemaType.STRUCT else None,
                  schema.key_schema, schema.value_schema)


def _restamp(value: Struct, schema: Schema) -> Struct:
    """``value`` with ``schema`` (its top-level version stamped) and its unset defaults filled, as read back."""
    return Struct.of(schema, [value.get(f) for f in value.schema.fields])


def test_we_read_plain_json_schemas_users_write(schema_registry: Any, client: Any) -> None:
    """A JSON Schema without any connect.* annotations, as applications register them."""
    document = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "User", "type": "object", "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "description": "full name"},
            "age": {"type": "integer", "default": 18},
            "score": {"type": "number"},
            "active": {"type": "boolean"},
            "nick": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "address": {"$ref": "#/definitions/Address"},
            "previous": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Address"}]},
            "color": {"type": "string", "enum": ["red", "green"]},
            "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["name"],
        "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    obj = {"name": "Ada", "score": 99.5, "active": True, "nick": None, "tags": ["x", "y"],
           "address": {"city": "London"}, "previous": None, "color": "red", "id": 12}
    topic = topic_name("plain")
    data = serialize(client, topic, json.dumps(document), obj)

    got = converter(schema_registry).to_connect_data(topic, data)
    schema = got.schema
    assert schema.name == "User" and schema.version == 1
    assert [f.name for f in schema.fields] == java_hash_order(list(document["properties"]))  # Java's order
    types = {f.name: f.schema for f in schema.fields}
    assert types["name"] == SchemaBuilder.string().doc("full name").build()
    assert types["age"] == SchemaBuilder.int64().default_value(18).build()
    assert types["score"] == FLOAT64_SCHEMA and types["active"] == BOOLEAN_SCHEMA
    assert types["nick"] == OPTIONAL_STRING_SCHEMA
    assert types["tags"] == SchemaBuilder.array(STRING_SCHEMA).build()
    address = SchemaBuilder.struct().field("city", STRING_SCHEMA).build()
    assert types["address"] == address
    assert types["previous"] == SchemaBuilder.struct().field("city", STRING_SCHEMA).optional().build()
    assert types["color"].parameters == {JSON_TYPE_ENUM: "", JSON_TYPE_ENUM + ".red": "red",
                                         JSON_TYPE_ENUM + ".green": "green"}
    assert types["id"].name == JSON_TYPE_ONE_OF
    value = got.value
    assert value.get("name") == "Ada" and value.get("age") == 18 and value.get("score") == 99.5
    assert value.get("nick") is None and value.get("tags") == ["x", "y"]
    assert value.get("address") == Struct(address).put("city", "London")
    assert value.get("previous") is None and value.get("color") == "red"
    assert value.get("id").get(JSON_TYPE_ONE_OF + ".field.1") == 12

    # ... and with use.optional.for.nonrequired the properties not listed as required are optional
    lenient = converter(schema_registry, **{"use.optional.for.nonrequired": "true"}).to_connect_data(topic, data)
    optional = {f.name for f in lenient.schema.fields if f.schema.optional}
    assert optional == set(document["properties"]) - {"name"}


# ------------------------------------------------------------------------------------ settings and errors

def test_json_fail_invalid_schema_validates_both_ways(schema_registry: Any, client: Any) -> None:
    document = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}}}
    topic = topic_name("invalid")
    bad = serialize(client, topic, json.dumps(document), {"n": 11}, validate=False)
    assert converter(schema_registry).to_connect_data(topic, bad).value.get("n") == 11  # lenient by default
    strict = converter(schema_registry, **{"json.fail.invalid.schema": "true"})
    with pytest.raises(DataException, match=r"topic .*Validation error in JSON.*#/n: 11 is greater than"):
        strict.to_connect_data(topic, bad)
    # writing: a Connect value outside its enum's symbols fails validation against the registered schema
    enum_record = SchemaBuilder.struct().name("Paint").field("color", ENUM).build()
    with pytest.raises(DataException, match="#/color: 'blue' is not one of"):
        strict.from_connect_data(topic_name("enum"), enum_record, Struct(enum_record).put("color", "blue"))


def test_indented_output_is_still_read_by_json_deserializer(schema_registry: Any, client: Any) -> None:
    topic = topic_name("indent")
    data = converter(schema_registry, **{"json.indent.output": "true"}).from_connect_data(topic, NESTED, NESTED_VALUE)
    assert data[5:].startswith(b'{\n  "id" : 7,\n  "note" : null,')
    assert deserialize(client, topic, data) == NESTED_JSON


def test_tombstones_and_nulls(schema_registry: Any) -> None:
    topic = topic_name("nulls")
    ours = converter(schema_registry)
    assert ours.from_connect_data(topic, None, None) is None
    assert ours.to_connect_data(topic, None) == (None, None)
    assert ours.from_connect_data(topic, STRING_SCHEMA, None) is None  # required, no default: nothing to write
    data = ours.from_connect_data(topic, OPTIONAL_STRING_SCHEMA, None)  # Java writes JSON null here
    assert data[5:] == b"null"
    assert ours.to_connect_data(topic, data).value is None
    with pytest.raises(DataException, match="needs a schema"):
        ours.from_connect_data(topic, None, {"schemaless": True})


def test_record_name_strategy_names_subjects_by_title(schema_registry: Any, client: Any) -> None:
    topic = topic_name("rns")
    ours = converter(schema_registry, **{
        "value.subject.name.strategy": "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"})
    data = ours.from_connect_data(topic, PRIMITIVES, PRIMITIVES_VALUE)
    assert client.get_latest_version(f"{topic}-shop.Primitives").schema_id == int.from_bytes(data[1:5], "big")
    assert ours.to_connect_data(topic, data).schema.version == 1
    with pytest.raises(DataException, match="value.subject.name.strategy"):
        ours.from_connect_data(topic, INT32_SCHEMA, 1)


def test_converter_is_picklable_and_works_after(schema_registry: Any) -> None:
    topic = topic_name("pickle")
    ours = converter(schema_registry)
    data = ours.from_connect_data(topic, NESTED, NESTED_VALUE)
    copy = pickle.loads(pickle.dumps(ours))
    assert copy.from_connect_data(topic, NESTED, NESTED_VALUE) == data
    assert copy.to_connect_data(topic, data).value == ours.to_connect_data(topic, data).value


def test_bad_settings_and_registry_errors(schema_registry: Any) -> None:
    with pytest.raises(ConfigException, match="decimal.format"):
        converter(schema_registry, **{"decimal.format": "TEXT"})
    with pytest.raises(ConfigException, match="preserve.additional.properties"):
        converter(schema_registry, **{"preserve.additional.properties": "true"})
    with pytest.raises(ConfigException, match="schema.registry.url"):
        JsonSchemaConverter().configure({}, is_key=False)
    unreachable = JsonSchemaConverter()
    unreachable.configure({"schema.registry.url": "http://127.0.0.1:9"}, is_key=False)
    with pytest.raises(RetriableException, match="schema.registry.url"):
        unreachable.from_connect_data(topic_name("down"), INT32_SCHEMA, 1)
    ours = converter(schema_registry)
    with pytest.raises(DataException, match="Unknown magic byte"):
        ours.to_connect_data("t", b"\x01\x00\x00\x00\x01{}")
    lookup_only = converter(schema_registry, **{"auto.register.schemas": "false"})
    unregistered = topic_name("unregistered")
    with pytest.raises(DataException, match=f"subject {unregistered}-value"):
        lookup_only.from_connect_data(unregistered, INT32_SCHEMA, 1)
