"""Sink records to Arrow tables: the value's columns, optional Kafka coordinates, key and headers.

A value that is a :class:`~connect_magics.api.Struct` gives one column per field, typed by its Connect
schema (JsonConverter with schemas); a map (schemaless JSON) one column per key, typed as Arrow infers
it over the whole batch; any other value a single ``value`` column. Column types are kept from one
batch to the next (:class:`TableRows` remembers them), so that every file of a table agrees: a column a
batch has only nulls for takes its earlier type, and a value that does not fit its column's type
fails the task with a message naming the column.

Example::

    >>> from connect_magics.api.records import Headers, SinkRecord
    >>> rows = TableRows(coordinates=True)
    >>> rows.table([SinkRecord("t", 0, None, None, None, {"id": 1}, 1700000000000, kafka_offset=7)]).to_pylist()[0]["id"]
    1
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa

from connect_magics.api.config import java_str
from connect_magics.api.data import Struct
from connect_magics.api.errors import DataException
from connect_magics.api.records import Headers, SinkRecord
from connect_magics.connectors.spark_table.arrow_types import TIMESTAMP, arrow_type, field_column, plain_value
from connect_magics.connectors.spark_table.settings import COORDINATE_COLUMNS

__all__ = ["VALUE_COLUMN", "RowColumns", "TableRows"]

VALUE_COLUMN = "value"
"""The column of values that are neither structs nor maps."""

_HEADERS_TYPE = pa.map_(pa.string(), pa.string())


@dataclass(slots=True)
class RowColumns:
    """Sink records as columns: where each was consumed and its value, and whatever else the table holds
    of them (``None`` for a column not wanted). :class:`TableRows` builds a table from it; a sink task buffers
    each partition's rows in one (:meth:`extend`), so that no :class:`SinkRecord` need be built.

    >>> rows = RowColumns([], [], [], [], key=[])
    >>> rows.extend(range(2), {"topic": ["t", "t"], "kafka_partition": [0, 0], "kafka_offset": [4, 5],
    ...                        "value": [{"a": 1}, {"a": 2}], "key": [b"x", b"y"]})
    >>> len(rows), rows.key
    (2, [b'x', b'y'])
    """

    topic: list[str]
    kafka_partition: list[int]
    kafka_offset: list[int]
    value: list[Any]
    timestamp: list[int | None] | None = None
    key: list[Any] | None = None
    headers: list[Headers | None] | None = None

    @classmethod
    def of(cls, records: Sequence[SinkRecord]) -> RowColumns:
        """Every column of ``records`` (where they were consumed: their original topic, partition, offset)."""
        return cls([r.original_topic for r in records], [r.original_kafka_partition for r in records],
                   [r.original_kafka_offset for r in records], [r.value for r in records], [r.timestamp for r in records], [r.key for r in records],
                   [r.headers if r.has_headers() else None for r in records])

    def __len__(self) -> int:
        return len(self.value)

    def extend(self, rows: range | list[int], columns: Mapping[str, list[Any]]) -> None:
        """Append the rows at positions ``rows`` (a range, or ascending positions) of ``columns`` (lists over
        the same records, by field name) to the columns this one holds."""
        for name in _ROW_FIELDS:
            mine = getattr(self, name)
            if mine is not None:
                theirs = columns[name]
                mine.extend(theirs[rows.start:rows.stop] if isinstance(rows, range) else [theirs[i] for i in rows])

    def where(self, keep: list[bool]) -> RowColumns:
        """The rows whose ``keep`` is true."""
        def kept(column: list[Any] | None) -> list[Any] | None:
            return None if column is None else list(itertools.compress(column, keep))
        return RowColumns(*(kept(getattr(self, name)) for name in _ROW_FIELDS))  # type: ignore[arg-type]


_ROW_FIELDS = tuple(f.name for f in fields(RowColumns))


class TableRows:
    """Builds the Arrow table of sink records, with column types stable across calls.

    ``coordinates`` adds ``kafka_topic``, ``kafka_partition``, ``kafka_offset`` and ``kafka_timestamp``
    (where the record was consumed); ``key_column`` and ``headers_column`` name the key's and the
    headers' columns (empty: none); ``null_values`` is ``"ignore"`` (skip tombstones) or ``"fail"``.
    """

    def __init__(self, coordinates: bool = False, key_column: str = "", headers_column: str = "",
                 null_values: str = "ignore") -> None:
        self.coordinates = coordinates
        self.key_column = key_column
        self.headers_column = headers_column
        self.null_values = null_values
        self.known: dict[str, pa.DataType] = {}

    def columns(self) -> RowColumns:
        """Empty columns of what the table holds of each record."""
        return RowColumns([], [], [], [], [] if self.coordinates else None, [] if self.key_column else None,
                          [] if self.headers_column else None)

    def table(self, rows: RowColumns | Sequence[SinkRecord]) -> pa.Table:
        """The rows (tombstones left out or refused), as a table."""
        if not isinstance(rows, RowColumns):
            rows = RowColumns.of(rows)
        values = rows.value
        if any(v is None for v in values):
            if self.null_values == "fail":
                at = next(i for i, v in enumerate(values) if v is None)
                raise DataException(f"The record at offset {rows.kafka_offset[at]} of {rows.topic[at]}-"
                                    f"{rows.kafka_partition[at]} has a null value, and behavior.on.null.values=fail")
            rows = rows.where([v is not None for v in values])
            values = rows.value
        columns = _value_columns(values)
        for name, column in self._extra_columns(rows).items():
            if name in columns:
                raise DataException(f"Column '{name}' of the values clashes with the column of the same name "
                                    "the connector adds; rename it (for example with ReplaceField)")
            columns[name] = column
        return self._stable(columns)

    def _extra_columns(self, rows: RowColumns) -> dict[str, pa.Array]:
        extra: dict[str, pa.Array] = {}
        if self.coordinates:
            topic, partition, offset, timestamp = COORDINATE_COLUMNS
            extra[topic] = pa.array(rows.topic, pa.string())
            extra[partition] = pa.array(rows.kafka_partition, pa.int32())
            extra[offset] = pa.array(rows.kafka_offset, pa.int64())
            extra[timestamp] = pa.array(rows.timestamp, pa.int64()) \
                .cast(pa.timestamp("ms", tz="UTC")).cast(TIMESTAMP)
        if self.key_column:
            extra[self.key_column] = _infer(rows.key, self.key_column)
        if self.headers_column:
            extra[self.headers_column] = pa.array(
                [[*{h.key: _header_text(h.value) for h in headers}.items()] if headers else None
                 for headers in rows.headers], _HEADERS_TYPE)  # type: ignore[union-attr]
        return extra

    def _stable(self, columns: dict[str, pa.Array]) -> pa.Table:
        """The columns cast to the types earlier batches gave them; all-null columns of no known type left out."""
        names, arrays = [], []
        for name, column in columns.items():
            known = self.known.get(name)
            if known is None:
                if pa.types.is_null(column.type):
                    continue
                self.known[name] = column.type
            elif column.type != known:
                column = self._cast(name, column, known)
            names.append(name)
            arrays.append(column)
        return pa.Table.from_arrays(arrays, names=names)

    def _cast(self, name: str, column: pa.Array, known: pa.DataType) -> pa.Array:
        """``column`` as the column's type: nested types may gain fields and nulls take any type; values of a
        narrower type convert (integers into a double column); anything else is refused."""
        try:
            target = _unified(name, known, column.type, "default")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            try:
                target = _unified(name, known, column.type, "permissive")
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                target = None
            if target != known:
                raise DataException(f"Column '{name}' holds {known} values; this batch has {column.type} values, "
                                    "which would change its type") from None
        try:
            cast = column.cast(target)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise DataException(f"Column '{name}' holds {target} values; this batch's {column.type} values do "
                                f"not convert: {e}") from None
        self.known[name] = target
        return cast


def _unified(name: str, known: pa.DataType, new: pa.DataType, promote: str) -> pa.DataType:
    schemas = [pa.schema([(name, known)]), pa.schema([(name, new)])]
    return pa.unify_schemas(schemas, promote_options=promote).field(name).type


def _value_columns(values: list[Any]) -> dict[str, pa.Array]:
    """The value columns of non-null values: struct fields, map keys, or a single ``value`` column."""
    if values and all(type(v) is Struct for v in values):
        parts = [_struct_columns(list(run)) for _, run in itertools.groupby(values, key=lambda v: id(v.schema))]
        if len(parts) == 1:
            return parts[0]
        merged = pa.concat_tables([pa.table(p) for p in parts], promote_options="permissive")
        return dict(zip(merged.column_names, (c.combine_chunks() for c in merged.columns), strict=True))
    if values and all(type(v) is dict or isinstance(v, Mapping) for v in values):
        rows = _plain_array(values)
        if not pa.types.is_struct(rows.type):
            raise DataException(f"Map values must have string keys to become columns; got {rows.type}")
        return {field.name: rows.field(i) for i, field in enumerate(rows.type)}
    return {VALUE_COLUMN: _infer(values, VALUE_COLUMN)}


def _struct_columns(structs: list[Struct]) -> dict[str, pa.Array]:
    """The columns of structs sharing one schema, typed by it."""
    columns = {}
    for field in structs[0].schema.fields:
        try:
            columns[field.name] = pa.array(field_column(field, structs), arrow_type(field.schema))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise DataException(f"Field '{field.name}' does not convert to {arrow_type(field.schema)}: {e}") from e
    return columns


def _infer(values: list[Any], name: str) -> pa.Array:
    try:
        return _plain_array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise DataException(f"The values of column '{name}' have no common Arrow type: {e}") from e


def _plain_array(values: list[Any]) -> pa.Array:
    """``pa.array`` of the :func:`plain_value` of each value. Arrow converts plain JSON-like values by itself
    (five times faster than copying each first); only decimals and Structs need the copy."""
    try:
        array = pa.array(values)
        if not _has_decimal(array.type):
            return array
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    return pa.array([plain_value(v) for v in values])


def _has_decimal(t: pa.DataType) -> bool:
    if pa.types.is_decimal(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_decimal(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_decimal(t.key_type) or _has_decimal(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_decimal(t.value_type)
    return False


def _header_text(value: Any) -> str | None:
    """A header value as text: strings as they are, bytes as UTF-8, anything else as Java prints it."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return java_str(value)
