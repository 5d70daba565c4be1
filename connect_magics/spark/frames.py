"""The one way connect_magics makes Spark DataFrames from Python values: columns of values and a Spark
schema, through an Arrow table (exact types, nested structs, arrays and maps; classic and Spark Connect).

>>> from pyspark.sql import types as T  # doctest: +SKIP
>>> spark_frame(spark, [[1, 2], ["a", None]], T.StructType([T.StructField("n", T.LongType()),
...                                                          T.StructField("s", T.StringType())]))  # doctest: +SKIP
DataFrame[n: bigint, s: string]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from connect_magics.spark import pyspark_major

__all__ = ["arrow_table", "spark_frame"]


def arrow_table(columns: Sequence[Sequence[Any]], schema: Any) -> pa.Table:
    """An Arrow table of ``columns`` (one sequence of Python values per field of the Spark ``schema``):
    structs as dicts, arrays as lists, maps as dicts, None as null."""
    fields = list(schema.fields)
    if len(columns) != len(fields):
        raise ValueError(f"{len(columns)} columns for the {len(fields)} fields of {schema.simpleString()}")
    arrays = [pa.array(list(values), type=_arrow_type(f.dataType))
              for values, f in zip(columns, fields, strict=True)]
    return pa.Table.from_arrays(arrays, names=[f.name for f in fields])


def _arrow_type(data_type: Any) -> pa.DataType:
    """The Arrow type of a Spark type, timestamps in UTC (Spark 4 asks for the zone; 3.5 always uses UTC)."""
    from pyspark.sql.pandas.types import to_arrow_type

    try:
        return to_arrow_type(data_type, timezone="UTC")
    except TypeError:  # Spark 3.5: no timezone argument
        return to_arrow_type(data_type)


def spark_frame(spark: Any, columns: Sequence[Sequence[Any]], schema: Any) -> Any:
    """A Spark DataFrame with exactly ``schema`` (its field metadata included) holding ``columns``."""
    table = arrow_table(columns, schema)  # checks the columns against the schema in either case
    if pyspark_major() < 4:  # Spark 3.5 takes no Arrow table: rows of the same values
        return spark.createDataFrame(list(zip(*columns, strict=True)), schema)
    return spark.createDataFrame(table, schema)

