"""``SparkTableSource``: the rows of a Parquet directory or a Delta table into a topic, incrementally.

One record per row, its value a :class:`~connect_magics.api.Struct` whose schema comes from the
table's Arrow schema (every field optional). Progress is the source offset of partition
``{"path": <table directory>}``:

- ``mode=files`` reads each new data file once, oldest first (see :mod:`.feeds`), with offsets
  ``{"file": <path in the table>, "modified": <mtime ns>, "row": <rows of it read>}`` for Parquet and
  ``{"file": ..., "version": <Delta version>, "row": ...}`` for Delta: files after that one are new.
- ``mode=incrementing`` reads the rows whose ``incrementing.column`` is above the last value read, in
  its order, with offsets ``{"column_value": <last value>}`` (dates and timestamps as ISO-8601 text;
  null: from the beginning). Rows sharing a value are read in one poll, and only the last of them
  carries that value as its offset, so a restart never skips any of them.

Offsets can be altered and reset while the connector is stopped (KIP-875); :meth:`alter_offsets`
checks them. Reading needs no SparkSession.

Example::

    rt.create_connector("events-in", {"connector.class": "SparkTableSource", "path": "/data/events",
                                      "topic": "events", "value.converter": "org.apache.kafka.connect.json.JsonConverter"})
"""

from __future__ import annotations

import datetime as _dt
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from connect_magics.api.connector import SourceConnector, SourceTask, Task
from connect_magics.api.data import Schema, SchemaBuilder
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SourceRecord
from connect_magics.connectors.file import _is_long, _partition_dict, _plugin_version
from connect_magics.connectors.spark_table import settings
from connect_magics.connectors.spark_table.arrow_types import connect_schema, connect_value
from connect_magics.connectors.spark_table.feeds import DataFile, DeltaFeed, Feed, ParquetFeed
from connect_magics.connectors.spark_table.store import TableStore
from connect_magics.connectors.spark_table.table_connector import TableConnector

__all__ = ["SparkTableSourceConnector", "SparkTableSourceTask", "check_offset", "row_schema"]

log = logging.getLogger(__name__)

PATH_FIELD = "path"
FILE_FIELD = "file"
ROW_FIELD = "row"
COLUMN_VALUE_FIELD = "column_value"


def _feed(parsed: dict[str, Any]) -> Feed:
    store = settings.table_store(parsed)
    return DeltaFeed(store) if parsed[settings.FORMAT_CONFIG] == "delta" else ParquetFeed(store)


def row_schema(schema: pa.Schema) -> Schema:
    """The Connect schema of a table's rows: a required struct of optional fields.

    >>> [f.name for f in row_schema(pa.schema([("id", pa.int64()), ("name", pa.string())])).fields]
    ['id', 'name']
    """
    builder = SchemaBuilder.struct()
    for field in schema:
        builder.field(field.name, connect_schema(field.type))
    return builder.build()


def _offset_error(key: str, expected: str) -> ConnectException:
    return ConnectException(f"The value for the '{key}' key in the offset is expected to be {expected}")


def check_offset(parsed: dict[str, Any], partition: dict[str, Any] | None, offset: dict[str, Any] | None) -> None:
    """Raise :class:`ConnectException` naming the field when a partition or offset is malformed for this
    configuration (``parsed``); null offsets (resets) are always fine.

    >>> check_offset({"mode": "files", "format": "parquet"}, {"path": "/t"},
    ...              {"file": "a.parquet", "modified": 0, "row": -1})
    Traceback (most recent call last):
    ...
    connect_magics.api.errors.ConnectException: The value for the 'row' key in the offset is expected to be a non-negative Long value
    """
    if partition is None:
        raise ConnectException("Partition objects cannot be null")
    if PATH_FIELD not in partition:
        raise ConnectException(f"Partition objects should contain the key '{PATH_FIELD}'")
    if not isinstance(partition[PATH_FIELD], str):
        raise ConnectException(f"The value for the '{PATH_FIELD}' key in the partition is expected to be a String")
    if offset is None:
        return
    if parsed[settings.MODE_CONFIG] == "incrementing":
        if COLUMN_VALUE_FIELD not in offset:
            raise ConnectException(f"Offset objects should either be null or contain the key '{COLUMN_VALUE_FIELD}'")
        value = offset[COLUMN_VALUE_FIELD]
        if value is not None and not (_is_long(value) or isinstance(value, str)):
            raise _offset_error(COLUMN_VALUE_FIELD, "a Long or String value of the incrementing column, or null")
        return
    order = (DeltaFeed if parsed[settings.FORMAT_CONFIG] == "delta" else ParquetFeed).ORDER_FIELD
    for key in (FILE_FIELD, order, ROW_FIELD):
        if key not in offset:
            raise ConnectException(f"Offset objects should either be null or contain the keys '{FILE_FIELD}', "
                                   f"'{order}' and '{ROW_FIELD}'; '{key}' is missing")
    if not isinstance(offset[FILE_FIELD], str) or not offset[FILE_FIELD]:
        raise _offset_error(FILE_FIELD, "a non-empty String (a data file's path in the table)")
    for key in (order, ROW_FIELD):
        if not _is_long(offset[key]) or offset[key] < 0:
            raise _offset_error(key, "a non-negative Long value")


