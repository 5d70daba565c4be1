"""InsertHeader, DropHeaders and HeaderFrom, after Kafka's InsertHeaderTest, DropHeadersTest, HeaderFromTest."""

from __future__ import annotations

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
)
from connect_magics.api.records import Header, Headers, SourceRecord
from connect_magics.transforms import DropHeaders, HeaderFrom, InsertHeader

pytestmark = pytest.mark.unit


def headers(record: SourceRecord) -> list[tuple[str, object, object]]:
    return [(h.key, h.value, h.schema) for h in record.headers]


@pytest.mark.parametrize("literal, value, schema", [("42", 42, INT8_SCHEMA), ("true", True, BOOLEAN_SCHEMA),
                                                     ("hello", "hello", STRING_SCHEMA), ("", "", STRING_SCHEMA)])
def test_insert_header_types_the_literal(literal: str, value: object, schema: object) -> None:
    t = InsertHeader()
    t.configure({"header": "h", "value.literal": literal})
    original = SourceRecord(None, None, "t", value=1, headers=Headers().add("a", "b"))
    out = t.apply(original)
    assert headers(out) == [("a", "b", None), ("h", value, schema)]
    assert headers(original) == [("a", "b", None)]  # not mutated


def test_insert_header_requires_both() -> None:
    with pytest.raises(ConfigException, match='Missing required configuration "value.literal"'):
        InsertHeader().configure({"header": "h"})


def test_drop_headers_removes_every_header_of_those_names() -> None:
    t = DropHeaders()
    t.configure({"headers": "a,c"})
    record = SourceRecord(None, None, "t", headers=Headers([Header("a", 1), Header("b", 2), Header("a", 3)]))
    assert headers(t.apply(record)) == [("b", 2, None)]
    with pytest.raises(ConfigException, match="Invalid value \\[\\] for configuration headers: Empty list"):
        DropHeaders().configure({"headers": ""})


SCHEMA = SchemaBuilder.struct().name("S").field("a", INT32_SCHEMA).field("b", STRING_SCHEMA) \
    .field("c", SchemaBuilder.string().optional().default_value("dflt").build()).build()


@pytest.mark.parametrize("operation", ["move", "copy"])
def test_header_from_with_schema(operation: str) -> None:
    t = HeaderFrom.Value()
    t.configure({"fields": "a,c", "headers": "ha,hc", "operation": operation})
    value = Struct(SCHEMA).put("a", 1).put("b", "x")
    out = t.apply(SourceRecord(None, None, "t", value_schema=SCHEMA, value=value))
    assert headers(out) == [("ha", 1, INT32_SCHEMA), ("hc", "dflt", SCHEMA.field("c").schema)]
    if operation == "copy":
        assert out.value is value and out.value_schema is SCHEMA
    else:
        assert [f.name for f in out.value_schema.fields] == ["b"] and out.value_schema.name == "S"
        assert out.value.get("b") == "x"


def test_header_from_schemaless_key_and_null_default() -> None:
    t = HeaderFrom.Key()
    t.configure({"fields": "a,missing", "headers": "h1,h2", "operation": "move"})
    out = t.apply(SourceRecord(None, None, "t", key={"a": 1, "b": 2}))
    assert out.key == {"b": 2} and headers(out) == [("h1", 1, None), ("h2", None, None)]
    t = HeaderFrom.Value()
    t.configure({"fields": "c", "headers": "hc", "operation": "copy", "replace.null.with.default": "false"})
    out = t.apply(SourceRecord(None, None, "t", value_schema=SCHEMA, value=Struct(SCHEMA).put("a", 1).put("b", "x")))
    assert headers(out)[0][1] is None


def test_header_from_config_errors() -> None:
    with pytest.raises(ConfigException, match="'fields' config must have the same number of elements as 'headers'"):
        HeaderFrom.Value().configure({"fields": "a", "headers": "b,c", "operation": "move"})
    with pytest.raises(ConfigException, match="String must be one of: move, copy"):
        HeaderFrom.Value().configure({"fields": "a", "headers": "b", "operation": "x"})
