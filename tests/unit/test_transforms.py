"""Built-in transformations, following Kafka's transforms tests (RegexRouterTest, InsertFieldTest, ...)."""

from __future__ import annotations

import datetime as dt

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import Headers, SinkRecord, SourceRecord
from connect_magics.api.transforms import Transformation
from connect_magics.transforms import (
    BUILTIN_TRANSFORMS,
    ExtractField,
    Filter,
    HoistField,
    InsertField,
    InsertFieldValue,
    RegexRouter,
    ReplaceField,
)

pytestmark = pytest.mark.unit


def configured(cls: type[Transformation], **props: str) -> Transformation:
    t = cls()
    t.configure(props)
    return t


# ------------------------------------------------------------------------------------------ RegexRouter

@pytest.mark.parametrize("regex, replacement, topic, expected", [
    ("", "", "", ""),
    ("foo", "bar", "foo", "bar"),
    ("foo", "bar", "other", "other"),
    ("foo", "bar", "foobar", "foobar"),  # the whole topic must match
    ("(.*)", "prefix-$1", "orig", "prefix-orig"),
    ("(.*)", "$1-suffix", "orig", "orig-suffix"),
    ("(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117", "index"),
    ("(?<name>\\w+)\\.(?<rest>.*)", "${rest}.${name}", "db.users", "users.db"),
    ("(a)", "$11", "a", "a1"),  # $11 is $1 then "1" when there is no group 11
    ("a|ab", "x", "ab", "xb"),  # replaceFirst replaces the first match from the start
    ("(x)?y", "[$1]", "y", "[]"),
    ("cost", "\\$5", "cost", "$5"),
])
def test_regex_router(regex, replacement, topic, expected):
    router = configured(RegexRouter, regex=regex, replacement=replacement)
    record = SourceRecord({"p": 1}, {"o": 2}, topic, 0, None, "k", None, "v", 1000, Headers().add("h", "x"))
    routed = router.apply(record)
    assert routed.topic == expected
    assert (routed.key, routed.value, routed.timestamp, routed.source_offset) == ("k", "v", 1000, {"o": 2})
    assert routed.headers == record.headers


@pytest.mark.parametrize("props, message", [
    ({"regex": "(", "replacement": "x"}, "Invalid value ( for configuration regex: Invalid regex: Unclosed group"),
    ({"regex": "a"}, 'Missing required configuration "replacement" which has no default value.'),
    ({"regex": "(a)", "replacement": "$2"}, "No group 2"),
    ({"regex": "(a)", "replacement": "${x}"}, "No group with name {x}"),
    ({"regex": "(a)", "replacement": "$x"}, "Illegal group reference"),
    ({"regex": "(a)", "replacement": "x\\"}, "character to be escaped is missing"),
])
def test_regex_router_config_errors(props, message):
    with pytest.raises(ConfigException) as info:
        RegexRouter().configure(props)
    assert message in str(info.value)


# ---------------------------------------------------------------------------------------------- Filter

def test_filter_drops_everything():
    f = configured(Filter)
    assert f.apply(SourceRecord(None, None, "t", value=1)) is None
    assert f.config_def().names() == []


# ----------------------------------------------------------------------------------------- InsertField

def _sink(value_schema=None, value=None, **kw) -> SinkRecord:
    return SinkRecord("test", 0, None, None, value_schema, value, kafka_offset=42, timestamp=1234, **kw)


def test_insert_field_schemaless():
    t = configured(InsertField.Value, **{"topic.field": "topic_field!", "partition.field": "partition_field",
                                         "offset.field": "offset_field", "timestamp.field": "timestamp_field?",
                                         "static.field": "instance_id", "static.value": "my-instance-id"})
    out = t.apply(_sink(value={"magic": 42}))
    assert out.value == {"magic": 42, "topic_field": "test", "partition_field": 0, "offset_field": 42,
                         "timestamp_field": 1234, "instance_id": "my-instance-id"}
    assert out.kafka_offset == 42 and out.original_topic == "test"


