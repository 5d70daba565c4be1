"""Confluent's ``io.confluent.connect.protobuf.ProtobufConverter``: Connect data as Protobuf in Confluent's wire
format (magic byte 0, the schema's 4-byte registry id, the message indexes, the message), with schemas in a
Schema Registry.

Schemas are registered as confluent-kafka's ``ProtobufSerializer`` registers them (the base64 of the file
descriptor, well-known and Confluent imports without references) and read in either form a registry keeps:
that one, or ``.proto`` text as Confluent's Java serializers register it (parsed by :mod:`.proto_text`).

Example (a registry at ``url``)::

    c = ProtobufConverter()
    c.configure({"schema.registry.url": url}, is_key=False)
    data = c.from_connect_data("orders", schema, struct)   # registers orders-value once, then cached
    c.to_connect_data("orders", data)                      # SchemaAndValue(connect schema, struct)
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from connect_magics.api.config import AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.converters import (
    NULL_SCHEMA_AND_VALUE,
    Converter,
    SchemaAndValue,
    converter_config_def,
)
from connect_magics.api.data import LRUCache, Schema
from connect_magics.api.errors import DataException
from connect_magics.api.records import Headers
from connect_magics.converters.proto_text import parse_proto
from connect_magics.converters.protobuf_data import (
    ProtobufData,
    ProtobufDataConfig,
    ProtobufSchema,
    message_name_at,
)
from connect_magics.converters.schema_registry import Registry, define_registry_settings, wire_header

__all__ = ["ProtobufConverter", "decode_registered_schema", "protobuf_converter_config_def"]

_DATA_SETTINGS = [
    ("enhanced.protobuf.schema.support", "enhanced_protobuf_schema_support", False,
     "Keep package names: Connect schema names are the full Protobuf names."),
    ("scrub.invalid.names", "scrub_invalid_names", False, "Replace characters Protobuf names may not have."),
    ("int.for.enums", "int_for_enums", False, "Read enums as INT32 instead of STRING."),
    ("optional.for.nullables", "optional_for_nullables", False, "Write optional fields as proto3 optional."),
    ("optional.for.proto2", "optional_for_proto2", True, "Read proto2 optional fields as optional."),
    ("wrapper.for.nullables", "wrapper_for_nullables", False,
     "Write optional primitives as google.protobuf wrapper messages, and read wrappers as optional primitives."),
    ("wrapper.for.raw.primitives", "wrapper_for_raw_primitives", True,
     "Read a wrapper message at the root as a primitive."),
    ("generate.struct.for.nulls", "generate_struct_for_nulls", False,
     "Read an unset message field as a struct of defaults instead of null."),
    ("generate.index.for.unions", "generate_index_for_unions", True,
     "Name the Connect field of a oneof NAME_INDEX."),
    ("flatten.unions", "flatten_unions", False, "Read a oneof's fields as fields of the message's struct."),
    ("generalized.sum.type.support", "generalized_sum_type_support", False,
     "Mark enums and unions with Connect's generalized parameters."),
    ("ignore.default.for.nullables", "ignore_default_for_nullables", False,
     "Write null for an unset optional field that has a default."),
]


def protobuf_converter_config_def() -> ConfigDef:
    """``ProtobufConverterConfig``: the registry's serde settings and ``ProtobufDataConfig``'s."""
    config_def = define_registry_settings(converter_config_def())
    for name, _, default, doc in _DATA_SETTINGS:
        config_def.define(name, Type.BOOLEAN, default, None, Importance.LOW, doc)
    return config_def.define("schemas.cache.config", Type.INT, 1000, None, Importance.LOW,
                             "The number of schemas cached each way.")


def decode_registered_schema(schema_str: str, name: str = "default") -> descriptor_pb2.FileDescriptorProto | None:
    """The file descriptor of a registered Protobuf schema in its serialized form (base64, as Confluent's
    registry serves it; or the raw bytes some registries give for ``format=serialized``), or None when the text
    is ``.proto`` source.

    >>> f = descriptor_pb2.FileDescriptorProto(name="x.proto", package="p")
    >>> f.message_type.add(name="A").name
    'A'
    >>> decode_registered_schema(base64.b64encode(f.SerializeToString()).decode()).package
    'p'
    >>> decode_registered_schema('syntax = "proto3"; message A {}') is None
    True
    """
    candidates: list[bytes] = []
    try:
        candidates.append(base64.b64decode(schema_str.encode("ascii"), validate=True))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        pass
    if "syntax" not in schema_str and "message " not in schema_str:
        for encoding in ("utf-8", "latin-1"):
            try:
                candidates.append(schema_str.encode(encoding))
            except UnicodeEncodeError:
                continue
    for raw in candidates:
        try:
            proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
        except DecodeError:
            continue
        if proto.message_type or proto.enum_type:
            proto.name = proto.name or name
            return proto
    return None


class ProtobufConverter(Converter):
    """Confluent's ProtobufConverter, wire-compatible with it and with confluent-kafka's ``ProtobufSerializer``
    and ``ProtobufDeserializer`` (see the module docstring for an example)."""

    ALIASES: tuple[str, ...] = ("io.confluent.connect.protobuf.ProtobufConverter",)

    def config_def(self) -> ConfigDef:
        return protobuf_converter_config_def()

    def configure(self, configs: Any, is_key: bool) -> None:
        settings = {k: v for k, v in dict(configs).items() if k != "converter.type"}
        config = AbstractConfig(self.config_def(), {**settings, "converter.type": "key" if is_key else "value"})
        self.is_key = is_key
        self.registry = Registry(settings, "PROTOBUF")
        self.data = ProtobufData(ProtobufDataConfig(
            **{attr: config.get(name) for name, attr, _, _ in _DATA_SETTINGS},
            schemas_cache_size=config.get("schemas.cache.config")))
        self._headers: dict[tuple[int, tuple[int, ...]], bytes] = {}
        self._readers: dict[tuple[int, tuple[int, ...]], tuple[Schema, ProtobufSchema, Any]] = {}
        self._files: dict[int, tuple[descriptor_pb2.FileDescriptorProto, tuple[bytes, ...]]] = {}
        self._latest = LRUCache(config.get("schemas.cache.config"))

    def __getstate__(self) -> dict[str, Any]:  # converters travel to Spark executors pickled
        return {**self.__dict__, "_headers": {}, "_readers": {}, "_files": {},
                "_latest": LRUCache(self._latest.max_size)}

    # -------------------------------------------------------------------------------- Connect -> bytes
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        try:
            protobuf = self.data.from_connect_schema(schema)
            subject = self.registry.subject(topic, self.is_key, protobuf.name)
            if self.registry.use_latest:
                schema_id, target = self._latest_schema(subject, protobuf.name)
            else:
                schema_id, target = self.registry.id_for(subject, protobuf.schema_text()), protobuf
            message = self.data.from_connect_data(schema, value, target)
            assert message is not None
            return self._header(schema_id, target) + message.SerializeToString()
        except DataException as e:
            raise DataException(f"Failed to serialize Protobuf data from topic {topic}: {e}") from e.__cause__

    def _header(self, schema_id: int, target: ProtobufSchema) -> bytes:
        indexes = tuple(target.message_indexes)
        key = (schema_id, indexes)
        found = self._headers.get(key)
        if found is None:
            found = wire_header(schema_id) + _encode_indexes(indexes)
            self._headers[key] = found
        return found

    def _latest_schema(self, subject: str, name: str) -> tuple[int, ProtobufSchema]:
        """``use.latest.version``: the subject's latest schema, writing into its message named as ours (else its
        first message)."""
        cached = self._latest.get(subject)
        if cached is None:
            schema_id, registered = self.registry.latest(subject)
            file, dependencies = self._file(schema_id, registered)
            target = ProtobufSchema(file, name, dependencies)
            if name not in _message_names(file):
                target = ProtobufSchema(file, message_name_at(file, [0]), dependencies)
            cached = (schema_id, target)
            self._latest.put(subject, cached)
        return cached

    # -------------------------------------------------------------------------------- bytes -> Connect
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        schema_id, indexes, offset = _split(data)
        schema, _, message_class = self._readers.get((schema_id, indexes)) or \
            self._reader(topic, schema_id, indexes)
        try:
            message = message_class.FromString(memoryview(data)[offset:])
        except (DecodeError, ValueError, TypeError) as e:
            raise DataException(f"Failed to deserialize data for topic {topic} to Protobuf: "
                                f"{type(e).__name__}: {e}") from e
        return SchemaAndValue(schema, self.data.to_connect_data(schema, message))

    def _reader(self, topic: str, schema_id: int, indexes: tuple[int, ...]) -> tuple[Schema, ProtobufSchema, Any]:
        registered = self.registry.schema(schema_id)
        if registered.schema_type not in (None, "PROTOBUF"):
            raise DataException(f"Schema {schema_id} is {registered.schema_type}, not PROTOBUF: the topic {topic} "
                                f"needs the matching converter")
        file, dependencies = self._file(schema_id, registered)
        protobuf = ProtobufSchema(file, message_name_at(file, list(indexes)), dependencies)
        try:
            version = self.registry.version(self.registry.subject(topic, self.is_key, protobuf.name), schema_id)
        except DataException:
            version = None
        schema = self.data.to_connect_schema(protobuf, version)
        entry = (schema, protobuf, protobuf.message_class())
        self._readers[(schema_id, indexes)] = entry
        return entry

    def _file(self, schema_id: int, registered: Any) -> tuple[descriptor_pb2.FileDescriptorProto, tuple[bytes, ...]]:
        """The file descriptor of a registered schema and the serialized files it imports (its references that are
        not well-known types), each fetched once."""
        found = self._files.get(schema_id)
        if found is None:
            file = decode_registered_schema(registered.schema_str)
            if file is None:
                file = self._parse_text(schema_id, registered.schema_str)
            dependencies: list[bytes] = []
            self._references(registered.references or [], dependencies, set())
            found = (file, tuple(dependencies))
            self._files[schema_id] = found
        return found

    def _parse_text(self, schema_id: int, text: str) -> descriptor_pb2.FileDescriptorProto:
        """A schema registered as .proto source: parsed here, else as the registry serves it as a descriptor
        (``format=serialized``: base64 from Confluent's registry)."""
        try:
            return parse_proto(text)
        except DataException as e:
            serialized = self.registry.call(f"fetching schema {schema_id} as a descriptor",
                                            lambda: self.registry.client.get_schema(schema_id, fmt="serialized"))
            file = decode_registered_schema(serialized.schema_str)
            if file is None:
                raise DataException(f"Schema {schema_id} is .proto text this converter cannot read ({e}) and the "
                                    f"registry at {self.registry.url} does not serve as a descriptor") from None
            return file

    def _references(self, references: list[Any], out: list[bytes], seen: set[str]) -> None:
        from confluent_kafka.schema_registry.common.protobuf import _is_builtin

        for ref in references:
            if _is_builtin(ref.name) or ref.name in seen:
                continue
            seen.add(ref.name)
            version = self.registry.call(
                f"fetching the schema {ref.name} referenced as {ref.subject} version {ref.version}",
                lambda ref=ref: self.registry.client.get_version(ref.subject, ref.version, True, "serialized"))
            self._references(version.schema.references or [], out, seen)
            file = decode_registered_schema(version.schema.schema_str, ref.name) or \
                parse_proto(version.schema.schema_str, ref.name)
            file.name = ref.name
            out.append(file.SerializeToString())


def _message_names(file: descriptor_pb2.FileDescriptorProto) -> set[str]:
    """The full names of every message of a file."""
    names: set[str] = set()
    stack = [((file.package + ".") if file.package else "", m) for m in file.message_type]
    while stack:
        prefix, message = stack.pop()
        names.add(prefix + message.name)
        stack.extend((prefix + message.name + ".", nested) for nested in message.nested_type)
    return names


def _encode_indexes(indexes: tuple[int, ...]) -> bytes:
    """Confluent's message indexes: a zig-zag varint count and the indexes, or the single 0 byte for ``[0]``."""
    from confluent_kafka.schema_registry.serde import SchemaId

    if indexes == (0,):
        return b"\x00"
    buffer = io.BytesIO()
    SchemaId._encode_varints(buffer, list(indexes), zigzag=True)
    return buffer.getvalue()


def _split(data: bytes) -> tuple[int, tuple[int, ...], int]:
    """The schema id, message indexes and payload offset of Confluent's Protobuf wire format."""
    from confluent_kafka.schema_registry.serde import SchemaId

    if len(data) < 6 or data[0] != 0:
        raise DataException("Unknown magic byte!")
    if data[5] == 0:  # the common case: the first message
        return struct.unpack_from(">I", data, 1)[0], (0,), 6
    buffer = io.BytesIO(data)
    buffer.seek(5)
    try:
        indexes = SchemaId._read_index_array(buffer, zigzag=True)
    except Exception as e:  # EOFError, SerializationError
        raise DataException(f"Invalid Protobuf message indexes: {e}") from None
    return struct.unpack_from(">I", data, 1)[0], tuple(indexes), buffer.tell()
