"""SQL column types <-> Connect schemas, and values both ways, as Confluent's JDBC connector maps them.

Source side (``numeric.mapping=none``): SMALLINT -> INT16, INTEGER -> INT32, BIGINT -> INT64, REAL -> FLOAT32,
DOUBLE/FLOAT -> FLOAT64, BOOLEAN -> BOOLEAN, NUMERIC(p, s) -> Decimal(s) (``best_fit``: INT8..INT64 for
scale 0 and precision < 19, else FLOAT64 when the precision allows), character types, UUID, JSON, enums ->
STRING, binary -> BYTES, DATE -> Date, TIME -> Time, TIMESTAMP -> Timestamp. A nullable column gives an
optional schema. Columns of other types are left out (with a warning), as Confluent's connector does.

Sink side: the reverse, with TEXT for STRING and NUMERIC for Decimal.

>>> import sqlalchemy as sa
>>> column_schema(sa.Column("n", sa.Numeric(10, 2), nullable=False), "none")[0].name
'org.apache.kafka.connect.data.Decimal'
>>> sql_type(OPTIONAL_INT64_SCHEMA)
BigInteger()
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from connect_magics.api.data import (
    OPTIONAL_INT64_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaType,
    Time,
    Timestamp,
)
from connect_magics.api.errors import ConnectException

log = logging.getLogger(__name__)

UTC = dt.timezone.utc
Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def row_values(indexes: Sequence[int], converters: Sequence[Convert], width: int) -> Callable[[Sequence[Any]], list[Any]]:
    """A function giving the values of a row of ``width`` columns in field order, converted: the columns at
    ``indexes``, each through its converter. Made once per schema, as one generated function (as
    :mod:`dataclasses` makes methods): :func:`_identity` columns taken as they are, the plain converters'
    common case inline, without a call per column.

    >>> values = row_values([2, 0], [_identity, _int], 3)
    >>> values(("7", "x", 1.5)), values((None, "x", None))
    ([1.5, 7], [None, None])
    """
    if list(indexes) == list(range(width)) and all(convert is _identity for convert in converters):
        return list
    names: dict[str, Any] = {}
    items = []
    for k, (j, convert) in enumerate(zip(indexes, converters, strict=True)):
        names[f"c{k}"] = convert
        items.append(_INLINE.get(convert, "c{k}(row[{j}])").format(k=k, j=int(j)))
    exec(f"def values(row):\n    return [{', '.join(items)}]\n", names)  # noqa: S102 - indexes only
    return names["values"]


def _builder(type_: SchemaType) -> SchemaBuilder:
    return SchemaBuilder(type_)


def column_schema(column: Any, numeric_mapping: str, zone: dt.tzinfo = UTC) -> tuple[Schema, Convert] | None:
    """The Connect schema of a column (a SQLAlchemy ``Column`` or reflected dict with ``type``/``nullable``)
    and how to convert its values; None for a type with no mapping."""
    type_ = column.type if hasattr(column, "type") else column["type"]
    nullable = column.nullable if hasattr(column, "nullable") else column.get("nullable", True)
    found = _type_schema(type_, numeric_mapping, zone)
    if found is None:
        return None
    builder, convert = found
    if nullable:
        builder.optional()
    return builder.build(), convert


def _type_schema(type_: Any, numeric_mapping: str, zone: dt.tzinfo) -> tuple[SchemaBuilder, Convert] | None:
    if isinstance(type_, sa.Boolean):
        return _builder(SchemaType.BOOLEAN), _identity
    if isinstance(type_, sa.SmallInteger):
        return _builder(SchemaType.INT16), _identity
    if isinstance(type_, sa.BigInteger):
        return _builder(SchemaType.INT64), _identity
    if isinstance(type_, sa.Integer):
        return _builder(SchemaType.INT32), _identity
    if isinstance(type_, sa.Float):  # before Numeric: Float is a Numeric; REAL and DOUBLE are Floats
        precision = getattr(type_, "precision", None)
        single = isinstance(type_, sa.REAL) or type(type_).__name__ in ("REAL", "FLOAT4") \
            or (precision is not None and precision <= 24 and not isinstance(type_, sa.Double))
        return (_builder(SchemaType.FLOAT32 if single else SchemaType.FLOAT64), _float)
    if isinstance(type_, sa.Numeric):
        precision, scale = type_.precision, type_.scale
        if numeric_mapping == "best_fit" and scale is not None and precision is not None:
            if scale == 0 and precision < 19:
                kind = (SchemaType.INT8 if precision < 3 else SchemaType.INT16 if precision < 5
                        else SchemaType.INT32 if precision < 10 else SchemaType.INT64)
                return _builder(kind), _int
            if precision <= 15:
                return _builder(SchemaType.FLOAT64), _float
        if scale is None:  # NUMERIC without a declared scale: a double, as best_fit would do
            return _builder(SchemaType.FLOAT64), _float
        builder = Decimal.builder(scale)
        if precision is not None:
            builder.parameter(Decimal.PRECISION_FIELD, str(precision))
        return builder, _decimal(scale)
    if isinstance(type_, sa.DateTime):
        return Timestamp.builder(), _timestamp(zone)
    if isinstance(type_, sa.Date):
        return Date.builder(), _date
    if isinstance(type_, sa.Time):
        return Time.builder(), _time
    if isinstance(type_, sa.Interval):
        return None
    if isinstance(type_, (sa.LargeBinary, sa.types._Binary)):
        return _builder(SchemaType.BYTES), _bytes
    if isinstance(type_, (sa.JSON, postgresql.JSONB)):
        return _builder(SchemaType.STRING), _json
    if isinstance(type_, (sa.String, sa.Enum, sa.Uuid, postgresql.UUID, postgresql.INET, postgresql.CIDR)):
        return _builder(SchemaType.STRING), _str
    return None


def _float(value: Any) -> Any:
    return None if value is None else float(value)


def _int(value: Any) -> Any:
    return None if value is None else int(value)


def _str(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return str(value)


#: How :func:`row_values` writes a column's conversion inline (``c{k}`` the converter, ``row[{j}]`` the column):
#: the value's usual class taken as it is, any other through the converter.
_INLINE: dict[Convert, str] = {
    _identity: "row[{j}]",
    _str: "(v{k} if (v{k} := row[{j}]).__class__ is str else c{k}(v{k}))",
    _float: "(v{k} if (v{k} := row[{j}]).__class__ is float else c{k}(v{k}))",
    _int: "(v{k} if (v{k} := row[{j}]).__class__ is int else c{k}(v{k}))",
}


def _json(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _bytes(value: Any) -> Any:
    return None if value is None or isinstance(value, bytes) else bytes(value)


_WIDE = decimal.Context(prec=1000)


def _decimal(scale: int) -> Convert:
    exponent = decimal.Decimal(1).scaleb(-scale)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, decimal.Decimal):
            value = decimal.Decimal(str(value))
        return value.quantize(exponent, None, _WIDE)  # (positional: a keyword costs C decimal twice the call)
    return convert


def _timestamp(zone: dt.tzinfo) -> Convert:
    in_utc = zone is UTC or getattr(zone, "key", None) in ("UTC", "Etc/UTC")

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):  # SQLite columns without a declared type
            value = dt.datetime.fromisoformat(value)
        if value.tzinfo is None:
            if in_utc:
                return _in_zone(value, UTC)
            value = _in_zone(value, zone)
        return value.astimezone(UTC)
    return convert


def _in_zone(value: dt.datetime, zone: dt.tzinfo | None) -> dt.datetime:
    """``value.replace(tzinfo=zone)``, in a fifth of the time for a plain ``datetime`` (what drivers and converters
    give): ``replace`` parses its keywords on every call. ``combine`` keeps ``fold`` for that class only.

    >>> _in_zone(dt.datetime(2025, 1, 2, 3, 4, 5, 6, fold=1), UTC)
    datetime.datetime(2025, 1, 2, 3, 4, 5, 6, fold=1, tzinfo=datetime.timezone.utc)
    >>> _in_zone(dt.datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=UTC), None)
    datetime.datetime(2025, 1, 2, 3, 4, 5, 6)
    """
    if value.__class__ is not dt.datetime:
        return value.replace(tzinfo=zone)
    return dt.datetime.combine(value, value.time(), zone)


def _date(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


def _time(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dt.timedelta):  # MySQL TIME
        return (dt.datetime.min + value).time()
    return value.replace(tzinfo=None) if value.tzinfo is not None else value


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = dt.timedelta(microseconds=1)


def timestamp_parts(value: dt.datetime) -> tuple[int, int]:
    """Confluent's offset of a timestamp: epoch milliseconds and the nanoseconds of its second.

    >>> timestamp_parts(dt.datetime(1970, 1, 1, 0, 0, 1, 2500, tzinfo=UTC))
    (1002, 2500000)
    """
    micros = (value - _EPOCH) // _MICROSECOND
    return micros // 1000, (micros % 1_000_000) * 1000


def timestamp_of(millis: int, nanos: int | None) -> dt.datetime:
    """The inverse of :func:`timestamp_parts` (to the microsecond, Python's precision).

    >>> timestamp_of(1002, 2500000)
    datetime.datetime(1970, 1, 1, 0, 0, 1, 2500, tzinfo=datetime.timezone.utc)
    """
    seconds = millis // 1000
    micros = (nanos // 1000) if nanos is not None else (millis % 1000) * 1000
    return _EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)


# ------------------------------------------------------------------------------------------- sink side


def sql_type(schema: Schema) -> Any:
    """The SQLAlchemy type of a column for a Connect schema (what ``auto.create`` / ``auto.evolve`` use)."""
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return sa.Numeric(scale=Decimal.scale(schema), asdecimal=True)
    if name == Date.LOGICAL_NAME:
        return sa.Date()
    if name == Time.LOGICAL_NAME:
        return sa.Time()
    if name == Timestamp.LOGICAL_NAME:
        return sa.DateTime()
    t = schema.type
    if t in (SchemaType.INT8, SchemaType.INT16):
        return sa.SmallInteger()
    if t is SchemaType.INT32:
        return sa.Integer()
    if t is SchemaType.INT64:
        return sa.BigInteger()
    if t is SchemaType.FLOAT32:
        return sa.REAL()
    if t is SchemaType.FLOAT64:
        return sa.Double()
    if t is SchemaType.BOOLEAN:
        return sa.Boolean()
    if t is SchemaType.STRING:
        return sa.Text()
    if t is SchemaType.BYTES:
        return sa.LargeBinary()
    raise ConnectException(f"{t} (type {schema.type}) type doesn't have a mapping to the SQL database column type")


def value_schema_of(value: Any) -> Schema:
    """A schema for a schemaless value (JSON without schemas): what ``auto.create`` makes its column from."""
    if isinstance(value, bool):
        return SchemaBuilder.boolean().optional().build()
    if isinstance(value, int):
        return OPTIONAL_INT64_SCHEMA
    if isinstance(value, float):
        return SchemaBuilder.float64().optional().build()
    if isinstance(value, (bytes, bytearray)):
        return SchemaBuilder.bytes().optional().build()
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        return Decimal.builder(-exponent if isinstance(exponent, int) else 0).optional().build()
    if isinstance(value, dt.datetime):
        return Timestamp.builder().optional().build()
    if isinstance(value, dt.date):
        return Date.builder().optional().build()
    return SchemaBuilder.string().optional().build()


def sink_value(value: Any, column_type: Any) -> Any:
    """A Connect value as the column wants it: timestamps naive in UTC for columns without a time zone,
    structures (schemaless JSON) as JSON text, UUIDs as text."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and not getattr(column_type, "timezone", False):
            return _in_zone(value.astimezone(UTC), None)
        if value.tzinfo is None and getattr(column_type, "timezone", False):
            return _in_zone(value, UTC)
        return value
    if isinstance(value, (dict, list)) and not isinstance(column_type, (sa.JSON, postgresql.JSONB)):
        return json.dumps(value, separators=(",", ":"), default=str)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value
