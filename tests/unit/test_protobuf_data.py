"""ProtobufData's mapping without a registry: Connect schemas to file descriptors as Confluent's ProtobufData
makes them, Connect values to messages and back, the settings that change either, and errors naming fields."""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import pickle

import pytest
from google.protobuf import descriptor_pb2

from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.converters.protobuf_data import (
    PROTOBUF_TYPE_ENUM,
    PROTOBUF_TYPE_TAG,
    PROTOBUF_TYPE_UNION_PREFIX,
    ProtobufData,
    ProtobufDataConfig,
    ProtobufSchema,
    message_name_at,
    scrub_name,
    to_map_entry,
    to_map_field,
)

pytestmark = [pytest.mark.unit]

F = descriptor_pb2.FieldDescriptorProto
STATUS = (SchemaBuilder.string().name("Status").optional().parameter(PROTOBUF_TYPE_ENUM, "Status")
          .parameter(PROTOBUF_TYPE_ENUM + ".ACTIVE", "0").parameter(PROTOBUF_TYPE_ENUM + ".INACTIVE", "1").build())


def fields(proto: ProtobufSchema) -> list[tuple[str, int, str]]:
    """(name, number, type or type name) of the schema's message fields."""
    return [(f.name, f.number, f.type_name or F.Type.Name(f.type)[5:].lower())
            for f in proto.file_proto.message_type[0].field]


def test_scrubs_names_as_confluent() -> None:
    cases = {"": "", "abc_DEF_123": "abc_DEF_123", "abc+-.*_": "abc_2B____", "abc-def": "abc_def",
             "abc+def": "abc_2Bdef", "abc  def": "abc__def", "abc.def": "abc_def", "0abc.def": "x0abc_def",
             "_abc.def": "x_abc_def", "0abc": "x0abc", "_abc": "x_abc"}
    assert {name: scrub_name(name) for name in cases} == cases


def test_map_entry_names() -> None:
    assert to_map_entry("counts") == "countsEntry" and to_map_entry("my_tags") == "MyTagsEntry"
    assert to_map_field("MyTagsEntry") == "my_tags" and to_map_field("p.M.ConnectDefault1Entry") == "p.M.connect_default1"


def test_a_complex_struct_as_confluents_from_connect_complex() -> None:
    schema = (SchemaBuilder.struct()
              .field("int8", SchemaBuilder.int8().default_value(2).doc("int8 field").build())
              .field("int16", INT16_SCHEMA).field("int32", INT32_SCHEMA).field("int64", INT64_SCHEMA)
              .field("float32", FLOAT32_SCHEMA).field("float64", FLOAT64_SCHEMA).field("boolean", BOOLEAN_SCHEMA)
              .field("string", STRING_SCHEMA).field("bytes", BYTES_SCHEMA)
              .field("array", SchemaBuilder.array(STRING_SCHEMA).build())
              .field("map", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build())
              .field("mapNonStringKeys", SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build())
              .field("mapNullValues", SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_STRING_SCHEMA).build())
              .field("enum", STATUS).build())
    value = (Struct(schema).put("int8", 12).put("int16", 12).put("int32", 12).put("int64", 12).put("float32", 12.2)
             .put("float64", 12.2).put("boolean", True).put("string", "foo").put("bytes", b"foo")
             .put("array", ["a", "b", "c"]).put("map", {"field": 1}).put("mapNonStringKeys", {1: 1})
             .put("mapNullValues", {"field": None}).put("enum", "INACTIVE"))
    data = ProtobufData()
    proto = data.from_connect_schema(schema)
    assert proto.name == "ConnectDefault1"
    assert fields(proto) == [
        ("int8", 1, "int32"), ("int16", 2, "int32"), ("int32", 3, "int32"), ("int64", 4, "int64"),
        ("float32", 5, "float"), ("float64", 6, "double"), ("boolean", 7, "bool"), ("string", 8, "string"),
        ("bytes", 9, "bytes"), ("array", 10, "string"), ("map", 11, ".ConnectDefault1.ConnectDefault2Entry"),
        ("mapNonStringKeys", 12, ".ConnectDefault1.ConnectDefault3Entry"),
        ("mapNullValues", 13, ".ConnectDefault1.ConnectDefault4Entry"), ("enum", 14, ".ConnectDefault1.Status"),
    ]
    assert list(proto.file_proto.dependency) == ["confluent/meta.proto"]
    message = data.from_connect_data(schema, value)
    assert (message.int8, message.int16, message.int64, message.boolean, message.string, message.bytes) == \
        (12, 12, 12, True, "foo", b"foo")
    assert pytest.approx(message.float32) == 12.2 and list(message.array) == ["a", "b", "c"]
    assert [(e.key, e.value) for e in message.map] == [("field", 1)]
    assert [(e.key, e.value) for e in message.mapNonStringKeys] == [(1, 1)]
    assert [(e.key, e.value) for e in message.mapNullValues] == [("field", "")]
    assert message.enum == 1


