"""Pure helpers of the Spark table connectors: types, rows, table logs, data file feeds, settings, offsets."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connect_magics.api import (
    ConfigException,
    ConnectException,
    DataException,
    Headers,
    SinkRecord,
    SinkRecords,
    SinkTaskContext,
    TopicPartition,
)
from connect_magics.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.connectors.spark_table import SparkTableSinkTask, settings
from connect_magics.connectors.spark_table.arrow_types import arrow_type, connect_schema, connect_value
from connect_magics.connectors.spark_table.feeds import DataFile, DeltaFeed, ParquetFeed
from connect_magics.connectors.spark_table.rows import TableRows
from connect_magics.connectors.spark_table.source import SparkTableSourceConnector, check_offset, row_schema
from connect_magics.connectors.spark_table.store import TableStore
from connect_magics.connectors.spark_table.table_logs import DeltaLog, ParquetLog, data_file_name

ITEM = SchemaBuilder.struct().field("sku", STRING_SCHEMA).field("qty", INT32_SCHEMA).build()
ORDER = (SchemaBuilder.struct().field("id", INT64_SCHEMA).field("note", OPTIONAL_STRING_SCHEMA)
         .field("day", Date.SCHEMA).field("at", Time.SCHEMA).field("ts", Timestamp.SCHEMA)
         .field("price", Decimal.schema(2)).field("items", SchemaBuilder.array(ITEM).build())
         .field("tags", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build()).build())


def order(i: int) -> Struct:
    return (Struct(ORDER).put("id", i).put("day", dt.date(2026, 1, 2)).put("at", dt.time(0, 0, 2))
            .put("ts", dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)).put("price", decimal.Decimal("9.99"))
            .put("items", [Struct(ITEM).put("sku", "a").put("qty", i)]).put("tags", {"x": 1}))


def record(value, offset: int = 0, partition: int = 0, **extra) -> SinkRecord:
    return SinkRecord("t", partition, None, extra.pop("key", None), None, value, extra.pop("timestamp", None),
                      extra.pop("headers", None), offset)


def test_struct_values_become_typed_columns() -> None:
    table = TableRows().table([record(order(1)), record(order(2), 1)])
    assert table.schema.field("day").type == pa.date32() and table.schema.field("at").type == pa.int32()
    assert table.schema.field("price").type == pa.decimal128(38, 2)
    assert table.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    row = table.to_pylist()[1]
    assert row["at"] == 2000 and row["items"] == [{"sku": "a", "qty": 2}] and row["tags"] == [("x", 1)]
    assert row["note"] is None and row["price"] == decimal.Decimal("9.99")


def test_arrow_types_round_trip_to_connect_schemas() -> None:
    schema = row_schema(pa.schema([(f.name, arrow_type(f.schema)) for f in ORDER.fields]))
    assert [f.schema.type for f in schema.fields] == [f.schema.type for f in ORDER.fields]
    assert schema.field("ts").schema.name == Timestamp.LOGICAL_NAME and schema.field("day").schema.name == Date.LOGICAL_NAME
    value = connect_value(schema)({"id": 1, "items": [{"sku": "a", "qty": 2}], "tags": [("x", 1)],
                                   "ts": dt.datetime(2026, 1, 1)})
    assert value.get("items")[0].get("qty") == 2 and value.get("tags") == {"x": 1}
    assert value.get("ts").tzinfo == dt.timezone.utc
    with pytest.raises(DataException, match="has no Connect schema"):
        connect_schema(pa.duration("s"))


def test_schemaless_values_keep_their_column_types() -> None:
    rows = TableRows()
    first = rows.table([record({"a": 1, "b": decimal.Decimal("1.5"), "c": None}), record({"a": 2, "d": "x"}, 1)])
    assert first.column_names == ["a", "b", "d"]  # 'c' is null everywhere: no type yet
    assert first.schema.field("b").type == pa.float64()
    later = rows.table([record({"a": None, "b": 2, "c": "now"}, 2)])
    assert later.schema.field("a").type == pa.int64() and later.schema.field("b").type == pa.float64()
    assert later.to_pylist() == [{"a": None, "b": 2.0, "c": "now"}]
    with pytest.raises(DataException, match="Column 'a' holds int64 values; this batch has double values"):
        rows.table([record({"a": 2.5}, 3)])
    with pytest.raises(DataException, match="Column 'd' holds string values; this batch has struct<nested: int64> values, which would change"):
        rows.table([record({"d": {"nested": 1}}, 3)])


def test_nested_columns_may_gain_fields() -> None:
    rows = TableRows()
    rows.table([record({"s": {"x": 1}})])
    widened = rows.table([record({"s": {"x": 2, "y": "new"}}, 1)])
    assert widened.to_pylist() == [{"s": {"x": 2, "y": "new"}}]


def test_coordinates_key_and_headers_columns() -> None:
    rows = TableRows(coordinates=True, key_column="k", headers_column="h")
    headers = Headers().add("trace", "a").add("trace", b"b").add("n", 7)
    table = rows.table([record("plain", 5, 3, key="key-5", timestamp=1_700_000_000_123, headers=headers)])
    (row,) = table.to_pylist()
    assert row["value"] == "plain" and row["k"] == "key-5" and sorted(row["h"]) == [("n", "7"), ("trace", "b")]
    assert (row["kafka_topic"], row["kafka_partition"], row["kafka_offset"]) == ("t", 3, 5)
    assert row["kafka_timestamp"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)
    with pytest.raises(DataException, match="Column 'kafka_offset' of the values clashes"):
        rows.table([record({"kafka_offset": 1})])


def test_tombstones_are_skipped_or_refused() -> None:
    assert TableRows().table([record(None), record({"a": 1}, 1)]).num_rows == 1
    with pytest.raises(DataException, match="offset 4 of t-0 has a null value, and behavior.on.null.values=fail"):
        TableRows(null_values="fail").table([record(None, 4)])


def test_parquet_log_commits_files_named_by_offsets(tmp_path) -> None:
    table_log, tp = ParquetLog(TableStore(str(tmp_path / "t"))), TopicPartition("orders", 1)
    assert table_log.durable_offsets([tp]) == {}
    table_log.commit({tp: (pa.table({"a": [1, 2]}), 10, 11)})
    table_log.commit({tp: (pa.table({"a": [3]}), 12, 12)})
    leftover = tmp_path / "t" / f".{data_file_name(tp, 13, 20)}.0123abcd.tmp"
    leftover.write_bytes(b"partial")
    other = tmp_path / "t" / f".{data_file_name(TopicPartition('orders', 2), 0, 1)}.0123abcd.tmp"
    other.write_bytes(b"partial")
    assert table_log.durable_offsets([tp, TopicPartition("orders", 0)]) == {tp: 13}
    assert not leftover.exists() and other.exists()  # only the opened partitions' leftovers go
    assert pq.read_table(tmp_path / "t").column("a").to_pylist() == [1, 2, 3]


def test_delta_log_commits_offsets_as_app_transactions(tmp_path) -> None:
    table_log, a, b = DeltaLog(TableStore(str(tmp_path / "d"))), TopicPartition("t", 0), TopicPartition("t", 1)
    assert table_log.durable_offsets([a]) == {}
    table_log.commit({a: (pa.table({"x": [1]}), 0, 4), b: (pa.table({"x": [2, 3]}), 7, 9)})
    assert table_log.durable_offsets([a, b]) == {a: 5, b: 10}
    replaced = DeltaLog(TableStore(str(tmp_path / "d")))  # a task that took over partition a wrote further
    replaced.commit({a: (pa.table({"x": [4]}), 5, 5)})
    with pytest.raises(ConnectException, match="Another writer already committed offsets of"):
        table_log.commit({a: (pa.table({"x": [4]}), 5, 5)})


def test_parquet_feed_orders_files_and_skips_hidden_ones(tmp_path) -> None:
    for name, mtime in (("b.parquet", 1), ("a.parquet", 2), ("_SUCCESS", 3), (".a.parquet.crc", 3)):
        (tmp_path / name).write_bytes(b"")
        os.utime(tmp_path / name, ns=(mtime, mtime))
    (tmp_path / "_delta_log").mkdir()
    (tmp_path / "_delta_log" / "x.parquet").write_bytes(b"")
    assert ParquetFeed(TableStore(str(tmp_path))).files() == [DataFile(1, "b.parquet"), DataFile(2, "a.parquet")]
    assert ParquetFeed(TableStore(str(tmp_path / "missing"))).files() == []


def test_delta_feed_lists_added_files_by_version(tmp_path) -> None:
    log_dir = tmp_path / "_delta_log"
    log_dir.mkdir()

    def commit(version: int, *actions: dict) -> None:
        (log_dir / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")

    commit(0, {"metaData": {"partitionColumns": []}}, {"add": {"path": "b%20x.parquet", "dataChange": True}},
           {"add": {"path": "a.parquet", "dataChange": True}})
    feed = DeltaFeed(TableStore(str(tmp_path)))
    assert feed.files() == [DataFile(0, "a.parquet"), DataFile(0, "b x.parquet")]
    commit(1, {"add": {"path": "c.parquet", "dataChange": False}}, {"remove": {"path": "a.parquet"}})
    commit(2, {"add": {"path": "d.parquet", "dataChange": True}})
    assert [f.key for f in feed.files()] == [(0, "a.parquet"), (0, "b x.parquet"), (2, "d.parquet")]
    commit(3, {"add": {"path": "e.parquet", "deletionVector": {"storageType": "u"}}})
    with pytest.raises(ConnectException, match="Version 3 of the Delta table .* uses deletion vectors"):
        feed.files()
    (log_dir / f"{0:020d}.json").unlink()
    with pytest.raises(ConnectException, match="starts at version 1: older commits were cleaned up"):
        DeltaFeed(TableStore(str(tmp_path))).files()


@pytest.mark.parametrize(("config", "key", "reason"), [
    ({"path": "/a", "table": "t"}, "table", "Set either 'path' or 'table', not both"),
    ({}, "path", "Set 'path' (a directory) or 'table' (a table name)"),
    ({"table": "a.b.c"}, "table", "A table name is 'name' or 'db.name'"),
    ({"path": "hdfs://nn/t"}, "path", "A table is in a local or mounted directory or in an object store: s3://"),
    ({"table": "t", "warehouse.dir": "ftp://h/wh"}, "warehouse.dir", "A table is in a local or mounted directory"),
    ({"path": "s3://lake/t", "aws.access.key.id": "AK"}, "aws.secret.access.key",
     "'aws.access.key.id' is set: set its secret access key too"),
    ({"path": "/a", "headers.column": "h", "key.column": "h"}, "headers.column", "Column 'h' is already used"),
])
def test_sink_settings_problems_name_the_field(config, key, reason) -> None:
    with pytest.raises(ConfigException) as e:
        settings.parse_checked(settings.sink_config_def(), settings.sink_problems, config)
    assert e.value.name == key and e.value.reason.startswith(reason)


def test_source_validation_reports_problems_on_their_keys() -> None:
    values = SparkTableSourceConnector().validate({"path": "/a", "topic": "t", "mode": "incrementing"})
    errors = {v.name: v.errors for v in values if v.errors}
    assert errors == {"incrementing.column": ["Invalid value  for configuration incrementing.column: "
                                              "mode=incrementing needs the name of a column whose values only grow"]}


def test_table_names_resolve_under_the_warehouse(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert settings.table_location({"table": "events"}) == str(tmp_path / "spark-warehouse" / "events")
    assert settings.table_location({"path": "file:///data/t"}) == "/data/t"
    assert settings.table_location({"table": "sales.orders", "warehouse.dir": "s3a://lake/wh"}) == \
        "s3a://lake/wh/sales.db/orders"


def test_an_s3_table_s_store_takes_the_connector_s_s3_settings() -> None:
    parsed = settings.sink_config_def().parse({"path": "s3a://lake/t/", "store.url": "http://127.0.0.1:9000",
                                               "aws.access.key.id": "AK", "aws.secret.access.key": "SK"})
    store = settings.table_store(parsed)
    assert (store.location, store.uri, store.local) == ("s3a://lake/t", "s3://lake/t", False)
    assert store.options == {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ACCESS_KEY_ID": "AK",
                             "AWS_SECRET_ACCESS_KEY": "SK", "AWS_ALLOW_HTTP": "true"}
    assert settings.table_store(settings.sink_config_def().parse({"path": "/t", "aws.access.key.id": "AK"})).options == {}


def test_check_offset_by_mode_and_format() -> None:
    delta = {"mode": "files", "format": "delta"}
    check_offset(delta, {"path": "/t"}, {"file": "a.parquet", "version": 3, "row": 0})
    check_offset(delta, {"path": "/t"}, None)
    with pytest.raises(ConnectException, match="'version' is missing"):
        check_offset(delta, {"path": "/t"}, {"file": "a.parquet", "modified": 3, "row": 0})
    with pytest.raises(ConnectException, match="The value for 'row' key|expected to be a non-negative Long"):
        check_offset(delta, {"path": "/t"}, {"file": "a.parquet", "version": 3, "row": True})
    with pytest.raises(ConnectException, match="The value for the 'path' key in the partition is expected"):
        check_offset(delta, {"path": 3}, None)
    check_offset({"mode": "incrementing", "format": "parquet"}, {"path": "/t"}, {"column_value": None})


class RecordingContext(SinkTaskContext):
    """The context a sink task gets, recording the rewinds it asks for (no consumer behind it)."""

    def __init__(self) -> None:
        super().__init__({})
        self.rewinds: list[dict[TopicPartition, int]] = []

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self.rewinds.append(dict(offsets))


def test_sink_task_rewinds_to_the_table_and_writes_each_offset_once(tmp_path) -> None:
    tp = TopicPartition("t", 0)
    ParquetLog(TableStore(str(tmp_path))).commit({tp: (pa.table({"n": [0, 1, 2]}), 0, 2)})
    task, context = SparkTableSinkTask(), RecordingContext()
    task.initialize(context)
    task.start({"path": str(tmp_path)})
    task.open([tp, TopicPartition("t", 1)])
    assert context.rewinds == [{tp: 3}]
    batch = SinkRecords([record({"n": n}, n) for n in range(6)])
    task.put(batch)
    task.put(batch)  # redelivered after a rewind: nothing twice
    assert task.pre_commit({tp: 6}) == {tp: 6}
    assert sorted(pq.read_table(tmp_path).column("n").to_pylist()) == list(range(6))
    assert ParquetLog(TableStore(str(tmp_path))).durable_offsets([tp]) == {tp: 6}


def test_sink_task_splits_a_mixed_batch_by_partition_and_drops_what_it_saw(tmp_path) -> None:
    task = SparkTableSinkTask()
    task.initialize(RecordingContext())
    task.start({"path": str(tmp_path), "kafka.coordinates": "true"})
    p0, p1 = TopicPartition("t", 0), TopicPartition("t", 1)
    task.put(SinkRecords([record({"n": n}, n, n % 2) for n in range(4)]))  # runs of one record each
    # a rewind mid-batch: partition 0 goes back to offset 1; only what was not seen yet is taken
    task.put(SinkRecords([record({"n": n}, n) for n in (4, 1, 2, 5, 6)] + [record({"n": 9}, 3, 1)]))
    assert task.pre_commit({p0: 7, p1: 4}) == {p0: 7, p1: 4}
    table = pq.read_table(tmp_path).to_pylist()
    assert sorted((r["kafka_partition"], r["kafka_offset"], r["n"]) for r in table) == [
        (0, 0, 0), (0, 2, 2), (0, 4, 4), (0, 5, 5), (0, 6, 6), (1, 1, 1), (1, 3, 3)]


def test_sink_task_reads_a_deferred_batch_as_columns(tmp_path) -> None:
    """The runtime's batches without transformations: the task builds no record from them."""
    def column(field: str) -> list:
        return {"topic": ["t"] * 3, "kafka_partition": [0] * 3, "kafka_offset": [7, 8, 9],
                "value": [{"n": 1}, None, {"n": 3}]}[field]

    def build() -> list:
        raise AssertionError("records were built")

    task = SparkTableSinkTask()
    task.initialize(RecordingContext())
    task.start({"path": str(tmp_path)})
    task.put(SinkRecords.deferred(3, build, column))
    task.pre_commit({TopicPartition("t", 0): 10})
    assert pq.read_table(tmp_path).column("n").to_pylist() == [1, 3]


