"""ProtobufConverter against a real Schema Registry, with confluent-kafka's own ``ProtobufSerializer`` and
``ProtobufDeserializer`` as the oracle both ways.

The message classes the oracle uses are built here from file descriptors written by hand: what a ``.proto`` file
compiled by protoc gives (for messages the oracle writes), and what Confluent's ``ProtobufData`` makes of a
Connect schema (for messages the converter writes; the registered schema must equal it)."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.common.protobuf import _init_pool
from confluent_kafka.schema_registry.confluent import meta_pb2
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass

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
from connect_magics.converters import ProtobufConverter
from connect_magics.converters.protobuf import decode_registered_schema

pytestmark = [pytest.mark.registry]

F = descriptor_pb2.FieldDescriptorProto
TAG = "io.confluent.connect.protobuf.Tag"
ENUM = "io.confluent.connect.protobuf.Enum"
UNION = "io.confluent.connect.protobuf.Union."


# ------------------------------------------------------------------------------------------------ helpers

def field(message: descriptor_pb2.DescriptorProto, name: str, number: int, kind: int, type_name: str = "",
          repeated: bool = False, meta: dict[str, str] | None = None, oneof: int | None = None,
          proto3_optional: bool = False) -> None:
    f = message.field.add(name=name, number=number, type=kind,  # type: ignore[arg-type]
                          label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
    if type_name:
        f.type_name = type_name
    if meta:
        for key, value in meta.items():
            f.options.Extensions[meta_pb2.field_meta].params[key] = value
    if oneof is not None:
        f.oneof_index = oneof
    if proto3_optional:
        f.proto3_optional = True


def message_class(file: descriptor_pb2.FileDescriptorProto, name: str) -> Any:
    pool = DescriptorPool()
    _init_pool(pool)
    pool.Add(file)
    return GetMessageClass(pool.FindMessageTypeByName(name))


def registry_client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url})


def oracle_write(url: str, cls: Any, message: Any, topic: str) -> bytes:
    serializer = ProtobufSerializer(cls, registry_client(url), {"subject.name.strategy": topic_subject_name_strategy})
    return serializer(message, SerializationContext(topic, MessageField.VALUE))


def oracle_read(url: str, cls: Any, data: bytes, topic: str) -> Any:
    """``ProtobufDeserializer``'s message. It asks for the writer's schema with ``format=serialized``, which
    Apicurio answers with HTTP 500 for a schema registered as a descriptor (Confluent's registry gives the
    base64 back): the client's cache, which does not key on the format, is filled first with the schema as
    registered, the same text Confluent's registry would give."""
    client = registry_client(url)
    client.get_schema(int.from_bytes(data[1:5], "big"), f"{topic}-value")
    deserializer = ProtobufDeserializer(cls, {"subject.name.strategy": topic_subject_name_strategy}, client)
    return deserializer(data, SerializationContext(topic, MessageField.VALUE))


def converter(url: str, **settings: Any) -> ProtobufConverter:
    c = ProtobufConverter()
    c.configure({"schema.registry.url": url, **{k.replace("_", "."): v for k, v in settings.items()}}, False)
    return c


def registered_file(url: str, data: bytes) -> descriptor_pb2.FileDescriptorProto:
    schema = registry_client(url).get_schema(int.from_bytes(data[1:5], "big"))
    file = decode_registered_schema(schema.schema_str)
    assert file is not None
    return file


@pytest.fixture
def url(schema_registry: Any) -> str:
    return schema_registry.url


@pytest.fixture
def topic() -> str:
    return "pb-" + uuid.uuid4().hex


# ------------------------------------------------------------------------- oracle writes, the converter reads

