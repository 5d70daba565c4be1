"""The same behaviours with tasks on kernel threads, in task processes (``executor="processes"``) and as Spark
jobs on the executors (``executor="spark"``): pipelines, lifecycle, KIP-875 offsets, KIP-558 topics, KIP-158
creation, error handling, metrics; and what only the Spark executor does: a killed Python worker's task runs
again, tasks of one connector run at once (the task processes' own: tests/integration/test_process_executor.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.notebook.widgets import StatusBoard

pytestmark = pytest.mark.slow

FAST = {"offset.flush.interval.ms": "200"}
JSON = "org.apache.kafka.connect.json.JsonConverter"
EXECUTORS = ["threads", "processes", "spark"]


@pytest.fixture(params=EXECUTORS)
def executor(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_runtime(bootstrap: str, unique: str, spark, executor: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(**worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"g-{unique}", {**FAST, **worker}, spark=spark, executor=executor)
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def states(rt: ConnectRuntime, name: str) -> tuple[str, list[str]]:
    s = rt.connector_status(name)
    return s["connector"]["state"], [t["state"] for t in s["tasks"]]


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def file_source(path: Path, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic, **extra}


def test_file_pipeline_gives_the_same_output_on_every_executor(make_runtime, bootstrap, unique, tmp_path,
                                                                executor) -> None:
    src, out, topic = tmp_path / "in.txt", tmp_path / "out.txt", f"lines-{unique}"
    expected = [f"line {i}" for i in range(1000)]
    src.write_text("".join(f"{line}\n" for line in expected))
    rt = make_runtime()
    rt.create_connector("src", file_source(src, topic, **{"topic.creation.default.partitions": "1",
                                                          "topic.creation.default.replication.factor": "1"}))
    rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic})
    wait_until(lambda: len(lines(out)) >= 1000, 240, message="1000 lines in the sink's file")
    assert lines(out) == expected
    worker = rt.connector_status("sink")["tasks"][0]["worker_id"]
    assert (":spark-" in worker) == (executor == "spark")  # the executor's host and Python worker
    # KIP-875: the source's offsets are committed (after the broker acknowledged the records)
    wait_until(lambda: rt.get_offsets("src")["offsets"] == [
        {"partition": {"filename": str(src)}, "offset": {"position": src.stat().st_size}}], 240,
        message="the source's final offset")


def test_lifecycle_offsets_and_topics(make_runtime, bootstrap, unique, tmp_path, executor) -> None:
    src, out, topic = tmp_path / "in.txt", tmp_path / "out.txt", f"life-{unique}"
    create_topics(bootstrap, topic)
    src.write_text("".join(f"a{i}\n" for i in range(10)))
    sink = f"sink-{unique}"  # its consumer group, connect-{sink}, is new on the session's broker
    rt = make_runtime()
    rt.create_connector("src", file_source(src, topic))
    rt.create_connector(sink, {"connector.class": "FileStreamSink", "file": str(out), "topics": topic})
    wait_until(lambda: len(lines(out)) == 10, 240, message="10 lines")
    # pause: nothing more arrives; resume: it does
    rt.pause_connector("src")
    wait_until(lambda: states(rt, "src") == ("PAUSED", ["PAUSED"]), 240, message="PAUSED")
    with src.open("a") as f:
        f.write("".join(f"b{i}\n" for i in range(5)))
    rt.resume_connector("src")
    wait_until(lambda: states(rt, "src") == ("RUNNING", ["RUNNING"]), 240, message="RUNNING")
    wait_until(lambda: len(lines(out)) == 15, 240, message="15 lines after resume")
    # KIP-558: the topics each connector used
    wait_until(lambda: rt.connector_topics(sink) == {sink: {"topics": [topic]}}, 240, message="sink topics")
    assert rt.connector_topics("src") == {"src": {"topics": [topic]}}
    # restart with tasks: RUNNING again, nothing duplicated
    rt.restart_connector("src", include_tasks=True)
    wait_until(lambda: states(rt, "src") == ("RUNNING", ["RUNNING"]), 240, message="RUNNING after restart")
    # KIP-875: stop, rewind the file source to the start of b0, resume: b0..b4 come again
    wait_until(lambda: rt.get_offsets("src")["offsets"]
               and rt.get_offsets("src")["offsets"][0]["offset"]["position"] == src.stat().st_size, 240,
               message="the source's offset at the end of the file")
    rt.stop_connector("src")
    wait_until(lambda: states(rt, "src") == ("STOPPED", []), 240, message="STOPPED")
    rewound = {"offsets": [{"partition": {"filename": str(src)}, "offset": {"position": 30}}]}  # a0..a9 = 30 bytes
    assert rt.alter_offsets("src", rewound) == {"message": "The offsets for this connector have been altered "
                                                           "successfully"}
    rt.resume_connector("src")
    wait_until(lambda: len(lines(out)) == 20, 240, message="b0..b4 again after the rewind")
    assert lines(out)[15:] == [f"b{i}" for i in range(5)]
    # sink offsets (its consumer group) after a stop, then reset
    rt.stop_connector(sink)
    wait_until(lambda: states(rt, sink) == ("STOPPED", []), 240, message="sink STOPPED")
    assert rt.get_offsets(sink)["offsets"] == [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 20}}]
    assert rt.reset_offsets(sink)["message"] == "The offsets for this connector have been reset successfully"
    rt.delete_connector(sink)
    assert sink not in rt.connectors()


def test_source_creates_its_topic_kip_158(make_runtime, bootstrap, unique, tmp_path) -> None:
    src, topic = tmp_path / "in.txt", f"created-{unique}"
    src.write_text("x\n")
    rt = make_runtime()
    rt.create_connector("src", file_source(src, topic, **{"topic.creation.default.partitions": "3",
                                                          "topic.creation.default.replication.factor": "1"}))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wait_until(lambda: topic in admin.list_topics(timeout=10).topics, 240, message="the topic created")
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 3


def test_error_handling_sends_bad_records_to_the_dead_letter_queue(make_runtime, bootstrap, unique,
                                                                    tmp_path) -> None:
    topic, dlq, out = f"bad-{unique}", f"dlq-{unique}", tmp_path / "out.txt"
    create_topics(bootstrap, topic, dlq)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        producer.produce(topic, b"{not json" if i % 5 == 0 else json.dumps({"i": i}).encode())
    producer.flush(30)
    rt = make_runtime()
    rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
                                 "value.converter": JSON, "value.converter.schemas.enable": "false",
                                 "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
                                 "errors.deadletterqueue.context.headers.enable": "true"})
    wait_until(lambda: len(lines(out)) == 8, 240, message="8 good records in the file")
    wait_until(lambda: len(read_records(bootstrap, dlq)) == 2, 240, message="2 records in the dead letter queue")
    group = "task-error-metrics,connector=sink,task=0"
    wait_until(lambda: rt.metrics().get(group, {}).get("total-records-skipped") == 2, 240,
               message="the task's error metrics")
    sink_group = "sink-task-metrics,connector=sink,task=0"
    wait_until(lambda: rt.metrics().get(sink_group, {}).get("sink-record-read-total", 0) >= 10, 240,
               message="the task's sink metrics")
    # the Spark task's metrics in Prometheus' format too, under the JMX exporter's names (GET /metrics)
    from prometheus_client.parser import text_string_to_metric_families

    from connect_magics.rest.prometheus import exposition

    scraped = {s.name: s.value for f in text_string_to_metric_families(exposition(rt.metrics()).decode())
               for s in f.samples if s.labels.get("connector") == "sink"}
    assert scraped["kafka_connect_sink_task_metrics_sink_record_read"] >= 10
    assert scraped["kafka_connect_task_error_metrics_total_records_skipped"] == 2
    assert "kafka_connect_connector_task_metrics_batch_size_max" in scraped


def test_a_task_whose_python_worker_is_killed_runs_again_from_its_offsets(bootstrap, unique, spark,
                                                                          tmp_path) -> None:
    topic, out = f"kill-{unique}", tmp_path / "out.txt"
    create_topics(bootstrap, topic)
    # The killed worker's sink consumer leaves no LeaveGroup: its next instance joins once that member's session
    # expires, after the broker's minimum (6 s) here rather than the consumer default (45 s).
    worker = {**FAST, "consumer.session.timeout.ms": "6000"}
    with ConnectRuntime(bootstrap, f"g-{unique}", worker, spark=spark, executor="spark") as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "20000",
                                    "rate": "2000", "value.converter": JSON,
                                    "value.converter.schemas.enable": "false"})
        rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
                                     "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        wait_until(lambda: len(lines(out)) > 1000, 240, message="records flowing")
        handle = rt.herder.task_handle("sink", 0)
        first = handle.generation
        pid = wait_until(lambda: (handle.published() or {}).get("pid"), 240, message="the sink's Python worker")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: handle.generation > first and (handle.published() or {}).get("pid") not in (None, pid),
                   120, message="the sink task running again in a new Python worker")
        wait_until(lambda: states(rt, "sink") == ("RUNNING", ["RUNNING"]), 240, message="RUNNING again")
        seqs = wait_until(lambda: (s := {json.loads(line)["seq"] for line in lines(out)}) == set(range(20000))
                          and s, 180, message="every record in the file")
        assert seqs == set(range(20000))  # none lost; the file sink is at least once (the table sink is exact)


def test_two_tasks_of_a_connector_run_at_once_on_local_2(bootstrap, unique, spark) -> None:
    topic = f"par-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    with ConnectRuntime(bootstrap, f"g-{unique}", FAST, spark=spark, executor="spark") as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "tasks.max": "2",
                                    "rate": "200"})

        def both_running() -> bool:
            tasks = rt.connector_status("gen")["tasks"]
            return [t["state"] for t in tasks] == ["RUNNING", "RUNNING"] and \
                tasks[0]["worker_id"] != tasks[1]["worker_id"]
        wait_until(both_running, 240, message="both tasks RUNNING in two Python workers")
        group = "source-task-metrics,connector=gen,task={}"
        before = [rt.metrics()[group.format(i)].get("source-record-poll-total", 0) for i in range(2)]
        wait_until(lambda: all(rt.metrics()[group.format(i)].get("source-record-poll-total", 0) > before[i]
                               for i in range(2)), 240, message="both tasks producing at the same time")


def test_a_task_without_a_free_spark_core_says_it_waits_for_one(bootstrap, unique, spark) -> None:
    topic = f"wait-{unique}"
    create_topics(bootstrap, topic, partitions=3)
    with ConnectRuntime(bootstrap, f"g-{unique}", FAST, spark=spark, executor="spark") as rt:
        assert spark.sparkContext.defaultParallelism == 2  # the session's local[2]: the third task waits
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "tasks.max": "3",
                                    "rate": "50"})
        wait_until(lambda: sorted(t["state"] for t in rt.connector_status("gen")["tasks"])[-2:] == ["RUNNING"] * 2,
                   240, message="two tasks RUNNING")
        handles = [rt.herder.task_handle("gen", i) for i in range(3)]
        waiting = wait_until(lambda: [h.waiting() for h in handles if h.waiting()], 60, message="a waiting task")
        assert waiting == ["waiting for a free Spark core: 2 running tasks hold all 2 of the session's task slots"]
        assert "waiting for a free Spark core" in StatusBoard(rt).table.value
        rt.delete_connector("gen")  # the waiting job is cancelled with it


def test_a_spark_connect_session_runs_connectors_on_the_spark_executor(bootstrap, unique, tmp_path) -> None:
    src, out, topic = tmp_path / "in.txt", tmp_path / "out.txt", f"connect-{unique}"
    create_topics(bootstrap, topic)
    src.write_text("".join(f"row {i}\n" for i in range(200)))
    host = Path(__file__).with_name("spark_connect_host.py")
    proc = subprocess.run([sys.executable, str(host), bootstrap, f"g-{unique}", str(src), str(out), topic],
                          capture_output=True, text=True, timeout=420)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    result = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))  # Ivy prints too (3.5)
    session_module, worker_id = result.split()[1:3]
    assert session_module == "pyspark.sql.connect.session"  # a Spark Connect client, no sparkContext
    assert ":spark-" in worker_id
    assert lines(out) == [f"row {i}" for i in range(200)]
