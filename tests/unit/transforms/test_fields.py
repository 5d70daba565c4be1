"""MaskField, ValueToKey, SetSchemaMetadata, ExtractField (nested), after Kafka's tests of each."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import SourceRecord
from connect_magics.transforms import ExtractField, MaskField, SetSchemaMetadata, ValueToKey

pytestmark = pytest.mark.unit


def configured(cls: type, **settings: str):  # noqa: ANN201
    t = cls()
    t.configure({k.replace("_", "."): v for k, v in settings.items()})
    return t


MASK_SCHEMA = (SchemaBuilder.struct().field("i8", INT8_SCHEMA).field("i32", INT32_SCHEMA)
               .field("f64", FLOAT64_SCHEMA).field("b", BOOLEAN_SCHEMA).field("s", STRING_SCHEMA)
               .field("d", Date.SCHEMA).field("ts", Timestamp.SCHEMA).field("dec", Decimal.schema(1))
               .field("arr", SchemaBuilder.array(INT32_SCHEMA).build())
               .field("map", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()).build())


def test_mask_with_schema_gives_empty_values() -> None:
    value = (Struct(MASK_SCHEMA).put("i8", 8).put("i32", 32).put("f64", 1.5).put("b", True).put("s", "x")
             .put("d", dt.date(2020, 1, 1)).put("ts", dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
             .put("dec", decimal.Decimal("1.5")).put("arr", [1]).put("map", {"a": "b"}))
    t = configured(MaskField.Value, fields=",".join(f.name for f in MASK_SCHEMA.fields))
    out = t.apply(SourceRecord(None, None, "t", value_schema=MASK_SCHEMA, value=value)).value
    assert [out.get(f.name) for f in MASK_SCHEMA.fields] == [
        0, 0, 0.0, False, "", dt.date(1970, 1, 1), dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc),
        decimal.Decimal(0), [], {}]


def test_mask_replacement() -> None:
    t = configured(MaskField.Key, fields="i,f,s,d,missing", replacement="123")
    out = t.apply(SourceRecord(None, None, "t", key={"i": 1, "f": 2.5, "s": "x", "d": decimal.Decimal("1")}))
    assert out.key == {"i": 123, "f": 123.0, "s": "123", "d": decimal.Decimal("123"), "missing": None}
    with pytest.raises(DataException, match="Cannot mask value of type builtins.bool with custom replacement."):
        t.apply(SourceRecord(None, None, "t", key={"i": True}))
    with pytest.raises(DataException, match="Unable to convert x"):
        configured(MaskField.Value, fields="i", replacement="x").apply(SourceRecord(None, None, "t", value={"i": 1}))
    schema = SchemaBuilder.struct().field("i", INT8_SCHEMA).build()
    with pytest.raises(DataException, match="to Byte"):
        configured(MaskField.Value, fields="i", replacement="300").apply(
            SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema).put("i", 1)))
    with pytest.raises(ConfigException, match="String must be non-empty"):
        configured(MaskField.Value, fields="i", replacement="")


def test_mask_unsupported_types() -> None:
    with pytest.raises(DataException, match="Cannot mask value of type: builtins.bytes"):
        configured(MaskField.Value, fields="b").apply(SourceRecord(None, None, "t", value={"b": b"x"}))


def test_value_to_key() -> None:
    schema = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", INT32_SCHEMA).field("c", INT32_SCHEMA).build()
    value = Struct(schema).put("a", 1).put("b", 2).put("c", 3)
    t = configured(ValueToKey, fields="a,b")
    out = t.apply(SourceRecord(None, None, "t", key=0, value_schema=schema, value=value))
    assert [f.name for f in out.key_schema.fields] == ["a", "b"] and out.key.get("b") == 2 and out.value is value
    assert t.apply(SourceRecord(None, None, "t", value={"a": 1, "c": 3})).key == {"a": 1, "b": None}
    with pytest.raises(DataException, match="Field does not exist: nope"):
        configured(ValueToKey, fields="nope").apply(SourceRecord(None, None, "t", value_schema=schema, value=value))
    with pytest.raises(ConfigException, match="Empty list"):
        configured(ValueToKey, fields="")


def test_set_schema_metadata() -> None:
    schema = SchemaBuilder.struct().name("old").version(1).doc("d").field("a", INT32_SCHEMA).build()
    value = Struct(schema).put("a", 1)
    out = configured(SetSchemaMetadata.Value, schema_name="new").apply(
        SourceRecord(None, None, "t", value_schema=schema, value=value))
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("new", 1, "d")
    assert out.value.schema is out.value_schema and out.value.get("a") == 1
    out = configured(SetSchemaMetadata.Key, schema_version="3").apply(
        SourceRecord(None, None, "t", key_schema=schema, key=value))
    assert out.key_schema.version == 3 and out.key_schema.name == "old" and out.key.get("a") == 1
    with pytest.raises(DataException, match="Cannot list fields on non-struct type"):  # as Kafka 4.1
        configured(SetSchemaMetadata.Key, schema_version="3").apply(
            SourceRecord(None, None, "t", key_schema=INT32_SCHEMA, key=5))
    null_record = SourceRecord(None, None, "t")
    assert configured(SetSchemaMetadata.Value, schema_name="x").apply(null_record) is null_record
    with pytest.raises(DataException, match=r"Schema required for \[updating schema metadata\]"):
        configured(SetSchemaMetadata.Value, schema_name="x").apply(SourceRecord(None, None, "t", value=1))
    with pytest.raises(ConfigException, match="Neither schema name nor version configured"):
        configured(SetSchemaMetadata.Value)


def test_extract_nested_field() -> None:
    inner = SchemaBuilder.struct().field("b", INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("a", inner).build()
    value = Struct(outer).put("a", Struct(inner).put("b", 5))
    t = configured(ExtractField.Value, field="a.b", field_syntax_version="v2")
    out = t.apply(SourceRecord(None, None, "t", value_schema=outer, value=value))
    assert out.value == 5 and out.value_schema == INT32_SCHEMA
    assert t.apply(SourceRecord(None, None, "t", value={"a": {"b": 6}})).value == 6
    assert t.apply(SourceRecord(None, None, "t", value={"a": None})).value is None
    with pytest.raises(ValueError, match="Unknown field: a.b"):
        configured(ExtractField.Value, field="a.b").apply(SourceRecord(None, None, "t", value_schema=outer,
                                                                       value=value))
    with pytest.raises(ConfigException, match=r"String must be one of \(case insensitive\)"):
        configured(ExtractField.Value, field="a", field_syntax_version="V3")
