"""Connect schemas and values to Arrow types and values, and back.

Sink side: :func:`arrow_type` maps a Connect schema to the Arrow type of its column, and
:func:`arrow_value` turns a Connect value into what ``pyarrow.array`` takes for that type (None when the
value can be taken as it is). Source side: :func:`connect_schema` maps an Arrow type to an optional
Connect schema, and :func:`connect_value` the Python value Arrow gives (``to_pylist``) to a Connect value.

Connect's logical types become Arrow's: Date ``date32``, Timestamp ``timestamp[us, UTC]``, Decimal
``decimal128(38, scale)``. Time has no Spark or Delta type and is kept as Connect stores it, an ``int32``
of milliseconds since midnight.

Example::

    >>> from connect_magics.api.data import SchemaBuilder, INT64_SCHEMA, OPTIONAL_STRING_SCHEMA
    >>> s = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("name", OPTIONAL_STRING_SCHEMA).build()
    >>> arrow_type(s)
    StructType(struct<id: int64, name: string>)
    >>> connect_schema(arrow_type(s)).fields[0].schema.type
    <SchemaType.INT64: 'int64'>
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from connect_magics.api.data import (
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT8_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException

__all__ = ["TIMESTAMP", "arrow_type", "arrow_value", "connect_schema", "connect_value", "field_column",
           "plain_value"]

TIMESTAMP = pa.timestamp("us", tz="UTC")
"""The Arrow type of timestamps in tables (Spark's and Delta's precision)."""

_PRIMITIVES: dict[SchemaType, pa.DataType] = {
    SchemaType.INT8: pa.int8(), SchemaType.INT16: pa.int16(), SchemaType.INT32: pa.int32(),
    SchemaType.INT64: pa.int64(), SchemaType.FLOAT32: pa.float32(), SchemaType.FLOAT64: pa.float64(),
    SchemaType.BOOLEAN: pa.bool_(), SchemaType.STRING: pa.string(), SchemaType.BYTES: pa.binary(),
}
_DECIMAL_PRECISION = 38  # Spark's and Delta's maximum, unless the schema keeps a precision (Avro's)


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a column of values of ``schema`` (every field nullable).

    >>> arrow_type(Decimal.schema(2)), arrow_type(Timestamp.SCHEMA)
    (Decimal128Type(decimal128(38, 2)), TimestampType(timestamp[us, tz=UTC]))
    """
    if schema.name == Date.LOGICAL_NAME:
        return pa.date32()
    if schema.name == Timestamp.LOGICAL_NAME:
        return TIMESTAMP
    if schema.name == Decimal.LOGICAL_NAME:
        return pa.decimal128(Decimal.precision(schema, _DECIMAL_PRECISION), Decimal.scale(schema))
    if schema.type in _PRIMITIVES:
        return _PRIMITIVES[schema.type]
    if schema.type is SchemaType.ARRAY:
        return pa.list_(arrow_type(schema.value_schema))  # type: ignore[arg-type]
    if schema.type is SchemaType.MAP:
        return pa.map_(arrow_type(schema.key_schema), arrow_type(schema.value_schema))  # type: ignore[arg-type]
    return pa.struct([pa.field(f.name, arrow_type(f.schema)) for f in schema.fields])


def arrow_value(schema: Schema) -> Callable[[Any], Any] | None:
    """A function turning a non-null Connect value of ``schema`` into ``pyarrow.array``'s input for
    :func:`arrow_type`, or None when the value needs no change (most primitives).

    >>> arrow_value(Time.SCHEMA)(_dt.time(0, 0, 1))
    1000
    """
    if schema.name == Time.LOGICAL_NAME:
        return lambda value: Time.from_logical(schema, value)
    if schema.type is SchemaType.ARRAY:
        return _list_of(arrow_value(schema.value_schema))  # type: ignore[arg-type]
    if schema.type is SchemaType.MAP:
        key = arrow_value(schema.key_schema) or _same  # type: ignore[arg-type]
        val = arrow_value(schema.value_schema) or _same  # type: ignore[arg-type]
        return lambda value: [(key(k), None if v is None else val(v)) for k, v in value.items()]
    if schema.type is SchemaType.STRUCT:
        fields = [(f, arrow_value(f.schema) or _same) for f in schema.fields]

        def struct(value: Struct) -> dict[str, Any]:
            out = {}
            for f, convert in fields:
                v = value.get(f)
                out[f.name] = None if v is None else convert(v)
            return out
        return struct
    return None


def field_column(field: Field, structs: Sequence[Struct]) -> list[Any]:
    """The values of ``field`` (``Struct.get``) in each struct, as :func:`arrow_value` of the struct gives them
    row by row: one column's input to ``pyarrow.array`` for :func:`arrow_type` of the field's schema.

    >>> s = SchemaBuilder.struct().field("t", Time.builder().optional().build()).build()
    >>> field_column(s.fields[0], [Struct(s).put("t", _dt.time(0, 0, 2)), Struct(s)])
    [2000, None]
    """
    column = [s.get(field) for s in structs]
    convert = arrow_value(field.schema)
    return column if convert is None else [None if v is None else convert(v) for v in column]


def _same(value: Any) -> Any:
    return value


