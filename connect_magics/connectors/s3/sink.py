"""``S3SinkConnector``: the records of Kafka topics into objects of an S3 bucket, named and rotated as
Confluent's ``io.confluent.connect.s3.S3SinkConnector`` does, exactly once.

A task buffers the records of each Kafka partition (by encoded partition). When a partition has
``flush.size`` records it writes one object per encoded partition, named after the offset of its first
record, and only then reports (``pre_commit``) the offset after the last record written. After a crash the
consumer re-reads from that offset, the same records fall into the same objects under the same names, and
the objects are overwritten rather than duplicated.

Example::

    rt.create_connector("orders-s3", {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "orders",
        "s3.bucket.name": "landing", "store.url": "http://localhost:9000", "flush.size": "1000",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false"})
    # objects: landing/topics/orders/partition=0/orders+0+0000000000.json, ...
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigValue
from connect_magics.api.connector import SinkConnector, SinkTask, Task
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord, SinkRecords, TopicPartition
from connect_magics.connectors.file import _plugin_version
from connect_magics.connectors.s3 import config as c
from connect_magics.connectors.s3.formats import JsonFormat, ParquetFormat, RecordFormat
from connect_magics.connectors.s3.naming import FieldPartitioner, default_encoded_partition, object_key
from connect_magics.connectors.s3.store import ObjectStore
from connect_magics.connectors.s3.time_partitioner import (
    DAILY,
    HOURLY,
    TimeBasedPartitioner,
    timestamp_extractor,
)

__all__ = ["S3SinkConnector", "S3SinkTask"]

log = logging.getLogger(__name__)

_NO_TOPIC = object()  # before a put's first record


class S3SinkConnector(SinkConnector):
    """Writes ``topics`` into an S3 bucket (or any fsspec store) in Confluent's layout; see the module.

    >>> c = S3SinkConnector()
    >>> c.start({"s3.bucket.name": "b", "flush.size": "2", "format.class": "JsonFormat", "topics": "t"})
    >>> c.task_configs(2)[1]["s3.bucket.name"]
    'b'
    """

    ALIASES: tuple[str, ...] = ("io.confluent.connect.s3.S3SinkConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return c.sink_config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        return c.with_problems(values, c.sink_problems({v.name: v.value for v in values}))

    def start(self, props: dict[str, str]) -> None:
        c.sink_config(props)
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return S3SinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[TopicPartition, int | None]) -> bool:
        return True  # the consumer group's offsets are all there is (as in Confluent's sink)


class _PartitionWriter:
    """The buffered records of one Kafka partition by encoded partition (Confluent's TopicPartitionWriter)."""

    __slots__ = ("files", "count", "next_offset", "last_written", "base_timestamp", "current_encoded")

    def __init__(self) -> None:
        self.files: dict[str, list[SinkRecord]] = {}
        self.count = 0
        self.next_offset = -1  # after the last record seen; -1: none yet
        self.last_written = -1  # the offset of the last record buffered into a file
        self.base_timestamp: int | None = None  # the first buffered record's (time-based rotation)
        self.current_encoded: str | None = None


class S3SinkTask(SinkTask):
    """Buffers, rotates on ``flush.size``, writes objects and commits only what is in them."""

    def __init__(self) -> None:
        self.parsed: dict[str, Any] = {}
        self.store: ObjectStore | None = None
        self.format: RecordFormat = JsonFormat("none")
        self.field_partitioner: FieldPartitioner | None = None
        self.time_partitioner: TimeBasedPartitioner | None = None
        self.timestamp: Callable[[SinkRecord], int] | None = None
        self.rotate_ms = -1
        self.writers: dict[TopicPartition, _PartitionWriter] = {}
        self.committed: dict[TopicPartition, int] = {}  # offset after the last record in a written object

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        p = self.parsed = c.sink_config(props)
        self.store = ObjectStore.from_config(p)
        self.store.check_bucket()
        self.format = ParquetFormat(p[c.PARQUET_CODEC]) if p[c.FORMAT_CLASS] == c.PARQUET_FORMAT \
            else JsonFormat(p[c.COMPRESSION_TYPE])
        self.field_partitioner = FieldPartitioner(p[c.PARTITION_FIELD_NAME], p[c.DIRECTORY_DELIM]) \
            if p[c.PARTITIONER_CLASS] == c.FIELD_PARTITIONER else None
        self.time_partitioner, self.timestamp = None, None
        if p[c.PARTITIONER_CLASS] in c.TIME_PARTITIONERS:
            path, duration = {c.HOURLY_PARTITIONER: HOURLY, c.DAILY_PARTITIONER: DAILY}.get(
                p[c.PARTITIONER_CLASS], (p[c.PATH_FORMAT], p[c.PARTITION_DURATION_MS]))
            self.time_partitioner = TimeBasedPartitioner(path, duration, p[c.TIMEZONE], p[c.LOCALE])
            self.timestamp = timestamp_extractor(p[c.TIMESTAMP_EXTRACTOR], p[c.TIMESTAMP_FIELD],
                                                 lambda: int(time.time() * 1000))
        self.rotate_ms = p[c.ROTATE_INTERVAL_MS] if self.time_partitioner is not None else -1
        if p[c.ROTATE_INTERVAL_MS] > 0 and self.time_partitioner is None:
            log.warning("Property '%s' is set to '%sms' but partitioner is not an instance of "
                        "'io.confluent.connect.storage.partitioner.TimeBasedPartitioner'. This property is "
                        "ignored.", c.ROTATE_INTERVAL_MS, p[c.ROTATE_INTERVAL_MS])
        self.writers.clear()
        self.committed.clear()

    def put(self, records: SinkRecords) -> None:
        ignore_nulls = self.parsed[c.NULL_VALUES] == "ignore"
        flush_size = self.parsed[c.FLUSH_SIZE]
        topic: Any = _NO_TOPIC  # the Kafka partition of the run of records the loop is in (none yet)
        partition: int | None = None
        for record in records:
            if record.original_kafka_partition != partition or record.original_topic != topic:
                topic, partition = record.original_topic, record.original_kafka_partition
                tp, writer = self._writer(topic, partition)
                default_encoded = default_encoded_partition(partition)
            offset = record.original_kafka_offset
            if offset < writer.next_offset:
                continue  # already buffered (consumed again after a rewind)
            writer.next_offset = offset + 1
            if record.value is None:
                if ignore_nulls:
                    continue
                raise ConnectException(
                    f"Null valued records are not writeable with current {c.NULL_VALUES} 'fail' setting "
                    f"(record {tp.topic}-{tp.partition}@{offset}); set it to 'ignore' to skip them")
            if self.time_partitioner is not None:
                timestamp = self.timestamp(record)  # type: ignore[misc]
                encoded = self.time_partitioner.encode(timestamp)
                if self._rotate_on_time(writer, encoded, timestamp):
                    self._commit_files(tp, writer)
                if writer.base_timestamp is None:
                    writer.base_timestamp = timestamp
            elif self.field_partitioner is not None:
                encoded = self.field_partitioner.encode(record)
            else:
                encoded = default_encoded
            writer.current_encoded = encoded
            buffered = writer.files.get(encoded)
            if buffered is None:
                writer.files[encoded] = [record]
            else:
                buffered.append(record)
            writer.last_written = offset
            writer.count += 1
            if writer.count >= flush_size:
                self._commit_files(tp, writer)

    def _writer(self, topic: str, partition: int | None) -> tuple[TopicPartition, _PartitionWriter]:
        """The Kafka partition and its writer (a new one for a partition not seen yet)."""
        tp = TopicPartition(topic, partition)
        writer = self.writers.get(tp)
        if writer is None:
            writer = self.writers[tp] = _PartitionWriter()
        return tp, writer

    def _rotate_on_time(self, writer: _PartitionWriter, encoded: str, timestamp: int) -> bool:
        """Confluent's rule: with ``rotate.interval.ms`` set, the files are committed before a record that is
        that much later than the first one buffered, or that goes to another encoded partition."""
        if writer.count <= 0 or self.rotate_ms <= 0:
            return False
        base = writer.base_timestamp if writer.base_timestamp is not None else timestamp
        return timestamp - base >= self.rotate_ms or encoded != writer.current_encoded

    def _commit_files(self, tp: TopicPartition, writer: _PartitionWriter) -> None:
        """Write an object per encoded partition, then move the committable offset past them."""
        p = self.parsed
        for encoded, records in writer.files.items():
            key = object_key(p[c.TOPICS_DIR], p[c.DIRECTORY_DELIM], p[c.FILE_DELIM], p[c.ZERO_PAD_WIDTH],
                             tp.topic, tp.partition, encoded, records[0].original_kafka_offset,
                             self.format.extension)
            self.store.put(key, self.format.encode(records))  # type: ignore[union-attr]
            log.debug("Committed %s for %s", key, tp)
        self.committed[tp] = writer.last_written + 1
        writer.files, writer.count, writer.base_timestamp, writer.current_encoded = {}, 0, None, None

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """For each partition, the offset after the last record that is in a written object (partitions with
        none yet are left out, so nothing buffered is ever committed)."""
        return {tp: offset for tp, offset in self.committed.items() if tp in current_offsets}

    def close(self, partitions: list[TopicPartition]) -> None:
        """Drop what is buffered for partitions taken away: it is consumed again from the committed offset."""
        for tp in partitions:
            self.writers.pop(tp, None)
            self.committed.pop(tp, None)

    def stop(self) -> None:
        self.writers.clear()
        self.committed.clear()
