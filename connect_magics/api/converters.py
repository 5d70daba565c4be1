"""Converters between Connect data and the bytes stored in Kafka, byte-compatible with Kafka's own.

Example::

    >>> c = JsonConverter()
    >>> c.configure({"schemas.enable": "false"}, is_key=False)
    >>> c.from_connect_data("t", None, {"id": 1, "ok": True})
    b'{"id":1,"ok":true}'
    >>> c.to_connect_data("t", b'{"id": 1}')
    SchemaAndValue(schema=None, value={'id': 1})
"""

from __future__ import annotations

import base64
import binascii
import codecs
import datetime as _dt
import decimal
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from itertools import repeat
from json.encoder import encode_basestring as _encode_basestring  # type: ignore[attr-defined]
from operator import methodcaller
from typing import Any, NamedTuple

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    Importance,
    Type,
    ValidString,
    Width,
    bytes_repr_join,
    java_double_str,
    java_str,
    java_str_join,
    plugin_version,
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
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Field,
    LRUCache,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import Headers

__all__ = [
    "ByteArrayConverter", "Converter", "HeaderConverter", "JsonConverter", "NULL_SCHEMA_AND_VALUE",
    "SchemaAndValue", "SimpleHeaderConverter", "StringConverter", "converter_config_def",
]


class SchemaAndValue(NamedTuple):
    """A schema (or None when schemaless) and a value.

    >>> SchemaAndValue(None, 1).value
    1
    """

    schema: Schema | None
    value: Any


NULL_SCHEMA_AND_VALUE = SchemaAndValue(None, None)

TYPE_CONFIG = "converter.type"


def converter_config_def() -> ConfigDef:
    """Kafka's ``ConverterConfig.newConfigDef()``: the ``converter.type`` key every converter config has."""
    return ConfigDef().define(TYPE_CONFIG, Type.STRING, NO_DEFAULT, ValidString.in_("key", "value", "header"),
                              Importance.LOW, "How this converter will be used.")


class StringColumn(Sequence[tuple[Schema | None, str]]):
    """A batch of decoded strings of one schema, none holding a newline, kept as one text joined by newlines (what
    :meth:`Converter.to_connect_column` may give for plain strings): a text sink writes them (:meth:`joined`)
    without a string object each; read as ``(schema, value)`` pairs like any column.

    >>> column = StringColumn(None, "a\\nb", 2)
    >>> list(column), column.values(), column.joined(", ")
    ([(None, 'a'), (None, 'b')], ['a', 'b'], 'a, b')
    """

    __slots__ = ("schema", "text", "_size", "_pairs")

    def __init__(self, schema: Schema | None, text: str, size: int) -> None:
        self.schema, self.text, self._size = schema, text, size
        self._pairs: list[tuple[Schema | None, str]] | None = None

    def values(self) -> list[str]:
        """The strings, in order."""
        return self.text.split("\n")

    def joined(self, separator: str) -> str:
        """The strings joined by ``separator``."""
        return self.text if separator == "\n" else self.text.replace("\n", separator)

    def _all(self) -> list[tuple[Schema | None, str]]:
        if self._pairs is None:
            self._pairs = list(zip(repeat(self.schema), self.values()))
        return self._pairs

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return self._all()[index]

    def __iter__(self) -> Iterator[tuple[Schema | None, str]]:
        return iter(self._all())


class Converter(ABC):
    """Turns record keys or values into bytes and back.

    Example::

        class Upper(Converter):
            def configure(self, configs, is_key): pass
            def from_connect_data(self, topic, schema, value, headers=None): return value.upper().encode()
            def to_connect_data(self, topic, data, headers=None): return SchemaAndValue(None, data.decode())
    """

    @abstractmethod
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None: ...

    @abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None: ...

    @abstractmethod
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue: ...

    def fixed_schema(self) -> tuple[Schema | None, Callable[[bytes], Any] | None] | None:
        """Optional speed-up for converters whose every value has one schema: ``(schema, decode)``.

        ``decode`` turns the bytes of a non-null key or value into its value (None: the bytes
        themselves); the runtime then uses it instead of :meth:`to_connect_data`, sparing a
        :class:`SchemaAndValue` per record. The default, None, means: always call :meth:`to_connect_data`.

        >>> ByteArrayConverter().fixed_schema()[1] is None
        True
        """
        return None

    def from_connect_column(self, topic: str, schemas: Sequence[Schema | None],
                            values: Sequence[Any]) -> list[bytes | None] | None:
        """Optional speed-up: the bytes of a batch of one topic's keys or values with their schemas, each as
        :meth:`from_connect_data` would give it, or None to have the runtime call :meth:`from_connect_data`
        for each (also what to answer for a batch that is not the common case, or that would fail: the
        per-record path names the failing record). None by default.

        >>> JsonConverter().from_connect_column("t", [None], [42]) is None  # not a batch of strings
        True
        """
        return None

    def to_connect_column(self, topic: str, datas: Sequence[bytes | None]) -> Sequence[tuple[Schema | None, Any]]:
        """Optional speed-up: the keys or values of a batch of one topic, each as ``(schema, value)``, raising
        as :meth:`to_connect_data` does. By default :meth:`to_connect_data` for each.

        >>> StringConverter().to_connect_column("t", [b"a", None])
        [SchemaAndValue(schema=Schema{STRING}, value='a'), SchemaAndValue(schema=Schema{STRING}, value=None)]
        """
        return list(map(partial(self.to_connect_data, topic), datas))

    def to_connect_text(self, topic: str, datas: Sequence[bytes | None], separator: str) -> str:
        """Optional speed-up: the keys or values of a batch of one topic as Java's ``String.valueOf`` prints them
        (:func:`java_str`: what FileStreamSink writes), joined by ``separator``, raising as :meth:`to_connect_data`
        does. By default :meth:`to_connect_column`, then :func:`java_str_join`.

        >>> StringConverter().to_connect_text("t", [b"a", None, b"b"], "|")
        'a|null|b'
        """
        column = self.to_connect_column(topic, datas)
        if isinstance(column, StringColumn):
            return column.joined(separator)
        return java_str_join([value for _, value in column], separator)

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return plugin_version()

    def close(self) -> None:
        """Release resources (nothing by default)."""
        return None


class HeaderConverter(ABC):
    """Turns header values into bytes and back (see :class:`SimpleHeaderConverter`).

    Example::

        class Utf8Headers(HeaderConverter):
            def configure(self, configs): pass
            def from_connect_header(self, topic, header_key, schema, value): return str(value).encode()
            def to_connect_header(self, topic, header_key, data): return SchemaAndValue(None, data.decode())
    """

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue: ...

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return plugin_version()

    def close(self) -> None:
        """Release resources (nothing by default)."""
        return None


