"""SparkTableSink against the real broker (thread executor): records land in Parquet and Delta tables exactly
once, across failures, restarts and lagging consumer offsets; Spark (or delta-rs) reads them back."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow.dataset as ds
import pytest
from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.api import JsonConverter, SchemaBuilder, Struct, TopicPartition
from connect_magics.api.data import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Decimal, Timestamp
from connect_magics.connectors.spark_table import SparkTableSinkConnector, SparkTableSinkTask
from connect_magics.connectors.spark_table.table_logs import parse_data_file_name

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
FAST = {"offset.flush.interval.ms": "300"}

ORDER = (SchemaBuilder.struct().name("order")
         .field("id", INT64_SCHEMA).field("customer", OPTIONAL_STRING_SCHEMA)
         .field("amount", Decimal.builder(2).optional().build())
         .field("placed", Timestamp.builder().optional().build()).build())


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(**worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"g-{unique}", {**FAST, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def produce_orders(bootstrap: str, topic: str, ids: range, partitions: int = 2,
                   headers: list[tuple[str, bytes]] | None = None) -> None:
    """Orders as JsonConverter with schemas writes them (Struct values), keyed by id, spread over partitions."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in ids:
        order = (Struct(ORDER).put("id", i).put("customer", f"c{i % 7}")
                 .put("amount", decimal.Decimal(i).scaleb(-2))
                 .put("placed", dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i)))
        producer.produce(topic, converter.from_connect_data(topic, ORDER, order), str(i).encode(),
                         partition=i % partitions, headers=headers, timestamp=1_700_000_000_000 + i)
    assert producer.flush(30) == 0


def orders_topic(bootstrap: str, name: str, tmp_path: Any, orders: int) -> tuple[str, Any]:
    """A new two-partition topic ``name`` holding ``orders`` orders, and a table path for it."""
    create_topics(bootstrap, name, partitions=2)
    produce_orders(bootstrap, name, range(orders))
    return name, tmp_path / name


def sink_config(topic: str, path: Any, **extra: str) -> dict[str, str]:
    return {"connector.class": "SparkTableSink", "topics": topic, "path": str(path), "key.converter": STRING,
            "value.converter": JSON, **extra}


def parquet_count(path: Any) -> int:
    return ds.dataset(str(path), format="parquet").count_rows() if path.exists() else 0


def spark_rows(spark: Any, path: Any, expected: int, rt: ConnectRuntime | None = None) -> list[Any]:
    """The table's rows as Spark reads the Parquet directory, once it holds ``expected`` rows (on a timeout,
    the message gives ``rt``'s statuses and task metrics)."""
    def why() -> str:
        state = "" if rt is None else "".join(f"; {name}: {rt.connector_status(name)!r}" for name in rt.connectors())
        state += "" if rt is None else f"; metrics {rt.metrics()!r}"
        return f"{expected} rows in {path} (found {parquet_count(path)}){state}"
    wait_until(lambda: parquet_count(path) >= expected, 120, interval=0.2, message=why)
    return spark.read.parquet(str(path)).collect()


def delta_rows(path: Any, expected: int) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    wait_until(lambda: DeltaTable(str(path)).to_pyarrow_dataset().count_rows() >= expected, 60, interval=0.2,
               message=f"{expected} rows in the Delta table {path}")
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def test_struct_values_into_parquet_exactly_once_read_by_spark(runtime_factory, bootstrap, unique, tmp_path,
                                                                spark) -> None:
    topic, table = orders_topic(bootstrap, f"orders-{unique}", tmp_path, 1000)
    rt = runtime_factory()
    rt.create_connector("orders", sink_config(topic, table, **{"kafka.coordinates": "true", "key.column": "key",
                                                                  "flush.size": "300"}))
    rows = spark_rows(spark, table, 1000)
    assert len(rows) == 1000 and len({r["id"] for r in rows}) == 1000
    by_id = {r["id"]: r for r in rows}
    assert by_id[42]["customer"] == "c0" and by_id[42]["amount"] == decimal.Decimal("0.42")
    assert by_id[42]["key"] == "42" and by_id[42]["kafka_topic"] == topic and by_id[42]["kafka_partition"] == 0
    millis = spark.read.parquet(str(table)).where("id = 42").selectExpr(
        "unix_millis(kafka_timestamp) AS ts", "unix_millis(placed) AS placed").collect()[0]
    assert (millis["ts"], millis["placed"]) == (1_700_000_000_042, 1_767_225_600_000 + 42_000)
    types = dict(spark.read.parquet(str(table)).dtypes)
    assert types["id"] == "bigint" and types["amount"] == "decimal(38,2)" and types["placed"] == "timestamp"
    assert sorted(r["kafka_offset"] for r in rows if r["kafka_partition"] == 1) == list(range(500))
    files = sorted(parse_data_file_name(p.name) for p in table.iterdir())  # named by the offsets they hold
    for partition in (0, 1):
        ranges = [(first, last) for tp, first, last in files if tp == TopicPartition(topic, partition)]
        assert ranges[0][0] == 0 and ranges[-1][1] == 499
        assert all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:], strict=False))


