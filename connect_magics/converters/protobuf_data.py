"""Connect schemas and values to Protobuf schemas and messages and back, as Confluent's ``ProtobufData`` maps them.

A Protobuf schema here is a :class:`ProtobufSchema`: a ``FileDescriptorProto`` (the registry's "serialized"
form of a ``.proto`` file) and the full name of one of its messages, with the ``DescriptorPool`` and the
dynamic message class (``message_factory.GetMessageClass``) made on first use and never pickled.

The mapping is Confluent's: a struct is a message (named from the Connect schema's name, else
``ConnectDefault1``, ``ConnectDefault2``...; nested structs are nested messages), int8 and int16 are
``int32`` fields with ``confluent.field_meta`` ``connect.type`` parameters, arrays are ``repeated``, maps
are repeated ``...Entry`` messages with ``key`` and ``value``, Decimal is ``confluent.type.Decimal``, Date
``google.type.Date``, Time ``google.type.TimeOfDay``, Timestamp ``google.protobuf.Timestamp``; optional
fields are plain proto3 fields, proto3 ``optional`` fields (``optional.for.nullables``) or wrapper messages
(``wrapper.for.nullables``). Read back, every field schema carries its tag
(``io.confluent.connect.protobuf.Tag``), and a ``oneof`` is a struct named
``io.confluent.connect.protobuf.Union.NAME`` in the field ``NAME_INDEX``.

>>> from connect_magics.api.data import SchemaBuilder, INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Struct
>>> schema = SchemaBuilder.struct().name("shop.Order").field("id", INT64_SCHEMA) \\
...     .field("note", OPTIONAL_STRING_SCHEMA).build()
>>> data = ProtobufData()
>>> proto = data.from_connect_schema(schema)
>>> proto.name, [(f.name, f.number) for f in proto.descriptor.fields]
('shop.Order', [('id', 1), ('note', 2)])
>>> message = data.from_connect_data(schema, Struct(schema).put("id", 7).put("note", "hi"))
>>> message.id, message.note
(7, 'hi')
>>> data.to_connect_data(data.to_connect_schema(proto), message).get("note")
'hi'
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, wrappers_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from connect_magics.api.data import (
    Date,
    Decimal,
    LRUCache,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
MAP_ENTRY_SUFFIX = "Entry"
KEY_FIELD = "key"
VALUE_FIELD = "value"
PROTOBUF_TYPE_ENUM = f"{NAMESPACE}.Enum"
PROTOBUF_TYPE_UNION = f"{NAMESPACE}.Union"
PROTOBUF_TYPE_UNION_PREFIX = PROTOBUF_TYPE_UNION + "."
PROTOBUF_TYPE_TAG = f"{NAMESPACE}.Tag"
PROTOBUF_TYPE_PROP = f"{NAMESPACE}.Type"
PROTOBUF_TYPE_WRAPPER = f"{NAMESPACE}.Wrapper"
GENERALIZED_TYPE_UNION = "org.apache.kafka.connect.data.Union"
GENERALIZED_TYPE_ENUM = "org.apache.kafka.connect.data.Enum"
CONNECT_PRECISION_PROP = "connect.decimal.precision"
CONNECT_TYPE_PROP = "connect.type"
PROTOBUF_PRECISION_PROP = "precision"
PROTOBUF_SCALE_PROP = "scale"

DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"
META_LOCATION = "confluent/meta.proto"
_LOCATIONS = {DECIMAL_TYPE: "confluent/type/decimal.proto", DATE_TYPE: "google/type/date.proto",
              TIME_TYPE: "google/type/timeofday.proto", TIMESTAMP_TYPE: "google/protobuf/timestamp.proto"}
_WRAPPER_LOCATION = "google/protobuf/wrappers.proto"
_WRAPPERS: dict[str, SchemaType] = {
    "google.protobuf.DoubleValue": SchemaType.FLOAT64, "google.protobuf.FloatValue": SchemaType.FLOAT32,
    "google.protobuf.Int64Value": SchemaType.INT64, "google.protobuf.UInt64Value": SchemaType.INT64,
    "google.protobuf.Int32Value": SchemaType.INT32, "google.protobuf.UInt32Value": SchemaType.INT64,
    "google.protobuf.BoolValue": SchemaType.BOOLEAN, "google.protobuf.StringValue": SchemaType.STRING,
    "google.protobuf.BytesValue": SchemaType.BYTES,
}
_WRAPPER_OF = {SchemaType.FLOAT64: "google.protobuf.DoubleValue", SchemaType.FLOAT32: "google.protobuf.FloatValue",
               SchemaType.INT8: "google.protobuf.Int32Value", SchemaType.INT16: "google.protobuf.Int32Value",
               SchemaType.INT32: "google.protobuf.Int32Value", SchemaType.INT64: "google.protobuf.Int64Value",
               SchemaType.BOOLEAN: "google.protobuf.BoolValue", SchemaType.STRING: "google.protobuf.StringValue",
               SchemaType.BYTES: "google.protobuf.BytesValue"}
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64,
            "int32": _F.TYPE_INT32, "fixed64": _F.TYPE_FIXED64, "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL,
            "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32,
            "sfixed32": _F.TYPE_SFIXED32, "sfixed64": _F.TYPE_SFIXED64, "sint32": _F.TYPE_SINT32,
            "sint64": _F.TYPE_SINT64}
_TYPE_NAMES = {number: name for name, number in _SCALARS.items()}
_INT32_TYPES = frozenset({_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32})
_INT64_TYPES = frozenset({_F.TYPE_UINT32, _F.TYPE_FIXED32, _F.TYPE_INT64, _F.TYPE_UINT64, _F.TYPE_SINT64,
                          _F.TYPE_FIXED64, _F.TYPE_SFIXED64})
_UNSIGNED_64 = frozenset({_F.TYPE_UINT64, _F.TYPE_FIXED64})
_VALID_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_NANOS_PER_MILLI = 1_000_000
_LOGICAL_NAMES = frozenset({Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME})


@dataclass(frozen=True)
class ProtobufDataConfig:
    """The settings of Confluent's ``ProtobufDataConfig`` (defaults are Confluent's).

    >>> ProtobufDataConfig().generate_index_for_unions
    True
    """

    enhanced_protobuf_schema_support: bool = False
    scrub_invalid_names: bool = False
    int_for_enums: bool = False
    optional_for_nullables: bool = False
    optional_for_proto2: bool = True
    wrapper_for_nullables: bool = False
    wrapper_for_raw_primitives: bool = True
    generate_struct_for_nulls: bool = False
    generate_index_for_unions: bool = True
    flatten_unions: bool = False
    generalized_sum_type_support: bool = False
    ignore_default_for_nullables: bool = False
    schemas_cache_size: int = 1000


def scrub_name(name: str) -> str:
    """Confluent's ``doScrubName``: letters, digits and ``_`` only, not starting with a digit or ``_``.

    >>> scrub_name("my-field"), scrub_name("1st"), scrub_name("ok_1")
    ('my_field', 'x1st', 'ok_1')
    """
    if not name or _VALID_NAME.match(name):
        return name
    encoded = urllib.parse.quote_plus(name, safe="*-._")
    if encoded[0].isdigit() or encoded[0] == "_":
        encoded = "x" + encoded
    return re.sub(r"[^A-Za-z0-9_]", "_", encoded)


def to_map_entry(name: str) -> str:
    """``ProtobufSchema.toMapEntry``: the entry message name of a map field (``my_tags`` -> ``MyTagsEntry``)."""
    if "_" in name:
        name = "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))
    return name + MAP_ENTRY_SUFFIX


def to_map_field(name: str) -> str:
    """``ProtobufSchema.toMapField``: the field name of a map entry message (``MyTagsEntry`` -> ``my_tags``)."""
    space, dot, last = name.rpartition(".")
    if last.endswith(MAP_ENTRY_SUFFIX):
        last = re.sub(r"(?<!^)([A-Z])", r"_\1", last[:-len(MAP_ENTRY_SUFFIX)]).lower()
    return space + dot + last


def _is_union(schema: Schema) -> bool:
    return schema.type is SchemaType.STRUCT and (
        (schema.name is not None and schema.name.startswith(PROTOBUF_TYPE_UNION))
        or GENERALIZED_TYPE_UNION in (schema.parameters or {}))


def _enum_param(schema: Schema) -> str | None:
    params = schema.parameters or {}
    if GENERALIZED_TYPE_ENUM in params:
        return GENERALIZED_TYPE_ENUM
    return PROTOBUF_TYPE_ENUM if PROTOBUF_TYPE_ENUM in params else None


# ------------------------------------------------------------------------------------------ ProtobufSchema

class ProtobufSchema:
    """A ``FileDescriptorProto`` (and the files it imports that are not well-known) and one message of it.

    The pool and message classes are made on first use and dropped when pickled.

    >>> from google.protobuf import timestamp_pb2
    >>> s = ProtobufSchema.of_descriptor(timestamp_pb2.Timestamp.DESCRIPTOR)
    >>> s.name, s.message_indexes, s.message_class()(seconds=3).seconds
    ('google.protobuf.Timestamp', [0], 3)
    """

    def __init__(self, file: descriptor_pb2.FileDescriptorProto | bytes, name: str,
                 dependencies: tuple[bytes, ...] = ()) -> None:
        self.serialized = file if isinstance(file, bytes) else file.SerializeToString()
        self.name = name
        self.dependencies = dependencies
        self._pool: DescriptorPool | None = None
        self._classes: dict[str, type] = {}
        self._text: str | None = None
        self._indexes: list[int] | None = None

    @classmethod
    def of_descriptor(cls, descriptor: Descriptor) -> ProtobufSchema:
        """The schema of a compiled or dynamic message type (its file)."""
        return cls(descriptor.file.serialized_pb, descriptor.full_name)

    def __getstate__(self) -> dict[str, Any]:
        return {"serialized": self.serialized, "name": self.name, "dependencies": self.dependencies}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["serialized"], state["name"], state["dependencies"])  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProtobufSchema) and (self.serialized, self.name, self.dependencies) == \
            (other.serialized, other.name, other.dependencies)

    def __hash__(self) -> int:
        return hash((self.serialized, self.name))

    def __repr__(self) -> str:
        return f"ProtobufSchema({self.name})"

    @property
    def file_proto(self) -> descriptor_pb2.FileDescriptorProto:
        return descriptor_pb2.FileDescriptorProto.FromString(self.serialized)

    @property
    def pool(self) -> DescriptorPool:
        if self._pool is None:
            from confluent_kafka.schema_registry.common.protobuf import _init_pool

            pool = DescriptorPool()
            _init_pool(pool)
            for serialized in (*self.dependencies, self.serialized):
                proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
                try:
                    pool.FindFileByName(proto.name)
                    continue  # a well-known file (a root wrapper type's wrappers.proto)
                except KeyError:
                    pass
                try:
                    pool.Add(proto)
                except (TypeError, ValueError) as e:
                    raise DataException(f"Invalid Protobuf schema {proto.name} ({self.name}): {e}") from None
            self._pool = pool
        return self._pool

    @property
    def descriptor(self) -> Descriptor:
        try:
            return self.pool.FindMessageTypeByName(self.name)
        except KeyError:
            raise DataException(f"Protobuf schema has no message {self.name}") from None

    def message_class(self, name: str | None = None) -> type:
        """The dynamic message class of ``name`` (default: this schema's message)."""
        name = name or self.name
        found = self._classes.get(name)
        if found is None:
            found = GetMessageClass(self.pool.FindMessageTypeByName(name))
            self._classes[name] = found
        return found

    @property
    def message_indexes(self) -> list[int]:
        """Confluent's message indexes of this schema's message in its file."""
        if self._indexes is None:
            from confluent_kafka.schema_registry.common.protobuf import _create_index_array

            self._indexes = _create_index_array(self.descriptor)
        return self._indexes

    def schema_text(self) -> str:
        """The schema as the registry stores it from confluent-kafka's serializer: the base64 of the file
        descriptor, type names resolved."""
        if self._text is None:
            self._text = base64.standard_b64encode(self.descriptor.file.serialized_pb).decode("ascii")
        return self._text


def message_name_at(file: descriptor_pb2.FileDescriptorProto, indexes: list[int]) -> str:
    """The full name of the message at Confluent's message ``indexes`` in ``file``.

    >>> f = descriptor_pb2.FileDescriptorProto(package="p")
    >>> f.message_type.add(name="A").nested_type.add(name="B").name
    'B'
    >>> message_name_at(f, [0, 0]), message_name_at(f, [0])
    ('p.A.B', 'p.A')
    """
    messages: Any = file.message_type
    path = [file.package] if file.package else []
    for index in indexes or [0]:
        if not 0 <= index < len(messages):
            raise DataException(f"Invalid message indexes {indexes}: the schema has {len(messages)} message(s) "
                                f"at that level")
        path.append(messages[index].name)
        messages = messages[index].nested_type
    return ".".join(path)


# ------------------------------------------------------------------------------------ schema: Connect -> Protobuf

class _FromConnect:
    """One conversion of a Connect schema to a file: the default-name counter, imports, nested names."""

    def __init__(self, config: ProtobufDataConfig) -> None:
        self.config = config
        self.name_index = 0
        self.imports: list[str] = []
        self.children: dict[int, set[str]] = {}

    def scrub(self, name: str) -> str:
        return scrub_name(name) if self.config.scrub_invalid_names else name

    def name_or_default(self, name: str | None) -> str:
        if name:
            return name
        self.name_index += 1
        return f"{DEFAULT_SCHEMA_NAME}{self.name_index}"

    def split(self, full_name: str) -> tuple[str | None, str]:
        parts = [self.scrub(p) for p in full_name.split(".")]
        return (".".join(parts[:-1]) or None), parts[-1]

    def unqualified(self, name: str | None) -> str:
        return self.scrub(self.name_or_default(name).rpartition(".")[2])

    def need(self, location: str) -> None:
        if location not in self.imports:
            self.imports.append(location)

    def file(self, schema: Schema) -> tuple[descriptor_pb2.FileDescriptorProto, str]:
        space, name = self.split(self.name_or_default(schema.name))
        file = descriptor_pb2.FileDescriptorProto(name="default", syntax="proto3")
        if space:
            file.package = space
        self.message(file.message_type.add(name=name), schema)
        file.dependency.extend(self.imports)
        return file, f"{space}.{name}" if space else name

    def message(self, message: descriptor_pb2.DescriptorProto, schema: Schema) -> None:
        tag_index = 1
        synthetic: list[descriptor_pb2.FieldDescriptorProto] = []
        for f in schema.fields:
            tag_text = (f.schema.parameters or {}).get(PROTOBUF_TYPE_TAG)
            if tag_text is not None:
                tag = _int_param(tag_text, PROTOBUF_TYPE_TAG, f.name)
            else:
                tag, tag_index = tag_index, tag_index + 1
            field = self.field(message, f.schema, self.scrub(f.name), tag, False)
            if field is not None and self.label(f.schema) == "optional":
                field.proto3_optional = True
                synthetic.append(field)
        for field in synthetic:  # synthetic oneofs come after the real ones, as protoc writes them
            field.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name="_" + field.name)
        free = max((f.number for f in message.field), default=0) + 1
        for field in message.field:  # union members without a tag: Confluent writes 0, no descriptor takes it
            if field.number == 0:
                field.number, free = free, free + 1

    def label(self, schema: Schema) -> str | None:
        if schema.type in (SchemaType.ARRAY, SchemaType.MAP):
            return "repeated"
        if self.config.optional_for_nullables and schema.optional:
            return "optional"
        return None

    def oneof(self, message: descriptor_pb2.DescriptorProto, union: Schema, name: str) -> None:
        index = len(message.oneof_decl)
        message.oneof_decl.add(name=name)
        for f in union.fields:
            tag_text = (f.schema.parameters or {}).get(PROTOBUF_TYPE_TAG)
            tag = _int_param(tag_text, PROTOBUF_TYPE_TAG, f.name) if tag_text is not None else 0
            field = self.field(message, f.schema, self.scrub(f.name), tag, True)
            if field is not None:
                field.oneof_index = index

    def field(self, message: descriptor_pb2.DescriptorProto, schema: Schema, name: str, tag: int,
              oneof_member: bool) -> descriptor_pb2.FieldDescriptorProto | None:
        label = self.label(schema)
        if schema.type is SchemaType.ARRAY:
            schema = schema.value_schema
        params: dict[str, str] = {}
        type_name = self.data_type(schema, name, params, oneof_member)
        kind: int
        if schema.type is SchemaType.STRUCT and _is_union(schema):
            union_name = (schema.parameters or {}).get(GENERALIZED_TYPE_UNION) \
                if self.config.generalized_sum_type_support else \
                self.unqualified((schema.name or "")[len(PROTOBUF_TYPE_UNION_PREFIX):] or None)
            self.oneof(message, schema, union_name)
            return None
        if schema.type is SchemaType.STRUCT and type_name not in _LOCATIONS:
            children = self.children.setdefault(id(message), set())
            if type_name != message.name and type_name not in children:
                children.add(type_name)
                self.message(message.nested_type.add(name=type_name), schema)
            kind = _F.TYPE_MESSAGE
        elif schema.type is SchemaType.MAP:
            self.map_entry(message.nested_type.add(name=type_name), schema)
            kind = _F.TYPE_MESSAGE
        elif _enum_param(schema) is not None and schema.type in (SchemaType.STRING, SchemaType.INT32):
            enum_name = self.unqualified(schema.name)
            if all(e.name != enum_name for e in message.enum_type):
                self.enum(message.enum_type.add(name=enum_name), schema)
            kind = _F.TYPE_ENUM
        elif type_name in _SCALARS:
            kind = _SCALARS[type_name]
        else:  # a well-known or Confluent type
            self.need(_LOCATIONS.get(type_name, _WRAPPER_LOCATION))
            type_name = "." + type_name
            kind = _F.TYPE_MESSAGE
        field = message.field.add(name=name, number=tag, type=kind,  # type: ignore[arg-type]
                                  label=_F.LABEL_REPEATED if label == "repeated" else _F.LABEL_OPTIONAL)
        if kind in (_F.TYPE_MESSAGE, _F.TYPE_ENUM):
            field.type_name = type_name
        if params:
            from confluent_kafka.schema_registry.confluent import meta_pb2

            meta = field.options.Extensions[meta_pb2.field_meta]
            for key, value in params.items():
                meta.params[key] = value
            self.need(META_LOCATION)
        return field

    def map_entry(self, entry: descriptor_pb2.DescriptorProto, schema: Schema) -> None:
        self.field(entry, schema.key_schema, KEY_FIELD, 1, False)
        self.field(entry, schema.value_schema, VALUE_FIELD, 2, False)

    def enum(self, enum: descriptor_pb2.EnumDescriptorProto, schema: Schema) -> None:
        param = GENERALIZED_TYPE_ENUM if self.config.generalized_sum_type_support else PROTOBUF_TYPE_ENUM
        for key, value in (schema.parameters or {}).items():
            if key.startswith(param + "."):
                enum.value.add(name=key[len(param) + 1:], number=_int_param(value, key, schema.name or "enum"))

    def data_type(self, schema: Schema, field_name: str, params: dict[str, str], oneof_member: bool) -> str:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            parameters = schema.parameters or {}
            if CONNECT_PRECISION_PROP in parameters:
                params[PROTOBUF_PRECISION_PROP] = parameters[CONNECT_PRECISION_PROP]
            if Decimal.SCALE_FIELD in parameters:
                params[PROTOBUF_SCALE_PROP] = parameters[Decimal.SCALE_FIELD]
            return DECIMAL_TYPE
        if name == Date.LOGICAL_NAME:
            return DATE_TYPE
        if name == Time.LOGICAL_NAME:
            return TIME_TYPE
        if name == Timestamp.LOGICAL_NAME:
            return TIMESTAMP_TYPE
        t = schema.type
        parameters = schema.parameters or {}
        wrap = self.config.wrapper_for_nullables and schema.optional and \
            (not oneof_member or parameters.get(PROTOBUF_TYPE_WRAPPER) == "true")
        if t in (SchemaType.INT8, SchemaType.INT16):
            params[CONNECT_TYPE_PROP] = "int8" if t is SchemaType.INT8 else "int16"
            return _WRAPPER_OF[t] if wrap else "int32"
        if t is SchemaType.INT32:
            if PROTOBUF_TYPE_ENUM in parameters:
                return parameters[PROTOBUF_TYPE_ENUM]
            return _WRAPPER_OF[t] if wrap else parameters.get(PROTOBUF_TYPE_PROP, "int32")
        if t is SchemaType.INT64:
            declared = parameters.get(PROTOBUF_TYPE_PROP, "int64")
            if wrap:
                return {"uint32": "google.protobuf.UInt32Value", "fixed32": "google.protobuf.UInt32Value",
                        "uint64": "google.protobuf.UInt64Value", "fixed64": "google.protobuf.UInt64Value"} \
                    .get(declared, "google.protobuf.Int64Value")
            return declared
        if t is SchemaType.STRING:
            if GENERALIZED_TYPE_ENUM in parameters:
                return parameters[GENERALIZED_TYPE_ENUM]
            if PROTOBUF_TYPE_ENUM in parameters:
                return parameters[PROTOBUF_TYPE_ENUM]
        if t in (SchemaType.FLOAT32, SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES):
            return _WRAPPER_OF[t] if wrap else {SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "double",
                                                 SchemaType.BOOLEAN: "bool", SchemaType.STRING: "string",
                                                 SchemaType.BYTES: "bytes"}[t]
        if t is SchemaType.ARRAY:
            raise DataException(f"Array cannot be nested: field {field_name} is an array of arrays")
        if t is SchemaType.MAP:
            return to_map_entry(self.unqualified(name))
        if t is SchemaType.STRUCT:
            message = self.unqualified(name)
            return message + "Message" if message == field_name else message
        raise DataException(f"Unknown schema type: {t} (field {field_name})")