class _DualConverter(Converter, HeaderConverter):
    """A converter usable for keys, values and headers; ``configure`` accepts both call styles."""

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:  # type: ignore[override]
        props = dict(configs)
        if is_key is not None:
            props[TYPE_CONFIG] = "key" if is_key else "value"
        props.setdefault(TYPE_CONFIG, "header")
        self._configure(AbstractConfig(self.config_def(), props))

    @abstractmethod
    def _configure(self, config: AbstractConfig) -> None: ...

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, data)


# ----------------------------------------------------------------------------------------- JSON writing

class _Float32(float):
    """A float written the way Java writes a ``Float``."""


_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\t"): "\\t", ord("\n"): "\\n",
                 ord("\f"): "\\f", ord("\r"): "\\r"})


_JSON_ESCAPED = bytes(range(0x20)) + b'"\\'  # the bytes a JSON string escapes
_b64 = binascii.b2a_base64


def _quote(text: str) -> str:
    quoted = _encode_basestring(text)  # as Jackson's but for \u00xx escapes in lower case (translated then)
    return quoted if "\\u00" not in quoted else '"' + text.translate(_ESCAPES) + '"'


def _dump(node: Any) -> str:
    """Compact JSON exactly as Jackson writes it (Java number formats, raw UTF-8, upper-case escapes)."""
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if isinstance(node, str):
        return _quote(node)
    if isinstance(node, int):
        return str(node)
    if isinstance(node, float):
        text = java_double_str(node, float32=isinstance(node, _Float32))
        return text if text[-1].isdigit() else _quote(text)  # Jackson quotes NaN and Infinity
    if isinstance(node, decimal.Decimal):
        return str(node)  # same notation as Java's BigDecimal.toString
    if isinstance(node, dict):
        return "{" + ",".join(_quote(k) + ":" + _dump(v) for k, v in node.items()) + "}"
    return "[" + ",".join(_dump(v) for v in node) + "]"


# ----------------------------------------------------------------------------------------- JSON reading

def _reject_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


_LEADING_ZEROS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)0+(?=[0-9])')


# Decoders made once (``json.loads`` with arguments makes one per call). Fractional numbers are exact
# Decimals where a schema may need them; schemaless values turn them into floats anyway, and
# ``float(text)`` is ``float(Decimal(text))`` (both the nearest double), so those parse straight to float.
_EXACT = json.JSONDecoder(parse_float=decimal.Decimal, parse_constant=_reject_constant)
_FLOATS_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(data: bytes, decoder: json.JSONDecoder = _EXACT) -> Any:
    """Parse JSON bytes (in any of JSON's encodings, as ``json.loads``); like Jackson, allows leading zeros (``007``)."""
    # UTF-8 unless the first two bytes say otherwise (json.detect_encoding's rules, spared in the common case)
    utf8 = 0x20 < data[0] < 0x80 and (len(data) == 1 or data[1] != 0)
    text = data.decode("utf-8" if utf8 else json.detect_encoding(data), "surrogatepass")
    try:  # what decode() does, without its two whitespace matches when there is no whitespace around
        node, end = decoder.scan_once(text, 0)
        if end == len(text):
            return node
    except (StopIteration, ValueError):
        pass
    try:
        return decoder.decode(text)
    except json.JSONDecodeError:
        fixed = _LEADING_ZEROS.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)
        if fixed == text:
            raise
        return decoder.decode(fixed)


def _node_type(node: Any) -> str:
    """Jackson's ``JsonNodeType`` name for a parsed JSON value."""
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, decimal.Decimal)):
        return "NUMBER"
    return {str: "STRING", list: "ARRAY", dict: "OBJECT"}.get(type(node), "POJO")


def _is_number(node: Any) -> bool:
    return isinstance(node, (int, decimal.Decimal)) and not isinstance(node, bool)


def _is_integral(node: Any) -> bool:
    return isinstance(node, int) and not isinstance(node, bool)


