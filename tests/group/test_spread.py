"""Tasks spread over the group (task.assignment=spread, the default): members share a connector's tasks and the
statuses name each task's worker; a joining member takes a share and nothing else restarts; a killed member's
tasks run elsewhere within session timeout + scheduled.rebalance.max.delay.ms with every record exactly once; a
stopped member (SIGSTOP) never commits after its tasks moved. Members are processes of their own."""

from __future__ import annotations

import collections
import json
import signal
import time
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, TopicPartition
from group_members import FAST, Member
from helpers import wait_until
from raw_topics import create_topics, latest, read_records

pytestmark = pytest.mark.slow
SESSION_S = int(FAST["session.timeout.ms"]) / 1000
DELAY_S = int(FAST["scheduled.rebalance.max.delay.ms"]) / 1000
JSON = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}


def sequence(topic: str, tasks: int, records: int = -1, rate: int = 200, **extra: str) -> dict[str, str]:
    return {"connector.class": "SequenceSource", "topic": topic, "tasks.max": str(tasks), "records": str(records),
            "rate": str(rate), "batch.size": "50", **JSON, **extra}


def task_workers(member: Member, name: str) -> dict[int, str | None]:
    """Each task's worker while it is RUNNING (None otherwise), as the member's REST API answers."""
    status, body, _ = member.rest("GET", f"/connectors/{name}/status")
    if status != 200:
        return {}
    return {t["id"]: t["worker_id"] if t["state"] == "RUNNING" else None for t in body["tasks"]}


def spread(member: Member, name: str, tasks: int, workers: dict[str, int]) -> Callable[[], dict[int, str] | None]:
    """A condition: all ``tasks`` RUNNING, so many on each worker (``{worker_id: count}``); the placement then."""
    def check() -> dict[int, str] | None:
        placed = task_workers(member, name)
        if len(placed) != tasks or None in placed.values():
            return None
        counts = collections.Counter(placed.values())
        return placed if dict(counts) == workers else None
    return check


def generations(bootstrap: str, group: str, name: str) -> dict[int, int]:
    """Each task's newest instance generation in the task control topic (a restart makes a new one)."""
    values = latest(read_records(bootstrap, f"{group}-task-control"))
    prefix = f"task-{name}-"
    return {int(k[len(prefix):]): v["generation"] for k, v in values.items() if k.startswith(prefix) and v}


def reported_tasks(bootstrap: str, group: str, worker_id: str) -> list | None:
    """What the member at ``worker_id`` last reported it runs (runtime/group/task_worker.py)."""
    for key, value in latest(read_records(bootstrap, f"{group}-task-control")).items():
        if key.startswith("member-") and value and value["worker_id"] == worker_id:
            return value["tasks"]
    return None