class SparkTableSourceConnector(TableConnector, SourceConnector):
    """Reads the table at ``path`` (or named ``table``) into ``topic`` incrementally; one task.

    Settings: ``path`` or ``table`` (+ ``warehouse.dir``), ``format`` (parquet, delta), ``topic``,
    ``mode`` (files, incrementing), ``incrementing.column``, ``batch.size``, ``poll.interval.ms``.

    Example::

        >>> c = SparkTableSourceConnector()
        >>> c.alter_offsets({"path": "/t", "topic": "rows"},
        ...                 {(("path", "/t"),): {"file": "a.parquet", "modified": 0, "row": 3}})
        True
    """

    ALIASES: tuple[str, ...] = ()
    definition = staticmethod(settings.source_config_def)
    problems = staticmethod(settings.source_problems)

    def task_class(self) -> type[Task]:
        return SparkTableSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # one table, one reader

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[Any, dict[str, Any] | None]) -> bool:
        """KIP-875: tombstones for anything; else ``{"path": ...}`` with the offset fields of the mode."""
        parsed = settings.source_config_def().parse(connector_config)
        for frozen, offset in offsets.items():
            check_offset(parsed, _partition_dict(frozen), offset)
        return True


class SparkTableSourceTask(SourceTask):
    """Emits the table's new rows (see the module's docs); :meth:`poll` waits at most ``MAX_WAIT_S`` when idle."""

    MAX_WAIT_S = 0.5

    def __init__(self) -> None:
        self.topic = ""
        self.batch_size = 1000
        self.poll_interval = 1.0
        self.feed: Feed = ParquetFeed(TableStore(""))
        self.partition: dict[str, Any] = {}
        self.column = ""
        self._stopping = threading.Event()
        # files mode: the last file read from and the rows of it read; the open file's remaining batches
        self._position: tuple[DataFile, int] | None = None
        self._resume = False
        self._batches: Iterator[pa.RecordBatch] | None = None
        # incrementing mode: the last value read, and the rows above it not emitted yet
        self._last_value: Any = None
        self._pending: pa.Table | None = None
        self._schemas: dict[pa.Schema, tuple[Schema, Any]] = {}

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        parsed = SparkTableSourceConnector.parse(props)
        self.topic = parsed[settings.TOPIC_CONFIG]
        self.batch_size = parsed[settings.BATCH_SIZE_CONFIG]
        self.poll_interval = parsed[settings.POLL_INTERVAL_CONFIG] / 1000
        self.feed = _feed(parsed)
        self.partition = {PATH_FIELD: self.feed.directory}
        incrementing = parsed[settings.MODE_CONFIG] == "incrementing"
        self.column = parsed[settings.INCREMENTING_COLUMN_CONFIG] if incrementing else ""
        self._stopping.clear()
        offset = self.context.offset_storage_reader().offset(self.partition)
        try:
            check_offset(parsed, self.partition, offset)
        except ConnectException as e:
            raise ConnectException(f"The stored offset {offset} of {self.partition} is invalid: {e}") from e
        if offset is not None and self.column:
            self._last_value = offset[COLUMN_VALUE_FIELD]
        elif offset is not None:
            file = DataFile(offset[self.feed.ORDER_FIELD], offset[FILE_FIELD])
            self._position, self._resume = (file, offset[ROW_FIELD]), True

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        records = self._poll_column() if self.column else self._poll_files()
        if not records:
            self._stopping.wait(min(self.poll_interval, self.MAX_WAIT_S))
            return None
        return records

    def stop(self) -> None:
        self._stopping.set()

    def _converter(self, schema: pa.Schema) -> tuple[Schema, Any]:
        found = self._schemas.get(schema)
        if found is None:
            connect = row_schema(schema)
            found = self._schemas[schema] = (connect, connect_value(connect))
        return found

    def _records(self, batch: pa.RecordBatch | pa.Table, offsets: list[dict[str, Any]]) -> list[SourceRecord]:
        schema, to_struct = self._converter(batch.schema)
        return [SourceRecord(self.partition, offset, self.topic, value_schema=schema, value=to_struct(row))
                for row, offset in zip(batch.to_pylist(), offsets, strict=True)]

    # -- mode=files

    def _poll_files(self) -> list[SourceRecord] | None:
        while not self._stopping.is_set():
            if self._batches is None and not self._open_next():
                return None
            batch = next(self._batches, None)  # type: ignore[arg-type]
            if batch is None:
                self._batches = None
                continue
            if batch.num_rows == 0:
                continue
            file, done = self._position  # type: ignore[misc]
            fields = {FILE_FIELD: file.name, self.feed.ORDER_FIELD: file.order}
            offsets = [{**fields, ROW_FIELD: done + i + 1} for i in range(batch.num_rows)]
            self._position = (file, done + batch.num_rows)
            return self._records(batch, offsets)
        return None

    def _open_next(self) -> bool:
        """Open the file to read next (the stored offset's own file first, after a start); False if none."""
        files = self.feed.files()
        if self._position is not None:
            last, skip = self._position
            if self._resume and last in files:
                self._resume = False
                return self._open(last, skip)
            self._resume = False
            files = [f for f in files if f.key > last.key]
        for file in files:
            if self._open(file, 0):
                return True
        return False

    def _open(self, file: DataFile, skip: int) -> bool:
        try:
            reader = self.feed.parquet_file(file)
        except FileNotFoundError:
            log.warning("Data file %s of %s disappeared before it was read; skipping it", file.name,
                        self.feed.directory)
            self._position = (file, 0)
            return False
        self._position = (file, skip)
        self._batches = _skipping(reader.iter_batches(batch_size=self.batch_size), skip)
        return True

    # -- mode=incrementing

    def _poll_column(self) -> list[SourceRecord] | None:
        if self._pending is None or self._pending.num_rows == 0:
            self._pending = self._rows_above_last()
            if self._pending is None or self._pending.num_rows == 0:
                return None
        values = self._pending[self.column]
        # Rows sharing the last value taken all go in this poll.
        count = pc.sum(pc.less_equal(values, values[min(self.batch_size, len(values)) - 1])).as_py()
        rows, self._pending = self._pending.slice(0, count), self._pending.slice(count)
        taken = [_offset_value(v) for v in rows[self.column].to_pylist()]
        offsets, previous = [], self._last_value
        for i, value in enumerate(taken):
            last_of_value = i + 1 == len(taken) or taken[i + 1] != value
            offsets.append({COLUMN_VALUE_FIELD: value if last_of_value else previous})
            if last_of_value:
                previous = value
        self._last_value = previous
        return self._records(rows, offsets)

    def _rows_above_last(self) -> pa.Table | None:
        dataset = self.feed.dataset()
        if dataset is None:
            return None
        try:
            type_ = dataset.schema.field(self.column).type
        except KeyError:
            raise ConnectException(f"The table {self.feed.directory} has no column '{self.column}' "
                                   f"(incrementing.column); its columns: {', '.join(dataset.schema.names)}") from None
        column = ds.field(self.column)
        condition = column.is_valid() if self._last_value is None else column > _scalar(self._last_value, type_)
        return dataset.to_table(filter=condition).sort_by(self.column)


def _skipping(batches: Iterator[pa.RecordBatch], skip: int) -> Iterator[pa.RecordBatch]:
    """``batches`` without their first ``skip`` rows."""
    for batch in batches:
        if skip >= batch.num_rows:
            skip -= batch.num_rows
            continue
        yield batch.slice(skip) if skip else batch
        skip = 0


def _offset_value(value: Any) -> Any:
    """A column value as a source offset holds it: dates and timestamps as ISO-8601 text."""
    return value.isoformat() if isinstance(value, (_dt.date, _dt.datetime)) else value


def _scalar(value: Any, type_: pa.DataType) -> pa.Scalar:
    """An offset's column value as a scalar of the column's type."""
    try:
        return pa.scalar(value).cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ConnectException(f"The offset's column_value {value!r} does not convert to the column's type "
                               f"{type_}: {e}") from e