def _wrap(value: int, bits: int) -> int:
    """Java's narrowing cast."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def _as_int(bits: int, node: Any) -> int:
    """Jackson's ``intValue()``/``longValue()`` then a narrowing cast (non-numbers read as 0). The width
    first, for a positional ``partial`` (a keyword one costs a dict per call)."""
    return _wrap(int(node), bits) if _is_number(node) else 0


def _b64decode(node: Any) -> bytes:
    try:
        return base64.b64decode(node, validate=True)
    except (binascii.Error, TypeError, ValueError) as e:
        raise DataException("Invalid bytes field") from e


# ------------------------------------------------------------------------------------ JSON schema names

_JSON_TYPE_NAMES = {SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "double"}
_CONNECT_TYPES = {_JSON_TYPE_NAMES.get(t, t.value): t for t in SchemaType}
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_FLOATS = (SchemaType.FLOAT32, SchemaType.FLOAT64)
#: How a generated struct writer writes a field of these types inline (``v{i}`` its value, ``w{i}`` its writer).
_INLINE_WRITES = {**{t: "(str(v{i}) if v{i}.__class__ is int else w{i}(v{i}))" for t in _INT_BITS},
                  # _quote inline: Python's escaping, kept unless it has a \u00xx escape (Jackson's are upper case)
                  SchemaType.STRING: "((q if '\\\\u00' not in (q := encode(v{i})) else quote(v{i})) "
                                     "if v{i}.__class__ is str else w{i}(v{i}))",
                  SchemaType.BOOLEAN: '("true" if v{i} is True else "false" if v{i} is False else w{i}(v{i}))'}
_READS_VALID = frozenset({*_INT_BITS, *_FLOATS, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES})
_SCHEMALESS_TYPES: list[tuple[type | tuple[type, ...], SchemaType]] = [
    (str, SchemaType.STRING), (bool, SchemaType.BOOLEAN), (int, SchemaType.INT64), (float, SchemaType.FLOAT64),
    ((bytes, bytearray, memoryview), SchemaType.BYTES), ((list, tuple), SchemaType.ARRAY),
    (Mapping, SchemaType.MAP), (Struct, SchemaType.STRUCT),
]
_EXACT_SCHEMALESS = {str: SchemaType.STRING, bool: SchemaType.BOOLEAN, int: SchemaType.INT64,
                     float: SchemaType.FLOAT64, bytes: SchemaType.BYTES, list: SchemaType.ARRAY,
                     tuple: SchemaType.ARRAY, dict: SchemaType.MAP}  # as _SCHEMALESS_TYPES finds them
_EXPECTED: dict[SchemaType, tuple[type, ...]] = {
    **{t: (int,) for t in _INT_BITS}, SchemaType.FLOAT32: (int, float), SchemaType.FLOAT64: (int, float),
    SchemaType.BOOLEAN: (bool,), SchemaType.STRING: (str,), SchemaType.ARRAY: (list, tuple),
    SchemaType.MAP: (Mapping,),
}
_ENVELOPE_ERROR = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
                   "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
                   "in your converter configuration.")


def _pyclass(value: Any) -> str:
    return f"class {type(value).__module__}.{type(value).__qualname__}".replace("builtins.", "")


class JsonConverter(_DualConverter):
    """Kafka's ``org.apache.kafka.connect.json.JsonConverter``, producing the same bytes.

    Configs: ``schemas.enable`` (default true: ``{"schema":...,"payload":...}`` envelopes),
    ``schemas.cache.size`` (1000), ``decimal.format`` (``BASE64`` or ``NUMERIC``),
    ``replace.null.with.default`` (true).

    >>> c = JsonConverter()
    >>> c.configure({}, is_key=False)
    >>> c.from_connect_data("t", INT32_SCHEMA, 7)
    b'{"schema":{"type":"int32","optional":false},"payload":7}'
    """

    def __init__(self) -> None:
        self.configure({}, is_key=False)

    def config_def(self) -> ConfigDef:
        return (converter_config_def()
                .define("schemas.enable", Type.BOOLEAN, True, None, Importance.HIGH,
                        "Include schemas within each of the serialized values and keys.", "Schemas", 0,
                        Width.MEDIUM, "Enable Schemas")
                .define("schemas.cache.size", Type.INT, 1000, None, Importance.HIGH,
                        "The maximum number of schemas that can be cached in this converter instance.", "Schemas", 1,
                        Width.MEDIUM, "Schema Cache Size")
                .define("decimal.format", Type.STRING, "BASE64", CaseInsensitiveValidString.in_("BASE64", "NUMERIC"),
                        Importance.LOW, "Controls which format this converter will serialize decimals in. This value "
                        "is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'", "Serialization", 0,
                        Width.MEDIUM, "Decimal Format")
                .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.LOW,
                        "Whether to replace fields that have a default value and that are null to the default value. "
                        "When set to true, the default value is used, otherwise null is used.", "Serialization", 1,
                        Width.MEDIUM, "Replace null with default"))

    def _configure(self, config: AbstractConfig) -> None:
        self.schemas_enabled: bool = config.get("schemas.enable")
        self.decimal_numeric = config.get("decimal.format").upper() == "NUMERIC"
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        self._from_connect_cache = LRUCache(config.get("schemas.cache.size"))
        self._to_connect_cache = LRUCache(config.get("schemas.cache.size"))
        self._reset_compiled()

    def _reset_compiled(self) -> None:
        """Forget the compiled payload readers (functions: not pickled, rebuilt on use)."""
        size = self._to_connect_cache.max_size
        self._readers = LRUCache(size)  # Schema -> payload reader
        self._writers = LRUCache(size)  # Schema -> payload writer
        self._envelopes = LRUCache(size)  # raw envelope text up to the payload -> (that text, schema, reader)
        self._last_envelope: tuple[bytes, Schema | None, Callable[[Any], Any]] | None = None
        self._last_written: tuple[Schema | None, bytes] = (None, b"")  # the last schema written, its envelope's start
        self._last_writer: tuple[Schema | None, Callable[[Any], str] | None] = (None, None)  # and its writer

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in _COMPILED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_compiled()

    # -- Connect -> bytes
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value.__class__ is str and (schema is None or schema is STRING_SCHEMA or schema is OPTIONAL_STRING_SCHEMA):
            # What the two calls below give a plain string, sooner; sooner still for one with nothing to escape:
            # no control character, quote or backslash among its UTF-8 bytes (those of any other character are
            # all above 0x7f), seen by one C pass over the bytes written anyway. Joined at once, envelope and all.
            payload = value.encode("utf-8")
            if len(payload.translate(None, _JSON_ESCAPED)) == len(payload):
                if not self.schemas_enabled:
                    return b"".join((b'"', payload, b'"'))
                last_schema, start = self._last_written
                return b"".join((start if schema is last_schema and schema is not None else self._start(schema),
                                 b'"', payload, b'"}'))
            payload = _quote(value).encode("utf-8")
        elif schema is None:
            if value is None:
                return None
            payload = self._write_schemaless(value).encode("utf-8")
        else:
            last_schema, write = self._last_writer
            if schema is not last_schema:  # mostly the same schema again: no look-up
                write = self._writers.get(schema)
                if write is None:
                    write = self._compile_writer(schema)
                    self._writers.put(schema, write)
                self._last_writer = (schema, write)
            payload = write(value).encode("utf-8")
        if not self.schemas_enabled:
            return payload
        last_schema, start = self._last_written
        if schema is not last_schema or last_schema is None:  # schemas are immutable: the same one mostly repeats
            start = self._start(schema)
        return b"".join((start, payload, b"}"))

    def from_connect_column(self, topic: str, schemas: Sequence[Schema | None],
                            values: Sequence[Any]) -> list[bytes | None] | None:
        """Strings of one string schema (or none) with nothing to escape, what text sources mostly send, in a few
        C loops over the whole batch: joined by what separates two of them as written (a string's end, a
        newline, the next one's start), checked for bytes a JSON string escapes (only the joins may hold them),
        and split at the newlines. Any other batch: None (one by one).

        >>> c = JsonConverter(); c.configure({"schemas.enable": "false"}, is_key=False)
        >>> c.from_connect_column("t", [STRING_SCHEMA] * 2, ["a", "é"])
        [b'"a"', b'"\\xc3\\xa9"']
        >>> c.from_connect_column("t", [STRING_SCHEMA] * 2, ["a", 'say "hi"']) is None
        True
        """
        if not values:
            return None
        schema = schemas[0]
        if not (schema is None or schema is STRING_SCHEMA or schema is OPTIONAL_STRING_SCHEMA) \
                or schemas.count(schema) != len(schemas):
            return None
        head, tail = (self._start(schema) + b'"', b'"}') if self.schemas_enabled else (b'"', b'"')
        join = tail + b"\n" + head  # an envelope's start has no newline nor control byte, only quotes
        try:
            data = join.decode("utf-8").join(values).encode("utf-8")  # a TypeError for a value not a string
        except (TypeError, UnicodeEncodeError):
            return None
        joins = len(values) - 1
        # Nothing a JSON string escapes but what the joins hold (their quotes and newline): none in the values
        if len(data) - len(data.translate(None, _JSON_ESCAPED)) != (join.count(b'"') + 1) * joins:
            return None
        column = data.split(b"\n")
        if len(column) != len(values):
            return None
        column[0] = head + column[0]
        column[-1] += tail
        return column

    def _write_schemaless(self, value: Any) -> str:
        """``_dump(self._to_json(None, value))``, sooner for what schemaless values mostly hold: strings, integers,
        booleans, nulls, dicts with string keys and lists of them; any other value, at any depth, takes that path.

        >>> JsonConverter()._write_schemaless({"id": 7, "tags": ["a", None, True]})
        '{"id":7,"tags":["a",null,true]}'
        """
        cls = value.__class__
        if cls is str:
            return _quote(value)
        if cls is int:
            return str(value)
        if cls is dict:
            write, parts = self._write_schemaless, []
            for k, v in value.items():
                if k.__class__ is not str:  # written as an array of pairs, or refused: as the general path does
                    return _dump(self._to_json(None, value))
                parts.append(_quote(k) + ":" + write(v))
            return "{" + ",".join(parts) + "}"
        if cls is list:
            return "[" + ",".join([self._write_schemaless(v) for v in value]) + "]"
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        return _dump(self._to_json(None, value))

    def _start(self, schema: Schema | None) -> bytes:
        """An envelope's text up to its payload, kept for the next record of the same schema."""
        start = ('{"schema":' + self.as_json_schema_text(schema) + ',"payload":').encode("utf-8")
        self._last_written = (schema, start)
        return start

    def _compile_writer(self, schema: Schema) -> Callable[[Any], str]:
        """A function writing a value of ``schema`` as :meth:`_to_json` then :func:`_dump` would, sooner for
        the values most records hold (plain integers, strings, booleans, floats, timestamps, decimals, structs
        of them); any other value (null, another logical type, a value of the wrong type) takes that generic
        path, errors included."""
        def generic(value: Any) -> str:
            return _dump(self._to_json(schema, value))

        type_ = schema.type
        if schema.name in _LOGICAL:
            return self._compile_logical_writer(schema, generic)
        if type_ in _INT_BITS:
            return lambda value: str(value) if value.__class__ is int else generic(value)
        if type_ is SchemaType.STRING:
            return lambda value: _quote(value) if value.__class__ is str else generic(value)
        if type_ is SchemaType.BOOLEAN:
            return lambda value: "true" if value is True else "false" if value is False else generic(value)
        if type_ is SchemaType.FLOAT64:
            return lambda value: _dump(value) if value.__class__ is float else generic(value)
        if type_ is not SchemaType.STRUCT:
            return generic
        return self._compile_struct_writer(schema, generic)

    def _compile_struct_writer(self, schema: Schema, generic: Callable[[Any], str]) -> Callable[[Any], str]:
        """A struct's writer, generated as one function of its fields (as :mod:`dataclasses` generates methods):
        a field of a plain type is written inline, without a call per field. Field names enter the code as
        constants only. A struct of an equal schema built apart is written the same way."""
        names: dict[str, Any] = {"Struct": Struct, "schema": schema, "generic": generic, "quote": _quote,
                                 "encode": _encode_basestring}
        parts = []
        for i, field in enumerate(schema.fields):
            names[f"w{i}"] = self._compile_writer(field.schema)
            names[f"k{i}"] = ("{" if i == 0 else ",") + _quote(field.name) + ":"
            inline = _INLINE_WRITES.get(field.schema.type) if field.schema.name is None else None
            expression = (inline or "w{i}(v{i})").format(i=i)
            if field.schema.optional and field.schema.default_value is None:
                expression = f'("null" if v{i} is None else {expression})'
            parts.append(f"k{i}, {expression}, ")
        unpack = "    " + "".join(f"v{i}, " for i in range(len(parts))) + "= value._values\n" if parts else ""
        pieces = "".join(parts) or "'{', "
        code = ("def struct(value):\n"
                "    if value.__class__ is not Struct or (value.schema is not schema and value.schema != schema):\n"
                "        return generic(value)\n"
                f"{unpack}"
                f"    return ''.join(({pieces}'}}'))\n")
        exec(code, names)  # noqa: S102 - code made above from indexes; names are in ``names`` only
        return names["struct"]

    def _compile_logical_writer(self, schema: Schema, generic: Callable[[Any], str]) -> Callable[[Any], str]:
        """:meth:`_compile_writer` for a logical type: a timestamp's milliseconds and a decimal's base64 bytes
        (a JSON string with nothing to escape) written straight from the value of their class."""
        if schema.name == Timestamp.LOGICAL_NAME:
            millis = Timestamp.millis
            return lambda value: str(millis(value)) if value.__class__ is _dt.datetime else generic(value)
        if schema.name == Decimal.LOGICAL_NAME and not self.decimal_numeric:
            scale, unscaled_bytes = Decimal.scale(schema), Decimal.unscaled_bytes
            return lambda value: '"' + _b64(unscaled_bytes(value, scale), newline=False).decode("ascii") + '"' \
                if value.__class__ is decimal.Decimal else generic(value)
        logical = _LOGICAL[schema.name][0]
        return lambda value: generic(value) if value is None else _dump(logical(self, schema, value))

    def as_json_schema_text(self, schema: Schema | None) -> str:
        """The serialized JSON form of ``schema`` (``null`` for None), cached."""
        if schema is None:
            return "null"
        text = self._from_connect_cache.get(schema)
        if text is None:
            text = _dump(self.as_json_schema(schema))
            self._from_connect_cache.put(schema, text)
        return text

    def as_json_schema(self, schema: Schema) -> dict[str, Any]:
        """The JSON schema object, keys in Kafka's order."""
        node: dict[str, Any] = {"type": _JSON_TYPE_NAMES.get(schema.type, schema.type.value)}
        if schema.type is SchemaType.ARRAY:
            node["items"] = self.as_json_schema(schema.value_schema)  # type: ignore[arg-type]
        elif schema.type is SchemaType.MAP:
            node["keys"] = self.as_json_schema(schema.key_schema)  # type: ignore[arg-type]
            node["values"] = self.as_json_schema(schema.value_schema)  # type: ignore[arg-type]
        elif schema.type is SchemaType.STRUCT:
            node["fields"] = [{**self.as_json_schema(f.schema), "field": f.name} for f in schema.fields]
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default_value is not None:
            node["default"] = self._to_json(schema, schema.default_value)
        return node

    def _to_json(self, schema: Schema | None, value: Any) -> Any:
        if value is None:
            if schema is None:
                return None
            if schema.default_value is not None and self.replace_null_with_default:
                return self._to_json(schema, schema.default_value)
            if schema.optional:
                return None
            raise DataException("Conversion error: null value for field that is required and has no default value")
        if schema is not None and schema.name in _LOGICAL:
            return _LOGICAL[schema.name][0](self, schema, value)
        type_ = schema.type if schema is not None else _schemaless_type(value)
        expected = _EXPECTED.get(type_)
        if expected is not None and (not isinstance(value, expected)
                                     or (isinstance(value, bool) and type_ is not SchemaType.BOOLEAN)):
            raise DataException(f"Invalid type for {schema.type if schema else 'unknown schema'}: {_pyclass(value)}")
        if type_ in _FLOATS:
            return _Float32(value) if type_ is SchemaType.FLOAT32 else float(value)
        if type_ is SchemaType.BYTES:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise DataException(f"Invalid type for bytes type: {_pyclass(value)}")
            return base64.b64encode(bytes(value)).decode("ascii")
        if type_ is SchemaType.ARRAY:
            item_schema = schema.value_schema if schema else None
            return [self._to_json(item_schema, v) for v in value]
        if type_ is SchemaType.MAP:
            return self._map_to_json(schema, value)
        if type_ is SchemaType.STRUCT:
            if not isinstance(value, Struct) or value.schema != schema:
                raise DataException("Mismatching schema.")
            return {f.name: self._to_json(f.schema, value.get_without_default(f)) for f in schema.fields}
        return value

    def _map_to_json(self, schema: Schema | None, value: Mapping[Any, Any]) -> Any:
        key_schema = schema.key_schema if schema else None
        value_schema = schema.value_schema if schema else None
        if schema is None:
            object_mode = all(isinstance(k, str) for k in value)
        else:
            object_mode = key_schema is not None and key_schema.type is SchemaType.STRING
        if object_mode and key_schema is None:  # schemaless string keys are written as they are
            return {k: self._to_json(None, v) for k, v in value.items()}
        if object_mode:
            return {java_str(self._to_json(key_schema, k)): self._to_json(value_schema, v) for k, v in value.items()}
        return [[self._to_json(key_schema, k), self._to_json(value_schema, v)] for k, v in value.items()]

    # -- bytes -> Connect
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        if not data and not self.schemas_enabled:
            return NULL_SCHEMA_AND_VALUE
        data = bytes(data)
        if self.schemas_enabled:
            fast = self._from_envelope(data)
            if fast is not None:
                return tuple.__new__(SchemaAndValue, fast)
        try:
            node = _loads(data, _EXACT if self.schemas_enabled else _FLOATS_DECODER) if data else _MISSING
        except (ValueError, UnicodeDecodeError) as e:
            raise DataException("Converting byte[] to Kafka Connect data failed due to serialization error: ") from e
        if not self.schemas_enabled:
            return SchemaAndValue(None, node)  # parsed with floats: nothing left to convert
        if not isinstance(node, dict) or len(node) != 2 or "schema" not in node or "payload" not in node:
            raise DataException(_ENVELOPE_ERROR)
        schema = self.as_connect_schema(node["schema"])
        return SchemaAndValue(schema, self._reader(schema)(node["payload"]))

    def to_connect_column(self, topic: str, datas: Sequence[bytes | None]) -> Sequence[tuple[Schema | None, Any]]:
        """:meth:`to_connect_data` for each of a batch: plain strings as a :class:`StringColumn`, envelopes through
        the fast path with one call each, schemaless values parsed without a call per value."""
        strings = self._string_column(datas)
        if strings is not None:
            return strings
        if datas.count(None) == len(datas):  # e.g. the keys of records without keys
            return [NULL_SCHEMA_AND_VALUE] * len(datas)
        to_connect = partial(self.to_connect_data, topic)
        if self.schemas_enabled:
            fast = self._from_envelope
            return [(data.__class__ is bytes and fast(data)) or to_connect(data) for data in datas]
        try:
            return [(None, _loads(data, _FLOATS_DECODER)) if data.__class__ is bytes and data else to_connect(data)
                    for data in datas]
        except (ValueError, UnicodeDecodeError):  # to_connect_data says why
            return list(map(to_connect, datas))

    def _string_column(self, datas: Sequence[bytes | None]) -> StringColumn | None:
        """Strings with nothing escaped (in envelopes of one string schema, or bare), what text sinks mostly read,
        in a few C loops over the batch, joined by newlines; None for any other batch (one by one). Bare strings
        are split at their quotes (``'"a"\\n"b"'`` must give ``['', 'a', '\\n', 'b', '']``); envelopes are cut
        between their head and tail, and rejoined with them must give the batch back byte for byte. Either way the
        strings may hold no quote, backslash or control byte (a newline is one: so the batch's only newlines are
        its joins, and each value was its head, its string and its tail).

        >>> c = JsonConverter(); c.configure({"schemas.enable": "false"}, is_key=False)
        >>> list(c._string_column([b'"a"', b'"\\xc3\\xa9"']))
        [(None, 'a'), (None, 'é')]
        >>> c._string_column([b'"a"', b'"a\\\\u0041"']) is None
        True
        """
        first = datas[0]
        if first.__class__ is not bytes:
            return None
        schema: Schema | None = None
        if self.schemas_enabled:
            envelope = self._envelope_starting(first)
            if envelope is None:
                return None
            prefix, schema, _ = envelope
            if schema is None or schema.type is not SchemaType.STRING or b"\n" in prefix:
                return None  # a STRING payload reads as the string
        try:
            joined = b"\n".join(datas)
        except TypeError:  # a null among them
            return None
        count = len(datas)
        if not self.schemas_enabled:
            parts = joined.split(b'"')
            if len(parts) != 2 * count + 1 or parts[0] or parts[-1] or parts[2:-1:2].count(b"\n") != count - 1:
                return None
            strings = parts[1::2]
        else:
            head, tail = prefix + b'"', b'"}'
            start, end = len(head), -len(tail)
            strings = [data[start:end] for data in datas]
            rejoined = (tail + b"\n" + head).join(strings)
            if len(joined) != start + len(rejoined) + len(tail) or not (
                    joined.startswith(head) and joined.startswith(rejoined, start) and joined.endswith(tail)):
                return None
        text = b"\n".join(strings)
        if len(text) - len(text.translate(None, _JSON_ESCAPED)) != count - 1:  # the joins' newlines only
            return None
        try:
            return StringColumn(schema, text.decode("utf-8", "surrogatepass"), count)
        except UnicodeDecodeError:
            return None

    def _from_envelope(self, data: bytes) -> tuple[Schema | None, Any] | None:
        """The fast path for envelopes as Kafka's JsonConverter writes them (``{"schema":...,"payload":...}``,
        compact) or as ``json.dumps`` does (a space after each ``:`` and ``,``): the schema is found by its raw
        text, which repeats, so that only the payload is parsed. None when the data is not such an envelope or
        does not parse: the general path then decides."""
        envelope = self._envelope_starting(data)
        if envelope is None:
            return None
        prefix, schema, read = envelope
        if data[-1:] != b"}":
            return None
        try:  # a payload that is not exactly one JSON value (another key, leading zeros...): general path
            text = data[len(prefix):-1].decode("utf-8", "surrogatepass")
            node, end = _EXACT.scan_once(text, 0)
        except (StopIteration, ValueError, UnicodeDecodeError):
            return None
        if end != len(text) and _WHITESPACE.fullmatch(text, end) is None:
            return None
        return schema, read(node)

    def _envelope_starting(self, data: bytes) -> tuple[bytes, Schema | None, Callable[[Any], Any]] | None:
        """:meth:`_envelope_of` ``data``, the last one found first (envelopes of one schema mostly follow each other)."""
        envelope = self._last_envelope
        if envelope is None or not data.startswith(envelope[0]):
            envelope = self._envelope_of(data)
            if envelope is not None:
                self._last_envelope = envelope
        return envelope

    def _envelope_of(self, data: bytes) -> tuple[bytes, Schema | None, Callable[[Any], Any]] | None:
        """``(raw text up to the payload, schema, payload reader)`` for data starting as an envelope (JSON's
        whitespace allowed between its tokens)."""
        start = _ENVELOPE_START.match(data)
        if start is None:
            return None
        try:  # the start is ASCII: its end in bytes is its end in characters
            text = data.decode("utf-8", "surrogatepass")
            node, end = _EXACT.raw_decode(text, start.end())
        except ValueError:  # UnicodeDecodeError too
            return None
        payload_key = _PAYLOAD_KEY.match(text, end)
        if payload_key is None:
            return None
        prefix = text[:payload_key.end()].encode("utf-8", "surrogatepass")
        envelope = self._envelopes.get(prefix)
        if envelope is None:
            try:
                schema = self.as_connect_schema(node)
            except DataException:  # the general path raises it, or the envelope error if that comes first
                return None
            envelope = (prefix, schema, self._reader(schema))
            self._envelopes.put(prefix, envelope)
        return envelope

    def as_connect_schema(self, node: Any) -> Schema | None:
        """Parse a JSON schema object into a :class:`Schema` (cached by its JSON text)."""
        if node is None:
            return None
        key = json.dumps(node, default=str)
        cached = self._to_connect_cache.get(key)
        if cached is None:
            cached = self._parse_schema(node)
            self._to_connect_cache.put(key, cached)
        return cached

    def _parse_schema(self, node: Any) -> Schema:
        type_name = node.get("type") if isinstance(node, dict) else None
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        type_ = _CONNECT_TYPES.get(type_name)
        if type_ is None:
            raise DataException(f"Unknown schema type: {type_name}")
        if type_ is SchemaType.ARRAY:
            if node.get("items") is None:
                raise DataException("Array schema did not specify the element type")
            builder = SchemaBuilder.array(self.as_connect_schema(node["items"]))  # type: ignore[arg-type]
        elif type_ is SchemaType.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            builder = SchemaBuilder.map(self.as_connect_schema(node["keys"]),  # type: ignore[arg-type]
                                        self.as_connect_schema(node["values"]))  # type: ignore[arg-type]
        else:
            builder = SchemaBuilder(type_)
        if type_ is SchemaType.STRUCT:
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataException("Struct schema's \"fields\" argument is not an array.")
            for f in fields:
                name = f.get("field") if isinstance(f, dict) else None
                if not isinstance(name, str):
                    raise DataException("Struct schema's field name not specified properly")
                builder.field(name, self.as_connect_schema(f))  # type: ignore[arg-type]
        if node.get("optional") is True:
            builder.optional()
        if isinstance(node.get("name"), str):
            builder.name(node["name"])
        if _is_integral(node.get("version")):
            builder.version(_wrap(node["version"], 32))
        if isinstance(node.get("doc"), str):
            builder.doc(node["doc"])
        params = node.get("parameters")
        if isinstance(params, dict):
            for k, v in params.items():
                if not isinstance(v, str):
                    raise DataException("Schema parameters must have string values.")
                builder.parameter(k, v)
        if "default" in node:
            builder.default_value(self._compile_reader(builder.build())(node["default"]))
        return builder.build()

    def _reader(self, schema: Schema | None) -> Callable[[Any], Any]:
        """The function turning a parsed payload of ``schema`` into Connect data (cached per schema)."""
        if schema is None:
            return _schemaless_to_connect
        read = self._readers.get(schema)
        if read is None:
            read = self._compile_reader(schema)
            self._readers.put(schema, read)
        return read

    def _compile_reader(self, schema: Schema | None) -> Callable[[Any], Any]:
        """Kafka's ``JsonConverter.convertToConnect`` for one schema, decided once rather than per value."""
        if schema is None:
            return _schemaless_to_connect
        return self._with_nulls(schema, self._compile_convert(schema))

    def _with_nulls(self, schema: Schema, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """The reader of ``schema`` from what it does with a non-null node: a null node is the default, or
        None for an optional schema, or fails."""
        default = schema.default_value if self.replace_null_with_default else None
        if default is None and not schema.optional:
            return partial(_required, convert, f"Invalid null value for required {schema.type} field")
        return partial(_nullable, convert, default)

    def _compile_convert(self, schema: Schema) -> Callable[[Any], Any]:
        """What the reader of ``schema`` does with a non-null node."""
        type_ = schema.type
        convert: Callable[[Any], Any]
        if schema.name in _LOGICAL:
            convert = partial(_LOGICAL[schema.name][1], schema)
        elif type_ is SchemaType.BOOLEAN:
            convert = _is_true
        elif type_ in _INT_BITS:
            convert = partial(_as_int, _INT_BITS[type_])
        elif type_ in _FLOATS:
            convert = _as_float
        elif type_ is SchemaType.STRING:
            convert = _as_str
        elif type_ is SchemaType.BYTES:
            convert = _as_bytes
        elif type_ is SchemaType.ARRAY:
            convert = partial(_array_to_connect, self._compile_reader(schema.value_schema))
        elif type_ is SchemaType.MAP:
            key_schema = schema.key_schema
            convert = partial(_object_map_to_connect if key_schema is None or key_schema.type is SchemaType.STRING
                              else _pairs_map_to_connect, self._compile_reader(key_schema),
                              self._compile_reader(schema.value_schema))
        else:
            convert = partial(_struct_to_connect, schema, [self._struct_field(f) for f in schema.fields])
        return convert

    def _struct_field(self, field: Field) -> tuple[Field, Callable[[Any], Any], Callable[[Any], Any], bool]:
        """What ``_struct_to_connect`` reads a field with: the field, its reader and what that does with a
        non-null node, and whether the reader gives only valid values (or None)."""
        convert = self._compile_convert(field.schema)
        return field, self._with_nulls(field.schema, convert), convert, _reads_valid(field.schema)

    # -- logical types
    def _decimal_to_json(self, schema: Schema, value: Any) -> Any:
        if not isinstance(value, decimal.Decimal):
            raise DataException(f"Invalid type for Decimal, expected BigDecimal but was {_pyclass(value)}")
        if self.decimal_numeric:
            return value
        return base64.b64encode(Decimal.from_logical(schema, value)).decode("ascii")


_MISSING: Any = object()
# An envelope's start and its payload key, with JSON's whitespace where its grammar allows it.
_ENVELOPE_START = re.compile(rb'\{[ \t\n\r]*"schema"[ \t\n\r]*:[ \t\n\r]*')
_PAYLOAD_KEY = re.compile(r'[ \t\n\r]*,[ \t\n\r]*"payload"[ \t\n\r]*:[ \t\n\r]*')
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_COMPILED = ("_readers", "_writers", "_envelopes", "_last_envelope", "_last_written", "_last_writer")  # JsonConverter's caches of functions


# The parts of a compiled payload reader (JsonConverter._compile_reader): each takes a non-null node.

def _required(convert: Callable[[Any], Any], message: str, node: Any) -> Any:
    if node is None or node is _MISSING:
        raise DataException(message)
    return convert(node)


def _nullable(convert: Callable[[Any], Any], default: Any, node: Any) -> Any:
    return default if node is None or node is _MISSING else convert(node)


def _is_true(node: Any) -> bool:
    return node is True


def _as_float(node: Any) -> float:
    return float(node) if _is_number(node) else 0.0


def _as_str(node: Any) -> str | None:
    return node if isinstance(node, str) else None


def _as_bytes(node: Any) -> bytes | None:
    return _b64decode(node) if isinstance(node, str) else None


def _array_to_connect(item: Callable[[Any], Any], node: Any) -> list[Any]:
    items = node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else []
    return [item(v) for v in items]


def _object_map_to_connect(key: Callable[[Any], Any], value: Callable[[Any], Any], node: Any) -> dict[Any, Any]:
    if not isinstance(node, dict):
        raise DataException("Maps with string fields should be encoded as JSON objects, but found " + _node_type(node))
    return {k: value(v) for k, v in node.items()}


def _pairs_map_to_connect(key: Callable[[Any], Any], value: Callable[[Any], Any], node: Any) -> dict[Any, Any]:
    if not isinstance(node, list):
        raise DataException("Maps with non-string fields should be encoded as JSON array of tuples, but found "
                            + _node_type(node))
    result = {}
    for entry in node:
        if not isinstance(entry, list):
            raise DataException(f"Found invalid map entry instead of array tuple: {_node_type(entry)}")
        if len(entry) != 2:
            raise DataException(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
        result[key(entry[0])] = value(entry[1])
    return result


def _reads_valid(schema: Schema) -> bool:
    """Whether the compiled reader of ``schema`` gives only values that ``validate_value`` accepts, or None: true
    of the primitive types that are not logical ones (their readers return a value of the type, in range)."""
    return schema.name not in _LOGICAL and schema.type in _READS_VALID


def _struct_to_connect(schema: Schema, fields: list[tuple[Field, Callable[[Any], Any], Callable[[Any], Any], bool]],
                       node: Any) -> Struct:
    """``Struct.put`` of each field read, in order, validating only what its reader does not guarantee
    (``JsonConverter._struct_field``)."""
    if not isinstance(node, dict):
        raise DataException(f"Structs should be encoded as JSON objects, but found {_node_type(node)}")
    values = []
    for f, read, convert, valid in fields:
        value = node.get(f.name)
        value = read(value) if value is None else convert(value)
        if value is None or not valid:
            validate_value(f.schema, value, f.name)
        values.append(value)
    return Struct.of(schema, values)


def _schemaless_type(value: Any) -> SchemaType:
    type_ = _EXACT_SCHEMALESS.get(value.__class__)  # the common classes without isinstance (Mapping's is slow)
    if type_ is not None:
        return type_
    for classes, type_ in _SCHEMALESS_TYPES:
        if isinstance(value, classes):
            return type_
    raise DataException(f"Java class {_pyclass(value)} does not have corresponding schema type.")


def _schemaless_to_connect(node: Any) -> Any:
    if isinstance(node, decimal.Decimal):
        return float(node)
    if isinstance(node, list):
        return [_schemaless_to_connect(v) for v in node]
    if isinstance(node, dict):
        return {k: _schemaless_to_connect(v) for k, v in node.items()}
    return None if node is _MISSING else node


def _date_like_to_json(logical: Any, expected: type, what: str) -> Any:
    def to_json(converter: JsonConverter, schema: Schema, value: Any) -> int:
        if not isinstance(value, expected):
            raise DataException(f"Invalid type for {what}, expected Date but was {_pyclass(value)}")
        return logical.from_logical(schema, value)
    return to_json


def _int_to_connect(logical: Any, what: str, integral: str) -> Any:
    def to_connect(schema: Schema, node: Any) -> Any:
        ok = _is_integral(node) and (integral == "integral" or -(1 << 31) <= node < (1 << 31))
        if not ok:
            raise DataException(f"Invalid type for {what}, underlying representation should be {integral} "
                                f"but was {_node_type(node)}")
        return logical.to_logical(schema, node)
    return to_connect


def _decimal_to_connect(schema: Schema, node: Any) -> decimal.Decimal:
    if _is_number(node):
        return decimal.Decimal(node)
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, base64.b64decode(node, validate=True))
        except Exception as e:
            raise DataException("Invalid bytes for Decimal field") from e
    raise DataException("Invalid type for Decimal, underlying representation should be numeric or bytes but was "
                        + _node_type(node))


_LOGICAL: dict[str | None, tuple[Any, Any]] = {
    Decimal.LOGICAL_NAME: (JsonConverter._decimal_to_json, _decimal_to_connect),
    Date.LOGICAL_NAME: (_date_like_to_json(Date, _dt.date, "Date"), _int_to_connect(Date, "Date", "integer")),
    Time.LOGICAL_NAME: (_date_like_to_json(Time, _dt.time, "Time"), _int_to_connect(Time, "Time", "integer")),
    Timestamp.LOGICAL_NAME: (_date_like_to_json(Timestamp, _dt.datetime, "Timestamp"),
                             _int_to_connect(Timestamp, "Timestamp", "integral")),
}


# ------------------------------------------------------------------------------------ simple converters


class StringConverter(_DualConverter):
    """Kafka's ``StringConverter``: values as text in ``converter.encoding`` (default UTF-8).

    >>> c = StringConverter()
    >>> c.configure({}, is_key=True)
    >>> c.from_connect_data("t", None, 42), c.to_connect_data("t", b"hi").value
    (b'42', 'hi')
    """

    def __init__(self) -> None:
        self.configure({}, is_key=False)

    def config_def(self) -> ConfigDef:
        return converter_config_def().define(
            "converter.encoding", Type.STRING, "UTF-8", _known_encoding, Importance.HIGH,
            "The name of the Java character set to use for encoding strings as byte arrays.",
            width=Width.MEDIUM, display_name="Encoding")

    def _configure(self, config: AbstractConfig) -> None:
        self.encoding: str = config.get("converter.encoding")
        # UTF-8 resynchronises at every ASCII byte: values joined by an ASCII separator decode (with replacement)
        # into the decoded values joined by it.
        self._utf8 = codecs.lookup(self.encoding).name == "utf-8"
        self._fixed = OPTIONAL_STRING_SCHEMA, methodcaller("decode", self.encoding, "replace")  # C calls, no keywords

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        return None if value is None else java_str(value).encode(self.encoding)

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None if data is None else
                              bytes(data).decode(self.encoding, errors="replace"))

    def fixed_schema(self) -> tuple[Schema, Callable[[bytes], str]]:
        return self._fixed

    def from_connect_column(self, topic: str, schemas: Sequence[Schema | None],
                            values: Sequence[Any]) -> list[bytes | None] | None:
        """A batch of strings encoded in one C loop; None if any value is not a string or does not encode.

        >>> StringConverter().from_connect_column("t", [None, None], ["a", "é"])
        [b'a', b'\\xc3\\xa9']
        >>> StringConverter().from_connect_column("t", [None, None], ["a", 42]) is None
        True
        """
        try:
            if self._utf8:
                return list(map(str.encode, values))
            return list(map(str.encode, values, repeat(self.encoding)))
        except (TypeError, UnicodeEncodeError):
            return None

    def to_connect_text(self, topic: str, datas: Sequence[bytes | None], separator: str) -> str:
        if self._utf8 and separator and separator.isascii():  # one decoding for the batch
            try:
                return separator.encode().join(datas).decode("utf-8", "replace")
            except TypeError:  # a null among them
                pass
        return super().to_connect_text(topic, datas, separator)


def _known_encoding(name: str, value: Any) -> None:
    try:
        codecs.lookup(value)
    except (LookupError, TypeError) as e:
        raise ConfigException(name, value, "Unknown character set") from e


class ByteArrayConverter(_DualConverter):
    """Kafka's ``ByteArrayConverter``: bytes pass through untouched.

    >>> ByteArrayConverter().from_connect_data("t", None, b"\\x00\\x01")
    b'\\x00\\x01'
    """

    def config_def(self) -> ConfigDef:
        return converter_config_def()

    def _configure(self, config: AbstractConfig) -> None:
        pass

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value.__class__ is bytes and schema is None:  # the common case, first
            return value
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type}")
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(f"ByteArrayConverter is not compatible with objects of type {_pyclass(value)}")
        return None if value is None else bytes(value)

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, data)

    def fixed_schema(self) -> tuple[Schema, None]:
        return OPTIONAL_BYTES_SCHEMA, None

    def from_connect_column(self, topic: str, schemas: Sequence[Schema | None],
                            values: Sequence[Any]) -> list[bytes | None] | None:
        """A batch of bytes without schemas as it is; None for any other batch.

        >>> ByteArrayConverter().from_connect_column("t", [None], [b"a"])
        [b'a']
        """
        n = len(values)
        if schemas.count(None) != n or list(map(type, values)).count(bytes) != n:
            return None
        return list(values)

    def to_connect_text(self, topic: str, datas: Sequence[bytes | None], separator: str) -> str:
        try:
            text = bytes_repr_join(datas, separator)  # type: ignore[arg-type]
        except TypeError:  # a null among them
            text = None
        # Else a value to escape, or a null: each value printed (java_str_join would try bytes_repr_join again).
        return separator.join(map(java_str, datas)) if text is None else text