class Sequences:
    """How often each (task, seq) of a sequence source is in the topic."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spread-reader",
                                  "isolation.level": "read_committed", "enable.auto.commit": False})
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.counts: collections.Counter[tuple[int, int]] = collections.Counter()

    def read(self) -> int:
        for m in self.consumer.consume(10_000, timeout=0.2):
            if not m.error():
                value = json.loads(m.value())
                self.counts[(value["task"], value["seq"])] += 1
        return len(self.counts)

    def gaps(self) -> dict[int, int]:
        """Per task, how many sequence numbers below its highest are missing."""
        highest: dict[int, int] = {}
        for task, seq in self.counts:
            highest[task] = max(highest.get(task, -1), seq)
        return {t: h + 1 - sum(1 for (task, _) in self.counts if task == t) for t, h in highest.items()}

    def duplicates(self) -> int:
        return sum(n - 1 for n in self.counts.values())

    def duplicated(self) -> dict[int, tuple[int, int, int]]:
        """Per task with duplicates: (how many, lowest and highest duplicated sequence number)."""
        seqs: dict[int, list[int]] = collections.defaultdict(list)
        for (task, seq), n in self.counts.items():
            seqs[task].extend([seq] * (n - 1))
        return {t: (len(s), min(s), max(s)) for t, s in seqs.items() if s}

    def close(self) -> None:
        self.consumer.close()


def stop_warnings(members: list[Member]) -> str:
    """What the members logged about stopping, fencing or committing tasks (for a failure's message)."""
    words = ("stop", "fenced", "commit", "Traceback")
    return "\n".join(f"{m.worker_id}: {line}" for m in members for line in m.log_lines(*words))


def start_members(bootstrap: str, group: str, members: list[Member], count: int,
                  worker: dict[str, str] | None = None) -> list[Member]:
    """``count`` runtimes of ``group``, one after the other: the first leads."""
    started = []
    for i in range(count):
        member = Member(bootstrap, group, worker)
        members.append(member)
        started.append(member)
        wait_until(lambda m=member, i=i: m.role == ("leader" if i == 0 else "follower"), 60,
                   message=f"runtime {i} to join")
    return started


def test_members_share_tasks_and_a_joining_member_takes_a_share_without_restarting_the_others(
        bootstrap: str, unique: str, members: list[Member]) -> None:
    group, topic, name = f"spr-{unique}", f"spr-{unique}", "seq"
    create_topics(bootstrap, topic)
    a, b = start_members(bootstrap, group, members, 2)
    status, body, _ = b.rest("POST", "/connectors", {"name": name, "config": sequence(topic, 6)})  # forwarded
    assert status == 201, body
    before = wait_until(spread(a, name, 6, {a.worker_id: 3, b.worker_id: 3}), 60, message="3 tasks on each member")
    assert wait_until(spread(b, name, 6, {a.worker_id: 3, b.worker_id: 3}), 30) == before  # every member says so
    generations_before = generations(bootstrap, group, name)

    c = Member(bootstrap, group)
    members.append(c)
    after = wait_until(spread(a, name, 6, {a.worker_id: 2, b.worker_id: 2, c.worker_id: 2}), 60,
                       message="2 tasks on each of 3 members")
    moved = {t for t in after if after[t] != before[t]}
    assert len(moved) == 2 and all(after[t] == c.worker_id for t in moved), (before, after)
    generations_after = generations(bootstrap, group, name)
    # only the moved tasks were stopped and started again
    assert {t: g for t, g in generations_after.items() if t not in moved} == \
        {t: g for t, g in generations_before.items() if t not in moved}
    assert all(generations_after[t] > generations_before[t] for t in moved)

    # a task on another member: restarted by its member when the leader is asked; pause and resume reach it too
    on_c = min(moved)
    assert a.rest("POST", f"/connectors/{name}/tasks/{on_c}/restart")[0] == 204
    wait_until(lambda: generations(bootstrap, group, name)[on_c] > generations_after[on_c], 30,
               message="a new instance of the restarted task")
    assert wait_until(spread(a, name, 6, {a.worker_id: 2, b.worker_id: 2, c.worker_id: 2}), 30)[on_c] == c.worker_id
    assert {t: g for t, g in generations(bootstrap, group, name).items() if t != on_c} == \
        {t: g for t, g in generations_after.items() if t != on_c}
    assert b.rest("PUT", f"/connectors/{name}/pause")[0] == 202
    wait_until(lambda: [t["state"] for t in a.rest("GET", f"/connectors/{name}/status")[1]["tasks"]] == ["PAUSED"] * 6,
               30, message="every task PAUSED, on every member")
    assert b.rest("PUT", f"/connectors/{name}/resume")[0] == 202
    wait_until(spread(a, name, 6, {a.worker_id: 2, b.worker_id: 2, c.worker_id: 2}), 30, message="resumed")

    sequences = Sequences(bootstrap, topic)
    try:
        progress = sequences.read()
        wait_until(lambda: sequences.read() > progress + 600, 60, message="records from the tasks after the move")
        assert c.rest("PUT", f"/connectors/{name}/stop")[0] == 204  # forwarded by the new member
        wait_until(lambda: task_workers(a, name) == {}, 30, message="the connector's tasks to stop")
        wait_until(lambda: reported_tasks(bootstrap, group, b.worker_id) == [] and
                   reported_tasks(bootstrap, group, c.worker_id) == [], 30, message="the members to stop their tasks")
        wait_until(lambda: (sequences.read(), sequences.read())[0] == sequences.read(), 30, message="the last records")
        assert sequences.gaps() == dict.fromkeys(range(6), 0)  # none lost
        # a moved task stopped (and committed) before its successor started
        assert sequences.duplicates() == 0, (sequences.duplicated(), before, after, stop_warnings(members))
    finally:
        sequences.close()


def test_a_killed_member_s_tasks_run_elsewhere_with_every_record_exactly_once(
        bootstrap: str, unique: str, members: list[Member]) -> None:
    group, topic, name = f"spk-{unique}", f"spk-{unique}", "seq"
    records, tasks = 4000, 6
    create_topics(bootstrap, topic)
    worker = {"exactly.once.source.support": "enabled"}
    a, b, c = start_members(bootstrap, group, members, 3, worker)
    config = sequence(topic, tasks, records, rate=250, **{"exactly.once.support": "required"})
    assert a.rest("POST", "/connectors", {"name": name, "config": config})[0] == 201
    sequences = Sequences(bootstrap, topic)
    try:
        wait_until(spread(a, name, tasks, {a.worker_id: 2, b.worker_id: 2, c.worker_id: 2}), 60,
                   message="2 tasks on each member")
        wait_until(lambda: sequences.read() >= tasks * records // 4, 120, message="a quarter of the records")
        c.proc.kill()
        killed = time.monotonic()
        placed = wait_until(lambda: (p := task_workers(a, name)) and len(p) == tasks and None not in p.values()
                            and c.worker_id not in p.values() and p, SESSION_S + DELAY_S + 30,
                            message="the killed member's tasks to run on the others")
        took = time.monotonic() - killed
        print(f"the killed member's tasks ran elsewhere after {took:.1f} s (session timeout {SESSION_S:g} s + "
              f"delay {DELAY_S:g} s); placement {placed}")
        assert set(placed.values()) == {a.worker_id, b.worker_id}
        wait_until(lambda: sequences.read() >= tasks * records, 180,
                   message=lambda: f"every record ({len(sequences.counts)} of {tasks * records})")
        assert sorted(sequences.counts) == [(t, s) for t in range(tasks) for s in range(records)]
        assert sequences.duplicates() == 0
    finally:
        sequences.close()


def test_a_stopped_member_never_commits_after_its_tasks_moved(bootstrap: str, unique: str,
                                                               members: list[Member]) -> None:
    group, topic, name = f"spz-{unique}", f"spz-{unique}", "seq"
    create_topics(bootstrap, topic)
    a, b = start_members(bootstrap, group, members, 2)
    assert a.rest("POST", "/connectors", {"name": name, "config": sequence(topic, 4)})[0] == 201
    wait_until(spread(a, name, 4, {a.worker_id: 2, b.worker_id: 2}), 60, message="2 tasks on each member")

    b.signal(signal.SIGSTOP)  # its tasks hold uncommitted progress: they cannot flush while it is stopped
    wait_until(spread(a, name, 4, {a.worker_id: 4}), SESSION_S + DELAY_S + 30,
               message="the stopped member's tasks to run on the leader")
    assert a.role == "leader"
    assert a.rest("PUT", f"/connectors/{name}/stop")[0] == 204  # the leader commits nothing more
    wait_until(lambda: (latest(read_records(bootstrap, f"{group}-configs")).get(f"target-state-{name}") or {})
               .get("state.v2") == "STOPPED", 30, message="the STOPPED target state in the config topic")
    wait_until(lambda: task_workers(a, name) == {}, 30, message="the connector's tasks to stop")
    offsets = f"{group}-offsets"
    before = read_records(bootstrap, offsets)

    b.signal(signal.SIGCONT)  # the zombie wakes up with two running tasks
    wait_until(lambda: reported_tasks(bootstrap, group, b.worker_id) == [], 60,
               message="the woken member to let its tasks go")
    assert read_records(bootstrap, offsets) == before  # not one offset committed by the zombie
    assert a.role == "leader"