def compiled_order_file() -> descriptor_pb2.FileDescriptorProto:
    """What protoc gives for::

        syntax = "proto3"; package oracle;
        message Order {
          int64 id = 1; int32 i32 = 2; int32 small = 3 [(confluent.field_meta).params = {key: "connect.type",
          value: "int8"}]; float f = 4; double d = 5; bool b = 6; string s = 7; bytes raw = 8;
          repeated string names = 9; repeated Line lines = 10; map<string, int64> counts = 11; Line line = 12;
          google.protobuf.Timestamp ts = 13; google.type.Date day = 14; google.type.TimeOfDay at = 15;
          confluent.type.Decimal amount = 16 [(confluent.field_meta).params = {key: "scale", value: "2"}];
          optional string note = 17; google.protobuf.StringValue maybe = 18; Status status = 19;
          oneof choice { string text = 20; int32 number = 21; }
          sint32 zig = 22; uint32 u32 = 23; fixed64 f64 = 24;
          message Line { string sku = 1; int32 qty = 2; }
          enum Status { NEW = 0; SHIPPED = 1; }
        }
    """
    file = descriptor_pb2.FileDescriptorProto(name="oracle/order.proto", package="oracle", syntax="proto3")
    file.dependency.extend(["google/protobuf/timestamp.proto", "google/type/date.proto", "google/type/timeofday.proto",
                            "confluent/type/decimal.proto", "google/protobuf/wrappers.proto", "confluent/meta.proto"])
    order = file.message_type.add(name="Order")
    line = order.nested_type.add(name="Line")
    field(line, "sku", 1, F.TYPE_STRING)
    field(line, "qty", 2, F.TYPE_INT32)
    entry = order.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_STRING)
    field(entry, "value", 2, F.TYPE_INT64)
    status = order.enum_type.add(name="Status")
    status.value.add(name="NEW", number=0)
    status.value.add(name="SHIPPED", number=1)
    order.oneof_decl.add(name="choice")
    order.oneof_decl.add(name="_note")
    field(order, "id", 1, F.TYPE_INT64)
    field(order, "i32", 2, F.TYPE_INT32)
    field(order, "small", 3, F.TYPE_INT32, meta={"connect.type": "int8"})
    field(order, "f", 4, F.TYPE_FLOAT)
    field(order, "d", 5, F.TYPE_DOUBLE)
    field(order, "b", 6, F.TYPE_BOOL)
    field(order, "s", 7, F.TYPE_STRING)
    field(order, "raw", 8, F.TYPE_BYTES)
    field(order, "names", 9, F.TYPE_STRING, repeated=True)
    field(order, "lines", 10, F.TYPE_MESSAGE, ".oracle.Order.Line", repeated=True)
    field(order, "counts", 11, F.TYPE_MESSAGE, ".oracle.Order.CountsEntry", repeated=True)
    field(order, "line", 12, F.TYPE_MESSAGE, ".oracle.Order.Line")
    field(order, "ts", 13, F.TYPE_MESSAGE, ".google.protobuf.Timestamp")
    field(order, "day", 14, F.TYPE_MESSAGE, ".google.type.Date")
    field(order, "at", 15, F.TYPE_MESSAGE, ".google.type.TimeOfDay")
    field(order, "amount", 16, F.TYPE_MESSAGE, ".confluent.type.Decimal", meta={"scale": "2"})
    field(order, "note", 17, F.TYPE_STRING, oneof=1, proto3_optional=True)
    field(order, "maybe", 18, F.TYPE_MESSAGE, ".google.protobuf.StringValue")
    field(order, "status", 19, F.TYPE_ENUM, ".oracle.Order.Status")
    field(order, "text", 20, F.TYPE_STRING, oneof=0)
    field(order, "number", 21, F.TYPE_INT32, oneof=0)
    field(order, "zig", 22, F.TYPE_SINT32)
    field(order, "u32", 23, F.TYPE_UINT32)
    field(order, "f64", 24, F.TYPE_FIXED64)
    return file


def expected_order_schema(wrappers: bool = False, version: int = 1) -> Schema:
    """The Connect schema Confluent's ProtobufData gives ``oracle.Order`` (defaults; ``wrappers``: with
    ``wrapper.for.nullables``, where plain proto3 fields are required and wrapper messages optional)."""

    def opt(builder: SchemaBuilder, tag: int, required: bool = False) -> Schema:
        if not required:
            builder.optional()
        return builder.parameter(TAG, str(tag)).build()

    plain = wrappers  # plain scalars are required under wrapper.for.nullables
    line = SchemaBuilder.struct().name("Line").field("sku", opt(SchemaBuilder.string(), 1, plain)) \
        .field("qty", opt(SchemaBuilder.int32(), 2, plain)).optional().build()
    union = SchemaBuilder.struct().name(UNION + "choice") \
        .field("text", opt(SchemaBuilder.string(), 20)).field("number", opt(SchemaBuilder.int32(), 21)).optional()
    status = SchemaBuilder.string().name("Status").parameter(ENUM, "Status").parameter(f"{ENUM}.NEW", "0") \
        .parameter(f"{ENUM}.SHIPPED", "1").optional()
    maybe = opt(SchemaBuilder.string(), 18)  # wrapper.for.raw.primitives unwraps wrapper messages at any depth
    counts = SchemaBuilder.map(opt(SchemaBuilder.string(), 1, plain), opt(SchemaBuilder.int64(), 2, plain)) \
        .name("counts").optional()
    return (SchemaBuilder.struct().name("Order").version(version)
            .field("choice_0", union.build())
            .field("id", opt(SchemaBuilder.int64(), 1, plain))
            .field("i32", opt(SchemaBuilder.int32(), 2, plain))
            .field("small", opt(SchemaBuilder.int8(), 3, plain))
            .field("f", opt(SchemaBuilder.float32(), 4, plain))
            .field("d", opt(SchemaBuilder.float64(), 5, plain))
            .field("b", opt(SchemaBuilder.boolean(), 6, plain))
            .field("s", opt(SchemaBuilder.string(), 7, plain))
            .field("raw", opt(SchemaBuilder.bytes(), 8, plain))
            .field("names", opt(SchemaBuilder.array(OPTIONAL_STRING_SCHEMA), 9))  # arrays: always optional
            .field("lines", opt(SchemaBuilder.array(line), 10))
            .field("counts", opt(counts, 11))
            .field("line", opt(_rebuild(line), 12))
            .field("ts", opt(Timestamp.builder().optional(), 13))
            .field("day", opt(Date.builder().optional(), 14))
            .field("at", opt(Time.builder().optional(), 15))
            .field("amount", opt(Decimal.builder(2).optional(), 16))
            .field("note", opt(SchemaBuilder.string(), 17, plain))  # proto3 optional counts under optional.for.nullables
            .field("maybe", maybe)
            .field("status", opt(status, 19))
            .field("zig", opt(SchemaBuilder.int32().parameter("io.confluent.connect.protobuf.Type", "sint32"), 22,
                              plain))
            .field("u32", opt(SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "uint32"), 23,
                              plain))
            .field("f64", opt(SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "fixed64"), 24,
                              plain))
            .build())


