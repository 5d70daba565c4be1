"""Kafka Connect's data model: schemas, structs and logical types.

Python values stand in for Java's: ``int`` for INT8..INT64, ``float`` for FLOAT32/64, ``bool``,
``str``, ``bytes``, ``list`` for ARRAY, ``dict`` for MAP and :class:`Struct` for STRUCT. Logical
types use ``decimal.Decimal``, ``datetime.date``, ``datetime.time`` and ``datetime.datetime``.

Example::

    >>> schema = (SchemaBuilder.struct().name("person")
    ...           .field("name", STRING_SCHEMA)
    ...           .field("age", OPTIONAL_INT32_SCHEMA).build())
    >>> Struct(schema).put("name", "Ada").put("age", 36)
    Struct{name=Ada,age=36}
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from connect_magics.api.errors import DataException, SchemaBuilderException

__all__ = [
    "Date", "Decimal", "Field", "LRUCache", "Schema", "SchemaBuilder", "SchemaType", "Struct", "Time", "Timestamp",
    "copy_schema_basics", "validate_value",
    "INT8_SCHEMA", "INT16_SCHEMA", "INT32_SCHEMA", "INT64_SCHEMA", "FLOAT32_SCHEMA", "FLOAT64_SCHEMA",
    "BOOLEAN_SCHEMA", "STRING_SCHEMA", "BYTES_SCHEMA", "OPTIONAL_INT8_SCHEMA", "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA", "OPTIONAL_INT64_SCHEMA", "OPTIONAL_FLOAT32_SCHEMA", "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA", "OPTIONAL_STRING_SCHEMA", "OPTIONAL_BYTES_SCHEMA",
]


class SchemaType(enum.Enum):
    """Kafka's ``Schema.Type``: ``str()`` is the Java name, ``.value`` the lower-case name.

    >>> str(SchemaType.INT32), SchemaType.INT32.value
    ('INT32', 'int32')
    """

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    # Members are singletons compared by identity: hash them by identity too, in C (Enum's hash is Python code,
    # run for every look-up keyed by a type on the data path).
    __hash__ = object.__hash__

    def __str__(self) -> str:
        return self.name

    @property
    def is_primitive(self) -> bool:
        return self not in (SchemaType.ARRAY, SchemaType.MAP, SchemaType.STRUCT)


@dataclass(frozen=True)
class Field:
    """A named, indexed field of a STRUCT schema.

    >>> SchemaBuilder.struct().field("id", INT64_SCHEMA).build().field("id").index
    0
    """

    name: str
    index: int
    schema: Schema


class Schema:
    """An immutable Connect schema (Kafka's ``ConnectSchema``); build one with :class:`SchemaBuilder`.

    >>> SchemaBuilder.array(INT32_SCHEMA).optional().build()
    Schema{ARRAY}
    """

    Type = SchemaType

    __slots__ = ("type", "optional", "default_value", "name", "version", "doc", "parameters",
                 "_fields", "_by_name", "key_schema", "value_schema", "_hash")

    def __init__(self, type: SchemaType, optional: bool = False, default_value: Any = None,
                 name: str | None = None, version: int | None = None, doc: str | None = None,
                 parameters: Mapping[str, str] | None = None, fields: Iterable[Field] | None = None,
                 key_schema: Schema | None = None, value_schema: Schema | None = None) -> None:
        self.type = type
        self.optional = optional
        self.default_value = default_value
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters) if parameters is not None else None
        self._fields = tuple(fields or ()) if type is SchemaType.STRUCT else None
        self._by_name = {f.name: f for f in self._fields or ()}
        self.key_schema = key_schema
        self.value_schema = value_schema
        self._hash: int | None = None

    def __getstate__(self) -> dict[str, Any]:  # the hash of strings differs between processes: not pickled
        return {name: getattr(self, name) for name in self.__slots__ if name != "_hash"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._hash = None

    @property
    def fields(self) -> list[Field]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return list(self._fields)

    def field(self, name: str) -> Field | None:
        if self._fields is None:
            raise DataException("Cannot look up fields on non-struct type")
        return self._by_name.get(name)

    def _key(self) -> tuple[Any, ...]:
        return (self.type, self.optional, self.default_value, self.name, self.version, self.doc,
                self.parameters, self._fields, self.key_schema, self.value_schema)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self._key() == other._key()

    def __hash__(self) -> int:  # computed once: schemas are immutable, and cache keys are hashed per record
        if self._hash is None:
            self._hash = hash((self.type, self.optional, self.name, self.version, self._fields))
        return self._hash

    def __repr__(self) -> str:
        return f"Schema{{{self.name}:{self.type}}}" if self.name else f"Schema{{{self.type}}}"


def _primitive(type_: SchemaType, optional: bool) -> Schema:
    return Schema(type_, optional)


INT8_SCHEMA = _primitive(SchemaType.INT8, False)
INT16_SCHEMA = _primitive(SchemaType.INT16, False)
INT32_SCHEMA = _primitive(SchemaType.INT32, False)
INT64_SCHEMA = _primitive(SchemaType.INT64, False)
FLOAT32_SCHEMA = _primitive(SchemaType.FLOAT32, False)
FLOAT64_SCHEMA = _primitive(SchemaType.FLOAT64, False)
BOOLEAN_SCHEMA = _primitive(SchemaType.BOOLEAN, False)
STRING_SCHEMA = _primitive(SchemaType.STRING, False)
BYTES_SCHEMA = _primitive(SchemaType.BYTES, False)
OPTIONAL_INT8_SCHEMA = _primitive(SchemaType.INT8, True)
OPTIONAL_INT16_SCHEMA = _primitive(SchemaType.INT16, True)
OPTIONAL_INT32_SCHEMA = _primitive(SchemaType.INT32, True)
OPTIONAL_INT64_SCHEMA = _primitive(SchemaType.INT64, True)
OPTIONAL_FLOAT32_SCHEMA = _primitive(SchemaType.FLOAT32, True)
OPTIONAL_FLOAT64_SCHEMA = _primitive(SchemaType.FLOAT64, True)
OPTIONAL_BOOLEAN_SCHEMA = _primitive(SchemaType.BOOLEAN, True)
OPTIONAL_STRING_SCHEMA = _primitive(SchemaType.STRING, True)
OPTIONAL_BYTES_SCHEMA = _primitive(SchemaType.BYTES, True)


class SchemaBuilder:
    """Fluent construction of a :class:`Schema`; each property may be set once.

    >>> SchemaBuilder.int64().name("ts").optional().default_value(0).build().default_value
    0
    """

    def __init__(self, type: SchemaType) -> None:
        self.type = type
        self._props: dict[str, Any] = {}
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is SchemaType.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    def _set(self, prop: str, value: Any) -> SchemaBuilder:
        if self._props.get(prop) is not None and self._props[prop] != value:
            raise SchemaBuilderException(f"Invalid SchemaBuilder call: {prop} has already been set.")
        self._props[prop] = value
        return self

    # -- type constructors
    @staticmethod
    def of_type(type: SchemaType) -> SchemaBuilder:
        return SchemaBuilder(type)

    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(SchemaType.STRUCT)

    @staticmethod
    def array(value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        b = SchemaBuilder(SchemaType.ARRAY)
        b._value_schema = _as_schema(value_schema)
        return b

    @staticmethod
    def map(key_schema: Schema | SchemaBuilder, value_schema: Schema | SchemaBuilder) -> SchemaBuilder:
        if key_schema is None:
            raise SchemaBuilderException("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        b = SchemaBuilder(SchemaType.MAP)
        b._key_schema, b._value_schema = _as_schema(key_schema), _as_schema(value_schema)
        return b

    # -- properties
    def optional(self) -> SchemaBuilder:
        return self._set("optional", True)

    def required(self) -> SchemaBuilder:
        return self._set("optional", False)

    def default_value(self, value: Any) -> SchemaBuilder:
        try:
            validate_value(self.build(), value)
        except DataException as e:
            raise SchemaBuilderException(f"Invalid default value: {e}") from e
        return self._set("default_value", value)

    def name(self, name: str) -> SchemaBuilder:
        return self._set("name", name)

    def version(self, version: int) -> SchemaBuilder:
        return self._set("version", version)

    def doc(self, doc: str) -> SchemaBuilder:
        return self._set("doc", doc)

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        self._parameters = {**(self._parameters or {}), key: value}
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        self._parameters = {**(self._parameters or {}), **params}
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        if self._fields is None:
            raise SchemaBuilderException(f"Cannot create fields on type {self.type}")
        if name is None:
            raise SchemaBuilderException("fieldName cannot be null.")
        if schema is None:
            raise SchemaBuilderException(f"fieldSchema for field {name} cannot be null.")
        if name in self._fields:
            raise SchemaBuilderException(f"Cannot create field because of field name duplication {name}")
        self._fields[name] = Field(name, len(self._fields), _as_schema(schema))
        return self

    @property
    def fields(self) -> list[Field]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return list(self._fields.values())

    def build(self) -> Schema:
        p = self._props
        return Schema(self.type, bool(p.get("optional")), p.get("default_value"), p.get("name"),
                      p.get("version"), p.get("doc"), self._parameters,
                      self._fields.values() if self._fields is not None else None,
                      self._key_schema, self._value_schema)

    schema = build


SchemaBuilder.bool = SchemaBuilder.boolean  # type: ignore[attr-defined]  # Kafka's spelling


def _as_schema(schema: Schema | SchemaBuilder) -> Schema:
    return schema.build() if isinstance(schema, SchemaBuilder) else schema


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Copy name, version, doc and parameters of ``source`` onto ``builder`` (Kafka's ``SchemaUtil``)."""
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


# ------------------------------------------------------------------------------------------------ values


class Struct:
    """A value of a STRUCT schema: a fixed set of fields, validated on :meth:`put`.

    >>> s = Struct(SchemaBuilder.struct().field("id", INT64_SCHEMA).build()).put("id", 7)
    >>> s.get("id"), s == Struct(s.schema).put("id", 7)
    (7, True)
    """

    __slots__ = ("schema", "_values")

    def __init__(self, schema: Schema) -> None:
        if schema.type is not SchemaType.STRUCT:
            raise DataException(f"Not a struct schema: {schema!r}")
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields)

    @classmethod
    def of(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct from its field values in field order, not validated: for converters whose decoder
        already checked each value against the schema.

        >>> Struct.of(SchemaBuilder.struct().field("id", INT64_SCHEMA).build(), [7]).get("id")
        7
        """
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def _lookup(self, field: str | Field) -> Field:
        if isinstance(field, Field):
            return field
        found = self.schema.field(field)
        if found is None:
            raise DataException(f"{field} is not a valid field name")
        return found

    def put(self, field: str | Field, value: Any) -> Struct:
        """Set a field (validated against its schema); returns self for chaining."""
        f = self._lookup(field)
        validate_value(f.schema, value, f.name)
        self._values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        """The field's value, or its schema's default when unset."""
        f = field if field.__class__ is Field else self._lookup(field)
        value = self._values[f.index]
        return f.schema.default_value if value is None else value

    def get_without_default(self, field: str | Field) -> Any:
        return self._values[self._lookup(field).index]

    def validate(self) -> None:
        """Check every required field without a default has a valid value."""
        for f in self.schema.fields:
            value = self._values[f.index]
            if value is None and (f.schema.optional or f.schema.default_value is not None):
                continue
            validate_value(f.schema, value, f.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self._values == other._values

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        from connect_magics.api.config import java_str  # config imports this module

        parts = (f"{f.name}={java_str(self._values[f.index])}" for f in self.schema.fields
                 if self._values[f.index] is not None)
        return "Struct{" + ",".join(parts) + "}"


_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_CLASSES: dict[SchemaType, tuple[type, ...]] = {
    **{t: (int,) for t in _INT_BITS},
    SchemaType.FLOAT32: (float, int), SchemaType.FLOAT64: (float, int), SchemaType.BOOLEAN: (bool,),
    SchemaType.STRING: (str,), SchemaType.BYTES: (bytes, bytearray, memoryview),
    SchemaType.ARRAY: (list, tuple), SchemaType.MAP: (Mapping,), SchemaType.STRUCT: (Struct,),
}


def validate_value(schema: Schema, value: Any, field: str | None = None, *, _location: str | None = None) -> None:
    """Raise :class:`DataException` unless ``value`` fits ``schema`` (Kafka's ``ConnectSchema.validateValue``).

    >>> validate_value(STRING_SCHEMA, None, "name")
    Traceback (most recent call last):
    ...
    connect_magics.api.errors.DataException: Invalid value: null used for required field: "name", schema type: STRING
    """
    location = _location or ("value" if field is None else f'field: "{field}"')
    if value is None:
        if not schema.optional:
            raise DataException(f"Invalid value: null used for required {location}, schema type: {schema.type}")
        return
    classes = _LOGICAL_CLASSES.get(schema.name or "", _CLASSES[schema.type])
    wrong_bool = isinstance(value, bool) and bool not in classes
    if not isinstance(value, classes) or wrong_bool or not _in_range(schema.type, value):
        named = f' "{schema.name}"' if schema.name else ""
        raise DataException(f"Invalid Java object for schema{named} with type {schema.type}: "
                            f"class {type(value).__qualname__} for {location}")
    if schema.type is SchemaType.STRUCT:
        if value.schema != schema:
            raise DataException("Struct schemas do not match.")
        value.validate()
    elif schema.type is SchemaType.ARRAY:
        for item in value:
            validate_value(_require(schema.value_schema, location), item, _location=f"element of array {location}")
    elif schema.type is SchemaType.MAP:
        for k, v in value.items():
            validate_value(_require(schema.key_schema, location), k, _location=f"key of map {location}")
            validate_value(_require(schema.value_schema, location), v, _location=f"value of map {location}")


def _in_range(type_: SchemaType, value: Any) -> bool:
    bits = _INT_BITS.get(type_)
    return bits is None or not isinstance(value, int) or -(1 << (bits - 1)) <= value < (1 << (bits - 1))


def _require(schema: Schema | None, location: str) -> Schema:
    if schema is None:
        raise DataException(f"No schema defined for {location}")
    return schema


class LRUCache:
    """A small thread-safe LRU map (Kafka's ``SynchronizedCache(LRUCache)``), used for schema caches.

    >>> c = LRUCache(1); c.put("a", 1); c.put("b", 2); (c.get("a"), c.get("b"))
    (None, 2)
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # converters travel to Spark executors pickled
        with self._lock:
            return {"max_size": self.max_size, "_items": OrderedDict(self._items)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if len(self._items) > self.max_size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


# ---------------------------------------------------------------------------------------- logical types

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_NAIVE = _EPOCH.replace(tzinfo=None)
_MILLIS_PER_DAY = 86_400_000
_ONE_MS = _dt.timedelta(milliseconds=1)


def _check_name(schema: Schema, logical_name: str, what: str) -> None:
    if schema.name != logical_name:
        raise DataException(f"Requested conversion of {what} object but the schema does not match.")


def _utc(value: _dt.datetime) -> _dt.datetime:
    return value.replace(tzinfo=_dt.timezone.utc) if value.tzinfo is None else value


#: A context that rounds nothing (the default one rounds to 28 digits).
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


class Decimal:
    """Arbitrary-precision decimals as BYTES (big-endian two's-complement unscaled value) with a ``scale``.

    >>> s = Decimal.schema(2)
    >>> Decimal.from_logical(s, decimal.Decimal("1.56")), Decimal.to_logical(s, b"\\x9c")
    (b'\\x00\\x9c', Decimal('-1.00'))
    """

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"
    PRECISION_FIELD = "connect.decimal.precision"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter(Decimal.SCALE_FIELD, str(scale)).version(1)

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        text = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if text is None:
            raise DataException("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(text)
        except ValueError as e:
            raise DataException("Invalid scale parameter found in Decimal schema: ") from e

    @staticmethod
    def precision(schema: Schema, default: int) -> int:
        """The precision Avro's and Confluent's converters keep in ``connect.decimal.precision``, else
        ``default``; ``default`` too when the kept one cannot hold the scale or exceeds it.

        >>> Decimal.precision(Decimal.builder(2).parameter("connect.decimal.precision", "10").build(), 38)
        10
        """
        text = (schema.parameters or {}).get(Decimal.PRECISION_FIELD)
        precision = int(text) if text is not None and text.isdigit() else default
        return precision if Decimal.scale(schema) <= precision <= default else default

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal) -> bytes:
        return Decimal.unscaled_bytes(value, Decimal.scale(schema))

    @staticmethod
    def unscaled_bytes(value: decimal.Decimal, scale: int) -> bytes:
        """:meth:`from_logical` for a schema of ``scale``: what writers that read the scale once call per value.

        >>> Decimal.unscaled_bytes(decimal.Decimal("-1.00"), 2)
        b'\\x9c'
        """
        try:  # an integer's digits only when the value's scale is ``scale`` (else a point or an exponent)
            unscaled = int(str(value.scaleb(scale, _EXACT)))
        except ValueError:
            unscaled = Decimal._unscaled(value, scale)
        return unscaled.to_bytes((unscaled + (unscaled < 0)).bit_length() // 8 + 1, "big", signed=True)

    @staticmethod
    def _unscaled(value: decimal.Decimal, scale: int) -> int:
        exponent = value.as_tuple().exponent
        if not isinstance(exponent, int):
            raise DataException(f"Decimal value {value} cannot be represented")
        if -exponent != scale:
            raise DataException("Decimal value has mismatching scale for given Decimal schema. "
                                f"Schema has scale {scale}, value has scale {-exponent}.")
        return int(value.scaleb(scale, _EXACT))  # (digits beyond what int() reads from a string)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> decimal.Decimal:
        unscaled = int.from_bytes(value, "big", signed=True)
        return decimal.Decimal(f"{unscaled}E{-Decimal.scale(schema)}")  # exact, as Java's BigDecimal


class Date:
    """Days since the epoch as INT32; Python value ``datetime.date``.

    >>> Date.from_logical(Date.SCHEMA, _dt.date(1970, 1, 3))
    2
    """

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        _check_name(schema, Date.LOGICAL_NAME, "Date")
        if isinstance(value, _dt.datetime):
            value = _utc(value).astimezone(_dt.timezone.utc)
            if value.time() != _dt.time(0):
                raise DataException("Kafka Connect Date type should not have any time fields set to non-zero values.")
            value = value.date()
        return (value - _EPOCH.date()).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        _check_name(schema, Date.LOGICAL_NAME, "Date")
        return _EPOCH.date() + _dt.timedelta(days=value)


class Time:
    """Milliseconds since midnight as INT32; Python value ``datetime.time``.

    >>> Time.to_logical(Time.SCHEMA, 3_600_001)
    datetime.time(1, 0, 0, 1000)
    """

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time) -> int:
        _check_name(schema, Time.LOGICAL_NAME, "Time")
        if isinstance(value, _dt.datetime):
            raise DataException("Kafka Connect Time type should not have any date fields set to non-zero values.")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        _check_name(schema, Time.LOGICAL_NAME, "Date")
        if not 0 <= value <= _MILLIS_PER_DAY:
            raise DataException(
                "Time values must use number of milliseconds greater than 0 and less than 86400000")
        return (_dt.datetime.min + value * _ONE_MS).time()


class Timestamp:
    """Milliseconds since the epoch as INT64; Python value ``datetime.datetime`` (naive means UTC).

    >>> Timestamp.from_logical(Timestamp.SCHEMA, _dt.datetime(1970, 1, 1, 0, 0, 1))
    1000
    """

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: Schema

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.datetime) -> int:
        _check_name(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        return Timestamp.millis(value)

    @staticmethod
    def millis(value: _dt.datetime) -> int:
        """Milliseconds since the epoch of a ``datetime`` (naive means UTC): :meth:`from_logical` without the
        schema, for writers that checked it once.

        >>> Timestamp.millis(_dt.datetime(1970, 1, 1, 0, 0, 1, 999))
        1000
        """
        return (value - (_EPOCH_NAIVE if value.tzinfo is None else _EPOCH)) // _ONE_MS

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime:
        _check_name(schema, Timestamp.LOGICAL_NAME, "Timestamp")
        return _EPOCH + value * _ONE_MS


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()

_LOGICAL_CLASSES: dict[str, tuple[type, ...]] = {
    Decimal.LOGICAL_NAME: (decimal.Decimal,),
    Date.LOGICAL_NAME: (_dt.date,),
    Time.LOGICAL_NAME: (_dt.time,),
    Timestamp.LOGICAL_NAME: (_dt.datetime,),
}
