"""Flatten, after Kafka's FlattenTest."""

from __future__ import annotations

import pytest

from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import SourceRecord
from connect_magics.transforms import Flatten

pytestmark = pytest.mark.unit


def flatten(key: bool = False, **settings: str) -> Flatten:
    t = (Flatten.Key if key else Flatten.Value)()
    t.configure(settings)
    return t


def test_nested_struct() -> None:
    deepest = SchemaBuilder.struct().field("int32", INT32_SCHEMA).field("opt", OPTIONAL_STRING_SCHEMA).build()
    middle = SchemaBuilder.struct().field("deep", deepest).field("b", BOOLEAN_SCHEMA).build()
    outer = SchemaBuilder.struct().name("Outer").field("middle", middle).field("s", STRING_SCHEMA) \
        .field("arr", SchemaBuilder.array(INT32_SCHEMA).build()).build()
    value = Struct(outer).put("middle", Struct(middle).put("deep", Struct(deepest).put("int32", 8)).put("b", True)) \
        .put("s", "x").put("arr", [1, 2])
    out = flatten(delimiter="#").apply(SourceRecord(None, None, "t", value_schema=outer, value=value))
    assert [f.name for f in out.value_schema.fields] == ["middle#deep#int32", "middle#deep#opt", "middle#b", "s",
                                                         "arr"]
    assert out.value_schema.name == "Outer"
    assert out.value.get("middle#deep#int32") == 8 and out.value.get("middle#b") is True
    assert out.value.get("arr") == [1, 2] and out.value.get("middle#deep#opt") is None


def test_optional_parent_makes_children_optional_and_keeps_defaults() -> None:
    inner = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", SchemaBuilder.int32().default_value(7).build()) \
        .optional().build()
    outer = SchemaBuilder.struct().field("in", inner).build()
    out = flatten().apply(SourceRecord(None, None, "t", value_schema=outer, value=Struct(outer)))
    a, b = out.value_schema.field("in.a").schema, out.value_schema.field("in.b").schema
    assert a.optional and b.optional and b.default_value == 7 and out.value.get("in.b") == 7


def test_schemaless_maps() -> None:
    value = {"a": {"b": 1, "c": {"d": "x"}}, "e": [1], "f": None, "g": b"\x00"}
    out = flatten(key=True).apply(SourceRecord(None, None, "t", key=value))
    assert out.key == {"a.b": 1, "a.c.d": "x", "e": [1], "f": None, "g": b"\x00"}


def test_unsupported() -> None:
    with pytest.raises(DataException, match="Only Map objects supported"):
        flatten().apply(SourceRecord(None, None, "t", value=42))
    schema = SchemaBuilder.struct().field("m", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()).build()
    with pytest.raises(DataException, match="Flatten transformation does not support MAP for record with schemas "
                                            r"\(for field m\)."):
        flatten().apply(SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema).put("m", {})))


def test_null_values_pass() -> None:
    record = SourceRecord(None, None, "t", value=None)
    assert flatten().apply(record) is record
