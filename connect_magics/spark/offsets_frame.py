"""Connector offsets (KIP-875's JSON) as pandas or Spark DataFrames, and edited frames back as alter requests.

One row per partition; one column per partition field and per offset field. Sink connectors get the
columns ``kafka_topic``, ``kafka_partition`` and ``kafka_offset``. A field that is both a partition and an
offset field gets two prefixed columns, ``partition.<field>`` and ``offset.<field>``. Which column is which
is kept in ``DataFrame.attrs["connect_offsets"]`` (pandas) or in the column metadata (Spark).

Values keep their JSON types: integer columns are ``Int64`` (nullable, exact up to 2**63-1; larger
integers live in an ``object`` column as Python ints), booleans ``boolean``, floats ``float64``, strings
and mixed columns ``object``. A missing field is ``pd.NA`` (or NaN); in ``object`` columns ``None`` is a
JSON null. On the way back, a row whose offset cells are all missing or null is a reset of that partition.

>>> frame = offsets_to_frame({"offsets": [{"partition": {"filename": "a"}, "offset": {"position": 7}}]})
>>> frame.loc[0, "position"] = 0
>>> frame_to_request(frame)
{'offsets': [{'partition': {'filename': 'a'}, 'offset': {'position': 0}}]}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from connect_magics.spark.frames import spark_frame

__all__ = ["META_KEY", "frame_to_request", "offsets_to_frame", "offsets_to_spark"]

META_KEY = "connect_offsets"
"""Key of the metadata in ``DataFrame.attrs`` and in Spark column metadata."""
PARTITION, OFFSET = "partition", "offset"
SINK_COLUMNS = {"kafka_topic": PARTITION, "kafka_partition": PARTITION, "kafka_offset": OFFSET}
_INT64 = (-(1 << 63), (1 << 63) - 1)

Roles = dict[str, tuple[str, str]]
"""column -> (PARTITION or OFFSET, field name)."""


class _Absent:
    """A field that is not in a partition or offset (shown as ``pd.NA``)."""


ABSENT = _Absent()


def _entries(offsets: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if isinstance(offsets, Mapping):
        offsets = offsets.get("offsets") or []
    return list(offsets)


def _fields(maps: Iterable[Mapping[str, Any] | None]) -> list[str]:
    seen: dict[str, None] = {}
    for m in maps:
        for key in m or ():
            seen.setdefault(key, None)
    return list(seen)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _column(values: list[Any]) -> pd.Series:
    """A column of JSON values with the narrowest dtype that keeps them exactly."""
    present = [v for v in values if v is not ABSENT]
    data = [pd.NA if v is ABSENT else v for v in values]
    if present and all(v is not None for v in present):
        if all(_is_int(v) and _INT64[0] <= v <= _INT64[1] for v in present):
            return pd.Series(pd.array(data, dtype="Int64"))
        if all(isinstance(v, bool) for v in present):
            return pd.Series(pd.array(data, dtype="boolean"))
        if all(isinstance(v, float) for v in present):
            return pd.Series([np.nan if v is pd.NA else v for v in data], dtype="float64")
    return pd.Series(data, dtype=object)


def offsets_to_frame(offsets: Mapping[str, Any] | Iterable[Mapping[str, Any]], sink: bool | None = None,
                     connector: str | None = None) -> pd.DataFrame:
    """``{"offsets": [...]}`` (or its list) as a DataFrame; ``sink`` is guessed from the fields if None.

    >>> df = offsets_to_frame({"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0},
    ...                                     "offset": {"kafka_offset": 2**62}}]})
    >>> list(df.columns), str(df["kafka_offset"].dtype), df.attrs["connect_offsets"]["type"]
    (['kafka_topic', 'kafka_partition', 'kafka_offset'], 'Int64', 'sink')
    """
    entries = _entries(offsets)
    partitions = [e.get(PARTITION) for e in entries]
    offset_maps = [e.get(OFFSET) for e in entries]
    p_fields, o_fields = _fields(partitions), _fields(offset_maps)
    if sink is None:
        sink = bool(entries) and set(p_fields) == {"kafka_topic", "kafka_partition"} and o_fields == ["kafka_offset"]
    if sink:
        p_fields = ["kafka_topic", "kafka_partition"] + [f for f in p_fields if f not in SINK_COLUMNS]
        o_fields = ["kafka_offset"] + [f for f in o_fields if f != "kafka_offset"]
    both = set(p_fields) & set(o_fields)
    roles: Roles = {}
    columns: dict[str, pd.Series] = {}
    for kind, fields, maps in ((PARTITION, p_fields, partitions), (OFFSET, o_fields, offset_maps)):
        for field in fields:
            column = f"{kind}.{field}" if field in both else field
            roles[column] = (kind, field)
            columns[column] = _column([m[field] if m is not None and field in m else ABSENT for m in maps])
    frame = pd.DataFrame(columns) if columns else pd.DataFrame(index=range(len(entries)))
    frame.attrs[META_KEY] = {"connector": connector, "type": "sink" if sink else "source",
                             "columns": {c: list(r) for c, r in roles.items()}}
    return frame


# -- back: frames to alter requests -------------------------------------------------------------------------


def _is_spark(frame: Any) -> bool:
    return not isinstance(frame, pd.DataFrame) and hasattr(frame, "schema") and hasattr(frame, "collect")


def _missing(value: Any, none_is_missing: bool) -> bool:
    if value is None:
        return none_is_missing
    if value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _python(value: Any) -> Any:
    """numpy / Decimal scalars as the JSON primitives they stand for."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, Decimal):
        return float(value)
    return value


