"""One group, many processes: one leader runs everything, followers forward writes, a dead leader is
replaced, and a leader that lost its group (SIGSTOP) is fenced when it comes back (SIGCONT)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from group_members import Member
from helpers import wait_until
from raw_topics import create_topics, latest, read_records

pytestmark = pytest.mark.slow


def lines_in(bootstrap: str, topic: str) -> list[str]:
    return [json.loads(v) for _, v in read_records(bootstrap, topic)]


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ends", "isolation.level": "read_uncommitted"})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1] for p in parts}
    finally:
        c.close()


def file_source(path: Path, topic: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic, "tasks.max": "1",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"}


def append(path: Path, start: int, count: int) -> None:
    with path.open("a") as f:
        f.writelines(f"line-{i}\n" for i in range(start, start + count))


def task_worker(member: Member, name: str) -> str | None:
    status, body, _ = member.rest("GET", f"/connectors/{name}/status")
    tasks = body.get("tasks", []) if status == 200 else []
    return tasks[0]["worker_id"] if tasks and tasks[0]["state"] == "RUNNING" else None


def leader_and_follower(bootstrap: str, group: str, members: list[Member]) -> tuple[Member, Member]:
    """Two runtimes of ``group``, started one after the other: the first leads, the second follows."""
    first = Member(bootstrap, group)
    members.append(first)
    wait_until(lambda: first.role == "leader", 60, message="the first runtime to lead")
    second = Member(bootstrap, group)
    members.append(second)
    wait_until(lambda: second.role == "follower", 60, message="the second runtime to follow")
    return first, second


def test_one_leader_runs_everything_followers_forward_and_a_killed_leader_is_replaced(
        bootstrap: str, unique: str, tmp_path: Path, members: list[Member]) -> None:
    group, topic, name = f"grp-{unique}", f"grp-{unique}", "lines"
    create_topics(bootstrap, topic)
    path = tmp_path / "in.txt"
    append(path, 0, 1000)
    first, second = leader_and_follower(bootstrap, group, members)

    # A write sent to the follower is applied once, by the leader.
    configs_before = len(read_records(bootstrap, f"{group}-configs"))
    status, body, _ = second.rest("POST", "/connectors", {"name": name, "config": file_source(path, topic)})
    assert status == 201, body
    assert body["name"] == name and body["tasks"] == [{"connector": name, "task": 0}]
    status, _, _ = second.rest("POST", "/connectors", {"name": name, "config": file_source(path, topic)})
    assert status == 409  # exists: the leader said so
    new = [k for k, _ in read_records(bootstrap, f"{group}-configs")[configs_before:]]
    assert new.count(f"connector-{name}") == 1, new
    assert wait_until(lambda: task_worker(second, name), 60) == first.worker_id  # the leader runs the task

    # Both runtimes up: 1,000 + 1,000 lines give exactly 2,000 records.
    append(path, 1000, 1000)
    wait_until(lambda: len(lines_in(bootstrap, topic)) >= 2000, 120, message="2,000 records")
    wait_until(lambda: committed_position(first, name) == path.stat().st_size, 60, message="offsets at the end")
    assert sorted(lines_in(bootstrap, topic)) == sorted(f"line-{i}" for i in range(2000))

    # SIGKILL of the leader: the follower takes over and resumes from the committed offsets.
    first.proc.kill()
    wait_until(lambda: second.role == "leader", 60, message="the follower to take over")
    wait_until(lambda: task_worker(second, name) == second.worker_id, 60, message="the task on the new leader")
    append(path, 2000, 1000)
    wait_until(lambda: set(lines_in(bootstrap, topic)) >= {f"line-{i}" for i in range(3000)}, 120,
               message="every line after the takeover")
    assert len(lines_in(bootstrap, topic)) == 3000  # offsets were committed before the kill: no duplicates


def committed_position(member: Member, name: str) -> int | None:
    status, body, _ = member.rest("GET", f"/connectors/{name}/offsets")
    offsets = body.get("offsets", []) if status == 200 else []
    return offsets[0]["offset"]["position"] if offsets else None


def test_a_stopped_leader_is_fenced_when_it_comes_back(bootstrap: str, unique: str, tmp_path: Path,
                                                        members: list[Member]) -> None:
    group, topic, name = f"zmb-{unique}", f"zmb-{unique}", "lines"
    create_topics(bootstrap, topic)
    path = tmp_path / "in.txt"
    append(path, 0, 500)
    first, second = leader_and_follower(bootstrap, group, members)
    assert first.rest("POST", "/connectors", {"name": name, "config": file_source(path, topic)})[0] == 201
    wait_until(lambda: committed_position(second, name) == path.stat().st_size, 60, message="first offsets")

    first.signal(signal.SIGSTOP)  # paused: it misses its heartbeats, the follower takes over
    append(path, 500, 500)  # read by neither yet: the zombie will have uncommitted progress when it wakes
    wait_until(lambda: second.role == "leader", 60, message="the follower to take over")
    wait_until(lambda: task_worker(second, name) == second.worker_id, 60, message="the task on the new leader")
    wait_until(lambda: committed_position(second, name) == path.stat().st_size, 60, message="the new leader's offsets")
    assert second.rest("PUT", f"/connectors/{name}/stop")[0] == 204  # the new leader commits nothing more
    wait_until(lambda: second.rest("GET", f"/connectors/{name}/status")[1]["connector"]["state"] == "STOPPED", 30)
    # The stop's config records are sent in the background (after the empty task set): wait for the last one.
    wait_until(lambda: (latest(read_records(bootstrap, f"{group}-configs")).get(f"target-state-{name}") or {})
               .get("state.v2") == "STOPPED", 30, message="the STOPPED target state in the config topic")
    internal = [f"{group}-configs", f"{group}-offsets"]
    before = {t: end_offsets(bootstrap, t) for t in internal}

    roles_before = len(first.roles)
    first.signal(signal.SIGCONT)  # the zombie wakes up with a running task and its old leadership
    wait_until(lambda: len(first.roles) > roles_before and first.role != "leader", 60,
               message="the old leader to step down")
    wait_until(lambda: first.role == "follower", 60, message="the old leader to rejoin as a follower")
    assert {t: end_offsets(bootstrap, t) for t in internal} == before  # not one record, not even aborted
    assert second.role == "leader"
    assert len(lines_in(bootstrap, topic)) >= 1000