def _list_of(item: Callable[[Any], Any] | None) -> Callable[[list[Any]], list[Any]] | None:
    """A function converting every non-null element of a list with ``item`` (None if ``item`` is None)."""
    return None if item is None else lambda value: [None if v is None else item(v) for v in value]


def plain_value(value: Any) -> Any:
    """A schemaless value as Arrow infers it best: JSON's exact decimals become floats, Structs dicts.

    >>> plain_value({"price": decimal.Decimal("1.5"), "tags": [decimal.Decimal("2")]})
    {'price': 1.5, 'tags': [2.0]}
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is decimal.Decimal:
        return float(value)
    if isinstance(value, Mapping):
        return {k: v if type(v) in _PLAIN else plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _PLAIN else plain_value(v) for v in value]
    if isinstance(value, Struct):
        return arrow_value(value.schema)(value)  # type: ignore[misc]
    return value


_PLAIN = frozenset({str, int, float, bool, bytes, type(None)})
"""Types Arrow takes as they are (checked by exact type: the hot path of schemaless values)."""


# -------------------------------------------------------------------------------------------- Arrow -> Connect

_FROM_ARROW: list[tuple[Callable[[pa.DataType], bool], Schema]] = [
    (pa.types.is_boolean, OPTIONAL_BOOLEAN_SCHEMA),
    (pa.types.is_int8, OPTIONAL_INT8_SCHEMA), (pa.types.is_uint8, OPTIONAL_INT16_SCHEMA),
    (pa.types.is_int16, OPTIONAL_INT16_SCHEMA), (pa.types.is_uint16, OPTIONAL_INT32_SCHEMA),
    (pa.types.is_int32, OPTIONAL_INT32_SCHEMA), (pa.types.is_uint32, OPTIONAL_INT64_SCHEMA),
    (pa.types.is_int64, OPTIONAL_INT64_SCHEMA), (pa.types.is_uint64, OPTIONAL_INT64_SCHEMA),
    (pa.types.is_float32, OPTIONAL_FLOAT32_SCHEMA),
    (pa.types.is_float64, OPTIONAL_FLOAT64_SCHEMA),
    (pa.types.is_string, OPTIONAL_STRING_SCHEMA), (pa.types.is_large_string, OPTIONAL_STRING_SCHEMA),
    (pa.types.is_binary, OPTIONAL_BYTES_SCHEMA), (pa.types.is_large_binary, OPTIONAL_BYTES_SCHEMA),
    (pa.types.is_fixed_size_binary, OPTIONAL_BYTES_SCHEMA), (pa.types.is_null, OPTIONAL_STRING_SCHEMA),
    (pa.types.is_date, Date.builder().optional().build()),
    (pa.types.is_timestamp, Timestamp.builder().optional().build()),
    (pa.types.is_time, Time.builder().optional().build()),
]


def connect_schema(type_: pa.DataType) -> Schema:
    """The optional Connect schema of an Arrow column (a struct type gives a STRUCT schema).

    >>> connect_schema(pa.list_(pa.string())).value_schema.type
    <SchemaType.STRING: 'string'>
    """
    if pa.types.is_dictionary(type_):
        return connect_schema(type_.value_type)
    for test, schema in _FROM_ARROW:
        if test(type_):
            return schema
    if pa.types.is_decimal(type_):  # the precision kept as Confluent's converters keep it (Avro's decimal)
        return Decimal.builder(type_.scale).parameter(Decimal.PRECISION_FIELD, str(type_.precision)).optional().build()
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_):
        return SchemaBuilder.array(connect_schema(type_.value_type)).optional().build()
    if pa.types.is_map(type_):
        return SchemaBuilder.map(connect_schema(type_.key_type), connect_schema(type_.item_type)).optional().build()
    if pa.types.is_struct(type_):
        builder = SchemaBuilder.struct()
        for field in type_:
            builder.field(field.name, connect_schema(field.type))
        return builder.optional().build()
    raise DataException(f"Arrow type {type_} has no Connect schema")


def connect_value(schema: Schema) -> Callable[[Any], Any] | None:
    """A function turning a non-null ``to_pylist`` value of an Arrow column into a Connect value of ``schema``
    (from :func:`connect_schema`), or None when the value is one already.

    >>> s = connect_schema(pa.struct([("a", pa.int64())]))
    >>> connect_value(s)({"a": 1})
    Struct{a=1}
    """
    if schema.type is SchemaType.STRUCT:
        fields = [(f, connect_value(f.schema)) for f in schema.fields]

        def struct(value: Mapping[str, Any]) -> Struct:
            out = Struct(schema)
            for f, convert in fields:
                v = value.get(f.name)
                out.put(f, v if v is None or convert is None else convert(v))
            return out
        return struct
    if schema.type is SchemaType.ARRAY:
        return _list_of(connect_value(schema.value_schema))  # type: ignore[arg-type]
    if schema.type is SchemaType.MAP:
        key = connect_value(schema.key_schema) or _same  # type: ignore[arg-type]
        val = connect_value(schema.value_schema) or _same  # type: ignore[arg-type]
        return lambda value: {key(k): None if v is None else val(v) for k, v in value}
    if schema.name == Timestamp.LOGICAL_NAME:
        return _utc_datetime
    return None


def _utc_datetime(value: _dt.datetime) -> _dt.datetime:
    return value.replace(tzinfo=_dt.timezone.utc) if value.tzinfo is None else value.astimezone(_dt.timezone.utc)