def _rebuild(struct_schema: Schema) -> SchemaBuilder:
    builder = SchemaBuilder.struct().name(struct_schema.name or "")
    for f in struct_schema.fields:
        builder.field(f.name, f.schema)
    return builder


def full_order(cls: Any) -> Any:
    m = cls(id=-7, i32=2**31 - 1, small=-5, f=1.5, d=-2.25, b=True, s="héllo", raw=b"\x00\xff", names=["a", "b"],
            note="n", status=1, number=42, zig=-3, u32=2**32 - 1, f64=2**64 - 1)
    m.lines.add(sku="x", qty=1)
    m.lines.add(sku="y", qty=2)
    m.counts["k"] = 2**40
    m.line.sku, m.line.qty = "z", 3
    m.ts.seconds, m.ts.nanos = 1_700_000_000, 123_000_000
    m.day.year, m.day.month, m.day.day = 2024, 2, 29
    m.at.hours, m.at.minutes, m.at.seconds, m.at.nanos = 13, 14, 15, 16_000_000
    m.amount.value, m.amount.precision, m.amount.scale = (12345).to_bytes(2, "big", signed=True), 5, 2
    m.maybe.value = "wrapped"
    return m


def test_reads_every_type_the_oracle_writes(url: str, topic: str) -> None:
    cls = message_class(compiled_order_file(), "oracle.Order")
    data = oracle_write(url, cls, full_order(cls), topic)
    schema, value = converter(url).to_connect_data(topic, data)
    assert schema == expected_order_schema()
    assert value == expected_order_value(schema)


def expected_order_value(schema: Schema) -> Struct:
    """The Connect value of :func:`full_order`."""
    line = schema.field("line").schema
    lines_item = schema.field("lines").schema.value_schema
    return Struct.of(schema, [
        Struct(schema.field("choice_0").schema).put("number", 42),
        -7, 2**31 - 1, -5, 1.5, -2.25, True, "héllo", b"\x00\xff", ["a", "b"],
        [Struct(lines_item).put("sku", "x").put("qty", 1), Struct(lines_item).put("sku", "y").put("qty", 2)],
        {"k": 2**40}, Struct(line).put("sku", "z").put("qty", 3),
        dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc), dt.date(2024, 2, 29),
        dt.time(13, 14, 15, 16000), decimal.Decimal("123.45"), "n",
        "wrapped", "SHIPPED", -3, 2**32 - 1, -1,
    ])


