"""``SparkTableSink``: records of Kafka topics into a Parquet directory or a Delta table, exactly once, on a
local or mounted directory or an object store (``s3://``, ``gs://``, ``abfss://``: see :mod:`.store`).

A task buffers the records of each topic partition and writes them (with pyarrow or delta-rs, never a
SparkSession, so it runs the same on a kernel thread and in a Spark executor's Python worker) when a
partition has ``flush.size`` records, when it got no new record for ``flush.idle.ms``, or when the runtime
commits offsets. Each write commits the rows
together with the offsets they cover (see :mod:`.table_logs`); when partitions are assigned the task
reads the table's offsets and rewinds the consumer there, and drops any record below them or already
buffered, so a record is written once whatever the consumer group's committed offsets say. ``pre_commit`` writes what is
buffered first, so it only reports offsets whose records are in the table.

Example::

    rt.create_connector("orders-table", {
        "connector.class": "SparkTableSink", "topics": "orders", "table": "orders", "format": "delta",
        "kafka.coordinates": "true", "value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    spark.read.format("delta").load("spark-warehouse/orders")
"""

from __future__ import annotations

import itertools
import logging
import time

from connect_magics.api.connector import SinkConnector, SinkTask, Task
from connect_magics.api.records import SinkRecords, TopicPartition
from connect_magics.connectors.file import _plugin_version
from connect_magics.connectors.spark_table import settings
from connect_magics.connectors.spark_table.rows import RowColumns, TableRows
from connect_magics.connectors.spark_table.table_connector import TableConnector
from connect_magics.connectors.spark_table.table_logs import DeltaLog, ParquetLog, TableLog

__all__ = ["SparkTableSinkConnector", "SparkTableSinkTask"]

log = logging.getLogger(__name__)


class SparkTableSinkConnector(TableConnector, SinkConnector):
    """Writes the records of ``topics`` into the table at ``path`` (or named ``table``), exactly once.

    Settings: ``path`` or ``table`` (+ ``warehouse.dir``), ``format`` (parquet, delta),
    ``kafka.coordinates``, ``key.column``, ``headers.column``, ``flush.size``, ``behavior.on.null.values``.
    Offsets live in the table: altering or resetting the consumer group's offsets (KIP-875) does not move
    a partition the table already holds records of.

    Example::

        >>> c = SparkTableSinkConnector()
        >>> c.start({"topics": "orders", "path": "/tmp/orders"})
        >>> c.task_configs(2)[1]["path"]
        '/tmp/orders'
    """

    ALIASES: tuple[str, ...] = ()
    definition = staticmethod(settings.sink_config_def)
    problems = staticmethod(settings.sink_problems)

    def task_class(self) -> type[Task]:
        return SparkTableSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]


