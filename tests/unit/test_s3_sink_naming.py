"""The S3 sink's pure parts: Confluent's object names, encoded partitions, extensions and config checks; and
the task's rotation and committed offsets on a file:// store (no broker, no S3)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder, Struct
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord, SinkRecords, TopicPartition
from connect_magics.connectors.s3 import S3SinkConnector, S3SinkTask
from connect_magics.connectors.s3 import config as c
from connect_magics.connectors.s3.formats import JsonFormat, ParquetFormat
from connect_magics.connectors.s3.naming import FieldPartitioner, default_encoded_partition, object_key

pytestmark = pytest.mark.unit
JSON = "io.confluent.connect.s3.format.json.JsonFormat"


def test_object_key_is_confluents_layout() -> None:
    assert object_key("topics", "/", "+", 10, "orders", 1, default_encoded_partition(1), 200, ".json") \
        == "topics/orders/partition=1/orders+1+0000000200.json"
    # the delimiters, the topics directory and the padding are the settings'
    assert object_key("landing/raw", "/", "-", 4, "a.b", 12, "partition=12", 5, ".json.gz") \
        == "landing/raw/a.b/partition=12/a.b-12-0005.json.gz"
    # an offset wider than the padding is written whole; a width of 0 pads nothing
    assert object_key("t", "/", "+", 2, "x", 0, "partition=0", 12345, ".json").endswith("x+0+12345.json")
    assert object_key("t", "/", "+", 0, "x", 0, "partition=0", 7, ".json").endswith("x+0+7.json")


def test_field_partitioner_encodes_struct_and_map_values() -> None:
    schema = SchemaBuilder.struct().field("region", STRING_SCHEMA).field("n", INT64_SCHEMA).build()
    struct = Struct(schema).put("region", "eu").put("n", 3)
    partitioner = FieldPartitioner(["region", "n"], "/")
    assert partitioner.encode(SinkRecord("t", 0, value=struct)) == "region=eu/n=3"
    record = SinkRecord("t", 0, value={"region": "us", "n": 1, "x": True})
    assert partitioner.encode(record) == "region=us/n=1"
    assert FieldPartitioner(["ok"], "/").encode(SinkRecord("t", 0, value={"ok": True})) == "ok=true"
    with pytest.raises(ConnectException, match="no field 'n'"):
        partitioner.encode(SinkRecord("t", 0, value={"region": "eu"}))
    with pytest.raises(ConnectException, match="struct or map"):
        partitioner.encode(SinkRecord("t", 0, value="text"))


def test_extensions_are_confluents() -> None:
    assert JsonFormat("none").extension == ".json"
    assert JsonFormat("gzip").extension == ".json.gz"
    assert ParquetFormat("snappy").extension == ".snappy.parquet"
    assert ParquetFormat("none").extension == ".parquet"
    assert ParquetFormat("gzip").extension == ".gz.parquet"


def test_defaults_are_confluents() -> None:
    keys = c.sink_config_def().config_keys()
    defaults = {name: keys[name].default for name in (
        "s3.region", "store.url", "topics.dir", "directory.delim", "file.delim", "rotate.interval.ms",
        "rotate.schedule.interval.ms", "partitioner.class", "filename.offset.zero.pad.width",
        "s3.compression.type", "behavior.on.null.values", "aws.access.key.id", "aws.secret.access.key")}
    assert defaults == {
        "s3.region": "us-west-2", "store.url": None, "topics.dir": "topics", "directory.delim": "/",
        "file.delim": "+", "rotate.interval.ms": -1, "rotate.schedule.interval.ms": -1,
        "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        "filename.offset.zero.pad.width": 10, "s3.compression.type": "none",
        "behavior.on.null.values": "fail", "aws.access.key.id": "", "aws.secret.access.key": None}
    assert not keys["s3.bucket.name"].has_default and not keys["flush.size"].has_default
    assert not keys["format.class"].has_default
    assert keys["aws.secret.access.key"].type.value == "PASSWORD"


@pytest.mark.parametrize(("change", "key", "reason"), [
    ({"flush.size": "0"}, "flush.size", "Value must be at least 1"),
    ({"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"}, "format.class",
     "AvroFormat is not supported yet"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner"},
     "partition.field.name", "FieldPartitioner requires at least one field name"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "timezone": "UTC"},
     "locale", "Locale cannot be empty."),
    ({"partitioner.class": "TimeBasedPartitioner", "locale": "en", "timezone": "UTC",
      "partition.duration.ms": "60000"}, "path.format", "Path format cannot be empty."),
    ({"partitioner.class": "TimeBasedPartitioner", "locale": "en", "timezone": "UTC",
      "path.format": "YYYY", "partition.duration.ms": "-2"}, "partition.duration.ms",
     "Partition duration needs to be a positive."),
    ({"partitioner.class": "DailyPartitioner", "locale": "en", "timezone": "Mars/Olympus"},
     "timezone", "Unknown timezone"),
    ({"partitioner.class": "TimeBasedPartitioner", "locale": "en", "timezone": "UTC",
      "path.format": "YYYY/GG", "partition.duration.ms": "1000"}, "path.format",
     "pattern letter 'G' is not supported"),
    ({"rotate.schedule.interval.ms": "60000"}, "rotate.schedule.interval.ms", "not supported"),
    ({"filename.offset.zero.pad.width": "-1"}, "filename.offset.zero.pad.width", "at least 0"),
    ({"s3.compression.type": "lzo"}, "s3.compression.type", "String must be one of: none, gzip"),
])
def test_bad_configs_are_refused_naming_the_key(change: dict, key: str, reason: str) -> None:
    props = {"s3.bucket.name": "b", "flush.size": "3", "format.class": JSON, "topics": "t", **change}
    with pytest.raises(ConfigException) as e:
        S3SinkConnector().start(props)
    assert e.value.name == key and reason in str(e.value)
    errors = {v.name: v.errors for v in S3SinkConnector().validate(props) if v.errors}
    assert list(errors) == [key] and reason in errors[key][0]


def test_missing_required_keys_are_named() -> None:
    errors = {v.name: v.errors for v in S3SinkConnector().validate({"topics": "t"}) if v.errors}
    assert set(errors) == {"s3.bucket.name", "flush.size", "format.class"}
    assert errors["flush.size"][0] \
        == 'Missing required configuration "flush.size" which has no default value.'


def _task(tmp_path: Path, **props: str) -> S3SinkTask:
    task = S3SinkTask()
    task.start({"s3.bucket.name": "bucket", "store.url": tmp_path.as_uri(), "format.class": "JsonFormat",
                "flush.size": "3", **props})
    return task


def _objects(tmp_path: Path) -> dict[str, bytes]:
    root = tmp_path / "bucket"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_task_rotates_on_flush_size_and_commits_only_written_records(tmp_path: Path) -> None:
    task = _task(tmp_path)
    tp0, tp1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
    task.put(SinkRecords([SinkRecord("orders", 0, value={"i": i}, kafka_offset=i) for i in range(7)]
                         + [SinkRecord("orders", 1, value={"i": i}, kafka_offset=i) for i in range(2)]))
    assert task.pre_commit({tp0: 7, tp1: 2}) == {tp0: 6}  # partition 1 has no object yet
    assert list(_objects(tmp_path)) == ["topics/orders/partition=0/orders+0+0000000000.json",
                                        "topics/orders/partition=0/orders+0+0000000003.json"]
    assert _objects(tmp_path)["topics/orders/partition=0/orders+0+0000000003.json"] \
        == b'{"i":3}\n{"i":4}\n{"i":5}\n'
    # redelivered records (after a restart from the committed offset) rewrite the same object
    task2 = _task(tmp_path)
    task2.put(SinkRecords([SinkRecord("orders", 0, value={"i": i}, kafka_offset=i) for i in range(3, 6)]))
    assert len(_objects(tmp_path)) == 2 and task2.pre_commit({tp0: 6}) == {tp0: 6}


def test_task_field_partitioner_nulls_and_gzip(tmp_path: Path) -> None:
    task = _task(tmp_path, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "r",
                              "s3.compression.type": "gzip", "behavior.on.null.values": "ignore"})
    values = [{"r": "a"}, None, {"r": "b"}, {"r": "a"}]
    task.put(SinkRecords([SinkRecord("t", 2, value=v, kafka_offset=10 + i) for i, v in enumerate(values)]))
    objects = _objects(tmp_path)
    assert sorted(objects) == ["topics/t/r=a/t+2+0000000010.json.gz", "topics/t/r=b/t+2+0000000012.json.gz"]
    assert [json.loads(line) for line in gzip.decompress(objects["topics/t/r=a/t+2+0000000010.json.gz"])
            .splitlines()] == [{"r": "a"}, {"r": "a"}]
    assert task.pre_commit({TopicPartition("t", 2): 14}) == {TopicPartition("t", 2): 14}
    with pytest.raises(ConnectException, match="behavior.on.null.values"):
        _task(tmp_path).put(SinkRecords([SinkRecord("t", 0, value=None, kafka_offset=0)]))


def test_task_parquet(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    schema = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("name", STRING_SCHEMA).build()
    task = _task(tmp_path, **{"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                              "flush.size": "2"})
    values = [Struct(schema).put("id", i).put("name", f"n{i}") for i in range(2)]
    task.put(SinkRecords([SinkRecord("p", 0, value_schema=schema, value=v, kafka_offset=i)
                          for i, v in enumerate(values)]))
    path = tmp_path / "bucket/topics/p/partition=0/p+0+0000000000.snappy.parquet"
    assert pq.read_table(path).to_pylist() == [{"id": 0, "name": "n0"}, {"id": 1, "name": "n1"}]


@pytest.mark.parametrize("name", ["io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector", "S3Sink"])
def test_built_in_under_confluents_class_name_and_aliases(name: str) -> None:
    from connect_magics.runtime.plugins.registry import Plugins

    desc = Plugins().find(name, ["sink"])
    assert desc.cls is S3SinkConnector and desc.class_name == "io.confluent.connect.s3.S3SinkConnector"


def test_rotate_interval_is_ignored_without_a_time_based_partitioner(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """As Confluent's TopicPartitionWriter: only a TimeBasedPartitioner has the timestamps it rotates by."""
    task = _task(tmp_path, **{"rotate.interval.ms": "1"})
    assert "rotate.interval.ms" in caplog.text and "is ignored" in caplog.text
    task.put(SinkRecords([SinkRecord("t", 0, value={"i": i}, kafka_offset=i, timestamp=i * 1000)
                          for i in range(2)]))
    assert _objects(tmp_path) == {} and task.pre_commit({TopicPartition("t", 0): 2}) == {}


