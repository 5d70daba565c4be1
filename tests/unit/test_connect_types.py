"""Connect schemas and schemaless values as Spark types, and values shaped for those types."""

from __future__ import annotations

import datetime as dt
import decimal

from pyspark.sql import types as T

from connect_magics.api.data import (
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.spark.connect_types import finish_type, infer_type, merge_types, spark_type, spark_value


def test_connect_schemas_map_to_spark_types() -> None:
    schema = (SchemaBuilder.struct().field("id", INT64_SCHEMA).field("small", INT8_SCHEMA)
              .field("ratio", FLOAT32_SCHEMA).field("blob", BYTES_SCHEMA).field("price", Decimal.schema(2))
              .field("day", Date.SCHEMA).field("at", Timestamp.SCHEMA).field("clock", Time.SCHEMA)
              .field("tags", SchemaBuilder.array(OPTIONAL_STRING_SCHEMA).build())
              .field("counts", SchemaBuilder.map(OPTIONAL_STRING_SCHEMA, INT64_SCHEMA).build()).build())
    assert spark_type(schema).simpleString() == (
        "struct<id:bigint,small:tinyint,ratio:float,blob:binary,price:decimal(38,2),day:date,at:timestamp,"
        "clock:string,tags:array<string>,counts:map<string,bigint>>")


def test_schemaless_values_are_typed_like_sparks_json_reader() -> None:
    merged = T.NullType()
    for value in ({"id": 1, "tags": ["a"]}, {"id": 2.5, "extra": {"n": 1}}, {"id": 3, "extra": "x"}, None):
        merged = merge_types(merged, infer_type(value))
    assert finish_type(merged).simpleString() == "struct<id:double,tags:array<string>,extra:string>"
    assert finish_type(infer_type({"empty": None, "list": []})).simpleString() == \
        "struct<empty:string,list:array<string>>"
    assert infer_type(2**70) == T.DecimalType(38, 0)
    assert infer_type({1: "a"}).simpleString() == "map<bigint,string>"
    assert merge_types(T.ArrayType(T.LongType()), T.StringType()) == T.StringType()


def test_values_are_shaped_for_their_column_type() -> None:
    schema = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("price", Decimal.schema(2)).build()
    merged = merge_types(spark_type(schema), T.StructType([T.StructField("note", T.StringType())]))
    value = Struct(schema).put("id", 7).put("price", decimal.Decimal("1.50"))
    assert spark_value(value, merged) == {"id": 7, "price": decimal.Decimal("1.50"), "note": None}
    assert spark_value({"n": 1, "b": b"\x00"}, T.StringType()) == '{"n":1,"b":"AA=="}'
    assert spark_value(dt.time(1, 2, 3), T.StringType()) == "01:02:03"
    assert spark_value(3, T.DoubleType()) == 3.0 and isinstance(spark_value(3, T.DoubleType()), float)
    assert spark_value([{"a": 1}, None], T.ArrayType(T.StructType([T.StructField("a", T.LongType())]))) == \
        [{"a": 1}, None]