class SparkTableSinkTask(SinkTask):
    """Buffers records per topic partition and commits them with their offsets (see the module's docs)."""

    def __init__(self) -> None:
        self.table_log: TableLog | None = None
        self.rows = TableRows()
        self.flush_size = 1
        self.idle_s: float | None = None  # flush.idle.ms in seconds; None: disabled
        self.buffers: dict[tuple[str, int], RowColumns] = {}
        self.last_record: dict[tuple[str, int], float] = {}  # when a buffered partition last got a record
        # Per partition, the offset after the last record in the table or buffered: records below it
        # (redelivered after a rewind, or consumed from lagging group offsets) are already taken care of.
        self.expected: dict[tuple[str, int], int] = {}

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        parsed = SparkTableSinkConnector.parse(props)
        store = settings.table_store(parsed)
        self.table_log = DeltaLog(store) if parsed[settings.FORMAT_CONFIG] == "delta" else ParquetLog(store)
        self.rows = TableRows(parsed[settings.COORDINATES_CONFIG], parsed[settings.KEY_COLUMN_CONFIG],
                              parsed[settings.HEADERS_COLUMN_CONFIG], parsed[settings.NULL_VALUES_CONFIG])
        self.flush_size = parsed[settings.FLUSH_SIZE_CONFIG]
        idle_ms = parsed[settings.FLUSH_IDLE_CONFIG]
        self.idle_s = None if idle_ms < 0 else idle_ms / 1000
        self.buffers.clear()
        self.last_record.clear()
        self.expected.clear()

    def open(self, partitions: list[TopicPartition]) -> None:
        """Rewind each partition to the offset after the last one the table holds."""
        found = self.table_log.durable_offsets(partitions)  # type: ignore[union-attr]
        for tp, offset in found.items():
            self.expected[(tp.topic, tp.partition)] = offset
        if found:
            log.info("Resuming from the offsets in the table: %s", found)
            self.context.offset(found)

    def put(self, records: SinkRecords) -> None:
        """Buffer the records as columns (no record objects are built when the runtime need not); write the
        partitions whose buffer is full or that got no record for ``flush.idle.ms`` (the runtime calls
        ``put`` with an empty batch after every poll that found nothing)."""
        now = time.monotonic()
        if records:
            self._buffer(records, now)
        idle = self.idle_s
        due = [key for key, buffer in self.buffers.items()
               if len(buffer) >= self.flush_size or (idle is not None and now - self.last_record[key] >= idle)]
        if due:
            self._write(due)
            spent = time.monotonic() - now  # writing is no quiet time for the partitions still buffered
            for key in self.buffers:
                self.last_record[key] += spent

    def _buffer(self, records: SinkRecords, now: float) -> None:
        rows = self.rows
        columns = {name: records.column(f"original_{name}") for name in ("topic", "kafka_partition", "kafka_offset")}
        columns["value"] = records.column("value")
        if rows.coordinates:
            columns["timestamp"] = records.column("timestamp")
        if rows.key_column:
            columns["key"] = records.column("key")
        if rows.headers_column:
            columns["headers"] = [r.headers if r.has_headers() else None for r in records]
        start, offsets = 0, columns["kafka_offset"]
        for key, run in itertools.groupby(zip(columns["topic"], columns["kafka_partition"], strict=True)):
            end = start + sum(1 for _ in run)
            new = self._unseen(key, offsets, start, end)
            if new:
                buffer = self.buffers.get(key)
                if buffer is None:
                    buffer = self.buffers[key] = rows.columns()
                buffer.extend(new, columns)
                self.last_record[key] = now
            start = end

    def _unseen(self, key: tuple[str, int], offsets: list[int], start: int, end: int) -> range | list[int]:
        """The positions from ``start`` to ``end`` (records of one partition) of records neither in the
        table nor buffered (others were redelivered after a rewind, or consumed from lagging group offsets)."""
        expected = self.expected.get(key, 0)
        if offsets[start] >= expected and all(a < b for a, b in itertools.pairwise(offsets[start:end])):
            self.expected[key] = offsets[end - 1] + 1
            return range(start, end)
        new = []
        for i in range(start, end):
            if offsets[i] >= expected:
                new.append(i)
                expected = offsets[i] + 1
        self.expected[key] = expected
        return new

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self._write(list(self.buffers))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Write every buffered record; then everything ``put`` received is in the table."""
        self.flush(current_offsets)
        return current_offsets

    def _write(self, keys: list[tuple[str, int]]) -> None:
        batch = {}
        for key in keys:
            rows = self.buffers.pop(key)
            self.last_record.pop(key, None)
            table = self.rows.table(rows)
            if table.num_rows:
                batch[TopicPartition(*key)] = (table, rows.kafka_offset[0], rows.kafka_offset[-1])
        if batch:
            self.table_log.commit(batch)  # type: ignore[union-attr]

    def close(self, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self.buffers.pop((tp.topic, tp.partition), None)
            self.last_record.pop((tp.topic, tp.partition), None)
            self.expected.pop((tp.topic, tp.partition), None)

    def stop(self) -> None:
        self.buffers.clear()
        self.last_record.clear()