def test_a_quiet_topic_is_in_the_table_before_any_offset_commit(runtime_factory, bootstrap, unique,
                                                                tmp_path) -> None:
    """flush.idle.ms: records are written once their partition got nothing new for that long; the runtime
    commits no offsets during the test, and flush.size is never reached."""
    topic, table = orders_topic(bootstrap, f"idle-{unique}", tmp_path, 400)
    rt = runtime_factory(**{"offset.flush.interval.ms": "600000"})
    rt.create_connector("idle", sink_config(topic, table, **{"flush.idle.ms": "200"}))
    wait_until(lambda: parquet_count(table) == 400, 60, interval=0.2,
               message=lambda: f"400 rows in {table} (found {parquet_count(table)})")
    produce_orders(bootstrap, topic, range(400, 500))  # a second burst is written in its own files
    wait_until(lambda: parquet_count(table) == 500, 60, interval=0.2,
               message=lambda: f"500 rows in {table} (found {parquet_count(table)})")
    ids = ds.dataset(str(table), format="parquet").to_table(columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == list(range(500))
    assert rt.get_offsets("idle") == {"offsets": []}, "the rows came before any offset commit"


@pytest.mark.parametrize("table_format", ["parquet", "delta"])
def test_schemaless_json_infers_columns(runtime_factory, bootstrap, unique, tmp_path, spark, table_format) -> None:
    topic, table = f"seq-{unique}", tmp_path / "seq"
    create_topics(bootstrap, topic, partitions=3)
    rt = runtime_factory()
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "400",
                                "tasks.max": "2", "value.size": "3", "value.converter": JSON,
                                "value.converter.schemas.enable": "false"})
    rt.create_connector("seq-table", sink_config(topic, table, format=table_format,  # two tasks, one table
                                                 **{"value.converter.schemas.enable": "false", "tasks.max": "2"}))
    if table_format == "delta":
        rows = delta_rows(table, 800)
        assert {f.name for f in (table / "_delta_log").iterdir()} >= {f"{0:020d}.json"}
    else:
        rows = [r.asDict() for r in spark_rows(spark, table, 800)]
    assert len(rows) == 800
    assert sorted((r["task"], r["seq"]) for r in rows) == [(t, s) for t in range(2) for s in range(400)]
    assert {r["payload"] for r in rows} == {"xxx"}


def test_headers_and_coordinates_columns(runtime_factory, bootstrap, unique, tmp_path, spark) -> None:
    topic, table = f"hdr-{unique}", tmp_path / "hdr"
    create_topics(bootstrap, topic)
    produce_orders(bootstrap, topic, range(10), partitions=1, headers=[("trace", b"t-1"), ("n", b"7")])
    rt = runtime_factory()
    rt.create_connector("hdr", sink_config(topic, table, **{"kafka.coordinates": "true",
                                                            "headers.column": "headers"}))
    spark_rows(spark, table, 10)
    df = spark.read.parquet(str(table))
    got = df.selectExpr("id", "headers['trace'] AS trace", "headers['n'] AS n", "kafka_offset",
                        "kafka_topic", "kafka_partition").orderBy("id").collect()
    assert [(r["id"], r["trace"], r["n"], r["kafka_offset"]) for r in got] == [(i, "t-1", "7", i) for i in range(10)]
    assert {(r["kafka_topic"], r["kafka_partition"]) for r in got} == {(topic, 0)}


# -- exactly once across failures --------------------------------------------------------------------------------

_fail_once = threading.Event()


class FailAfterWriteTask(SparkTableSinkTask):
    """Fails once right after its first write, before the runtime can commit the offsets it covers."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        writes = bool(self.buffers)
        self.flush(current_offsets)
        if writes and not _fail_once.is_set():
            _fail_once.set()
            raise RuntimeError("crash between the table write and the offset commit")
        return current_offsets


class NeverCommitTask(SparkTableSinkTask):
    """Writes everything, but lets the runtime commit no offset: the consumer group always lags the table."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        self.flush(current_offsets)
        return {}


def sink_running(task: type[SparkTableSinkTask]) -> type[SparkTableSinkConnector]:
    """A SparkTableSink whose tasks are ``task``, named after it (``FailAfterWriteTask`` -> ``FailAfterWriteSink``)."""
    name = task.__name__.removesuffix("Task") + "Sink"
    return type(name, (SparkTableSinkConnector,), {"__module__": __name__, "task_class": lambda self: task})


def task_state(rt: ConnectRuntime, name: str) -> str:
    return rt.connector_status(name)["tasks"][0]["state"]