ORDER_PROTO = """syntax = "proto3";
package oracle;

import "google/protobuf/timestamp.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
import "confluent/type/decimal.proto";
import "google/protobuf/wrappers.proto";
import "confluent/meta.proto";

message Order {
  int64 id = 1;
  int32 i32 = 2;
  int32 small = 3 [(confluent.field_meta) = {
    params: [
      {
        key: "connect.type",
        value: "int8"
      }
    ]
  }];
  float f = 4;
  double d = 5;
  bool b = 6;
  string s = 7;
  bytes raw = 8;
  repeated string names = 9;
  repeated Line lines = 10;
  map<string, int64> counts = 11;
  .oracle.Order.Line line = 12;
  google.protobuf.Timestamp ts = 13;
  google.type.Date day = 14;
  google.type.TimeOfDay at = 15;
  confluent.type.Decimal amount = 16 [(confluent.field_meta).params = { key: "scale" value: "2" }];
  optional string note = 17;
  google.protobuf.StringValue maybe = 18;
  Status status = 19;
  oneof choice {
    string text = 20;
    int32 number = 21;
  }
  sint32 zig = 22;
  uint32 u32 = 23;
  fixed64 f64 = 24;

  message Line {
    string sku = 1;
    int32 qty = 2;
  }
  enum Status {
    NEW = 0;
    SHIPPED = 1;
  }
}
"""


def test_reads_a_schema_registered_as_proto_text(url: str, topic: str) -> None:
    """Confluent's Java serializers register .proto source; the message bytes are the same."""
    from confluent_kafka.schema_registry import Schema as RegistrySchema

    schema_id = registry_client(url).register_schema(f"{topic}-value", RegistrySchema(ORDER_PROTO, "PROTOBUF"))
    cls = message_class(compiled_order_file(), "oracle.Order")
    data = schema_id.to_bytes(4, "big").rjust(5, b"\x00") + b"\x00" + full_order(cls).SerializeToString()
    schema, value = converter(url).to_connect_data(topic, data)
    assert schema == expected_order_schema()
    assert value == expected_order_value(schema)


def test_reads_unset_fields_as_the_oracle_leaves_them(url: str, topic: str) -> None:
    """Plain proto3 scalars read as their defaults, unset messages, proto3 optionals and oneofs as null."""
    cls = message_class(compiled_order_file(), "oracle.Order")
    schema, value = converter(url).to_connect_data(topic, oracle_write(url, cls, cls(), topic))
    assert value.get("id") == 0 and value.get("s") == "" and value.get("names") == [] and value.get("counts") == {}
    assert value.get("status") == "NEW"
    for name in ("choice_0", "line", "ts", "day", "at", "amount", "note", "maybe"):
        assert value.get(name) is None, name


def test_reads_wrappers_as_optional_primitives(url: str, topic: str) -> None:
    cls = message_class(compiled_order_file(), "oracle.Order")
    data = oracle_write(url, cls, full_order(cls), topic)
    schema, value = converter(url, wrapper_for_nullables=True).to_connect_data(topic, data)
    assert schema == expected_order_schema(wrappers=True)
    assert value.get("maybe") == "wrapped" and value.get("id") == -7
    _, empty = converter(url, wrapper_for_nullables=True).to_connect_data(topic, oracle_write(url, cls, cls(), topic))
    assert empty.get("maybe") is None and empty.get("id") == 0


def test_reads_a_nested_message_by_its_message_indexes(url: str, topic: str) -> None:
    """A message nested in the registered file: Confluent's message indexes [0, 0] select oracle.Order.Line."""
    line_cls = message_class(compiled_order_file(), "oracle.Order.Line")
    data = oracle_write(url, line_cls, line_cls(sku="q", qty=9), topic)
    assert data[5:8] == b"\x04\x00\x00"  # two indexes, 0 and 0, zig-zag
    schema, value = converter(url).to_connect_data(topic, data)
    assert schema.name == "Line" and value.get("sku") == "q" and value.get("qty") == 9


def test_reads_a_raw_primitive_wrapper(url: str, topic: str) -> None:
    from google.protobuf import wrappers_pb2

    data = oracle_write(url, wrappers_pb2.StringValue, wrappers_pb2.StringValue(value="plain"), topic)
    schema, value = converter(url).to_connect_data(topic, data)
    assert (schema.type.name, schema.optional, value) == ("STRING", False, "plain")


# ------------------------------------------------------------------------- the converter writes, oracle reads

LINE = SchemaBuilder.struct().name("oracle.Line").field("sku", STRING_SCHEMA).field("qty", INT32_SCHEMA).build()


def connect_order_schema() -> Schema:
    return (SchemaBuilder.struct().name("oracle.Order2")
            .field("id", INT64_SCHEMA).field("i8", INT8_SCHEMA).field("i16", INT16_SCHEMA).field("i32", INT32_SCHEMA)
            .field("f", FLOAT32_SCHEMA).field("d", FLOAT64_SCHEMA).field("b", BOOLEAN_SCHEMA)
            .field("s", STRING_SCHEMA).field("raw", BYTES_SCHEMA)
            .field("note", OPTIONAL_STRING_SCHEMA).field("score", OPTIONAL_FLOAT64_SCHEMA)
            .field("names", SchemaBuilder.array(STRING_SCHEMA).build())
            .field("lines", SchemaBuilder.array(LINE).build())
            .field("counts", SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build())
            .field("by_id", SchemaBuilder.map(INT32_SCHEMA, LINE).build())
            .field("line", LINE)
            .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "9").build())
            .field("day", Date.SCHEMA).field("at", Time.SCHEMA).field("ts", Timestamp.SCHEMA)
            .build())