def test_time_based_encoded_partitions() -> None:
    from connect_magics.connectors.s3.time_partitioner import TimeBasedPartitioner

    hourly = TimeBasedPartitioner("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000, "UTC", "en")
    assert hourly.encode(1_700_000_000_000) == "year=2023/month=11/day=14/hour=22"
    # floored in the timezone: 22:13 UTC is 23:13 in Paris (UTC+1 in November)
    assert TimeBasedPartitioner("YYYY-MM-dd-HH", 3_600_000, "Europe/Paris", "en").encode(1_700_000_000_000) \
        == "2023-11-14-23"
    # 15-minute buckets
    assert TimeBasedPartitioner("HH:mm", 900_000, "UTC", "en").encode(1_700_000_000_000) == "22:00"
    assert TimeBasedPartitioner("dd MMM YYYY", 86_400_000, "UTC", "en").encode(0) == "01 Jan 1970"


def test_time_based_rotation_by_record_timestamps(tmp_path: Path) -> None:
    """rotate.interval.ms with a Record timestamp extractor: files close before a record that is that much
    later than the first buffered, or that goes to another time bucket; offsets name them as always."""
    task = _task(tmp_path, **{"partitioner.class": "TimeBasedPartitioner", "path.format": "'h'=HH",
                              "partition.duration.ms": "3600000", "locale": "en", "timezone": "UTC",
                              "timestamp.extractor": "Record", "rotate.interval.ms": "60000",
                              "flush.size": "100"})
    minute = 60_000
    stamps = [0, minute // 2, minute, minute + 1, 60 * minute, 60 * minute + 1]  # bucket h=00 then h=01
    task.put(SinkRecords([SinkRecord("t", 0, value={"i": i}, kafka_offset=i, timestamp=ts)
                          for i, ts in enumerate(stamps)]))
    objects = _objects(tmp_path)
    assert list(objects) == ["topics/t/h=00/t+0+0000000000.json", "topics/t/h=00/t+0+0000000002.json"]
    assert objects["topics/t/h=00/t+0+0000000002.json"] == b'{"i":2}\n{"i":3}\n'
    assert task.pre_commit({TopicPartition("t", 0): 6}) == {TopicPartition("t", 0): 4}  # 4 and 5 buffered


def test_hourly_partitioner_with_record_field(tmp_path: Path) -> None:
    hourly = "io.confluent.connect.storage.partitioner.HourlyPartitioner"
    task = _task(tmp_path, **{"partitioner.class": hourly, "locale": "en", "timezone": "UTC",
                              "flush.size": "2",
                              "timestamp.extractor": "RecordField", "timestamp.field": "at"})
    task.put(SinkRecords([SinkRecord("t", 1, value={"at": "2024-03-05T07:30:00Z"}, kafka_offset=5),
                          SinkRecord("t", 1, value={"at": 1_700_000_000_000}, kafka_offset=6)]))
    assert sorted(_objects(tmp_path)) == [
        "topics/t/year=2023/month=11/day=14/hour=22/t+1+0000000006.json",
        "topics/t/year=2024/month=03/day=05/hour=07/t+1+0000000005.json"]