def task_on_a_fake_clock(tmp_path, monkeypatch, **props: str) -> tuple[SparkTableSinkTask, list[float]]:
    """A started sink task whose ``time.monotonic()`` is ``now[0]``, which the test moves on."""
    from connect_magics.connectors.spark_table import sink

    now = [100.0]
    monkeypatch.setattr(sink.time, "monotonic", lambda: now[0])
    task = SparkTableSinkTask()
    task.initialize(RecordingContext())
    task.start({"path": str(tmp_path), **props})
    return task, now


def test_sink_task_writes_a_partition_once_it_got_nothing_for_flush_idle_ms(tmp_path, monkeypatch) -> None:
    """A fake clock: partition 1 keeps getting records and stays buffered; partition 0 is written once idle."""
    task, now = task_on_a_fake_clock(tmp_path, monkeypatch, **{"flush.idle.ms": "500", "kafka.coordinates": "true"})
    task.put(SinkRecords([record({"n": 0}, 0, 0), record({"n": 1}, 0, 1)]))
    now[0] += 0.4
    task.put(SinkRecords([record({"n": 2}, 1, 1)]))
    assert not list(tmp_path.iterdir()), "nothing idle for 500 ms yet"
    now[0] += 0.1
    task.put(SinkRecords())  # the runtime's empty batch after a poll that found nothing
    written = pq.read_table(tmp_path).to_pylist()
    assert [(r["kafka_partition"], r["kafka_offset"]) for r in written] == [(0, 0)]
    now[0] += 0.4
    task.put(SinkRecords())
    assert sorted((r["kafka_partition"], r["kafka_offset"]) for r in pq.read_table(tmp_path).to_pylist()) == [
        (0, 0), (1, 0), (1, 1)]


def test_sink_task_with_flush_idle_disabled_writes_at_commits_only(tmp_path, monkeypatch) -> None:
    task, now = task_on_a_fake_clock(tmp_path, monkeypatch, **{"flush.idle.ms": "-1"})
    task.put(SinkRecords([record({"n": 0}, 0)]))
    now[0] += 3600
    task.put(SinkRecords())
    assert not list(tmp_path.iterdir())
    task.pre_commit({TopicPartition("t", 0): 1})
    assert pq.read_table(tmp_path).column("n").to_pylist() == [0]