def _int_param(text: str, key: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise DataException(f"Invalid integer {text!r} for parameter {key} of {where}") from None


# ------------------------------------------------------------------------------------ schema: Protobuf -> Connect

_FILE_SYNTAX = LRUCache(1000)  # file descriptor -> "proto2" | "proto3" (descriptors take no weak references)


class _ToConnect:
    def __init__(self, config: ProtobufDataConfig) -> None:
        self.config = config
        self.open: list[str] = []

    def message(self, descriptor: Descriptor, version: int | None) -> SchemaBuilder:
        builder = None
        if self.config.wrapper_for_raw_primitives and descriptor.full_name in _WRAPPERS:
            builder = SchemaBuilder(_WRAPPERS[descriptor.full_name])
        if builder is None:
            if descriptor.full_name in self.open:
                raise DataException(f"Recursive message {descriptor.full_name} is not supported")
            self.open.append(descriptor.full_name)
            builder = SchemaBuilder.struct().name(
                descriptor.full_name if self.config.enhanced_protobuf_schema_support else descriptor.name)
            for oneof in real_oneofs(descriptor):
                if self.config.flatten_unions:
                    for fd in oneof.fields:
                        builder.field(fd.name, self.field(fd, True))
                else:
                    builder.field(self.union_field_name(oneof), self.union(oneof))
            for fd in descriptor.fields:
                if not _in_real_oneof(fd):
                    builder.field(fd.name, self.field(fd, False))
            self.open.pop()
        if version is not None:
            builder.version(version)
        return builder

    def union_field_name(self, oneof: Any) -> str:
        return f"{oneof.name}_{oneof.index}" if self.config.generate_index_for_unions else oneof.name

    def union(self, oneof: Any) -> Schema:
        builder = SchemaBuilder.struct()
        if self.config.generalized_sum_type_support:
            builder.name(oneof.name).parameter(GENERALIZED_TYPE_UNION, oneof.name)
        else:
            name = oneof.full_name if self.config.enhanced_protobuf_schema_support else oneof.name
            builder.name(PROTOBUF_TYPE_UNION_PREFIX + name)
        for fd in oneof.fields:
            builder.field(fd.name, self.field(fd, True))
        return builder.optional().build()

    def field(self, fd: FieldDescriptor, oneof_member: bool) -> Schema:
        t = fd.type
        builder: SchemaBuilder
        if t in _INT32_TYPES:
            narrow = _field_meta(fd).get(CONNECT_TYPE_PROP)
            if narrow == "int8":
                builder = SchemaBuilder.int8()
            elif narrow == "int16":
                builder = SchemaBuilder.int16()
            else:
                builder = SchemaBuilder.int32()
                if t != _F.TYPE_INT32:
                    builder.parameter(PROTOBUF_TYPE_PROP, _TYPE_NAMES[t])
        elif t in _INT64_TYPES:
            builder = SchemaBuilder.int64()
            if t != _F.TYPE_INT64:
                builder.parameter(PROTOBUF_TYPE_PROP, _TYPE_NAMES[t])
        elif t == _F.TYPE_FLOAT:
            builder = SchemaBuilder.float32()
        elif t == _F.TYPE_DOUBLE:
            builder = SchemaBuilder.float64()
        elif t == _F.TYPE_BOOL:
            builder = SchemaBuilder.boolean()
        elif t == _F.TYPE_STRING:
            builder = SchemaBuilder.string()
        elif t == _F.TYPE_BYTES:
            builder = SchemaBuilder.bytes()
        elif t == _F.TYPE_ENUM:
            enum = fd.enum_type
            builder = SchemaBuilder.int32() if self.config.int_for_enums else SchemaBuilder.string()
            builder.name(enum.full_name if self.config.enhanced_protobuf_schema_support else enum.name)
            param = GENERALIZED_TYPE_ENUM if self.config.generalized_sum_type_support else PROTOBUF_TYPE_ENUM
            builder.parameter(param, enum.name)
            for value in enum.values:
                builder.parameter(f"{param}.{value.name}", str(value.number))
            builder.optional()
        elif t == _F.TYPE_MESSAGE:
            full = fd.message_type.full_name
            if full == DECIMAL_TYPE:
                meta = _field_meta(fd)
                scale = _lenient_int(meta.get(PROTOBUF_SCALE_PROP)) or 0
                builder = Decimal.builder(scale)
                precision = _lenient_int(meta.get(PROTOBUF_PRECISION_PROP))
                if precision is not None:
                    builder.parameter(CONNECT_PRECISION_PROP, str(precision))
            elif full == DATE_TYPE:
                builder = Date.builder()
            elif full == TIME_TYPE:
                builder = Time.builder()
            elif full == TIMESTAMP_TYPE:
                builder = Timestamp.builder()
            elif self.config.wrapper_for_nullables and full in _WRAPPERS:
                builder = SchemaBuilder(_WRAPPERS[full])
            elif _is_map_field(fd):
                entry = fd.message_type
                name = entry.full_name if self.config.enhanced_protobuf_schema_support else entry.name
                builder = SchemaBuilder.map(self.field(entry.fields_by_name[KEY_FIELD], False),
                                            self.field(entry.fields_by_name[VALUE_FIELD], False)) \
                    .name(to_map_field(name))
            else:
                builder = self.message(fd.message_type, None)
            builder.optional()
        else:
            raise DataException(f"Unknown Protobuf type {t} of field {fd.full_name}")
        if _is_repeated(fd) and builder.type is not SchemaType.MAP:
            builder = SchemaBuilder.array(builder.optional().build()).optional()
        if oneof_member:
            builder.optional()
            if self.config.wrapper_for_nullables and t == _F.TYPE_MESSAGE and fd.message_type.full_name in _WRAPPERS:
                builder.parameter(PROTOBUF_TYPE_WRAPPER, "true")
        elif self.config.optional_for_nullables:
            if has_optional_keyword(fd):
                builder.optional()
        elif not self.config.wrapper_for_nullables:
            builder.optional()
        builder.parameter(PROTOBUF_TYPE_TAG, str(fd.number))
        return builder.build()


def _is_repeated(fd: FieldDescriptor) -> bool:
    return bool(fd.is_repeated)


def _is_map_field(fd: FieldDescriptor) -> bool:
    if not _is_repeated(fd):
        return False
    entry = fd.message_type
    fields = entry.fields
    return entry.name.endswith(MAP_ENTRY_SUFFIX) and len(fields) == 2 and fields[0].name == KEY_FIELD \
        and fields[1].name == VALUE_FIELD and not _is_repeated(fields[0]) and not _is_repeated(fields[1])


def _lenient_int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _field_meta(fd: FieldDescriptor) -> Mapping[str, str]:
    from confluent_kafka.schema_registry.confluent import meta_pb2

    options = fd.GetOptions()
    if not options.HasExtension(meta_pb2.field_meta):
        return {}
    return dict(options.Extensions[meta_pb2.field_meta].params)


_PROTO3_OPTIONAL = LRUCache(100_000)  # field descriptor -> bool


def _proto3_optional(fd: FieldDescriptor) -> bool:
    """Whether the field is proto3 ``optional`` (its oneof synthetic); cached per descriptor."""
    found = _PROTO3_OPTIONAL.get(fd)
    if found is None:
        found = False
        oneof = fd.containing_oneof
        if oneof is not None and len(oneof.fields) == 1:
            message = descriptor_pb2.DescriptorProto()
            fd.containing_type.CopyToProto(message)
            found = any(p.name == fd.name and p.proto3_optional for p in message.field)
        _PROTO3_OPTIONAL.put(fd, found)
    return found


def _in_real_oneof(fd: FieldDescriptor) -> bool:
    return fd.containing_oneof is not None and not _proto3_optional(fd)


def real_oneofs(descriptor: Descriptor) -> list[Any]:
    """The message's oneofs that are not proto3 ``optional``'s synthetic ones."""
    return [o for o in descriptor.oneofs if not (len(o.fields) == 1 and _proto3_optional(o.fields[0]))]


def _syntax(fd: FieldDescriptor) -> str:
    file = fd.containing_type.file
    found = _FILE_SYNTAX.get(file)
    if found is None:
        proto = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
        found = proto.syntax or "proto2"
        if found == "editions":
            found = "proto3" if proto.edition == descriptor_pb2.EDITION_PROTO3 else "proto2"
        _FILE_SYNTAX.put(file, found)
    return found


def has_optional_keyword(fd: FieldDescriptor) -> bool:
    """Whether the field was declared ``optional`` (proto3 optional, or a proto2 optional outside oneofs)."""
    if _proto3_optional(fd):
        return True
    return _syntax(fd) == "proto2" and not fd.is_repeated and not fd.is_required and fd.containing_oneof is None


# ------------------------------------------------------------------------------------------------ ProtobufData

class ProtobufData:
    """Confluent's ``ProtobufData``: Connect schemas and values to Protobuf and back, caching schema mappings.

    >>> from connect_magics.api.data import Timestamp as Ts
    >>> s = SchemaBuilder.struct().name("E").field("at", Ts.SCHEMA).build()
    >>> [f.type_name for f in ProtobufData().from_connect_schema(s).file_proto.message_type[0].field]
    ['.google.protobuf.Timestamp']
    """

    def __init__(self, config: ProtobufDataConfig | None = None) -> None:
        self.config = config or ProtobufDataConfig()
        self._protobuf_schemas = LRUCache(self.config.schemas_cache_size)  # Connect schema -> ProtobufSchema
        self._connect_schemas = LRUCache(self.config.schemas_cache_size)  # (ProtobufSchema, version) -> Schema
        self._readers = _ReaderPlans(self.config)

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]

    # ----------------------------------------------------------------------------- Connect -> Protobuf
    def from_connect_schema(self, schema: Schema | None) -> ProtobufSchema:
        """The Protobuf schema Confluent's ProtobufData gives a Connect schema (a struct, or a primitive as its
        wrapper type)."""
        if schema is None:
            raise DataException("The Protobuf converter needs a schema: schemaless values are not supported")
        cached = self._protobuf_schemas.get(schema)
        if cached is None:
            if schema.type is SchemaType.STRUCT:
                file, name = _FromConnect(self.config).file(schema)
                cached = ProtobufSchema(file, name)
                cached = ProtobufSchema(cached.descriptor.file.serialized_pb, name)  # type names resolved
            elif schema.type in _WRAPPER_OF and schema.name not in _LOGICAL_NAMES:
                cached = ProtobufSchema(wrappers_pb2.DESCRIPTOR.serialized_pb, _WRAPPER_OF[schema.type])
            else:
                raise DataException(f"Unsupported root schema of type {schema.type}"
                                    f"{' (' + schema.name + ')' if schema.name else ''}")
            self._protobuf_schemas.put(schema, cached)
        return cached

    def from_connect_data(self, schema: Schema | None, value: Any,
                          protobuf_schema: ProtobufSchema | None = None) -> Message | None:
        """The dynamic message of a Connect value (``protobuf_schema``: write into this schema's message instead
        of the one made from ``schema``, as with ``use.latest.version``)."""
        if value is None:
            return None
        protobuf_schema = protobuf_schema or self.from_connect_schema(schema)
        message = protobuf_schema.message_class()()
        assert schema is not None
        _Writer(self.config).fill(message, schema, value, schema.name or "value")
        return message

    # ----------------------------------------------------------------------------- Protobuf -> Connect
    def to_connect_schema(self, protobuf_schema: ProtobufSchema, version: int | None = None) -> Schema:
        """The Connect schema of a Protobuf schema's message (``version``: the registry's)."""
        key = (protobuf_schema, version)
        cached = self._connect_schemas.get(key)
        if cached is None:
            cached = _ToConnect(self.config).message(protobuf_schema.descriptor, version).build()
            self._connect_schemas.put(key, cached)
        return cached

    def to_connect_data(self, schema: Schema, message: Message | None) -> Any:
        """The Connect value of a message of the schema ``schema`` was made from."""
        if message is None:
            return None
        return self._readers.root(schema, message.DESCRIPTOR)(message)


