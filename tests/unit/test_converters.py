"""Converters and the data model.

The JSON vectors follow Kafka's ``JsonConverterTest`` (connect/json); where Kafka's tests compare parsed
trees, the expected bytes here are what Kafka's ``JsonConverter`` writes (Jackson, compact, schema keys in
the order ``asJsonSchema`` adds them, ``"field"`` last in struct fields).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.converters import (
    NULL_SCHEMA_AND_VALUE,
    ByteArrayConverter,
    JsonConverter,
    SchemaAndValue,
    SimpleHeaderConverter,
    StringConverter,
)
from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
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
    validate_value,
)
from connect_magics.api.errors import DataException, SchemaBuilderException

pytestmark = pytest.mark.unit

TOPIC = "topic"
D = decimal.Decimal


def json_converter(**configs: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(configs, is_key=False)
    return c


@pytest.fixture
def converter() -> JsonConverter:
    return json_converter()


@pytest.fixture
def schemaless() -> JsonConverter:
    return json_converter(**{"schemas.enable": "false"})


# ------------------------------------------------------------------------------- JSON: Connect -> bytes

TO_JSON_VECTORS = [
    (BOOLEAN_SCHEMA, True, '{"schema":{"type":"boolean","optional":false},"payload":true}'),
    (OPTIONAL_BOOLEAN_SCHEMA, None, '{"schema":{"type":"boolean","optional":true},"payload":null}'),
    (SchemaBuilder.boolean().default_value(True).build(), True,
     '{"schema":{"type":"boolean","optional":false,"default":true},"payload":true}'),
    (SchemaBuilder.boolean().required().name("bool").version(3).doc("the documentation").parameter("foo", "bar")
     .build(), True,
     '{"schema":{"type":"boolean","optional":false,"name":"bool","version":3,"doc":"the documentation",'
     '"parameters":{"foo":"bar"}},"payload":true}'),
    (INT8_SCHEMA, 12, '{"schema":{"type":"int8","optional":false},"payload":12}'),
    (INT16_SCHEMA, 12, '{"schema":{"type":"int16","optional":false},"payload":12}'),
    (INT32_SCHEMA, 12, '{"schema":{"type":"int32","optional":false},"payload":12}'),
    (INT64_SCHEMA, 4398046511104, '{"schema":{"type":"int64","optional":false},"payload":4398046511104}'),
    (FLOAT32_SCHEMA, 12.34, '{"schema":{"type":"float","optional":false},"payload":12.34}'),
    (FLOAT64_SCHEMA, 12.34, '{"schema":{"type":"double","optional":false},"payload":12.34}'),
    (FLOAT64_SCHEMA, 1e20, '{"schema":{"type":"double","optional":false},"payload":1.0E20}'),
    (FLOAT64_SCHEMA, 3, '{"schema":{"type":"double","optional":false},"payload":3.0}'),
    (BYTES_SCHEMA, b"test-string", '{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}'),
    (STRING_SCHEMA, "test-string", '{"schema":{"type":"string","optional":false},"payload":"test-string"}'),
    (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3],
     '{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,2,3]}'),
    (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"key1": 12, "key2": 15},
     '{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},'
     '"optional":false},"payload":{"key1":12,"key2":15}}'),
    (SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {1: 12, 2: 15},
     '{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},'
     '"optional":false},"payload":[[1,12],[2,15]]}'),
    (Decimal.schema(2), D("1.56"),
     '{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
     '"parameters":{"scale":"2"}},"payload":"AJw="}'),
    (Date.SCHEMA, dt.date(1970, 1, 1) + dt.timedelta(days=10000),
     '{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},'
     '"payload":10000}'),
    (Time.SCHEMA, dt.time(4, 0),
     '{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},'
     '"payload":14400000}'),
    (Timestamp.SCHEMA, dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=4000000000),
     '{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},'
     '"payload":4000000000}'),
    (None, True, '{"schema":null,"payload":true}'),
]


@pytest.mark.parametrize("schema, value, expected", TO_JSON_VECTORS)
def test_from_connect_data_bytes(converter, schema, value, expected):
    assert converter.from_connect_data(TOPIC, schema, value) == expected.encode()


def test_struct_to_json_bytes(converter):
    schema = (SchemaBuilder.struct().field("field1", BOOLEAN_SCHEMA).field("field2", STRING_SCHEMA)
              .field("field3", STRING_SCHEMA).field("field4", BOOLEAN_SCHEMA).build())
    value = Struct(schema).put("field1", True).put("field2", "string2").put("field3", "string3").put("field4", False)
    assert converter.from_connect_data(TOPIC, schema, value) == (
        b'{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"field1"},'
        b'{"type":"string","optional":false,"field":"field2"},{"type":"string","optional":false,"field":"field3"},'
        b'{"type":"boolean","optional":false,"field":"field4"}],"optional":false},'
        b'"payload":{"field1":true,"field2":"string2","field3":"string3","field4":false}}')


@pytest.mark.parametrize("replace, payload", [("true", b'{"field1":"default"}'), ("false", b'{"field1":null}')])
def test_struct_field_null_to_default(replace, payload):
    schema = SchemaBuilder.struct().field("field1", SchemaBuilder.string().optional().default_value("default")).build()
    out = json_converter(**{"replace.null.with.default": replace}).from_connect_data(TOPIC, schema, Struct(schema))
    assert out == (b'{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"default":"default",'
                   b'"field":"field1"}],"optional":false},"payload":' + payload + b"}")


@pytest.mark.parametrize("replace, payload", [("true", b'"default"'), ("false", b"null")])
def test_null_to_default(replace, payload):
    schema = SchemaBuilder.string().optional().default_value("default").build()
    out = json_converter(**{"replace.null.with.default": replace}).from_connect_data(TOPIC, schema, None)
    assert out == b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":' + payload + b"}"


def test_decimal_numeric_format():
    c = json_converter(**{"decimal.format": "numeric"})
    assert c.from_connect_data(TOPIC, Decimal.schema(2), D("1.56")).endswith(b'"payload":1.56}')
    assert c.from_connect_data(TOPIC, Decimal.schema(4), D("1.5600")).endswith(b'"payload":1.5600}')
    assert c.from_connect_data(TOPIC, Decimal.schema(-2), D("1.56E+4")).endswith(b'"payload":1.56E+4}')
    with pytest.raises(ConfigException, match="String must be one of \\(case insensitive\\): NUMERIC, BASE64"):
        json_converter(**{"decimal.format": "text"})


def test_decimal_default_is_encoded(converter):
    schema = Decimal.builder(2).default_value(D("1.56")).build()
    assert b'"default":"AJw="' in converter.from_connect_data(TOPIC, schema, None)


def test_tombstone_and_errors(converter):
    assert converter.from_connect_data(TOPIC, None, None) is None
    with pytest.raises(DataException, match="null value for field that is required and has no default value"):
        converter.from_connect_data(TOPIC, STRING_SCHEMA, None)
    other = SchemaBuilder.struct().field("x", INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Mismatching schema."):
        converter.from_connect_data(TOPIC, SchemaBuilder.struct().field("y", INT32_SCHEMA).build(),
                                    Struct(other).put("x", 1))
    with pytest.raises(DataException, match="Invalid type for INT32: class str"):
        converter.from_connect_data(TOPIC, INT32_SCHEMA, "1")
    with pytest.raises(DataException, match="Invalid type for Decimal, expected BigDecimal"):
        converter.from_connect_data(TOPIC, Decimal.schema(2), 1.56)
    with pytest.raises(DataException, match="does not have corresponding schema type"):
        converter.from_connect_data(TOPIC, None, object())


# ------------------------------------------------------------------------------- JSON: bytes -> Connect

TO_CONNECT_VECTORS = [
    ('{ "schema": { "type": "boolean" }, "payload": true }', BOOLEAN_SCHEMA, True),
    ('{ "schema": { "type": "boolean", "optional": true }, "payload": null }', OPTIONAL_BOOLEAN_SCHEMA, None),
    ('{ "schema": { "type": "boolean", "default": true }, "payload": null }',
     SchemaBuilder.boolean().default_value(True).build(), True),
    ('{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, "doc": "the documentation", '
     '"parameters": { "foo": "bar" }}, "payload": true }',
     SchemaBuilder.boolean().required().name("bool").version(2).doc("the documentation").parameter("foo", "bar")
     .build(), True),
    ('{ "schema": { "type": "int8" }, "payload": 12 }', INT8_SCHEMA, 12),
    ('{ "schema": { "type": "int16" }, "payload": 12 }', INT16_SCHEMA, 12),
    ('{ "schema": { "type": "int32" }, "payload": 12 }', INT32_SCHEMA, 12),
    ('{ "schema": { "type": "int64" }, "payload": 4398046511104 }', INT64_SCHEMA, 4398046511104),
    ('{ "schema": { "type": "int8" }, "payload": 0012 }', INT8_SCHEMA, 12),
    ('{ "schema": { "type": "int16" }, "payload": 000123 }', INT16_SCHEMA, 123),
    ('{ "schema": { "type": "int64" }, "payload": 00000123456789 }', INT64_SCHEMA, 123456789),
    ('{ "schema": { "type": "float" }, "payload": 12.34 }', FLOAT32_SCHEMA, 12.34),
    ('{ "schema": { "type": "double" }, "payload": 12.34 }', FLOAT64_SCHEMA, 12.34),
    ('{ "schema": { "type": "bytes" }, "payload": "Zm9vLWJhci1iYXo=" }', BYTES_SCHEMA, b"foo-bar-baz"),
    ('{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }', STRING_SCHEMA, "foo-bar-baz"),
    ('{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }',
     SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3]),
    ('{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } }, '
     '"payload": { "key1": 12, "key2": 15} }', SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(),
     {"key1": 12, "key2": 15}),
    ('{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } }, '
     '"payload": [ [1, 12], [2, 15] ] }', SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {1: 12, 2: 15}),
    ('{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, '
     '"parameters": { "scale": "2" } }, "payload": "AJw=" }', Decimal.schema(2), D("1.56")),
    ('{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, '
     '"parameters": { "scale": "2" } }, "payload": 1.56 }', Decimal.schema(2), D("1.56")),
    ('{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, '
     '"parameters": { "scale": "17" } }, "payload": 1.23456789123456789 }', Decimal.schema(17),
     D("1.23456789123456789")),
    ('{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, '
     '"default": "AJw=", "parameters": { "scale": "2" } }, "payload": null }',
     Decimal.builder(2).default_value(D("1.56")).build(), D("1.56")),
    ('{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 }, '
     '"payload": 10000 }', Date.SCHEMA, dt.date(1997, 5, 19)),
    ('{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "optional": true }, '
     '"payload": null }', Date.builder().optional().build(), None),
    ('{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1 }, '
     '"payload": 14400000 }', Time.SCHEMA, dt.time(4, 0)),
    ('{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1, "default": 0 }, '
     '"payload": null }', Time.builder().default_value(dt.time(0)).build(), dt.time(0)),
    ('{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1 }, '
     '"payload": 4000000000 }', Timestamp.SCHEMA, dt.datetime(1970, 2, 16, 7, 6, 40, tzinfo=dt.timezone.utc)),
    ('{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1, '
     '"default": 42 }, "payload": null }',
     Timestamp.builder().default_value(dt.datetime(1970, 1, 1, 0, 0, 0, 42000, tzinfo=dt.timezone.utc)).build(),
     dt.datetime(1970, 1, 1, 0, 0, 0, 42000, tzinfo=dt.timezone.utc)),
    ('{ "schema": null, "payload": null }', None, None),
    ('{ "schema": null, "payload": 12 }', None, 12),
    ('{ "schema": null, "payload": 12.24 }', None, 12.24),
    ('{ "schema": null, "payload": [1, "2", 3] }', None, [1, "2", 3]),
    ('{ "schema": null, "payload": { "field1": 1, "field2": 2} }', None, {"field1": 1, "field2": 2}),
]


@pytest.mark.parametrize("data, schema, value", TO_CONNECT_VECTORS)
def test_to_connect_data(converter, data, schema, value):
    assert converter.to_connect_data(TOPIC, data.encode()) == SchemaAndValue(schema, value)


def test_struct_to_connect(converter):
    data = (b'{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", "optional": true },'
            b' {  "field": "required", "type": "string" }] }, "payload": { "required": "required" } }')
    schema = SchemaBuilder.struct().field("optional", OPTIONAL_STRING_SCHEMA).field("required", STRING_SCHEMA).build()
    assert converter.to_connect_data(TOPIC, data) == SchemaAndValue(schema, Struct(schema).put("required", "required"))


@pytest.mark.parametrize("replace, expected", [("true", "default"), ("false", None)])
def test_deserialize_field_null_to_default(replace, expected):
    data = (b'{"schema":{"type":"struct","fields":[{"field":"field1","type":"string","optional":true,'
            b'"default":"default"}],"optional":false},"payload":{"field1":null}}')
    value = json_converter(**{"replace.null.with.default": replace}).to_connect_data(TOPIC, data).value
    assert value.get_without_default("field1") == expected


def test_to_connect_envelope_required(converter):
    for data in (b'{"a": 1}', b'{"schema": null, "payload": 1, "x": 2}', b"true", b""):
        with pytest.raises(DataException) as info:
            converter.to_connect_data(TOPIC, data)
        assert str(info.value) == (
            'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
            "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
            "configuration.")


@pytest.mark.parametrize("schema_json, message", [
    ('{"optional": true}', "Schema must contain 'type' field"),
    ('{"type": "nope"}', "Unknown schema type: nope"),
    ('{"type": "array"}', "Array schema did not specify the element type"),
    ('{"type": "map", "values": {"type": "int32"}}', "Map schema did not specify the key type"),
    ('{"type": "struct"}', 'Struct schema\'s "fields" argument is not an array.'),
    ('{"type": "struct", "fields": [{"type": "int32"}]}', "Struct schema's field name not specified properly"),
    ('{"type": "int32", "parameters": {"a": 1}}', "Schema parameters must have string values."),
])
def test_to_connect_bad_schemas(converter, schema_json, message):
    with pytest.raises(DataException) as info:
        converter.to_connect_data(TOPIC, f'{{"schema": {schema_json}, "payload": 1}}'.encode())
    assert str(info.value) == message


def test_to_connect_bad_payloads(converter):
    with pytest.raises(DataException, match="Invalid null value for required INT32 field"):
        converter.to_connect_data(TOPIC, b'{"schema": {"type": "int32"}, "payload": null}')
    with pytest.raises(DataException, match="Structs should be encoded as JSON objects, but found ARRAY"):
        converter.to_connect_data(TOPIC, b'{"schema": {"type": "struct", "fields": []}, "payload": []}')
    with pytest.raises(DataException, match="Invalid type for Date, underlying representation should be integer but "
                                            "was STRING"):
        converter.to_connect_data(TOPIC, b'{"schema": {"type": "int32", "name": "org.apache.kafka.connect.data.Date"},'
                                         b' "payload": "x"}')
    with pytest.raises(DataException, match="failed due to serialization error"):
        converter.to_connect_data(TOPIC, b"{not json")


def test_tombstone_to_connect(converter, schemaless):
    assert converter.to_connect_data(TOPIC, None) == NULL_SCHEMA_AND_VALUE
    assert schemaless.to_connect_data(TOPIC, None) == NULL_SCHEMA_AND_VALUE
    assert schemaless.to_connect_data(TOPIC, b"") == NULL_SCHEMA_AND_VALUE


def test_schema_caches(converter):
    converter.to_connect_data(TOPIC, b'{ "schema": { "type": "boolean" }, "payload": true }')
    converter.to_connect_data(TOPIC, b'{ "schema": { "type": "boolean" }, "payload": false }')
    converter.to_connect_data(TOPIC, b'{ "schema": { "type": "boolean", "optional": false }, "payload": true }')
    assert len(converter._to_connect_cache) == 2
    converter.from_connect_data(TOPIC, BOOLEAN_SCHEMA, True)
    converter.from_connect_data(TOPIC, BOOLEAN_SCHEMA, False)
    assert len(converter._from_connect_cache) == 1


@pytest.mark.parametrize("schema", [
    SchemaBuilder.struct().name("everything").version(2).doc("all types")
    .field("i8", INT8_SCHEMA).field("i16", INT16_SCHEMA).field("i32", OPTIONAL_INT32_SCHEMA)
    .field("i64", INT64_SCHEMA).field("f64", FLOAT64_SCHEMA).field("b", BOOLEAN_SCHEMA)
    .field("s", STRING_SCHEMA).field("bytes", BYTES_SCHEMA)
    .field("arr", SchemaBuilder.array(STRING_SCHEMA)).field("map", SchemaBuilder.map(INT64_SCHEMA, STRING_SCHEMA))
    .field("dec", Decimal.schema(3)).field("date", Date.SCHEMA).field("time", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA).field("nested", SchemaBuilder.struct().field("x", INT32_SCHEMA).optional())
    .build(),
])
def test_struct_round_trip(converter, schema):
    nested_schema = schema.field("nested").schema
    value = (Struct(schema).put("i8", -5).put("i16", 300).put("i64", 2**40).put("f64", 0.5).put("b", True)
             .put("s", "é \"quoted\"\n").put("bytes", b"\x00\xff").put("arr", ["a", "b"]).put("map", {1: "one"})
             .put("dec", D("-12.345")).put("date", dt.date(2024, 2, 29)).put("time", dt.time(23, 59, 59, 999000))
             .put("ts", dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc))
             .put("nested", Struct(nested_schema).put("x", 1)))
    data = converter.from_connect_data(TOPIC, schema, value)
    assert converter.to_connect_data(TOPIC, data) == SchemaAndValue(schema, value)
    assert json.loads(data)["payload"]["s"] == "é \"quoted\"\n"


# ------------------------------------------------------------------------------------ JSON: schemaless

def test_schemaless_write(schemaless):
    assert schemaless.from_connect_data(TOPIC, None, {"a": 1, "b": [True, None, 2.5], "c": "x"}) == \
        b'{"a":1,"b":[true,null,2.5],"c":"x"}'
    assert schemaless.from_connect_data(TOPIC, None, {1: "a"}) == b'[[1,"a"]]'
    assert schemaless.from_connect_data(TOPIC, None, b"ab") == b'"YWI="'
    assert schemaless.from_connect_data(TOPIC, None, "é\x01\x7f") == '"é\\u0001\x7f"'.encode()
    assert schemaless.from_connect_data(TOPIC, None, 1e-5) == b"1.0E-5"
    assert schemaless.from_connect_data(TOPIC, None, float("nan")) == b'"NaN"'
    assert schemaless.from_connect_data(TOPIC, INT32_SCHEMA, 5) == b"5"


def test_schemaless_read(schemaless):
    assert schemaless.to_connect_data(TOPIC, b"true") == SchemaAndValue(None, True)
    assert schemaless.to_connect_data(TOPIC, b'{ "a": "", "b": null}') == SchemaAndValue(None, {"a": "", "b": None})
    value = schemaless.to_connect_data(TOPIC, b'{"n": 12, "f": 1.5, "big": 12345678901234567890}').value
    assert value == {"n": 12, "f": 1.5, "big": 12345678901234567890}
    assert type(value["n"]) is int and type(value["f"]) is float
    assert schemaless.to_connect_data(TOPIC, b'{"s": "007", "n": 007}').value == {"s": "007", "n": 7}


# Internal topics (reference §0/§1): schemas.enable=false, struct fields in schema order, nulls kept.
STATUS_V0 = (SchemaBuilder.struct().field("state", STRING_SCHEMA).field("trace", OPTIONAL_STRING_SCHEMA)
             .field("worker_id", STRING_SCHEMA).field("generation", INT32_SCHEMA).build())
TARGET_STATE_V1 = SchemaBuilder.struct().field("state", STRING_SCHEMA).field("state.v2", OPTIONAL_STRING_SCHEMA).build()
CONNECTOR_CONFIG_V0 = SchemaBuilder.struct().field(
    "properties", SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_STRING_SCHEMA).build()).build()


def test_internal_topic_formats(schemaless):
    status = Struct(STATUS_V0).put("state", "RUNNING").put("worker_id", "10.0.0.1:8083").put("generation", 5)
    assert schemaless.from_connect_data(TOPIC, STATUS_V0, status) == \
        b'{"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":5}'
    target = Struct(TARGET_STATE_V1).put("state", "PAUSED").put("state.v2", "STOPPED")
    assert schemaless.from_connect_data(TOPIC, TARGET_STATE_V1, target) == b'{"state":"PAUSED","state.v2":"STOPPED"}'
    config = Struct(CONNECTOR_CONFIG_V0).put("properties", {"name": "c", "tasks.max": "1"})
    assert schemaless.from_connect_data(TOPIC, CONNECTOR_CONFIG_V0, config) == \
        b'{"properties":{"name":"c","tasks.max":"1"}}'
    assert schemaless.from_connect_data(TOPIC, None, ["my-conn", {"filename": "/tmp/a.txt"}]) == \
        b'["my-conn",{"filename":"/tmp/a.txt"}]'
    read = schemaless.to_connect_data(TOPIC, b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":5}')
    assert read.value["generation"] == 5 and read.value["trace"] is None


def test_json_header_converter():
    c = JsonConverter()
    c.configure({"converter.type": "header"})
    assert c.to_connect_header(TOPIC, "h", b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }') == \
        SchemaAndValue(STRING_SCHEMA, "foo-bar-baz")
    assert c.from_connect_header(TOPIC, "h", STRING_SCHEMA, "x") == \
        b'{"schema":{"type":"string","optional":false},"payload":"x"}'
    assert c.version() and c.config_def().names() == [
        "converter.type", "schemas.enable", "schemas.cache.size", "decimal.format", "replace.null.with.default"]


# -------------------------------------------------------------------------------------- other converters

def test_string_converter():
    c = StringConverter()
    c.configure({}, is_key=True)
    assert c.from_connect_data(TOPIC, STRING_SCHEMA, "héllo") == "héllo".encode()
    assert c.from_connect_data(TOPIC, None, True) == b"true"
    assert c.from_connect_data(TOPIC, None, None) is None
    assert c.to_connect_data(TOPIC, "héllo".encode()) == SchemaAndValue(OPTIONAL_STRING_SCHEMA, "héllo")
    assert c.to_connect_data(TOPIC, None) == SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
    c.configure({"converter.encoding": "ISO-8859-1"}, is_key=False)
    assert c.from_connect_data(TOPIC, None, "é") == b"\xe9"
    assert c.to_connect_header(TOPIC, "h", b"\xe9").value == "é"
    with pytest.raises(ConfigException, match="converter.encoding"):
        c.configure({"converter.encoding": "no-such-charset"}, is_key=False)


def test_byte_array_converter():
    c = ByteArrayConverter()
    c.configure({}, is_key=False)
    assert c.from_connect_data(TOPIC, BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert c.from_connect_data(TOPIC, None, bytearray(b"ab")) == b"ab"
    assert c.from_connect_data(TOPIC, None, None) is None
    assert c.to_connect_data(TOPIC, b"x") == SchemaAndValue(OPTIONAL_BYTES_SCHEMA, b"x")
    with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: STRING"):
        c.from_connect_data(TOPIC, STRING_SCHEMA, b"x")
    with pytest.raises(DataException, match="ByteArrayConverter is not compatible with objects of type class str"):
        c.from_connect_data(TOPIC, None, "x")


@pytest.mark.parametrize("value, data", [
    ("text", b"text"), (True, b"true"), (42, b"42"), (1.5, b"1.5"), (b"\x01", b"AQ=="), ([1, "a"], b'[1,"a"]'),
    ({"k": "v"}, b'{"k":"v"}'),
])
def test_simple_header_converter_write(value, data):
    assert SimpleHeaderConverter().from_connect_header(TOPIC, "h", None, value) == data


@pytest.mark.parametrize("data, schema, value", [
    (b"", STRING_SCHEMA, ""), (b"hello world", STRING_SCHEMA, "hello world"), (b"true", BOOLEAN_SCHEMA, True),
    (b"FALSE", BOOLEAN_SCHEMA, False), (b"12", INT8_SCHEMA, 12), (b"300", INT16_SCHEMA, 300),
    (b"70000", INT32_SCHEMA, 70000), (b"5000000000", INT64_SCHEMA, 5000000000), (b"1.0", INT8_SCHEMA, 1),
    (b"1.5", FLOAT32_SCHEMA, 1.5), (b"1e400", Decimal.schema(-400), D("1e400")),
    (b"123456789012345678901234567890", Decimal.schema(0), D("123456789012345678901234567890")),
])
def test_simple_header_converter_read(data, schema, value):
    h = SimpleHeaderConverter()
    h.configure({})
    assert h.to_connect_header(TOPIC, "h", data) == SchemaAndValue(schema, value)
    assert h.to_connect_header(TOPIC, "h", None) == NULL_SCHEMA_AND_VALUE
    assert h.to_connect_header(TOPIC, "h", b"\xff") == SchemaAndValue(BYTES_SCHEMA, b"\xff")
    assert h.from_connect_header(TOPIC, "h", None, None) is None


# ------------------------------------------------------------------------------------------- data model

def test_schema_builder_and_equality():
    built = SchemaBuilder.int32().name("n").version(1).doc("d").parameter("a", "b").optional().build()
    assert built == SchemaBuilder.int32().optional().doc("d").name("n").parameters({"a": "b"}).version(1).build()
    assert hash(built) == hash(SchemaBuilder.int32().optional().doc("d").name("n").version(1).build())
    assert built != OPTIONAL_INT32_SCHEMA and repr(built) == "Schema{n:INT32}"
    assert SchemaBuilder.bool().build() == BOOLEAN_SCHEMA
    assert str(SchemaType.FLOAT32) == "FLOAT32" and SchemaType.FLOAT32.value == "float32"
    with pytest.raises(SchemaBuilderException, match="name has already been set"):
        SchemaBuilder.int32().name("a").name("b")
    with pytest.raises(SchemaBuilderException, match="Cannot create fields on type INT32"):
        SchemaBuilder.int32().field("x", INT32_SCHEMA)
    with pytest.raises(SchemaBuilderException, match="field name duplication x"):
        SchemaBuilder.struct().field("x", INT32_SCHEMA).field("x", INT32_SCHEMA)
    with pytest.raises(SchemaBuilderException, match="Invalid default value"):
        SchemaBuilder.int8().default_value(1000)
    with pytest.raises(DataException, match="Cannot list fields on non-struct type"):
        INT32_SCHEMA.fields  # noqa: B018


def test_struct_validation():
    schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", OPTIONAL_STRING_SCHEMA).build()
    s = Struct(schema)
    with pytest.raises(DataException, match='^Invalid value: null used for required field: "a", schema type: INT32$'):
        s.validate()
    with pytest.raises(DataException, match='Invalid Java object for schema with type INT32: class str for field: "a"'):
        s.put("a", "1")
    with pytest.raises(DataException, match="c is not a valid field name"):
        s.put("c", 1)
    with pytest.raises(DataException, match="Not a struct schema"):
        Struct(INT32_SCHEMA)
    s.put("a", 1).validate()
    assert s.get("b") is None and repr(s) == "Struct{a=1}"
    assert s == Struct(schema).put("a", 1) and s != Struct(schema).put("a", 2)
    with pytest.raises(DataException, match="element of array value"):
        validate_value(SchemaBuilder.array(INT32_SCHEMA).build(), [1, None])
    with pytest.raises(DataException, match="Invalid Java object for schema with type INT8"):
        validate_value(INT8_SCHEMA, 128)
    with pytest.raises(DataException, match='for schema "org.apache.kafka.connect.data.Date" with type INT32'):
        validate_value(Date.SCHEMA, 5)



def test_decimal_bytes_are_the_unscaled_digits_at_any_precision():
    """``Decimal.from_logical`` against the unscaled value spelled from the decimal's digits: short and very long
    coefficients, negative ones, zeros, scales from -5 to 60."""
    import random

    rng = random.Random(3)
    values = [D("0"), D("-0"), D("0.00"), D("-0.000"), D("1E+5"), D("-1E+5")]
    for _ in range(3000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 5, 28, 29, 80, 400])))
        values.append(D(f"{rng.choice('-+')}{digits}E{rng.randrange(-60, 6)}"))
    for value in values:
        sign, digits, exponent = value.as_tuple()
        unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
        expected = unscaled.to_bytes((unscaled + (unscaled < 0)).bit_length() // 8 + 1, "big", signed=True)
        assert Decimal.from_logical(Decimal.schema(-exponent), value) == expected
        assert Decimal.to_logical(Decimal.schema(-exponent), expected) == value

def test_logical_types():
    assert Decimal.from_logical(Decimal.schema(2), D("-1.00")) == b"\x9c"
    assert Decimal.from_logical(Decimal.schema(0), D("128")) == b"\x00\x80"
    assert Decimal.to_logical(Decimal.schema(2), b"\x00\x9c") == D("1.56")
    with pytest.raises(DataException, match="Schema has scale 2, value has scale 1"):
        Decimal.from_logical(Decimal.schema(2), D("1.5"))
    with pytest.raises(DataException, match="should not have any time fields"):
        Date.from_logical(Date.SCHEMA, dt.datetime(2020, 1, 1, 1))
    assert Date.from_logical(Date.SCHEMA, dt.datetime(2020, 1, 1)) == Date.from_logical(Date.SCHEMA, dt.date(2020, 1, 1))
    with pytest.raises(DataException, match="Time values must use number of milliseconds"):
        Time.to_logical(Time.SCHEMA, -1)
    with pytest.raises(DataException, match="schema does not match"):
        Timestamp.from_logical(INT64_SCHEMA, dt.datetime(2020, 1, 1))
    tz = dt.timezone(dt.timedelta(hours=2))
    assert Timestamp.from_logical(Timestamp.SCHEMA, dt.datetime(1970, 1, 1, 2, tzinfo=tz)) == 0
    assert Timestamp.to_logical(Timestamp.SCHEMA, -1) == dt.datetime(1969, 12, 31, 23, 59, 59, 999000,
                                                                     tzinfo=dt.timezone.utc)
    assert base64.b64encode(Decimal.from_logical(Decimal.schema(2), D("1.56"))) == b"AJw="
    assert isinstance(Decimal.schema(2), Schema)