def test_insert_field_with_schema():
    t = configured(InsertField.Value, **{"topic.field": "topic_field!", "partition.field": "partition_field",
                                         "offset.field": "offset_field", "timestamp.field": "timestamp_field?",
                                         "static.field": "instance_id", "static.value": "my-instance-id"})
    schema = SchemaBuilder.struct().name("name").version(1).doc("doc").field("magic", OPTIONAL_INT64_SCHEMA).build()
    out = t.apply(_sink(schema, Struct(schema).put("magic", 42)))
    s = out.value_schema
    assert (s.name, s.version, s.doc) == ("name", 1, "doc")
    assert [f.name for f in s.fields] == ["magic", "topic_field", "partition_field", "offset_field",
                                          "timestamp_field", "instance_id"]
    assert s.field("topic_field").schema == STRING_SCHEMA
    assert s.field("partition_field").schema == OPTIONAL_INT32_SCHEMA
    assert s.field("offset_field").schema == OPTIONAL_INT64_SCHEMA
    assert s.field("timestamp_field").schema == Timestamp.builder().optional().build()
    assert s.field("instance_id").schema == OPTIONAL_STRING_SCHEMA
    assert out.value.get("magic") == 42 and out.value.get("offset_field") == 42
    assert out.value.get("timestamp_field") == dt.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=dt.timezone.utc)
    again = t.apply(_sink(schema, Struct(schema).put("magic", 7)))
    assert again.value_schema is out.value_schema  # cached


def test_insert_field_key_and_tombstones():
    t = configured(InsertField.Key, **{"topic.field": "t"})
    record = SourceRecord(None, None, "orders", key={"id": 1}, value="v")
    assert t.apply(record).key == {"id": 1, "t": "orders"} and t.apply(record).value == "v"
    tombstone = SourceRecord(None, None, "orders", key=None, value=None)
    assert t.apply(tombstone) is tombstone
    assert configured(InsertField.Value, **{"topic.field": "t"}).apply(tombstone) is tombstone


def test_insert_field_errors():
    with pytest.raises(ConfigException, match="No field insertion configured"):
        InsertField.Value().configure({})
    with pytest.raises(ConfigException, match="No value specified for static field: f"):
        InsertField.Value().configure({"static.field": "f"})
    with pytest.raises(DataException, match=r"Only SinkRecord supported for \[field insertion\], found: "
                                            r"connect_magics.api.records.SourceRecord"):
        configured(InsertField.Value, **{"offset.field": "o"}).apply(SourceRecord(None, None, "t", value={}))
    with pytest.raises(DataException, match=r"Only Map objects supported in absence of schema for \[field insertion\]"
                                            r", found: builtins.str"):
        configured(InsertField.Value, **{"topic.field": "t"}).apply(SourceRecord(None, None, "t", value="x"))
    with pytest.raises(TypeError):
        InsertField()


def test_insert_field_replace_null_with_default():
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.string().optional().default_value("d")).build()
    record = SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema))
    keep = configured(InsertField.Value, **{"topic.field": "t", "replace.null.with.default": "false"})
    assert keep.apply(record).value.get_without_default("a") is None
    assert configured(InsertField.Value, **{"topic.field": "t"}).apply(record).value.get_without_default("a") == "d"


# ---------------------------------------------------------------------------------------- ReplaceField