def connect_order(schema: Schema) -> Struct:
    def line(sku: str, qty: int) -> Struct:
        return Struct(LINE).put("sku", sku).put("qty", qty)
    return (Struct(schema).put("id", 2**40).put("i8", -8).put("i16", 300).put("i32", -(2**31)).put("f", 0.5)
            .put("d", 1e100).put("b", True).put("s", "ß").put("raw", b"\x01\x02").put("note", "n")
            .put("names", ["a", "b"]).put("lines", [line("x", 1), line("y", 2)]).put("counts", {"k": -1, "j": 2})
            .put("by_id", {7: line("z", 3)}).put("line", line("w", 4)).put("amount", decimal.Decimal("-1234567.89"))
            .put("day", dt.date(1969, 12, 31)).put("at", dt.time(23, 59, 59, 999000))
            .put("ts", dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.timezone.utc)))


def expected_order2_file(optional: str = "plain") -> descriptor_pb2.FileDescriptorProto:
    """What Confluent's ProtobufData makes of :func:`connect_order_schema` (``optional``: ``plain``, ``optional``
    for optional.for.nullables, ``wrapper`` for wrapper.for.nullables)."""
    file = descriptor_pb2.FileDescriptorProto(name="default", package="oracle", syntax="proto3")
    order = file.message_type.add(name="Order2")
    field(order, "id", 1, F.TYPE_INT64)
    field(order, "i8", 2, F.TYPE_INT32, meta={"connect.type": "int8"})
    field(order, "i16", 3, F.TYPE_INT32, meta={"connect.type": "int16"})
    field(order, "i32", 4, F.TYPE_INT32)
    field(order, "f", 5, F.TYPE_FLOAT)
    field(order, "d", 6, F.TYPE_DOUBLE)
    field(order, "b", 7, F.TYPE_BOOL)
    field(order, "s", 8, F.TYPE_STRING)
    field(order, "raw", 9, F.TYPE_BYTES)
    if optional == "wrapper":
        field(order, "note", 10, F.TYPE_MESSAGE, ".google.protobuf.StringValue")
        field(order, "score", 11, F.TYPE_MESSAGE, ".google.protobuf.DoubleValue")
    else:
        field(order, "note", 10, F.TYPE_STRING, proto3_optional=optional == "optional",
              oneof=0 if optional == "optional" else None)
        field(order, "score", 11, F.TYPE_DOUBLE, proto3_optional=optional == "optional",
              oneof=1 if optional == "optional" else None)
    field(order, "names", 12, F.TYPE_STRING, repeated=True)
    field(order, "lines", 13, F.TYPE_MESSAGE, ".oracle.Order2.Line", repeated=True)
    field(order, "counts", 14, F.TYPE_MESSAGE, ".oracle.Order2.ConnectDefault1Entry", repeated=True)
    field(order, "by_id", 15, F.TYPE_MESSAGE, ".oracle.Order2.ConnectDefault2Entry", repeated=True)
    field(order, "line", 16, F.TYPE_MESSAGE, ".oracle.Order2.Line")
    field(order, "amount", 17, F.TYPE_MESSAGE, ".confluent.type.Decimal", meta={"precision": "9", "scale": "2"})
    field(order, "day", 18, F.TYPE_MESSAGE, ".google.type.Date")
    field(order, "at", 19, F.TYPE_MESSAGE, ".google.type.TimeOfDay")
    field(order, "ts", 20, F.TYPE_MESSAGE, ".google.protobuf.Timestamp")
    line = order.nested_type.add(name="Line")
    field(line, "sku", 1, F.TYPE_STRING)
    field(line, "qty", 2, F.TYPE_INT32)
    counts = order.nested_type.add(name="ConnectDefault1Entry")
    field(counts, "key", 1, F.TYPE_STRING)
    field(counts, "value", 2, F.TYPE_INT64)
    by_id = order.nested_type.add(name="ConnectDefault2Entry")
    field(by_id, "key", 1, F.TYPE_INT32)
    field(by_id, "value", 2, F.TYPE_MESSAGE, ".oracle.Order2.ConnectDefault2Entry.Line")
    entry_line = by_id.nested_type.add(name="Line")  # Confluent defines a struct again inside each map entry
    field(entry_line, "sku", 1, F.TYPE_STRING)
    field(entry_line, "qty", 2, F.TYPE_INT32)
    if optional == "optional":
        order.oneof_decl.add(name="_note")
        order.oneof_decl.add(name="_score")
    imports = ["confluent/meta.proto"] + (["google/protobuf/wrappers.proto"] if optional == "wrapper" else [])
    imports += ["confluent/type/decimal.proto", "google/type/date.proto", "google/type/timeofday.proto",
                "google/protobuf/timestamp.proto"]
    file.dependency.extend(imports)
    return file