def test_one_import_for_two_timestamps() -> None:
    schema = SchemaBuilder.struct().field("createdAt", Timestamp.SCHEMA).field("updatedAt", Timestamp.SCHEMA).build()
    assert list(ProtobufData().from_connect_schema(schema).file_proto.dependency) == \
        ["google/protobuf/timestamp.proto"]


def test_a_nested_struct_named_as_its_field_gets_the_message_suffix() -> None:
    nested = SchemaBuilder.struct().name("nested").field("string", STRING_SCHEMA).build()
    proto = ProtobufData().from_connect_schema(SchemaBuilder.struct().field("nested", nested).build())
    assert proto.descriptor.fields_by_name["nested"].message_type.name == "nestedMessage"


def test_scrub_invalid_names() -> None:
    schema = SchemaBuilder.struct().name("org.acme-corp.invalid record-name") \
        .field("invalid field-name", STRING_SCHEMA).build()
    data = ProtobufData(ProtobufDataConfig(scrub_invalid_names=True))
    proto = data.from_connect_schema(schema)
    assert proto.descriptor.full_name == "org.acme_corp.invalid_record_name"
    message = data.from_connect_data(schema, Struct(schema).put("invalid field-name", "foo"))
    assert message.invalid_field_name == "foo"


def test_ignore_default_for_nullables() -> None:
    schema = SchemaBuilder.struct().name("KeyValueMessage") \
        .field("key", SchemaBuilder.int32().optional().parameter(PROTOBUF_TYPE_TAG, "1").build()) \
        .field("value", SchemaBuilder.string().optional().default_value("string-value")
               .parameter(PROTOBUF_TYPE_TAG, "2").build()).build()
    value = Struct(schema).put("key", 123)
    ignoring = ProtobufData(ProtobufDataConfig(ignore_default_for_nullables=True)).from_connect_data(schema, value)
    assert ignoring.SerializeToString() == b"\x08\x7b"
    assert ProtobufData().from_connect_data(schema, value).value == "string-value"


def test_tags_from_parameters_are_kept() -> None:
    schema = SchemaBuilder.struct().name("T") \
        .field("b", SchemaBuilder.int32().parameter(PROTOBUF_TYPE_TAG, "7").build()).field("a", INT32_SCHEMA).build()
    assert fields(ProtobufData().from_connect_schema(schema)) == [("b", 7, "int32"), ("a", 1, "int32")]


def test_optional_for_nullables_writes_proto3_optional() -> None:
    schema = SchemaBuilder.struct().name("p.M").field("a", OPTIONAL_STRING_SCHEMA).field("b", INT32_SCHEMA) \
        .field("c", OPTIONAL_INT32_SCHEMA).build()
    data = ProtobufData(ProtobufDataConfig(optional_for_nullables=True))
    message = data.from_connect_schema(schema).file_proto.message_type[0]
    assert [(f.name, f.proto3_optional, f.HasField("oneof_index")) for f in message.field] == \
        [("a", True, True), ("b", False, False), ("c", True, True)]
    assert [o.name for o in message.oneof_decl] == ["_a", "_c"]
    written = data.from_connect_data(schema, Struct(schema).put("b", 0).put("c", 0))
    assert not written.HasField("a") and written.HasField("c")
    read_schema = data.to_connect_schema(data.from_connect_schema(schema))
    assert [f.schema.optional for f in read_schema.fields] == [True, False, True]
    assert data.to_connect_data(read_schema, written) == Struct(read_schema).put("b", 0).put("c", 0)


