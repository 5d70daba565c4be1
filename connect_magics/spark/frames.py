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

__all__ = ["arrow_table", "spark_frame"]


def arrow_table(columns: Sequence[Sequence[Any]], schema: Any) -> pa.Table:
    """An Arrow table of ``columns`` (one sequence of Python values per field of the Spark ``schema``):
    structs as dicts, arrays as lists, maps as dicts, None as null."""
    from pyspark.sql.pandas.types import to_arrow_type

    fields = list(schema.fields)
    if len(columns) != len(fields):
        raise ValueError(f"{len(columns)} columns for the {len(fields)} fields of {schema.simpleString()}")
    arrays = [pa.array(list(values), type=to_arrow_type(f.dataType, timezone="UTC"))
              for values, f in zip(columns, fields, strict=True)]
    return pa.Table.from_arrays(arrays, names=[f.name for f in fields])


def spark_frame(spark: Any, columns: Sequence[Sequence[Any]], schema: Any) -> Any:
    """A Spark DataFrame with exactly ``schema`` (its field metadata included) holding ``columns``."""
    return spark.createDataFrame(arrow_table(columns, schema), schema)