def expected_order2(cls: Any, optional: str = "plain") -> Any:
    m = cls(id=2**40, i8=-8, i16=300, i32=-(2**31), f=0.5, d=1e100, b=True, s="ß", raw=b"\x01\x02",
            names=["a", "b"])
    if optional == "wrapper":
        m.note.value = "n"
    else:
        m.note = "n"
    m.lines.add(sku="x", qty=1)
    m.lines.add(sku="y", qty=2)
    m.counts.add(key="k", value=-1)
    m.counts.add(key="j", value=2)
    entry = m.by_id.add(key=7)
    entry.value.sku, entry.value.qty = "z", 3
    m.line.sku, m.line.qty = "w", 4
    m.amount.value, m.amount.precision, m.amount.scale = (-123456789).to_bytes(4, "big", signed=True), 9, 2
    m.day.year, m.day.month, m.day.day = 1969, 12, 31
    m.at.hours, m.at.minutes, m.at.seconds, m.at.nanos = 23, 59, 59, 999_000_000
    m.ts.seconds, m.ts.nanos = -1, 999_000_000
    return m


@pytest.mark.parametrize("optional", ["plain", "optional", "wrapper"])
def test_the_oracle_reads_every_type_the_converter_writes(url: str, topic: str, optional: str) -> None:
    settings = {"plain": {}, "optional": {"optional_for_nullables": True},
                "wrapper": {"wrapper_for_nullables": True}}[optional]
    schema = connect_order_schema()
    data = converter(url, **settings).from_connect_data(topic, schema, connect_order(schema))
    assert data[5] == 0  # the first message: the single 0 byte
    expected = expected_order2_file(optional)
    assert registered_file(url, data) == expected
    cls = message_class(expected, "oracle.Order2")
    assert oracle_read(url, cls, data, topic) == expected_order2(cls, optional)


@pytest.mark.parametrize("optional", ["plain", "optional", "wrapper"])
def test_nulls_the_converter_writes_are_unset_for_the_oracle(url: str, topic: str, optional: str) -> None:
    settings = {"plain": {}, "optional": {"optional_for_nullables": True},
                "wrapper": {"wrapper_for_nullables": True}}[optional]
    schema = connect_order_schema()
    value = connect_order(schema).put("note", None).put("score", None)
    data = converter(url, **settings).from_connect_data(topic, schema, value)
    cls = message_class(expected_order2_file(optional), "oracle.Order2")
    read = oracle_read(url, cls, data, topic)
    if optional == "plain":
        assert read.note == "" and read.score == 0.0
    else:
        assert not read.HasField("note") and not read.HasField("score")


@pytest.mark.parametrize("optional", ["plain", "optional", "wrapper"])
def test_round_trip_through_the_registry(url: str, topic: str, optional: str) -> None:
    """What the converter writes it reads back with the schema ProtobufData gives the registered one."""
    settings = {"plain": {}, "optional": {"optional_for_nullables": True},
                "wrapper": {"wrapper_for_nullables": True}}[optional]
    schema = connect_order_schema()
    c = converter(url, **settings)
    read_schema, value = c.to_connect_data(topic, c.from_connect_data(topic, schema, connect_order(schema)))
    assert read_schema.name == "Order2" and read_schema.version == 1
    assert [f.name for f in read_schema.fields] == [f.name for f in schema.fields]
    for f in schema.fields:
        want = connect_order(schema).get(f)
        got = value.get(f.name)
        if f.schema.type.name == "STRUCT":
            assert [got.get(g.name) for g in got.schema.fields] == [want.get(g) for g in f.schema.fields], f.name
        elif f.name == "lines":
            assert [(x.get("sku"), x.get("qty")) for x in got] == [(x.get("sku"), x.get("qty")) for x in want]
        elif f.name == "by_id":
            assert {k: (x.get("sku"), x.get("qty")) for k, x in got.items()} == {7: ("z", 3)}
        elif f.name == "score" and optional == "plain":
            assert got == 0.0  # a plain proto3 field: unset reads as its default
        else:
            assert got == want, f.name
    assert read_schema.field("i8").schema.type.name == "INT8" and read_schema.field("i16").schema.type.name == "INT16"
    assert read_schema.field("amount").schema.parameters == {"scale": "2", "connect.decimal.precision": "9", TAG: "17"}
    note = read_schema.field("note").schema
    assert note.optional and note.type.name == "STRING"
    if optional != "plain":  # the non-null fields come back required, as Confluent reads them
        assert not read_schema.field("id").schema.optional


