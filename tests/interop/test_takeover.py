"""State takeover both ways: connectors, configs, target states, task configs, source offsets, sink
consumer-group offsets and KIP-875 altered offsets written by connect_magics are taken over by a real
Apache Kafka Connect worker on the same group and topics, and the reverse (one worker at a time).

A FileStreamSource reads numbered lines into a topic that a FileStreamSink copies to a file; whichever
worker runs them, the file must end up holding every line exactly once, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import RestClient, wait_until

from connect_magics import ConnectRuntime
from connect_magics.local.connect_worker import JavaConnectWorker

FLUSH = {"offset.flush.interval.ms": "500"}


def append_lines(path: Path, first: int, last: int) -> None:
    with open(path, "a") as f:
        f.write("".join(f"{n}\n" for n in range(first, last + 1)))


def lines_are(path: Path, last: int) -> bool:
    return path.exists() and path.read_text().splitlines() == [str(n) for n in range(1, last + 1)]


def position(path: Path) -> int:
    return path.stat().st_size


@pytest.fixture
def java_stopped(java_connect: JavaConnectWorker) -> Iterator[JavaConnectWorker]:
    """The session's Java worker, stopped for the test and running again after it."""
    java_connect.stop()
    try:
        yield java_connect
    finally:
        java_connect.start()


def our_runtime(java: JavaConnectWorker) -> ConnectRuntime:
    """connect_magics on the Java worker's group, internal topics and converters."""
    keys = ("config.storage.topic", "offset.storage.topic", "status.storage.topic", "key.converter",
            "value.converter")
    return ConnectRuntime(java.properties["bootstrap.servers"], java.group_id,
                          {**{k: java.properties[k] for k in keys}, **FLUSH})


def java_state(call: RestClient, name: str) -> tuple[str, list[str]] | None:
    status, body, _ = call("GET", f"/connectors/{name}/status")
    return (body["connector"]["state"], [t["state"] for t in body["tasks"]]) if status == 200 else None


def our_state(rt: ConnectRuntime, name: str) -> tuple[str, list[str]]:
    body = rt.connector_status(name)
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def source(path: Path, topic: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic,
            "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}


def offsets_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return answer["offsets"]


def test_takeover_both_ways(java_stopped: JavaConnectWorker, tmp_path: Path, unique: str) -> None:
    java, call = java_stopped, RestClient(java_stopped.url)
    src, snk, paused, stopped = (f"to-{kind}-{unique}" for kind in ("src", "snk", "paused", "stopped"))
    topic = f"takeover-{unique}"
    lines, out, other = tmp_path / "in.txt", tmp_path / "out.txt", tmp_path / "other.txt"
    append_lines(lines, 1, 50)
    append_lines(other, 1, 10)
    configs = {src: source(lines, topic),
               snk: {"connector.class": "FileStreamSink", "file": str(out), "topics": topic},
               paused: source(other, f"{topic}-paused"), stopped: source(other, f"{topic}-stopped")}

    # 1. connect_magics writes the state: RUNNING, PAUSED and STOPPED connectors, offsets, altered offsets.
    with our_runtime(java) as rt:
        for name, config in configs.items():
            rt.create_connector(name, config)
        wait_until(lambda: lines_are(out, 50), 60, message="our sink copied lines 1-50")
        for name in (paused, stopped):
            wait_until(lambda name=name: offsets_of(rt.get_offsets(name)), 30, message=f"{name}'s offsets")
        rt.pause_connector(paused)
        rt.stop_connector(stopped)
        altered = [{"partition": {"filename": str(other)}, "offset": {"position": 4}}]  # after lines 1 and 2
        rt.alter_offsets(stopped, {"offsets": altered})
        wait_until(lambda: offsets_of(rt.get_offsets(src)) == [
            {"partition": {"filename": str(lines)}, "offset": {"position": position(lines)}}], 30,
            message="our source committed every line")
        wait_until(lambda: offsets_of(rt.get_offsets(snk)) == [
            {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 50}}], 30,
            message="our sink committed every record")
        our_task_configs = {name: rt.task_configs(name) for name in configs}
        our_paused_offsets = rt.get_offsets(paused)
        # the task sees the pause at its next loop (after a FileStreamSource's idle wait of up to 1 s)
        wait_until(lambda: our_state(rt, paused) == ("PAUSED", ["PAUSED"]), 30,
                   message=lambda: f"{paused} PAUSED, its task too (now {our_state(rt, paused)})")
    append_lines(lines, 51, 100)

    # 2. Kafka Connect takes over.
    java.start()
    assert set(configs) <= set(call("GET", "/connectors")[1])
    for name, config in configs.items():
        assert call("GET", f"/connectors/{name}/config")[1] == {**config, "name": name}
    wait_until(lambda: java_state(call, src) == ("RUNNING", ["RUNNING"]), 60, message="Java: source RUNNING")
    wait_until(lambda: java_state(call, snk) == ("RUNNING", ["RUNNING"]), 60, message="Java: sink RUNNING")
    wait_until(lambda: java_state(call, paused) == ("PAUSED", ["PAUSED"]), 60, message="Java: PAUSED")
    wait_until(lambda: java_state(call, stopped) == ("STOPPED", []), 60, message="Java: STOPPED")
    for name in configs:  # task configs (with Kafka's task.class) as we wrote them
        assert call("GET", f"/connectors/{name}/tasks")[1] == our_task_configs[name]
    assert call("GET", f"/connectors/{paused}/offsets")[1] == our_paused_offsets
    assert call("GET", f"/connectors/{stopped}/offsets")[1] == {"offsets": altered}
    wait_until(lambda: lines_are(out, 100), 60, message="Kafka Connect resumed: lines 1-100, each once")

    # 3. Kafka Connect changes the state: pauses the source, alters the stopped connector's offsets.
    assert call("PUT", f"/connectors/{src}/pause")[0] == 202
    wait_until(lambda: java_state(call, src) == ("PAUSED", ["PAUSED"]), 30, message="Java: source PAUSED")
    altered_by_java = [{"partition": {"filename": str(other)}, "offset": {"position": 6}}]
    assert call("PATCH", f"/connectors/{stopped}/offsets", {"offsets": altered_by_java})[0] == 200
    wait_until(lambda: call("GET", f"/connectors/{src}/offsets")[1]["offsets"] == [
        {"partition": {"filename": str(lines)}, "offset": {"position": position(lines)}}], 30,
        message="Java's source committed every line")
    wait_until(lambda: call("GET", f"/connectors/{snk}/offsets")[1]["offsets"] == [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 100}}], 30,
        message="Java's sink committed every record")
    java.stop()
    append_lines(lines, 101, 150)

    # 4. connect_magics takes over again.
    with our_runtime(java) as rt:
        assert set(configs) <= set(rt.connectors())
        wait_until(lambda: our_state(rt, src) == ("PAUSED", ["PAUSED"]), 30, message="ours: source PAUSED")
        wait_until(lambda: our_state(rt, snk) == ("RUNNING", ["RUNNING"]), 30, message="ours: sink RUNNING")
        assert our_state(rt, stopped) == ("STOPPED", [])
        assert our_state(rt, paused) == ("PAUSED", ["PAUSED"])
        assert rt.get_offsets(stopped) == {"offsets": altered_by_java}
        assert lines_are(out, 100)  # paused: nothing more
        rt.resume_connector(src)
        wait_until(lambda: lines_are(out, 150), 60, message="ours resumed: lines 1-150, each once")
        for name in configs:
            rt.delete_connector(name)