class SimpleHeaderConverter(HeaderConverter):
    """Kafka's default header converter: values as their UTF-8 string form, parsed back with a schema.

    Reading infers BOOLEAN, the smallest integer type, FLOAT32/FLOAT64 or Decimal, else STRING
    (Kafka's ``Values.parseString``; arrays, maps and ISO dates are read back as strings here).

    >>> h = SimpleHeaderConverter()
    >>> h.from_connect_header("t", "k", None, True), h.to_connect_header("t", "k", b"300").value
    (b'true', 300)
    """

    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else _values_to_string(value, embedded=False).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return SchemaAndValue(BYTES_SCHEMA, data)
        return _parse_string(text)


def _values_to_string(value: Any, embedded: bool) -> str:
    """Kafka's ``Values.convertToString``: nested strings quoted, lists ``[a,b]``, maps ``{k:v}``."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' if embedded else value
    if isinstance(value, (bytes, bytearray, memoryview)):
        text = base64.b64encode(bytes(value)).decode("ascii")
        return f'"{text}"' if embedded else text
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_values_to_string(v, True) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_values_to_string(k, True)}:{_values_to_string(v, True)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, Struct):
        return "{" + ",".join(f'"{f.name}":{_values_to_string(value.get(f), True)}'
                              for f in value.schema.fields) + "}"
    return java_str(value)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_INT_SCHEMAS = [(8, INT8_SCHEMA), (16, INT16_SCHEMA), (32, INT32_SCHEMA), (64, INT64_SCHEMA)]


def _parse_string(text: str) -> SchemaAndValue:
    if text == "":
        return SchemaAndValue(STRING_SCHEMA, text)
    if text.lower() in ("true", "false"):
        return SchemaAndValue(BOOLEAN_SCHEMA, text.lower() == "true")
    if not _NUMBER.fullmatch(text):
        return SchemaAndValue(STRING_SCHEMA, text)
    number = decimal.Decimal(text)
    if number == number.to_integral_value():
        integral = int(number)
        for bits, schema in _INT_SCHEMAS:
            if -(1 << (bits - 1)) <= integral < (1 << (bits - 1)):
                return SchemaAndValue(schema, integral)
    scale = -number.as_tuple().exponent  # type: ignore[operator]
    if scale != 0 and abs(float(number)) < 3.4028234663852886e38:
        return SchemaAndValue(FLOAT32_SCHEMA, float(number))
    if scale != 0 and abs(float(number)) != float("inf"):
        return SchemaAndValue(FLOAT64_SCHEMA, float(number))
    return SchemaAndValue(Decimal.schema(scale), number)