# ------------------------------------------------------------------------------------------------ values

class _Writer:
    """Connect values into messages (field paths in errors)."""

    def __init__(self, config: ProtobufDataConfig) -> None:
        self.config = config
        self.scrub: Callable[[str], str] = scrub_name if config.scrub_invalid_names else str

    def get(self, struct: Struct, field: Any) -> Any:
        return struct.get_without_default(field) if self.config.ignore_default_for_nullables else struct.get(field)

    def fill(self, target: Message, schema: Schema, value: Any, where: str) -> None:
        """Write the Connect ``value`` of ``schema`` into the message ``target``."""
        full = target.DESCRIPTOR.full_name
        name = schema.name
        try:
            if name == Decimal.LOGICAL_NAME:
                from confluent_kafka.schema_registry.common.protobuf import set_decimal_message

                if not isinstance(value, decimal.Decimal):
                    raise DataException(f"Invalid type for Decimal, expected Decimal but was {type(value).__name__}")
                set_decimal_message(target, value)
            elif name == Date.LOGICAL_NAME:
                day = Date.to_logical(schema, Date.from_logical(schema, value))
                target.year, target.month, target.day = day.year, day.month, day.day  # type: ignore[attr-defined]
            elif name == Time.LOGICAL_NAME:
                if not isinstance(value, _dt.time):
                    raise DataException(f"Invalid type for Time, expected time but was {type(value).__name__}")
                target.hours, target.minutes, target.seconds = value.hour, value.minute, value.second  # type: ignore
                target.nanos = (value.microsecond // 1000) * _NANOS_PER_MILLI  # type: ignore[attr-defined]
            elif name == Timestamp.LOGICAL_NAME:
                if not isinstance(value, _dt.datetime):
                    raise DataException(f"Invalid type for Timestamp, expected datetime but was "
                                        f"{type(value).__name__}")
                millis = Timestamp.from_logical(schema, value)
                target.seconds, target.nanos = millis // 1000, (millis % 1000) * _NANOS_PER_MILLI  # type: ignore
            elif full in _WRAPPERS and schema.type is not SchemaType.STRUCT:
                fd = target.DESCRIPTOR.fields_by_name[VALUE_FIELD]
                target.value = self.scalar(fd, schema, value, where)  # type: ignore[attr-defined]
            elif schema.type is SchemaType.STRUCT:
                self.struct(target, schema, value, where)
            else:
                raise DataException(f"Cannot write a Connect {schema.type} into the message {full}")
        except DataException as e:
            if str(e).startswith("Field "):
                raise
            raise DataException(f"Field {where}: {e}") from None
        target.SetInParent()

    def struct(self, target: Message, schema: Schema, value: Any, where: str) -> None:
        if not isinstance(value, Struct):
            raise DataException(f"Invalid type for STRUCT: {type(value).__name__}")
        if value.schema != schema:
            raise DataException("Mismatching struct schema")
        fields = target.DESCRIPTOR.fields_by_name
        for f in schema.fields:
            field_value = self.get(value, f)
            if field_value is None:
                continue
            if _is_union(f.schema):
                for member in f.schema.fields:
                    member_value = self.get(field_value, member)
                    if member_value is not None:
                        self.field(target, fields, self.scrub(member.name), member.schema, member_value,
                                   f"{where}.{f.name}.{member.name}")
                        break
                else:
                    raise DataException(f"Field {where}.{f.name}: Cannot find non-null field of the union")
                continue
            self.field(target, fields, self.scrub(f.name), f.schema, field_value, f"{where}.{f.name}")

    def field(self, target: Message, fields: Mapping[str, FieldDescriptor], name: str, schema: Schema,
              value: Any, where: str) -> None:
        fd = fields.get(name)
        if fd is None:
            raise DataException(f"Field {where}: Cannot find field with name {name} in message "
                                f"{target.DESCRIPTOR.full_name}")
        try:
            if schema.type is SchemaType.ARRAY:
                if not isinstance(value, (list, tuple)):
                    raise DataException(f"Invalid type for ARRAY: {type(value).__name__}")
                container = getattr(target, name)
                element = schema.value_schema
                for i, item in enumerate(value):
                    if item is None:
                        raise DataException(f"element {i} is null: repeated fields cannot hold nulls")
                    if fd.type == _F.TYPE_MESSAGE:
                        self.fill(container.add(), element, item, f"{where}[{i}]")
                    else:
                        container.append(self.scalar(fd, element, item, f"{where}[{i}]"))
            elif schema.type is SchemaType.MAP:
                if not isinstance(value, Mapping):
                    raise DataException(f"Invalid type for MAP: {type(value).__name__}")
                self.map(target, fd, schema, value, where)
            elif fd.type == _F.TYPE_MESSAGE:
                self.fill(getattr(target, name), schema, value, where)
            else:
                setattr(target, name, self.scalar(fd, schema, value, where))
        except DataException as e:
            if str(e).startswith("Field "):
                raise
            raise DataException(f"Field {where}: {e}") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise DataException(f"Field {where}: invalid value for {schema.type}: {e}") from None

    def map(self, target: Message, fd: FieldDescriptor, schema: Schema, value: Mapping[Any, Any],
            where: str) -> None:
        container = getattr(target, fd.name)
        entry = fd.message_type
        key_fd, value_fd = entry.fields_by_name[KEY_FIELD], entry.fields_by_name[VALUE_FIELD]
        real_map = entry.GetOptions().map_entry
        for k, v in value.items():
            here = f"{where}[{k!r}]"
            if real_map:  # a schema from the registry (use.latest.version) with a map<> field
                key = self.scalar(key_fd, schema.key_schema, k, here)
                if value_fd.type == _F.TYPE_MESSAGE:
                    self.fill(container[key], schema.value_schema, v, here)
                elif v is not None:
                    container[key] = self.scalar(value_fd, schema.value_schema, v, here)
                continue
            item = container.add()
            if k is not None:
                self.field(item, entry.fields_by_name, KEY_FIELD, schema.key_schema, k, here + ".key")
            if v is not None:
                self.field(item, entry.fields_by_name, VALUE_FIELD, schema.value_schema, v, here + ".value")

    def scalar(self, fd: FieldDescriptor, schema: Schema, value: Any, where: str) -> Any:
        t = schema.type
        if fd.type == _F.TYPE_ENUM:
            if isinstance(value, str):
                param = _enum_param(schema) or PROTOBUF_TYPE_ENUM
                tag = (schema.parameters or {}).get(f"{param}.{value}")
                if tag is None:
                    found = fd.enum_type.values_by_name.get(value)
                    if found is None:
                        raise DataException(f"{value!r} is not a symbol of enum {fd.enum_type.full_name}")
                    return found.number
                return int(tag)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            raise DataException(f"Invalid type for enum: {type(value).__name__}")
        if t in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataException(f"Invalid type for {t}: {type(value).__name__}")
            if fd.type in _UNSIGNED_64 and value < 0:
                return value & 0xFFFF_FFFF_FFFF_FFFF
            return value
        if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise DataException(f"Invalid type for {t}: {type(value).__name__}")
            return float(value)
        if t is SchemaType.BOOLEAN:
            if not isinstance(value, bool):
                raise DataException(f"Invalid type for BOOLEAN: {type(value).__name__}")
            return value
        if t is SchemaType.STRING:
            if not isinstance(value, str):
                raise DataException(f"Invalid type for STRING: {type(value).__name__}")
            return value
        if t is SchemaType.BYTES:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise DataException(f"Invalid type for BYTES: {type(value).__name__}")
            return bytes(value)
        raise DataException(f"Cannot write a Connect {t} into the {_TYPE_NAMES.get(fd.type, fd.type)} field "
                            f"{fd.full_name}")


def _identity(value: Any) -> Any:
    return value


class _ReaderPlans:
    """Functions from messages (and field values) to Connect values, made once per Connect schema and message
    type: a read walks them without looking anything up."""

    def __init__(self, config: ProtobufDataConfig) -> None:
        self.config = config
        self.plans = LRUCache(max(config.schemas_cache_size, 16))

    def root(self, schema: Schema, descriptor: Descriptor) -> Callable[[Any], Any]:
        key = (schema, descriptor)
        found = self.plans.get(key)
        if found is None:
            if schema.type is SchemaType.STRUCT:
                found = self.struct(schema, descriptor, schema.name or "value")
            else:  # a raw primitive in its wrapper message
                value_fd = descriptor.fields_by_name[VALUE_FIELD]
                inner = self.value(schema, value_fd, "value")
                found = lambda m: inner(m.value)  # noqa: E731
            self.plans.put(key, found)
        return found

    def struct(self, schema: Schema, descriptor: Descriptor, where: str) -> Callable[[Any], Struct]:
        by_name = descriptor.fields_by_name
        steps: list[Callable[[Any], Any]] = []
        for f in schema.fields:
            here = f"{where}.{f.name}"
            if _is_union(f.schema):
                steps.append(self.union(f.schema, by_name, self.oneof_name(f.schema, f.name), here))
                continue
            fd = by_name.get(f.name)
            if fd is None:
                steps.append(lambda m: None)
                continue
            read = self.value(f.schema, fd, here)
            if _in_real_oneof(fd):  # flatten.unions: only the member that is set
                always = False
            else:
                always = (fd.type != _F.TYPE_MESSAGE or _is_repeated(fd)) and not self.optional(fd) \
                    or self.config.generate_struct_for_nulls or _is_repeated(fd)
            steps.append(_field_step(f.name, read, always))
        of = Struct.of
        return lambda m: of(schema, [step(m) for step in steps])

    def union(self, union: Schema, by_name: Mapping[str, FieldDescriptor], oneof: str,
              where: str) -> Callable[[Any], Any]:
        members: dict[str, tuple[int, Callable[[Any], Any]]] = {}
        for member in union.fields:
            fd = by_name.get(member.name)
            if fd is not None:
                members[member.name] = (member.index, self.value(member.schema, fd, f"{where}.{member.name}"))
        size = len(union.fields)

        def read(m: Any) -> Any:
            which = m.WhichOneof(oneof)
            if which is None:
                return None
            found = members.get(which)
            if found is None:
                raise DataException(f"Field {where}: the union has no member {which}")
            values = [None] * size
            values[found[0]] = found[1](getattr(m, which))
            return Struct.of(union, values)
        return read

    def oneof_name(self, union: Schema, field_name: str) -> str:
        params = union.parameters or {}
        if GENERALIZED_TYPE_UNION in params:
            return params[GENERALIZED_TYPE_UNION]
        if union.name and union.name.startswith(PROTOBUF_TYPE_UNION_PREFIX):
            return union.name[len(PROTOBUF_TYPE_UNION_PREFIX):].rpartition(".")[2]
        return field_name

    def optional(self, fd: FieldDescriptor) -> bool:
        return _proto3_optional(fd) or (self.config.optional_for_proto2 and has_optional_keyword(fd))

    def value(self, schema: Schema, fd: FieldDescriptor, where: str) -> Callable[[Any], Any]:
        """The reader of one field's value (each element's, for repeated fields)."""
        t = schema.type
        if t is SchemaType.ARRAY:
            item = self.value(schema.value_schema, fd, where + "[]")
            return list if item is _identity else (lambda v: [item(x) for x in v])
        if t is SchemaType.MAP:
            if fd.type != _F.TYPE_MESSAGE:
                raise DataException(f"Field {where}: a {_TYPE_NAMES.get(fd.type)} field cannot be read as a map")
            entry = fd.message_type
            key = self.value(schema.key_schema, entry.fields_by_name[KEY_FIELD], where + ".key")
            value = self.value(schema.value_schema, entry.fields_by_name[VALUE_FIELD], where + ".value")
            if entry.GetOptions().map_entry:
                return lambda v: {key(k): value(x) for k, x in v.items()}
            return lambda v: {key(e.key): value(e.value) for e in v}
        if t is SchemaType.STRUCT:
            if fd.type != _F.TYPE_MESSAGE:
                raise DataException(f"Field {where}: a {_TYPE_NAMES.get(fd.type)} field cannot be read as a struct")
            return self.struct(schema, fd.message_type, where)
        return _guarded(self.primitive(schema, fd, where), where, t)

    def primitive(self, schema: Schema, fd: FieldDescriptor, where: str) -> Callable[[Any], Any]:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            from confluent_kafka.schema_registry.common.protobuf import protobuf_to_decimal

            return protobuf_to_decimal  # type: ignore[no-any-return]
        if name == Date.LOGICAL_NAME:
            return lambda v: _dt.date(v.year, v.month, v.day)
        if name == Time.LOGICAL_NAME:
            return lambda v: _dt.time(v.hours, v.minutes, v.seconds, (v.nanos // _NANOS_PER_MILLI) * 1000)
        if name == Timestamp.LOGICAL_NAME:
            return lambda v: Timestamp.to_logical(schema, v.seconds * 1000 + v.nanos // _NANOS_PER_MILLI)
        if fd.type == _F.TYPE_MESSAGE:
            if fd.message_type.full_name not in _WRAPPERS:
                raise DataException(f"Field {where}: a {fd.message_type.full_name} message is not a {schema.type}")
            inner = self.primitive(schema, fd.message_type.fields_by_name[VALUE_FIELD], where)
            return lambda v: inner(v.value)
        if fd.type == _F.TYPE_ENUM and schema.type is SchemaType.STRING:
            enum = fd.enum_type
            names = {value.number: value.name for value in enum.values}
            return lambda v: names.get(v) or f"UNKNOWN_ENUM_VALUE_{enum.name}_{v}"
        if schema.type is SchemaType.INT64 and fd.type in _UNSIGNED_64:
            return lambda v: v - (1 << 64) if v >= 1 << 63 else v
        return _identity


def _field_step(name: str, read: Callable[[Any], Any], always: bool) -> Callable[[Any], Any]:
    if always:
        if read is _identity:
            return lambda m: getattr(m, name)
        return lambda m: read(getattr(m, name))
    return lambda m: read(getattr(m, name)) if m.HasField(name) else None


def _guarded(read: Callable[[Any], Any], where: str, t: SchemaType) -> Callable[[Any], Any]:
    if read is _identity:
        return read

    def guarded(value: Any) -> Any:
        try:
            return read(value)
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            raise DataException(f"Field {where}: invalid value for {t}: {e}") from None
    return guarded