def test_wrapper_for_nullables_writes_wrapper_messages() -> None:
    schema = SchemaBuilder.struct().name("W").field("a", OPTIONAL_STRING_SCHEMA) \
        .field("n", SchemaBuilder.int64().optional().build()).field("b", INT32_SCHEMA).build()
    data = ProtobufData(ProtobufDataConfig(wrapper_for_nullables=True))
    proto = data.from_connect_schema(schema)
    assert fields(proto) == [("a", 1, ".google.protobuf.StringValue"), ("n", 2, ".google.protobuf.Int64Value"),
                             ("b", 3, "int32")]
    written = data.from_connect_data(schema, Struct(schema).put("a", "").put("b", 1))
    assert written.HasField("a") and written.a.value == "" and not written.HasField("n")
    read_schema = data.to_connect_schema(proto)
    assert [(f.schema.type.name, f.schema.optional) for f in read_schema.fields] == \
        [("STRING", True), ("INT64", True), ("INT32", False)]
    assert data.to_connect_data(read_schema, written).get("a") == ""


def test_logical_types() -> None:
    schema = SchemaBuilder.struct().name("L").field("amount", Decimal.schema(3)).field("day", Date.SCHEMA) \
        .field("at", Time.SCHEMA).field("ts", Timestamp.SCHEMA).build()
    value = Struct(schema).put("amount", decimal.Decimal("-0.125")).put("day", dt.date(1, 1, 1)) \
        .put("at", dt.time(0, 0, 0, 1000)).put("ts", dt.datetime(1960, 5, 6, 7, 8, 9, 10000, tzinfo=dt.timezone.utc))
    data = ProtobufData()
    message = data.from_connect_data(schema, value)
    assert (message.amount.scale, message.amount.precision) == (3, 3)
    assert (message.day.year, message.day.month, message.day.day) == (1, 1, 1)
    assert (message.at.seconds, message.at.nanos) == (0, 1_000_000)
    assert (message.ts.seconds, message.ts.nanos) == (calendar.timegm((1960, 5, 6, 7, 8, 9)), 10_000_000)
    read = data.to_connect_schema(data.from_connect_schema(schema))
    assert read.field("amount").schema.parameters == {"scale": "3", PROTOBUF_TYPE_TAG: "1"}
    assert [data.to_connect_data(read, message).get(f.name) for f in schema.fields] == \
        [value.get(f.name) for f in schema.fields]


def test_int8_and_int16_keep_their_connect_type() -> None:
    schema = SchemaBuilder.struct().name("I").field("a", INT8_SCHEMA).field("b", INT16_SCHEMA).build()
    data = ProtobufData()
    read = data.to_connect_schema(data.from_connect_schema(schema))
    assert [f.schema.type.name for f in read.fields] == ["INT8", "INT16"]


def test_unsigned_and_signed_protobuf_types_round_trip() -> None:
    u64 = SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "uint64").build()
    s32 = SchemaBuilder.int32().parameter("io.confluent.connect.protobuf.Type", "sint32").build()
    schema = SchemaBuilder.struct().name("U").field("u", u64).field("s", s32).build()
    data = ProtobufData()
    proto = data.from_connect_schema(schema)
    assert fields(proto) == [("u", 1, "uint64"), ("s", 2, "sint32")]
    message = data.from_connect_data(schema, Struct(schema).put("u", -1).put("s", -2))
    assert message.u == 2**64 - 1 and message.s == -2
    read = data.to_connect_schema(proto)
    assert data.to_connect_data(read, message).get("u") == -1


def test_enums_as_strings_or_ints() -> None:
    schema = SchemaBuilder.struct().name("E").field("status", STATUS).build()
    strings, ints = ProtobufData(), ProtobufData(ProtobufDataConfig(int_for_enums=True))
    proto = strings.from_connect_schema(schema)
    message = strings.from_connect_data(schema, Struct(schema).put("status", "INACTIVE"))
    as_string = strings.to_connect_schema(proto)
    assert as_string.field("status").schema.parameters[PROTOBUF_TYPE_ENUM + ".INACTIVE"] == "1"
    assert strings.to_connect_data(as_string, message).get("status") == "INACTIVE"
    as_int = ints.to_connect_schema(proto)
    assert as_int.field("status").schema.type.name == "INT32"
    read = ints.to_connect_data(as_int, message)
    assert read.get("status") == 1
    assert ints.from_connect_data(as_int, read).status == 1
    with pytest.raises(DataException, match=r"E\.status.*'GONE'"):
        strings.from_connect_data(schema, Struct(schema).put("status", "GONE"))


