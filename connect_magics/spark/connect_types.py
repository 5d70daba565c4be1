"""Connect data as Spark data: the Spark type of a Connect schema, the type inferred from schemaless values,
and Python values shaped for a Spark column of a given type.

Connect types map to Spark's: INT8..INT64 to byte, short, int, bigint; FLOAT32/64 to float, double;
BOOLEAN, STRING, BYTES to boolean, string, binary; ARRAY, MAP, STRUCT to array, map, struct; the logical
types Decimal to decimal(38, scale), Date to date, Timestamp to timestamp, and Time (Spark has no time of
day type) to its ISO text. Schemaless values (JSON without schemas) are typed as Spark's JSON reader
types them: objects are structs with the union of their fields, integers bigint, integers mixed with
floats double, and values whose types conflict become strings holding their JSON text.

>>> from connect_magics.api.data import SchemaBuilder, INT64_SCHEMA
>>> spark_type(SchemaBuilder.struct().field("id", INT64_SCHEMA).build()).simpleString()
'struct<id:bigint>'
>>> merge_types(infer_type({"a": 1}), infer_type({"a": 1.5, "b": "x"})).simpleString()
'struct<a:double,b:string>'
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

from pyspark.sql import types as T

from connect_magics.api.data import Date, Decimal, Schema, SchemaType, Struct, Time, Timestamp

__all__ = ["finish_type", "infer_type", "merge_types", "spark_type", "spark_value"]

_PRIMITIVES: dict[SchemaType, T.DataType] = {
    SchemaType.INT8: T.ByteType(), SchemaType.INT16: T.ShortType(), SchemaType.INT32: T.IntegerType(),
    SchemaType.INT64: T.LongType(), SchemaType.FLOAT32: T.FloatType(), SchemaType.FLOAT64: T.DoubleType(),
    SchemaType.BOOLEAN: T.BooleanType(), SchemaType.STRING: T.StringType(), SchemaType.BYTES: T.BinaryType(),
}
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_MAX_PRECISION = 38


def spark_type(schema: Schema) -> T.DataType:
    """The Spark type of values of a Connect ``schema``."""
    if schema.name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        if not 0 <= scale <= _MAX_PRECISION:
            return T.StringType()
        return T.DecimalType(Decimal.precision(schema, _MAX_PRECISION), scale)
    if schema.name == Date.LOGICAL_NAME:
        return T.DateType()
    if schema.name == Timestamp.LOGICAL_NAME:
        return T.TimestampType()
    if schema.name == Time.LOGICAL_NAME:
        return T.StringType()
    if schema.type is SchemaType.ARRAY:
        return T.ArrayType(spark_type(schema.value_schema))
    if schema.type is SchemaType.MAP:
        return T.MapType(spark_type(schema.key_schema), spark_type(schema.value_schema))
    if schema.type is SchemaType.STRUCT:
        return T.StructType([T.StructField(f.name, spark_type(f.schema)) for f in schema.fields])
    return _PRIMITIVES[schema.type]


def infer_type(value: Any) -> T.DataType:
    """The Spark type of a schemaless value (``NullType`` for None; see :func:`finish_type`)."""
    if value is None:
        return T.NullType()
    if isinstance(value, Struct):
        return spark_type(value.schema)
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return T.LongType()
        return T.DecimalType(_MAX_PRECISION, 0) if abs(value) < 10 ** _MAX_PRECISION else T.StringType()
    if isinstance(value, float):
        return T.DoubleType()
    if isinstance(value, bytes | bytearray):
        return T.BinaryType()
    if isinstance(value, dt.datetime):
        return T.TimestampType()
    if isinstance(value, dt.date):
        return T.DateType()
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return T.StructType([T.StructField(k, infer_type(v)) for k, v in value.items()])
        return T.MapType(_merge_all(infer_type(k) for k in value), _merge_all(infer_type(v) for v in value.values()))
    if isinstance(value, list | tuple):
        return T.ArrayType(_merge_all(infer_type(v) for v in value))
    return T.StringType()  # Decimal, time and anything else: their text


def _merge_all(types: Any) -> T.DataType:
    merged: T.DataType = T.NullType()
    for t in types:
        merged = merge_types(merged, t)
    return merged


def merge_types(a: T.DataType, b: T.DataType) -> T.DataType:
    """The narrowest type holding values of both types (strings when they conflict)."""
    if a == b or isinstance(b, T.NullType):
        return a
    if isinstance(a, T.NullType):
        return b
    if isinstance(a, _INTEGRAL) and isinstance(b, _INTEGRAL):
        return T.LongType()
    numbers = (*_INTEGRAL, T.FloatType, T.DoubleType)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return T.DoubleType()
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        theirs = {f.name: f.dataType for f in b.fields}
        fields = [T.StructField(f.name, merge_types(f.dataType, theirs.pop(f.name, T.NullType()))) for f in a.fields]
        return T.StructType(fields + [T.StructField(n, t) for n, t in theirs.items()])
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(merge_types(a.elementType, b.elementType))
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return T.MapType(merge_types(a.keyType, b.keyType), merge_types(a.valueType, b.valueType))
    return T.StringType()


def finish_type(dtype: T.DataType) -> T.DataType:
    """``dtype`` with every ``NullType`` (only nulls seen) replaced by string."""
    if isinstance(dtype, T.NullType):
        return T.StringType()
    if isinstance(dtype, T.StructType):
        return T.StructType([T.StructField(f.name, finish_type(f.dataType)) for f in dtype.fields])
    if isinstance(dtype, T.ArrayType):
        return T.ArrayType(finish_type(dtype.elementType))
    if isinstance(dtype, T.MapType):
        return T.MapType(finish_type(dtype.keyType), finish_type(dtype.valueType))
    return dtype


def _plain(value: Any) -> Any:
    """A value as JSON-serializable data (Structs as objects, bytes as base64, as Kafka's JsonConverter)."""
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f)) for f in value.schema.fields}
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, decimal.Decimal | dt.date | dt.time):
        return str(value) if isinstance(value, decimal.Decimal) else value.isoformat()
    return value


def spark_value(value: Any, dtype: T.DataType) -> Any:
    """``value`` shaped for a Spark column of ``dtype`` (built by the functions above from it or a merge):
    structs as dicts, conflicting values as JSON text."""
    if value is None:
        return None
    if isinstance(dtype, T.StringType):
        if isinstance(value, str):
            return value
        if isinstance(value, dt.time):
            return value.isoformat()
        return json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False)
    if isinstance(dtype, T.StructType):
        if isinstance(value, Struct):  # a field of a merged type may be missing from this value's schema
            def get(name: str) -> Any:
                return value.get(name) if value.schema.field(name) is not None else None
        else:
            get = value.get
        return {f.name: spark_value(get(f.name), f.dataType) for f in dtype.fields}
    if isinstance(dtype, T.ArrayType):
        return [spark_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, T.MapType):
        return {spark_value(k, dtype.keyType): spark_value(v, dtype.valueType) for k, v in value.items()}
    if isinstance(dtype, T.DoubleType | T.FloatType):
        return float(value)
    if isinstance(dtype, T.DecimalType):
        return decimal.Decimal(value)
    return value