@pytest.mark.parametrize("table_format", ["parquet", "delta"])
def test_task_failing_between_write_and_commit_duplicates_nothing(runtime_factory, bootstrap, unique, tmp_path,
                                                                   spark, table_format) -> None:
    topic, table = orders_topic(bootstrap, f"crash-{unique}", tmp_path, 600)
    _fail_once.clear()
    rt = runtime_factory()
    rt.plugins.register(sink_running(FailAfterWriteTask))
    rt.create_connector("crash", sink_config(topic, table, format=table_format,
                                             **{"connector.class": "FailAfterWriteSink"}))
    wait_until(lambda: task_state(rt, "crash") == "FAILED", 60, message="the task failing after its first write")
    assert "crash between the table write and the offset commit" in rt.connector_status("crash")["tasks"][0]["trace"]
    produce_orders(bootstrap, topic, range(600, 1000))
    rt.restart_task("crash", 0)
    rows = delta_rows(table, 1000) if table_format == "delta" else spark_rows(spark, table, 1000)
    assert len(rows) == 1000 and len({r["id"] for r in rows}) == 1000


def test_table_offsets_win_over_lagging_consumer_offsets(runtime_factory, bootstrap, unique, tmp_path,
                                                         spark) -> None:
    topic, table = orders_topic(bootstrap, f"lag-{unique}", tmp_path, 300)
    rt = runtime_factory()
    rt.plugins.register(sink_running(NeverCommitTask))
    rt.create_connector("lag", sink_config(topic, table, **{"connector.class": "NeverCommitSink"}))
    spark_rows(spark, table, 300)
    for batch in (range(300, 500), range(500, 700)):  # restarted mid-stream, twice
        produce_orders(bootstrap, topic, batch)
        rt.restart_task("lag", 0)
        wait_until(lambda: task_state(rt, "lag") == "RUNNING", 30, message="the restarted task running")
    rows = spark_rows(spark, table, 700)
    assert rt.get_offsets("lag")["offsets"] == []  # the consumer group never committed anything
    assert len(rows) == 700 and len({r["id"] for r in rows}) == 700


def test_consumer_offsets_reset_does_not_rewrite_the_table(runtime_factory, bootstrap, unique, tmp_path,
                                                           spark) -> None:
    topic, table = orders_topic(bootstrap, f"reset-{unique}", tmp_path, 200)
    rt = runtime_factory()
    rt.create_connector("reset", sink_config(topic, table))
    spark_rows(spark, table, 200, rt)
    wait_until(lambda: len(rt.get_offsets("reset")["offsets"]) == 2, 30, message="committed consumer offsets")
    rt.stop_connector("reset")
    assert rt.reset_offsets("reset")["message"].startswith(
        "The Connect framework-managed offsets for this connector have been reset successfully. However, if this "
        "connector manages offsets externally")
    rt.resume_connector("reset")
    produce_orders(bootstrap, topic, range(200, 300))
    rows = spark_rows(spark, table, 300, rt)
    assert len(rows) == 300 and len({r["id"] for r in rows}) == 300


def test_restart_mid_stream_into_table_name(runtime_factory, bootstrap, unique, tmp_path, spark) -> None:
    topic, warehouse = f"named-{unique}", tmp_path / "warehouse"
    create_topics(bootstrap, topic, partitions=2)
    rt = runtime_factory()
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "3000",
                                "rate": "2000", "batch.size": "100", "value.converter": JSON})
    rt.create_connector("named", {"connector.class": "SparkTableSink", "topics": topic, "table": "sales.numbers",
                                  "warehouse.dir": str(warehouse), "value.converter": JSON})
    table = warehouse / "sales.db" / "numbers"
    spark_rows(spark, table, 500)
    rt.restart_task("named", 0)
    rt.restart_connector("named", include_tasks=True)
    rows = spark_rows(spark, table, 3000)
    assert len(rows) == 3000 and sorted(r["seq"] for r in rows) == list(range(3000))
    spark.sql(f"CREATE TABLE numbers_{unique} USING parquet LOCATION '{table}'")
    assert spark.sql(f"SELECT count(DISTINCT seq) AS n FROM numbers_{unique}").collect()[0]["n"] == 3000


# -- configuration --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("change", "fragment"), [
    ({"table": "t"}, "Invalid value t for configuration table: Set either 'path' or 'table', not both"),
    ({"path": None}, "Invalid value null for configuration path: Set 'path' (a directory) or 'table'"),
    ({"path": None, "table": "1bad-name"}, "Invalid value 1bad-name for configuration table: A table name is"),
    ({"format": "csv"}, "Invalid value csv for configuration format: String must be one of: parquet, delta"),
    ({"kafka.coordinates": "true", "key.column": "kafka_offset"},
     "Invalid value kafka_offset for configuration key.column: Column 'kafka_offset' is already used"),
    ({"flush.size": "0"}, "Invalid value 0 for configuration flush.size: Value must be at least 1"),
    ({"flush.idle.ms": "-2"}, "Invalid value -2 for configuration flush.idle.ms: Value must be at least -1"),
    ({"path": "ftp://host/t"}, "Invalid value ftp://host/t for configuration path: A table is in a local or mounted "
                               "directory or in an object store: s3://"),
])
def test_bad_configs_are_rejected_naming_the_field(runtime_factory, unique, tmp_path, change, fragment) -> None:
    rt = runtime_factory()
    config = {k: v for k, v in {**sink_config(f"t-{unique}", tmp_path / "t"), **change}.items() if v is not None}
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", config)
    assert e.value.status == 400 and fragment in e.value.message
    assert "bad" not in rt.connectors()