def test_a_raw_primitive_is_written_as_the_oracle_writes_its_wrapper(url: str, topic: str) -> None:
    """A primitive at the root is its wrapper message, registered as the serializer registers it: the file
    google/protobuf/wrappers.proto, message indexes selecting the wrapper. (confluent-kafka's deserializer cannot
    read that file back, its own or ours: it adds it to a pool that already has it.)"""
    from google.protobuf import wrappers_pb2

    c = converter(url)
    data = c.from_connect_data(topic, STRING_SCHEMA, "solo")
    other = "pb-" + uuid.uuid4().hex
    theirs = oracle_write(url, wrappers_pb2.StringValue, wrappers_pb2.StringValue(value="solo"), other)
    assert data[5:] == theirs[5:] and registered_file(url, data) == registered_file(url, theirs)
    assert c.to_connect_data(topic, data) == (Schema(STRING_SCHEMA.type, version=1), "solo")
    data = c.from_connect_data(topic + "-i", OPTIONAL_INT32_SCHEMA, 5)
    assert data[5:7] == b"\x02\x08"  # one index, 4: Int32Value is the file's fifth message
    assert wrappers_pb2.Int32Value.FromString(data[7:]).value == 5


def test_unions_and_enums_round_trip_to_the_oracle(url: str, topic: str) -> None:
    """A Connect schema read from a oneof and an enum writes them back as the oracle's message has them (with
    wrapper.for.nullables: without it, Confluent reads the StringValue field as a string and writes a string)."""
    cls = message_class(compiled_order_file(), "oracle.Order")
    c = converter(url, wrapper_for_nullables=True)
    schema, value = c.to_connect_data(topic, oracle_write(url, cls, full_order(cls), topic))
    other = "pb-" + uuid.uuid4().hex
    data = c.from_connect_data(other, schema, value)
    back = oracle_read(url, cls, data, other)
    original = full_order(cls)
    assert back.number == 42 and back.WhichOneof("choice") == "number" and back.status == 1
    assert back.lines == original.lines and back.line == original.line and back.ts == original.ts
    assert dict(back.counts) == dict(original.counts) and back.amount == original.amount
    assert back.maybe.value == "wrapped" and back.day == original.day and back.at == original.at
    assert (back.zig, back.u32, back.f64) == (-3, 2**32 - 1, 2**64 - 1)


def test_schemas_are_registered_once_and_cached(url: str, topic: str) -> None:
    schema = connect_order_schema()
    c = converter(url)
    first = c.from_connect_data(topic, schema, connect_order(schema))
    second = c.from_connect_data(topic, schema, connect_order(schema))
    assert first[:6] == second[:6] and len(c.registry.ids) == 1


def test_bad_values_name_the_field(url: str, topic: str) -> None:
    schema = connect_order_schema()
    value = connect_order(schema)
    value._values[schema.field("line").index] = Struct.of(LINE, ["x", "not an int"])  # as an unchecked source
    with pytest.raises(DataException, match=r"line\.qty"):
        converter(url).from_connect_data(topic, schema, value)


def test_a_converter_survives_pickling(url: str, topic: str) -> None:
    import pickle

    schema = connect_order_schema()
    c = converter(url)
    data = c.from_connect_data(topic, schema, connect_order(schema))
    c.to_connect_data(topic, data)
    copy = pickle.loads(pickle.dumps(c))
    assert copy.from_connect_data(topic, schema, connect_order(schema)) == data
    assert copy.to_connect_data(topic, data) == c.to_connect_data(topic, data)


def test_use_latest_version_writes_with_the_subjects_schema(url: str, topic: str) -> None:
    """With ``use.latest.version`` the converter writes the Connect value into the subject's latest schema
    (here the oracle's, with a real ``map<>`` field), by field names."""
    cls = message_class(compiled_order_file(), "oracle.Order")
    first = oracle_write(url, cls, full_order(cls), topic)
    schema, value = converter(url, wrapper_for_nullables=True).to_connect_data(topic, first)
    c = converter(url, wrapper_for_nullables=True, auto_register_schemas=False, use_latest_version=True)
    data = c.from_connect_data(topic, schema, value)
    assert data[:6] == first[:6]  # the oracle's schema id, the first message
    assert oracle_read(url, cls, data, topic) == full_order(cls)