def oneof_file() -> ProtobufSchema:
    file = descriptor_pb2.FileDescriptorProto(name="u.proto", package="u", syntax="proto3")
    message = file.message_type.add(name="Pick")
    message.oneof_decl.add(name="choice")
    message.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    message.field.add(name="text", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    message.field.add(name="number", number=3, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL, oneof_index=0)
    return ProtobufSchema(file, "u.Pick")


@pytest.mark.parametrize("config, field_names", [
    (ProtobufDataConfig(), ["choice_0", "id"]),
    (ProtobufDataConfig(generate_index_for_unions=False), ["choice", "id"]),
    (ProtobufDataConfig(flatten_unions=True), ["text", "number", "id"]),
    (ProtobufDataConfig(generalized_sum_type_support=True), ["choice_0", "id"]),
])
def test_oneofs(config: ProtobufDataConfig, field_names: list[str]) -> None:
    data = ProtobufData(config)
    proto = oneof_file()
    schema = data.to_connect_schema(proto, 3)
    assert schema.version == 3 and [f.name for f in schema.fields] == field_names
    message = proto.message_class()(id=1, number=5)
    value = data.to_connect_data(schema, message)
    if config.flatten_unions:
        assert (value.get("text"), value.get("number")) == (None, 5)
    else:
        union = value.get(field_names[0])
        assert union.get("number") == 5 and union.get("text") is None
        if not config.generalized_sum_type_support:
            assert union.schema.name == PROTOBUF_TYPE_UNION_PREFIX + "choice"
    written = data.from_connect_data(schema, value, proto)
    assert written == message
    rebuilt = data.from_connect_schema(schema).file_proto.message_type[0]
    if not config.flatten_unions:
        assert [o.name for o in rebuilt.oneof_decl] == ["choice"]
        assert [(f.name, f.number, f.HasField("oneof_index")) for f in rebuilt.field] == \
            [("text", 2, True), ("number", 3, True), ("id", 1, False)]


def test_proto2_optional_fields() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="p2.proto", package="p2", syntax="proto2")
    message = file.message_type.add(name="Old")
    message.field.add(name="a", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    message.field.add(name="b", number=2, type=F.TYPE_INT32, label=F.LABEL_REQUIRED)
    proto = ProtobufSchema(file, "p2.Old")
    on = ProtobufData(ProtobufDataConfig(optional_for_nullables=True))
    schema = on.to_connect_schema(proto)
    assert [f.schema.optional for f in schema.fields] == [True, False]
    assert on.to_connect_data(schema, proto.message_class()(b=2)).get("a") is None
    off = ProtobufData(ProtobufDataConfig(optional_for_proto2=False))
    assert off.to_connect_data(off.to_connect_schema(proto), proto.message_class()(b=2)).get("a") == 0


def test_unset_messages_read_as_null_or_as_defaults() -> None:
    inner = SchemaBuilder.struct().name("In").field("x", INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().name("Out").field("inner", inner).build()
    data = ProtobufData()
    proto = data.from_connect_schema(schema)
    empty = proto.message_class()()
    assert data.to_connect_data(data.to_connect_schema(proto), empty).get("inner") is None
    generating = ProtobufData(ProtobufDataConfig(generate_struct_for_nulls=True))
    read = generating.to_connect_data(generating.to_connect_schema(proto), empty)
    assert read.get("inner").get("x") == 0


def test_enhanced_schema_support_keeps_full_names() -> None:
    schema = SchemaBuilder.struct().name("a.b.Outer") \
        .field("tags", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()).build()
    data = ProtobufData(ProtobufDataConfig(enhanced_protobuf_schema_support=True))
    read = data.to_connect_schema(data.from_connect_schema(schema))
    assert read.name == "a.b.Outer" and read.field("tags").schema.name == "a.b.Outer.connect_default1"


def test_recursive_messages_are_refused_by_name() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="r.proto", package="r", syntax="proto3")
    message = file.message_type.add(name="Node")
    message.field.add(name="next", number=1, type=F.TYPE_MESSAGE, type_name=".r.Node", label=F.LABEL_OPTIONAL)
    with pytest.raises(DataException, match="r.Node"):
        ProtobufData().to_connect_schema(ProtobufSchema(file, "r.Node"))


def test_raw_primitives_are_wrappers() -> None:
    data = ProtobufData()
    proto = data.from_connect_schema(STRING_SCHEMA)
    assert proto.name == "google.protobuf.StringValue" and proto.message_indexes == [7]
    message = data.from_connect_data(STRING_SCHEMA, "x")
    schema = data.to_connect_schema(proto)
    assert schema == STRING_SCHEMA and data.to_connect_data(schema, message) == "x"
    unwrapped = ProtobufData(ProtobufDataConfig(wrapper_for_raw_primitives=False)).to_connect_schema(proto)
    assert unwrapped.type.name == "STRUCT" and unwrapped.name == "StringValue"


@pytest.mark.parametrize("schema, message", [
    (SchemaBuilder.array(INT32_SCHEMA).build(), "Unsupported root schema of type ARRAY"),
    (SchemaBuilder.struct().field("a", SchemaBuilder.array(SchemaBuilder.array(INT32_SCHEMA).build()).build())
     .build(), "Array cannot be nested: field a"),
    (None, "needs a schema"),
])
def test_unsupported_schemas(schema: Schema | None, message: str) -> None:
    with pytest.raises(DataException, match=message):
        ProtobufData().from_connect_schema(schema)


def test_bad_values_name_the_field() -> None:
    inner = SchemaBuilder.struct().name("In").field("x", INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().name("Out").field("inner", inner) \
        .field("list", SchemaBuilder.array(OPTIONAL_STRING_SCHEMA).build()).build()
    data = ProtobufData()
    with pytest.raises(DataException, match=r"Field Out\.inner\.x: Invalid type for INT32: str"):
        data.from_connect_data(schema, Struct.of(schema, [Struct.of(inner, ["1"]), None]))
    with pytest.raises(DataException, match=r"Field Out\.inner\.x: invalid value for INT32"):
        data.from_connect_data(schema, Struct.of(schema, [Struct.of(inner, [2**40]), None]))
    with pytest.raises(DataException, match=r"Field Out\.list: element 1 is null"):
        data.from_connect_data(schema, Struct.of(schema, [None, ["a", None]]))
    other = SchemaBuilder.struct().name("Other").field("x", INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"Out\.inner: Mismatching struct schema"):
        data.from_connect_data(schema, Struct.of(schema, [Struct(other).put("x", 1), None]))


def test_message_indexes_select_nested_messages() -> None:
    file = descriptor_pb2.FileDescriptorProto(name="n.proto", package="n")
    file.message_type.add(name="A").nested_type.add(name="B")
    file.message_type.add(name="C")
    assert message_name_at(file, [0, 0]) == "n.A.B" and message_name_at(file, [1]) == "n.C"
    with pytest.raises(DataException, match=r"Invalid message indexes \[2\]"):
        message_name_at(file, [2])


def test_schemas_and_data_pickle_without_pools() -> None:
    schema = SchemaBuilder.struct().name("P").field("ts", Timestamp.SCHEMA).build()
    data = ProtobufData()
    proto = data.from_connect_schema(schema)
    proto.message_class()
    copy = pickle.loads(pickle.dumps(proto))
    assert copy == proto and copy._pool is None and fields(copy) == fields(proto)
    assert pickle.loads(pickle.dumps(data)).from_connect_schema(schema) == proto


PROTO_TEXT = """
// a comment
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
import "confluent/meta.proto";
option java_package = "x.y";

/* block
   comment */
message Order {
  option deprecated = false;
  reserved 9, 10 to 12;
  int64 id = 1 [json_name = "ID", deprecated = true];
  repeated int32 codes = 2 [packed = true];
  map<string, Item> my_items = 3;
  optional string note = 4;
  google.protobuf.Timestamp at = 5;
  Kind kind = 6;
  oneof pick { string a = 7; Item b = 8 [(confluent.field_meta) = { doc: "d", params: [ { key: "k", value: "v" } ] }]; }
  message Item { string sku = 1; }
  enum Kind { KIND_UNSET = 0; KIND_BIG = 1 [deprecated = true]; KIND_NEG = -1; }
}
service Ignored { rpc Call (Order) returns (Order); }
"""


def expected_text_file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="t.proto", package="shop.v1", syntax="proto3",
                                              dependency=["google/protobuf/timestamp.proto", "confluent/meta.proto"])
    order = file.message_type.add(name="Order")
    add = order.field.add
    add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL, json_name="ID").options.deprecated = True
    add(name="codes", number=2, type=F.TYPE_INT32, label=F.LABEL_REPEATED).options.packed = True
    add(name="my_items", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".shop.v1.Order.MyItemsEntry")
    add(name="note", number=4, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, proto3_optional=True, oneof_index=1)
    add(name="at", number=5, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".google.protobuf.Timestamp")
    add(name="kind", number=6, type=F.TYPE_ENUM, label=F.LABEL_OPTIONAL, type_name=".shop.v1.Order.Kind")
    add(name="a", number=7, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0)
    b = add(name="b", number=8, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".shop.v1.Order.Item",
            oneof_index=0)
    from confluent_kafka.schema_registry.confluent import meta_pb2

    b.options.Extensions[meta_pb2.field_meta].doc = "d"
    b.options.Extensions[meta_pb2.field_meta].params["k"] = "v"
    entry = order.nested_type.add(name="MyItemsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".shop.v1.Order.Item")
    order.nested_type.add(name="Item").field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    kind = order.enum_type.add(name="Kind")
    for name, number in (("KIND_UNSET", 0), ("KIND_BIG", 1), ("KIND_NEG", -1)):
        kind.value.add(name=name, number=number)
    order.oneof_decl.add(name="pick")
    order.oneof_decl.add(name="_note")
    return file


def _resolved(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    proto = ProtobufSchema(file, "shop.v1.Order")
    out = descriptor_pb2.FileDescriptorProto()
    proto.descriptor.file.CopyToProto(out)
    for message in out.message_type:  # options the pool keeps as written are compared by their fields above
        for f in message.field:
            f.ClearField("json_name")
    return out


def test_proto_text_parses_as_protoc_compiles() -> None:
    from connect_magics.converters.proto_text import parse_proto

    parsed = parse_proto(PROTO_TEXT, "t.proto")
    assert _resolved(parsed) == _resolved(expected_text_file())
    assert parsed.message_type[0].field[0].json_name == "ID"
    schema = ProtobufData().to_connect_schema(ProtobufSchema(parsed, "shop.v1.Order"))
    assert [f.name for f in schema.fields] == ["pick_0", "id", "codes", "my_items", "note", "at", "kind"]
    assert schema.field("my_items").schema.name == "my_items"


@pytest.mark.parametrize("text, message", [
    ('syntax = "proto2"; message A { optional group G = 1 { } }', "groups are not supported"),
    ('syntax = "proto3";\nmessage A {\n  int32 a 1;\n}', "line 3: expected '='"),
    ('edition = "2023";', "editions"),
    ('syntax = "proto3"; message A { int32 a = 1; ', "unexpected end"),
])
def test_proto_text_errors(text: str, message: str) -> None:
    from connect_magics.converters.proto_text import parse_proto

    with pytest.raises(DataException, match=message):
        parse_proto(text)


def test_union_members_without_tags_take_free_tags() -> None:
    union = SchemaBuilder.struct().name(PROTOBUF_TYPE_UNION_PREFIX + "either").field("s", OPTIONAL_STRING_SCHEMA) \
        .field("n", OPTIONAL_INT32_SCHEMA).optional().build()
    schema = SchemaBuilder.struct().name("U").field("either", union).field("after", INT32_SCHEMA).build()
    data = ProtobufData()
    proto = data.from_connect_schema(schema)
    assert fields(proto) == [("s", 3, "string"), ("n", 4, "int32"), ("after", 2, "int32")]
    value = Struct(schema).put("either", Struct(union).put("n", 5)).put("after", 1)
    message = data.from_connect_data(schema, value)
    assert message.WhichOneof("either") == "n" and message.n == 5
    with pytest.raises(DataException, match=r"U\.either: Cannot find non-null field"):
        data.from_connect_data(schema, Struct(schema).put("either", Struct(union)).put("after", 1))
