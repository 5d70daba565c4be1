"""SparkTableSource against the real broker (thread executor): tables Spark or delta-rs wrote are read into a
topic incrementally, resume after a restart, and their offsets can be altered and reset (KIP-875)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRestError, ConnectRuntime

JSON = "org.apache.kafka.connect.json.JsonConverter"
SCHEMALESS = {"value.converter": JSON, "value.converter.schemas.enable": "false"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[[], ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make() -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"g-{unique}", {"offset.flush.interval.ms": "200"})
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


def ids_in(bootstrap: str, topic: str, expected: int) -> Counter:
    """How often each ``id`` is in the topic, once it holds ``expected`` records."""
    wait_until(lambda: len(read_records(bootstrap, topic)) >= expected, 120, interval=0.3,
               message=f"{expected} records in {topic}")
    return Counter(json.loads(value)["id"] for _, value in read_records(bootstrap, topic))


def stopped(rt: ConnectRuntime, name: str) -> None:
    rt.stop_connector(name)
    wait_until(lambda: rt.connector_status(name)["connector"]["state"] == "STOPPED", 30, message="STOPPED")


def alter_error(rt: ConnectRuntime, name: str, partition: Any, offset: Any) -> ConnectRestError:
    with pytest.raises(ConnectRestError) as e:
        rt.alter_offsets(name, {"offsets": [{"partition": partition, "offset": offset}]})
    return e.value


def test_parquet_files_written_by_spark_are_read_once_and_resumed(runtime_factory, bootstrap, unique, tmp_path,
                                                                   spark) -> None:
    table, topic = tmp_path / "events", f"events-{unique}"
    create_topics(bootstrap, topic)
    spark.range(0, 100).selectExpr("id", "concat('n', id) AS name").write.parquet(str(table))
    rt = runtime_factory()
    rt.create_connector("events", {"connector.class": "SparkTableSource", "path": str(table), "topic": topic,
                                   "batch.size": "30", "poll.interval.ms": "100", **SCHEMALESS})
    assert ids_in(bootstrap, topic, 100) == Counter(range(100))
    spark.range(100, 150).selectExpr("id", "concat('n', id) AS name").write.mode("append").parquet(str(table))
    assert ids_in(bootstrap, topic, 150) == Counter(range(150))  # the new files only
    value = json.loads(read_records(bootstrap, topic)[0][1])
    assert set(value) == {"id", "name"} and value["name"] == f"n{value['id']}"

    rt.close()
    rt = runtime_factory()  # a new kernel: resumes from the committed offsets
    spark.range(150, 160).selectExpr("id", "concat('n', id) AS name").write.mode("append").parquet(str(table))
    assert ids_in(bootstrap, topic, 160) == Counter(range(160))

    stopped(rt, "events")
    (offset,) = rt.get_offsets("events")["offsets"]
    assert offset["partition"] == {"path": str(table)} and set(offset["offset"]) == {"file", "modified", "row"}
    last_file = pq.read_table(table / offset["offset"]["file"])
    assert offset["offset"]["row"] == last_file.num_rows
    replayed = {**offset["offset"], "row": offset["offset"]["row"] - 2}
    assert rt.alter_offsets("events", {"offsets": [{"partition": offset["partition"], "offset": replayed}]}) == {
        "message": "The offsets for this connector have been altered successfully"}
    rt.resume_connector("events")
    counts = ids_in(bootstrap, topic, 162)
    assert sorted(i for i, n in counts.items() if n == 2) == sorted(last_file["id"].to_pylist()[-2:])

    stopped(rt, "events")
    assert rt.reset_offsets("events") == {"message": "The offsets for this connector have been reset successfully"}
    rt.resume_connector("events")
    counts = ids_in(bootstrap, topic, 162 + 160)
    assert sum(counts.values()) == 322 and set(counts) == set(range(160))


def test_invalid_offsets_are_refused_naming_the_field(runtime_factory, unique, tmp_path) -> None:
    rt = runtime_factory()
    rt.create_connector("files", {"connector.class": "SparkTableSource", "path": str(tmp_path), "topic": "t",
                                  **SCHEMALESS}, initial_state="STOPPED")
    rt.create_connector("column", {"connector.class": "SparkTableSource", "path": str(tmp_path), "topic": "t",
                                   "format": "delta", "mode": "incrementing", "incrementing.column": "id",
                                   **SCHEMALESS}, initial_state="STOPPED")
    path = {"path": str(tmp_path)}
    cases = [
        ("files", path, {"file": "a.parquet", "modified": 1, "row": -1},
         "The value for the 'row' key in the offset is expected to be a non-negative Long value"),
        ("files", path, {"file": "a.parquet", "modified": "yesterday", "row": 0},
         "The value for the 'modified' key in the offset is expected to be a non-negative Long value"),
        ("files", path, {"file": "a.parquet", "row": 0},
         "Offset objects should either be null or contain the keys 'file', 'modified' and 'row'; 'modified' is missing"),
        ("files", path, {"file": "", "modified": 1, "row": 0},
         "The value for the 'file' key in the offset is expected to be a non-empty String"),
        ("files", {"table": "x"}, {"file": "a.parquet", "modified": 1, "row": 0},
         "Partition objects should contain the key 'path'"),
        ("column", path, {"file": "a.parquet", "version": 1, "row": 0},
         "Offset objects should either be null or contain the key 'column_value'"),
        ("column", path, {"column_value": 1.5},
         "The value for the 'column_value' key in the offset is expected to be a Long or String value"),
    ]
    for name, partition, offset, message in cases:
        e = alter_error(rt, name, partition, offset)
        assert e.status == 500 and e.message.startswith(message), (offset, e.message)
        assert rt.get_offsets(name)["offsets"] == []  # nothing changed
    assert rt.alter_offsets("column", {"offsets": [{"partition": path, "offset": {"column_value": 7}}]}) == {
        "message": "The offsets for this connector have been altered successfully"}
    assert rt.alter_offsets("files", {"offsets": [{"partition": {"path": "/elsewhere"}, "offset": None}]})["message"] \
        == "The offsets for this connector have been altered successfully"  # a reset of any partition is fine


def test_delta_table_by_incrementing_column(runtime_factory, bootstrap, unique, tmp_path) -> None:
    from deltalake import write_deltalake

    table, topic = tmp_path / "delta", f"delta-{unique}"
    create_topics(bootstrap, topic)

    def append(ids: range) -> None:
        write_deltalake(str(table), pa.table({"id": pa.array(ids, pa.int64()), "half": [i // 2 for i in ids]}),
                        mode="append")

    append(range(0, 50))
    append(range(50, 80))
    rt = runtime_factory()
    rt.create_connector("delta", {"connector.class": "SparkTableSource", "path": str(table), "topic": topic,
                                  "format": "delta", "mode": "incrementing", "incrementing.column": "id",
                                  "batch.size": "7", "poll.interval.ms": "100", **SCHEMALESS})
    assert ids_in(bootstrap, topic, 80) == Counter(range(80))
    append(range(80, 90))
    assert ids_in(bootstrap, topic, 90) == Counter(range(90))
    stopped(rt, "delta")
    assert rt.get_offsets("delta")["offsets"] == [{"partition": {"path": str(table)}, "offset": {"column_value": 89}}]
    rt.alter_offsets("delta", {"offsets": [{"partition": {"path": str(table)}, "offset": {"column_value": 84}}]})
    rt.resume_connector("delta")
    counts = ids_in(bootstrap, topic, 95)
    assert sorted(i for i, n in counts.items() if n == 2) == [85, 86, 87, 88, 89]


def test_delta_table_by_files_and_ties_of_incrementing_column(runtime_factory, bootstrap, unique, tmp_path) -> None:
    from deltalake import write_deltalake

    table, files_topic, column_topic = tmp_path / "delta", f"dfiles-{unique}", f"dcol-{unique}"
    create_topics(bootstrap, files_topic, column_topic)
    for start in (0, 40, 80):
        ids = range(start, start + 40)
        write_deltalake(str(table), pa.table({"id": pa.array(ids, pa.int64()), "half": [i // 2 for i in ids]}),
                        mode="append")
    rt = runtime_factory()
    rt.create_connector("dfiles", {"connector.class": "SparkTableSource", "path": str(table), "topic": files_topic,
                                   "format": "delta", "batch.size": "25", **SCHEMALESS})
    # 'half' repeats every value twice: a batch of 5 ends in the middle of a pair and takes its other row too
    rt.create_connector("dcol", {"connector.class": "SparkTableSource", "path": str(table), "topic": column_topic,
                                 "format": "delta", "mode": "incrementing", "incrementing.column": "half",
                                 "batch.size": "5", **SCHEMALESS})
    assert ids_in(bootstrap, files_topic, 120) == Counter(range(120))
    assert ids_in(bootstrap, column_topic, 120) == Counter(range(120))
    stopped(rt, "dfiles")
    (offset,) = rt.get_offsets("dfiles")["offsets"]
    assert offset["offset"]["version"] == 2 and offset["offset"]["row"] == 40


@pytest.mark.parametrize(("change", "fragment"), [
    ({"mode": "incrementing"}, "Invalid value  for configuration incrementing.column: mode=incrementing needs"),
    ({"mode": "latest"}, "Invalid value latest for configuration mode: String must be one of: files, incrementing"),
    ({"topic": ""}, "Invalid value  for configuration topic: String must be non-empty"),
    ({"path": None}, "Invalid value null for configuration path: Set 'path' (a directory) or 'table'"),
    ({"batch.size": "0"}, "Invalid value 0 for configuration batch.size: Value must be at least 1"),
])
def test_bad_configs_are_rejected_naming_the_field(runtime_factory, tmp_path, change, fragment) -> None:
    rt = runtime_factory()
    config = {k: v for k, v in {"connector.class": "SparkTableSource", "path": str(tmp_path), "topic": "t",
                                **change}.items() if v is not None}
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", config)
    assert e.value.status == 400 and fragment in e.value.message
    assert "bad" not in rt.connectors()