def test_record_name_strategy_names_the_subject_after_the_message(url: str, topic: str) -> None:
    package = "k" + uuid.uuid4().hex
    schema = SchemaBuilder.struct().name(f"{package}.Key").field("id", INT64_SCHEMA).build()
    c = ProtobufConverter()
    c.configure({"schema.registry.url": url,
                 "key.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, True)
    data = c.from_connect_data(topic, schema, Struct(schema).put("id", 3))
    latest = registry_client(url).get_latest_version(f"{package}.Key")
    assert latest.schema_id == int.from_bytes(data[1:5], "big")
    read_schema, value = c.to_connect_data(topic, data)
    assert read_schema.name == "Key" and read_schema.version == 1 and value.get("id") == 3


def test_a_refused_schema_names_the_subject(url: str, topic: str) -> None:
    c = converter(url, auto_register_schemas=False)
    with pytest.raises(DataException, match=f"{topic}-value"):
        c.from_connect_data(topic, connect_order_schema(), connect_order(connect_order_schema()))


def test_bytes_that_are_not_confluents_wire_format(url: str, topic: str) -> None:
    with pytest.raises(DataException, match="Unknown magic byte"):
        converter(url).to_connect_data(topic, b"\x01\x00\x00\x00\x01\x00")


# ------------------------------------------------------------------------------------ through a running worker

class OrdersSourceTask:
    """Writes ten ``oracle.Order2`` structs (see :func:`connect_order_schema`), then nothing."""

    def version(self) -> str:
        return "1"

    def initialize(self, context: Any) -> None:
        self.context = context

    def start(self, props: dict[str, str]) -> None:
        self.topic, self.done = props["topic"], False

    def poll(self) -> Any:
        import time

        from connect_magics.api.records import SourceRecord

        if self.done:
            time.sleep(0.1)
            return None
        self.done = True
        schema = connect_order_schema()
        return [SourceRecord({"p": 0}, {"n": n}, self.topic, 0, value_schema=schema,
                             value=connect_order(schema).put("id", n)) for n in range(10)]

    def commit(self) -> None:
        pass

    def commit_record(self, record: Any, metadata: Any) -> None:
        pass

    def stop(self) -> None:
        pass


def test_a_worker_writes_and_reads_protobuf_under_confluents_class_name(url: str, bootstrap: str,
                                                                          unique: str) -> None:
    """value.converter=io.confluent.connect.protobuf.ProtobufConverter with its settings under the
    value.converter. prefix: a source's records are the oracle's messages, a sink reads them back."""
    from confluent_kafka import Consumer
    from helpers import one_task_connector, wait_until

    from connect_magics import ConnectRuntime
    from connect_magics.api import SourceConnector, SourceTask
    from connect_magics.connectors import verifying

    task = type("OrdersSourceTask", (OrdersSourceTask, SourceTask), {"__module__": __name__})
    source = one_task_connector("OrdersSource", SourceConnector, task)
    topic = f"orders-{unique}"
    protobuf = {"value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
                "value.converter.schema.registry.url": url, "key.converter":
                "org.apache.kafka.connect.storage.StringConverter"}
    with ConnectRuntime(bootstrap, f"pb-{unique}", {"offset.flush.interval.ms": "200"}) as rt:
        rt.plugins.register(source)
        rt.create_connector(f"src-{unique}", {"connector.class": "OrdersSource", "topic": topic,
                                              "topic.creation.default.replication.factor": "1",
                                              "topic.creation.default.partitions": "1", **protobuf})
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"oracle-{unique}",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        got: list[Any] = []

        def ten() -> bool:
            got.extend(m for m in consumer.consume(20, timeout=0.2) if not m.error())
            return len(got) >= 10
        try:
            wait_until(ten, 60, message="ten records from the source")
        finally:
            consumer.close()
        cls = message_class(expected_order2_file(), "oracle.Order2")
        read = [oracle_read(url, cls, m.value(), topic) for m in got]
        assert [m.id for m in read] == list(range(10))
        expected = expected_order2(cls)
        expected.id = 3
        assert read[3] == expected

        rt.create_connector(f"sink-{unique}", {"connector.class": "VerifyingSink", "topics": topic, **protobuf})
        wait_until(lambda: len(verifying.received(f"sink-{unique}")) >= 10, 60, message="the sink's ten records")
        records = verifying.received(f"sink-{unique}")
        assert sorted(r.value.get("id") for r in records) == list(range(10))
        assert records[0].value_schema.name == "Order2" and records[0].value_schema.version == 1