def test_replace_field_schemaless():
    t = configured(ReplaceField.Value, exclude="dont", renames="abc:xyz,foo:bar")
    out = t.apply(SinkRecord("test", 0, None, None, None, {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_replace_field_include_and_aliases():
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    include = configured(ReplaceField.Value, include="abc,foo", renames="abc:xyz,foo:bar")
    assert include.apply(SourceRecord(None, None, "t", value=value)).value == {"xyz": 42, "bar": True}
    legacy = configured(ReplaceField.Value, whitelist="abc,foo", blacklist="foo")
    assert legacy.apply(SourceRecord(None, None, "t", value=value)).value == {"abc": 42}


def test_replace_field_with_schema():
    schema = (SchemaBuilder.struct().name("n").field("dont", STRING_SCHEMA).field("abc", INT32_SCHEMA)
              .field("foo", SchemaBuilder.boolean()).field("etc", STRING_SCHEMA).build())
    value = Struct(schema).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")
    t = configured(ReplaceField.Value, exclude="dont", renames="abc:xyz,foo:bar")
    out = t.apply(SinkRecord("test", 0, None, None, schema, value))
    assert [f.name for f in out.value_schema.fields] == ["xyz", "bar", "etc"]
    assert out.value_schema.name == "n"
    assert (out.value.get("xyz"), out.value.get("bar"), out.value.get("etc")) == (42, True, "etc")


def test_replace_field_key_and_bad_renames():
    t = configured(ReplaceField.Key, renames="id:key_id")
    assert t.apply(SourceRecord(None, None, "t", key={"id": 1}, value={"id": 2})).key == {"key_id": 1}
    with pytest.raises(ConfigException, match=r"^Invalid value \[a:b, c\] for configuration renames: "
                                              r"Invalid rename mapping: c$"):
        ReplaceField.Value().configure({"renames": "a:b,c"})
    with pytest.raises(ConfigException, match="Invalid rename mapping: a:b:c"):
        ReplaceField.Value().configure({"renames": "a:b:c"})


# ------------------------------------------------------------------------------- HoistField / ExtractField

def test_hoist_field():
    t = configured(HoistField.Key, field="magic")
    assert t.apply(SinkRecord("t", 0, None, 42, None, None)).key == {"magic": 42}
    out = t.apply(SinkRecord("t", 0, INT32_SCHEMA, 42, None, None))
    assert out.key_schema == SchemaBuilder.struct().field("magic", INT32_SCHEMA).build()
    assert out.key.get("magic") == 42
    with pytest.raises(ConfigException, match='Missing required configuration "field"'):
        HoistField.Value().configure({})


def test_extract_field():
    t = configured(ExtractField.Key, field="magic")
    assert t.apply(SinkRecord("t", 0, None, {"magic": 42}, None, None)).key == 42
    assert t.apply(SinkRecord("t", 0, None, None, None, None)).key is None
    schema = SchemaBuilder.struct().field("magic", INT64_SCHEMA).build()
    out = t.apply(SinkRecord("t", 0, schema, Struct(schema).put("magic", 42), None, None))
    assert (out.key_schema, out.key) == (INT64_SCHEMA, 42)
    with pytest.raises(ValueError, match="Unknown field: nope"):
        configured(ExtractField.Key, field="nope").apply(SinkRecord("t", 0, schema, Struct(schema), None, None))


def test_value_variant_keeps_key():
    t = configured(HoistField.Value, field="v")
    out = t.apply(SourceRecord({"f": 1}, {"o": 1}, "t", 3, STRING_SCHEMA, "k", None, 1))
    assert (out.key_schema, out.key, out.kafka_partition, out.value) == (STRING_SCHEMA, "k", 3, {"v": 1})


# --------------------------------------------------------------------------------------------- registry

def test_builtin_transforms_registry():
    prefix = "org.apache.kafka.connect.transforms."
    assert BUILTIN_TRANSFORMS[prefix + "RegexRouter"] is RegexRouter
    assert BUILTIN_TRANSFORMS[prefix + "Filter"] is Filter
    assert BUILTIN_TRANSFORMS[prefix + "InsertField$Value"] is InsertField.Value is InsertFieldValue
    for name in ("InsertField", "ReplaceField", "HoistField", "ExtractField"):
        for variant in ("Key", "Value"):
            cls = BUILTIN_TRANSFORMS[f"{prefix}{name}${variant}"]
            assert issubclass(cls, Transformation) and cls().version()
    assert RegexRouter().config_def().names() == ["regex", "replacement"]
    assert InsertField.Value().config_def().names()[:2] == ["topic.field", "partition.field"]