def _roles_from_metadata(columns: list[str], meta: Mapping[str, Any] | None) -> Roles | None:
    if not meta:
        return None
    known = {c: tuple(r) for c, r in (meta.get("columns") or {}).items()}
    roles: Roles = {}
    for column in columns:
        if column in known:
            roles[column] = known[column]  # type: ignore[assignment]
        elif column.startswith((PARTITION + ".", OFFSET + ".")):
            kind, _, field = column.partition(".")
            roles[column] = (kind, field)
        else:
            raise ValueError(f"Column '{column}' is not a partition or offset field of this frame; name new "
                             "fields 'partition.<field>' or 'offset.<field>', or pass partition_columns / "
                             "offset_columns")
    return roles


def _roles(columns: list[str], partition_columns: list[str] | None, offset_columns: list[str] | None,
           meta: Mapping[str, Any] | None, known: Callable[[], Any] | None) -> Roles:
    """Which column holds which partition or offset field (see :func:`frame_to_request`)."""
    def strip(column: str, kind: str) -> str:
        return column[len(kind) + 1:] if column.startswith(kind + ".") else column

    if partition_columns is not None or offset_columns is not None:
        for given in (partition_columns or [], offset_columns or []):
            missing = [c for c in given if c not in columns]
            if missing:
                raise ValueError(f"Column(s) {missing} are not in the frame, whose columns are {columns}")
        p = list(partition_columns) if partition_columns is not None else \
            [c for c in columns if c not in set(offset_columns or [])]
        o = list(offset_columns) if offset_columns is not None else [c for c in columns if c not in set(p)]
        both = set(p) & set(o)
        if both:
            raise ValueError(f"Column(s) {sorted(both)} cannot be both partition and offset columns")
        unused = [c for c in columns if c not in set(p) | set(o)]
        if unused:
            raise ValueError(f"Column(s) {unused} are neither partition nor offset columns")
        return {**{c: (PARTITION, strip(c, PARTITION)) for c in p}, **{c: (OFFSET, strip(c, OFFSET)) for c in o}}
    roles = _roles_from_metadata(columns, meta)
    if roles is not None:
        return roles
    if {"kafka_topic", "kafka_partition"} <= set(columns) and set(columns) <= set(SINK_COLUMNS):
        return {c: (SINK_COLUMNS[c], c) for c in columns}
    if columns and all(c.startswith((PARTITION + ".", OFFSET + ".")) for c in columns):
        return {c: (c.partition(".")[0], c.partition(".")[2]) for c in columns}
    if known is not None:
        current = _entries(known())
        p_fields = set(_fields(e.get(PARTITION) for e in current))
        o_fields = set(_fields(e.get(OFFSET) for e in current))
        roles = {}
        for c in columns:
            in_p, in_o = c in p_fields, c in o_fields
            if in_p == in_o:
                why = "both a partition and an offset field" if in_p else "no field of the connector's offsets"
                raise ValueError(f"Cannot tell whether column '{c}' is a partition or an offset field ({why}); "
                                 "pass partition_columns / offset_columns")
            roles[c] = (PARTITION if in_p else OFFSET, c)
        return roles
    raise ValueError("Cannot tell the partition columns from the offset columns of this frame (it has no "
                     "connect_offsets metadata); pass partition_columns / offset_columns")


def _spark_rows(frame: Any) -> tuple[list[str], dict[str, list[Any]], dict[str, Any] | None]:
    columns = list(frame.columns)
    meta: dict[str, Any] = {"columns": {}}
    for field in frame.schema.fields:  # every column carries the whole map: renamed/replaced ones still resolve
        meta["columns"].update(((field.metadata or {}).get(META_KEY) or {}).get("columns") or {})
    rows = frame.collect()
    data = {c: [row[i] for row in rows] for i, c in enumerate(columns)}
    return columns, data, (meta if meta["columns"] else None)


