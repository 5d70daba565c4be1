"""``executor="processes"``: each task in a process of its own. What the other executors share with it
(pipelines, lifecycle, KIP-875 offsets, KIP-558 topics) is in tests/spark/test_spark_executor.py; here is
what only it does: tasks in separate processes under the worker's id, every record once across four of
them, a killed task process run again from the committed offsets, task processes that end with the
worker's, and a failed task that stays failed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from confluent_kafka import Producer
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime

FAST = {"offset.flush.interval.ms": "200"}
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
HOST = Path(__file__).with_name("process_host.py")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def task_pids(rt: ConnectRuntime, connector: str, tasks: int) -> list[int]:
    """The pids the tasks' processes published (waits for all of them)."""
    def pids() -> list[int] | None:
        found = [(rt.herder.task_handle(connector, i).published() or {}).get("pid") for i in range(tasks)]
        return found if all(found) else None
    return wait_until(pids, 120, message=f"the processes of {connector}'s {tasks} tasks")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_four_sink_tasks_in_four_processes_write_every_record_once(bootstrap, unique, tmp_path) -> None:
    topic, out, n = f"four-{unique}", tmp_path / "out.txt", 20_000
    create_topics(bootstrap, topic, partitions=4)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        producer.produce(topic, f"r{i}".encode(), partition=i % 4)
    assert producer.flush(30) == 0
    with ConnectRuntime(bootstrap, f"g-{unique}", FAST, executor="processes") as rt:
        rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
                                     "tasks.max": "4", "value.converter": STRING})
        wait_until(lambda: len(lines(out)) >= n, 120, message=f"{n} lines")
        pids = task_pids(rt, "sink", 4)
        assert len(set(pids)) == 4 and os.getpid() not in pids
        wait_until(lambda: [(t["state"], t["worker_id"]) for t in rt.connector_status("sink")["tasks"]]
                   == [("RUNNING", rt.worker_config.worker_id)] * 4, 60,
                   message=lambda: f"four RUNNING statuses under the worker's id: {rt.connector_status('sink')}")
        metrics = rt.metrics()
        def read_totals() -> list[float]:
            return [rt.metrics()[f"sink-task-metrics,connector=sink,task={i}"].get("sink-record-read-total", 0)
                    for i in range(4)]
        wait_until(lambda: sum(read_totals()) == n, 60,
                   message=lambda: f"the tasks' metrics counting every record: {read_totals()}, "
                                   f"{len(lines(out))} lines, {len(set(lines(out)))} distinct")
        assert all(metrics[f"sink-task-metrics,connector=sink,task={i}"] for i in range(4))
    assert sorted(lines(out)) == sorted(f"r{i}" for i in range(n))  # each record exactly once
    assert not [pid for pid in pids if alive(pid)]  # the runtime's close ended them


def test_a_killed_task_process_runs_again_from_its_offsets(bootstrap, unique, tmp_path) -> None:
    topic, out, n = f"kill-{unique}", tmp_path / "out.txt", 20_000
    create_topics(bootstrap, topic)
    # the killed sink's consumer holds its partition until its session times out (Kafka's default: 45 s)
    worker = {**FAST, "consumer.session.timeout.ms": "6000"}
    with ConnectRuntime(bootstrap, f"g-{unique}", worker, executor="processes") as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": str(n),
                                    "rate": "2000", "value.converter": JSON,
                                    "value.converter.schemas.enable": "false"})
        rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
                                     "value.converter": STRING})
        wait_until(lambda: len(lines(out)) > 1000, 120, message="records flowing")
        killed = {}
        for name in ("gen", "sink"):
            handle = rt.herder.task_handle(name, 0)
            killed[name] = (handle, handle.generation, task_pids(rt, name, 1)[0])
            os.kill(killed[name][2], signal.SIGKILL)
        for name, (handle, generation, pid) in killed.items():
            wait_until(lambda: handle.generation > generation  # noqa: B023 - called within the iteration
                       and (handle.published() or {}).get("pid") not in (None, pid),  # noqa: B023
                       120, message=f"{name} running again in a new process")
        wait_until(lambda: [t["state"] for t in rt.connector_status("sink")["tasks"]] == ["RUNNING"], 60,
                   message="the sink RUNNING again")
        seqs = wait_until(lambda: (s := {json.loads(line)["seq"] for line in lines(out)}) == set(range(n)) and s,
                          180, message="every record in the file")
        assert seqs == set(range(n))  # none lost: offsets were committed only for what was acknowledged/written
        topic_seqs = {json.loads(value)["seq"] for _, value in read_records(bootstrap, topic)}
        assert topic_seqs == set(range(n))


def test_a_failed_task_stays_failed_and_its_process_ends(bootstrap, unique, tmp_path) -> None:
    topic = f"bad-{unique}"
    create_topics(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"{not json")
    producer.flush(30)
    with ConnectRuntime(bootstrap, f"g-{unique}", FAST, executor="processes") as rt:
        rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"),
                                     "topics": topic, "value.converter": JSON})
        task = wait_until(lambda: (t := rt.connector_status("sink")["tasks"]) and t[0]["state"] == "FAILED" and t[0],
                          120, message="the task FAILED")
        assert "Converting byte[] to Kafka Connect data failed due to serialization error" in task["trace"]
        handle = rt.herder.task_handle("sink", 0)
        assert handle.join(60)  # the instance ended as failed: no next generation
        assert handle.runs == 1 and handle.result["outcome"] == "failed"


def test_task_processes_end_when_the_worker_process_is_killed(bootstrap, unique) -> None:
    topic = f"orphan-{unique}"
    create_topics(bootstrap, topic)
    host = subprocess.Popen([sys.executable, str(HOST), bootstrap, f"g-{unique}", topic], stdout=subprocess.PIPE,
                            text=True)
    try:
        pids = json.loads(host.stdout.readline())
        assert len(pids) == 2 and all(alive(pid) for pid in pids)
        host.kill()
        host.wait(30)
        wait_until(lambda: not any(alive(pid) for pid in pids), 60, message="the task processes gone")
    finally:
        host.kill()
        host.wait(30)
