"""SparkTableSink with tasks on Spark executors: the same table as with kernel threads, and every record
exactly once when a task's Python worker is killed mid-batch and when a task raises once."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from confluent_kafka import Consumer, TopicPartition
from helpers import wait_until
from raw_topics import create_topics

from connect_magics import ConnectRuntime
from connect_magics.api import TopicPartition as ConnectTopicPartition
from connect_magics.connectors.spark_table import SparkTableSinkConnector, SparkTableSinkTask

pytestmark = pytest.mark.slow

FAST = {"offset.flush.interval.ms": "300"}
JSON_PLAIN = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
RECORDS = 3000


@pytest.fixture(params=["threads", "spark"])
def executor(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_runtime(bootstrap: str, unique: str, spark) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(executor: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"g-{unique}", dict(FAST), spark=spark, executor=executor)
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def rows(path: Path) -> int:
    return ds.dataset(str(path), format="parquet").count_rows() if path.exists() else 0


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[tuple[str, int], int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ends"})
    try:
        return {(topic, p): c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
    finally:
        c.close()


def committed(rt: ConnectRuntime, name: str) -> dict[tuple[str, int], int]:
    return {(o["partition"]["kafka_topic"], o["partition"]["kafka_partition"]): o["offset"]["kafka_offset"]
            for o in rt.get_offsets(name)["offsets"]}


def test_sequence_json_into_a_table_gives_the_same_rows_on_both_executors(make_runtime, bootstrap, unique,
                                                                         tmp_path, spark, executor) -> None:
    topic, table = f"seq-{unique}", tmp_path / "table"
    create_topics(bootstrap, topic, partitions=2)
    sink = f"table-{unique}"  # its consumer group, connect-{sink}, is new on the session's broker
    rt = make_runtime(executor)
    # one source and one sink task: local[2] has a core for each (a task holds its core while it runs)
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": str(RECORDS),
                                **JSON_PLAIN})
    rt.create_connector(sink, {"connector.class": "SparkTableSink", "topics": topic, "path": str(table),
                                  **JSON_PLAIN})
    wait_until(lambda: rows(table) >= RECORDS, 240, message=f"{RECORDS} rows in the table")
    rt.stop_connector("gen")  # frees its core (local[2]) for Spark's own read of the table
    got = sorted((r["task"], r["seq"], r["payload"]) for r in spark.read.parquet(str(table)).collect())
    assert got == [(0, s, "") for s in range(RECORDS)]  # the same rows on both executors


class RaiseOnceTask(SparkTableSinkTask):
    """Raises once, right after a table write and before the offsets it covers are committed, when the file
    named by ``raise.once.marker`` exists (the marker is removed: once, across processes)."""

    def start(self, props: dict[str, str]) -> None:
        self.marker = Path(props["raise.once.marker"])
        super().start(props)

    def pre_commit(self, current_offsets: dict[ConnectTopicPartition, int]) -> dict[ConnectTopicPartition, int]:
        writes = bool(self.buffers)
        self.flush(current_offsets)
        if writes and self.marker.exists():
            self.marker.unlink()
            raise RuntimeError("raised once between the table write and the offset commit")
        return current_offsets


class RaiseOnceSink(SparkTableSinkConnector):
    def task_class(self) -> type:
        return RaiseOnceTask


def test_killed_python_worker_and_a_task_raising_once_leave_every_record_once(bootstrap, unique, tmp_path,
                                                                               spark) -> None:
    topic, table, marker = f"exact-{unique}", tmp_path / "table", tmp_path / "raise-once"
    total, sink = 20000, f"table-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    # The killed worker's sink consumer leaves no LeaveGroup: its next instance joins once that member's session
    # expires, after the broker's minimum (6 s) here rather than the consumer default (45 s).
    worker = {**FAST, "consumer.session.timeout.ms": "6000"}
    with ConnectRuntime(bootstrap, f"g-{unique}", worker, spark=spark, executor="spark") as rt:
        rt.plugins.register(RaiseOnceSink)  # travels to the executors with the task's job
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": str(total),
                                    "rate": "2500", **JSON_PLAIN})
        rt.create_connector(sink, {"connector.class": "RaiseOnceSink", "topics": topic, "path": str(table),
                                      "flush.size": "500", "raise.once.marker": str(marker), **JSON_PLAIN})
        wait_until(lambda: rows(table) >= 2000, 240, message="rows flowing into the table")
        handle = rt.herder.task_handle(sink, 0)
        first = handle.generation
        pid = wait_until(lambda: (handle.published() or {}).get("pid"), 60, message="the sink's Python worker")
        os.kill(pid, signal.SIGKILL)  # mid-batch: records consumed, some written, offsets not all committed
        wait_until(lambda: handle.generation > first and rt.task_status(sink, 0)["state"] == "RUNNING", 240,
                   message="the sink task running again after its Python worker was killed")
        marker.touch()  # now the task raises once: FAILED, as Kafka Connect reports it, until restarted
        wait_until(lambda: rt.task_status(sink, 0)["state"] == "FAILED", 240, message="the task FAILED")
        assert "raised once between the table write" in rt.task_status(sink, 0)["trace"]
        rt.restart_task(sink, 0)
        wait_until(lambda: rows(table) >= total, 300, message=f"{total} rows")
        rt.stop_connector("gen")  # frees its core (local[2]) for Spark's own read of the table
        got = [(r["task"], r["seq"]) for r in spark.read.parquet(str(table)).select("task", "seq").collect()]
        assert len(got) == total and set(got) == {(0, s) for s in range(total)}  # every record exactly once
        ends = end_offsets(bootstrap, topic, 2)
        wait_until(lambda: committed(rt, sink) == ends, 240,
                   message=lambda: f"the sink's offsets at the topic's end {ends} (committed: {committed(rt, sink)})")