def frame_to_request(frame: Any, partition_columns: list[str] | None = None,
                     offset_columns: list[str] | None = None,
                     known: Callable[[], Any] | None = None) -> dict[str, list[dict[str, Any]]]:
    """An alter request (``{"offsets": [...]}``) from a pandas or Spark DataFrame, one entry per row.

    Column roles come from, in this order: ``partition_columns`` / ``offset_columns`` (either one; the other
    columns are the rest), the frame's metadata (new columns named ``partition.<f>`` / ``offset.<f>``),
    the sink columns, ``partition.``/``offset.`` prefixes on every column, and finally the fields of the
    connector's current offsets (``known()``). A row whose offset cells are all missing or null becomes
    ``"offset": null`` (reset that partition). In Spark frames a null is always a missing field.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"kafka_topic": ["t"], "kafka_partition": [0], "kafka_offset": [None]})
    >>> frame_to_request(df)
    {'offsets': [{'partition': {'kafka_topic': 't', 'kafka_partition': 0}, 'offset': None}]}
    """
    if _is_spark(frame):
        columns, data, meta = _spark_rows(frame)
        none_is_missing, length = True, len(next(iter(data.values()), []))
    elif isinstance(frame, pd.DataFrame):
        columns = [str(c) for c in frame.columns]
        if len(set(columns)) != len(columns):
            raise ValueError(f"The frame has duplicate column names: {columns}")
        data = {str(c): list(frame[c].array) for c in frame.columns}
        meta, none_is_missing, length = frame.attrs.get(META_KEY), False, len(frame)
    else:
        raise TypeError(f"Expected a pandas or Spark DataFrame, got {type(frame).__name__}")
    roles = _roles(columns, partition_columns, offset_columns, meta, known)
    sink = bool(roles) and all(roles[c] == (SINK_COLUMNS.get(c), c) for c in roles)
    entries = []
    for i in range(length):
        maps: dict[str, dict[str, Any]] = {PARTITION: {}, OFFSET: {}}
        null_offsets = 0
        for column, (kind, field) in roles.items():
            value = data[column][i]
            if _missing(value, none_is_missing):
                null_offsets += kind == OFFSET
                continue
            value = _python(value)
            if value is None:
                null_offsets += kind == OFFSET
            elif sink and isinstance(value, float) and value.is_integer():
                value = int(value)  # an integer column that became float64 after an edit
            maps[kind][field] = value
        offset_count = sum(1 for kind, _ in roles.values() if kind == OFFSET)
        offset = None if null_offsets == offset_count else maps[OFFSET]
        entries.append({PARTITION: maps[PARTITION], OFFSET: offset})
    return {"offsets": entries}


# -- Spark ------------------------------------------------------------------------------------------------------


def _spark_type(column: str, values: list[Any]) -> Any:
    from pyspark.sql import types as T

    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present):
        return T.BooleanType()
    if all(_is_int(v) for v in present):
        if all(_INT64[0] <= v <= _INT64[1] for v in present):
            return T.LongType()
        if all(abs(v) < 10 ** 38 for v in present):
            return T.DecimalType(38, 0)
    elif all(isinstance(v, float) for v in present):
        return T.DoubleType()
    elif all(isinstance(v, str) for v in present):
        return T.StringType()
    kinds = sorted({type(v).__name__ for v in present})
    raise ValueError(f"Column '{column}' holds values of several types ({', '.join(kinds)}), which one Spark "
                     "column cannot hold exactly; use the pandas frame for these offsets")


def offsets_to_spark(spark: Any, offsets: Mapping[str, Any] | Iterable[Mapping[str, Any]] | pd.DataFrame,
                     sink: bool | None = None) -> Any:
    """The offsets (or a frame from :func:`offsets_to_frame`) as a Spark DataFrame with typed columns
    (``LongType``, ``DoubleType``, ``BooleanType``, ``StringType``; ``DecimalType(38,0)`` beyond 64 bits)
    whose metadata says which are partition and offset fields. Missing fields and JSON nulls are nulls.

    >>> sdf = offsets_to_spark(spark, rt.get_offsets("lines"))  # doctest: +SKIP
    >>> rt.alter_offsets_from_frame("lines", sdf.withColumn("position", F.lit(0)))  # doctest: +SKIP
    """
    from pyspark.sql import types as T

    frame = offsets if isinstance(offsets, pd.DataFrame) else offsets_to_frame(offsets, sink)
    roles = {c: tuple(r) for c, r in frame.attrs.get(META_KEY, {}).get("columns", {}).items()}
    columns = [str(c) for c in frame.columns]
    data = {c: [None if _missing(v, False) else _python(v) for v in frame[c].array] for c in columns}
    fields = []
    for c in columns:
        spark_type = _spark_type(c, data[c])
        if isinstance(spark_type, T.DecimalType):
            data[c] = [None if v is None else Decimal(v) for v in data[c]]
        metadata = {META_KEY: {"columns": {k: list(v) for k, v in roles.items()}}} if roles else {}
        fields.append(T.StructField(c, spark_type, True, metadata))
    return spark_frame(spark, [data[c] for c in columns], T.StructType(fields))
