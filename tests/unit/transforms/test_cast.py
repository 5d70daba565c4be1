"""Cast, after Kafka's CastTest: whole values and fields, schemaless and with schemas, Java's narrowing."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import SourceRecord
from connect_magics.transforms import Cast

pytestmark = pytest.mark.unit


def cast(spec: str, key: bool = False) -> Cast:
    t = (Cast.Key if key else Cast.Value)()
    t.configure({"spec": spec})
    return t


@pytest.mark.parametrize("spec, message", [
    ("", "Must specify at least one field to cast."),
    ("foo:faketype", "Invalid value java.lang.IllegalArgumentException: No enum constant "
                     "org.apache.kafka.connect.data.Schema.Type.FAKETYPE for configuration Invalid type found in "
                     "casting spec: faketype"),
    ("foo:int8:extra", "Invalid value [foo:int8:extra] for configuration renames: Invalid rename mapping: foo:int8:extra"),
    ("foo:int8,int32", "Cast transformations that specify a type to cast the entire value to may only specify a "
                       "single cast in their spec"),
    ("foo:bytes", "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, "
                  "INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"),
    ("array", "Cast transformation does not support casting to ARRAY; supported types are [INT8, INT16, INT32, "
              "INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"),
])
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ConfigException) as e:
        cast(spec)
    assert str(e.value) == message


@pytest.mark.parametrize("target, value, expected", [
    ("int8", 42, 42), ("int8", 300, 44), ("int8", -129, 127), ("int16", 70000, 4464), ("int32", 2**40 + 5, 5),
    ("int8", 3.9, 3), ("int8", -3.9, -3), ("int32", 1e20, 2**31 - 1), ("int64", float("nan"), 0),
    ("int8", 1e20, -1), ("int8", True, 1), ("int32", "42", 42), ("int64", "-7", -7),
    ("float32", 0.1, 0.10000000149011612), ("float64", "1e3", 1000.0), ("float64", "2.5f", 2.5),
    ("float64", False, 0.0), ("boolean", 0, False), ("boolean", 0.5, False), ("boolean", -2, True),
    ("boolean", "TRUE", True), ("boolean", "yes", False), ("string", 42, "42"), ("string", True, "true"),
    ("string", 1e20, "1.0E20"), ("string", 2.5, "2.5"), ("string", b"\x01\x02", "AQI="),
])
def test_whole_value_schemaless(target: str, value: object, expected: object) -> None:
    assert cast(target).apply(SourceRecord(None, None, "t", value=value)).value == expected


@pytest.mark.parametrize("target, text", [("int8", "300"), ("int32", "1.5"), ("int64", "x"), ("float64", "x")])
def test_unparseable_strings(target: str, text: str) -> None:
    with pytest.raises(DataException, match=r"was out of range for requested data type"):
        cast(target).apply(SourceRecord(None, None, "t", value=text))


def test_unsupported_inputs() -> None:
    with pytest.raises(DataException, match="does not support casting from ARRAY"):
        cast("int8").apply(SourceRecord(None, None, "t", value=[1]))
    with pytest.raises(DataException, match="Unexpected type in Cast transformation"):
        cast("int8").apply(SourceRecord(None, None, "t", value=b"x"))


def test_whole_value_with_schema_keeps_optionality_and_casts_the_default() -> None:
    schema = SchemaBuilder.int32().optional().default_value(300).build()
    out = cast("int8", key=True).apply(SourceRecord(None, None, "t", key_schema=schema, key=300))
    assert out.key == 44 and out.key_schema.type is SchemaType.INT8 and out.key_schema.optional
    assert out.key_schema.default_value == 44


def test_fields_with_schema() -> None:
    schema = (SchemaBuilder.struct().field("int8", INT8_SCHEMA).field("int32", OPTIONAL_INT32_SCHEMA)
              .field("float32", FLOAT32_SCHEMA).field("string", STRING_SCHEMA).field("bytes", BYTES_SCHEMA)
              .field("ts", Timestamp.SCHEMA).field("d", Date.SCHEMA).field("dec", Decimal.schema(2))
              .field("kept", INT64_SCHEMA).build())
    value = (Struct(schema).put("int8", 8).put("float32", 32.5).put("string", "42").put("bytes", b"hi")
             .put("ts", dt.datetime(2023, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)).put("d", dt.date(2023, 1, 2))
             .put("dec", decimal.Decimal("1.50")).put("kept", 1))
    t = cast("int8:int16,int32:int64,float32:string,string:int32,bytes:string,ts:int64,d:string,dec:string")
    out = t.apply(SourceRecord(None, None, "t", value_schema=schema, value=value))
    v = out.value
    assert (v.get("int8"), v.get("int32"), v.get("float32"), v.get("string"), v.get("bytes")) == \
        (8, None, "32.5", 42, "aGk=")
    assert v.get("ts") == 1672628645006 and v.get("d") == "2023-01-02" and v.get("dec") == "1.50"
    assert out.value_schema.field("int32").schema.optional and out.value_schema.field("kept").schema == INT64_SCHEMA
    assert out.value_schema.field("ts").schema.type is SchemaType.INT64


def test_fields_schemaless_and_missing_fields() -> None:
    out = cast("a:int8,missing:int32").apply(SourceRecord(None, None, "t", value={"a": 300, "b": "x"}))
    assert out.value == {"a": 44, "b": "x", "missing": None}


def test_nulls_pass_through() -> None:
    record = SourceRecord(None, None, "t", value_schema=INT32_SCHEMA, value=None)
    assert cast("int8").apply(record) is record


def test_timestamp_to_string() -> None:
    schema = Timestamp.SCHEMA
    value = dt.datetime(2023, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)
    assert cast("string").apply(SourceRecord(None, None, "t", value_schema=schema, value=value)).value == \
        "2023-01-02T03:04:05.006Z"


@pytest.mark.parametrize("schema, value, text", [
    (Date.SCHEMA, dt.date(2023, 1, 2), "2023-01-02"), (Date.SCHEMA, dt.date(1970, 1, 1), "00:00:00.000Z"),
    (Date.SCHEMA, dt.date(1969, 12, 31), "00:00:00.000Z"), (Time.SCHEMA, dt.time(1, 2, 3, 4000), "01:02:03.004Z"),
    (Timestamp.SCHEMA, dt.datetime(2023, 1, 2, tzinfo=dt.timezone.utc), "2023-01-02"),
])
def test_dates_to_string_as_kafkas_values_date_format_for(schema: object, value: object, text: str) -> None:
    assert cast("string").apply(SourceRecord(None, None, "t", value_schema=schema, value=value)).value == text
