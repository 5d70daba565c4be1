"""A whole group restarted together (runtime/group/assignor.py): the first member up, alone, waits a moment for the
workers of the last assignment to report, so each gets its tasks back instead of the first one starting them all.
The store and the herder are in-memory stand-ins: this is the assignor's logic, not Kafka."""

from __future__ import annotations

import threading

import pytest
from helpers import wait_until

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.group import assignor as assignor_module
from connect_magics.runtime.group.assignment import plan
from connect_magics.runtime.group.assignor import TaskAssignor
from connect_magics.storage.assignment_store import Assignment, Report, Slot, TaskKey

OLD_A, OLD_B = "h:1/1/a", "h:2/2/b"  # the members before the restart (both left cleanly)
NEW_A, NEW_B = "h:1/7/x", "h:2/8/y"  # the same workers, restarted
TASKS = {("c", 0): OLD_A, ("c", 1): OLD_A, ("c", 2): OLD_B, ("c", 3): OLD_B}


class Store:
    """The control topic's view, in memory."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.written = Assignment(3, OLD_A, {key: Slot(member) for key, member in TASKS.items()})
        self.members: set[str] = {NEW_A}
        self.report_changes = 0

    def read_to_end(self, timeout: float = 30.0) -> None:
        pass

    def assignment(self) -> Assignment:
        with self.lock:
            return self.written.copy()

    def version(self) -> int:
        with self.lock:
            return self.written.version

    def put_assignment(self, assignment: Assignment, timeout: float = 30.0) -> None:
        with self.lock:
            self.written = assignment.copy()

    def live(self, session_timeout_ms: int) -> set[str]:
        with self.lock:
            return set(self.members)

    def left(self) -> set[str]:
        return {OLD_A, OLD_B}

    def reports(self) -> dict[str, Report]:
        return {}


class Herder:
    def __init__(self) -> None:
        self.started: list[TaskKey] = []
        self.asked = 0  # how often the leader asked for the desired tasks: once a step

    def desired_tasks(self) -> set[TaskKey]:
        self.asked += 1
        return set(TASKS)

    def start_assigned(self, connector: str, task: int) -> None:
        self.started.append((connector, task))

    def stop_assigned(self, tasks: set[TaskKey]) -> None:
        pass


def _assignor(store: Store, herder: Herder) -> TaskAssignor:
    config = WorkerConfig("b:9092", "g", {"scheduled.rebalance.max.delay.ms": "10000"})
    assignor = TaskAssignor(store, herder, NEW_A, config, interval=0.05)  # type: ignore[arg-type]
    assignor.start()
    return assignor


def test_the_first_member_up_gives_a_returning_worker_its_own_tasks() -> None:
    store, herder = Store(), Herder()
    assignor = _assignor(store, herder)
    try:
        assert [assignor.place(key) for key in sorted(TASKS)] == [True, True, False, False]  # B's wait for B
        with store.lock:
            store.members.add(NEW_B)  # B reports, within the initial delay
        wait_until(lambda: {k: s.member for k, s in store.assignment().tasks.items()} ==
                   {("c", 0): NEW_A, ("c", 1): NEW_A, ("c", 2): NEW_B, ("c", 3): NEW_B}, 10,
                   message=lambda: f"each worker's tasks back with it (written: {store.assignment().tasks})")
        assert ("c", 2) not in herder.started and ("c", 3) not in herder.started  # never started on the leader
    finally:
        assignor.stop()


def test_a_worker_that_does_not_come_back_within_the_delay_has_its_tasks_placed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assignor_module, "INITIAL_DELAY_S", 0.3)
    store, herder = Store(), Herder()
    assignor = _assignor(store, herder)
    try:
        assert assignor.place(("c", 2)) is False
        wait_until(lambda: {("c", 2), ("c", 3)} <= set(herder.started), 10,
                   message="B's tasks started on the leader once the initial delay passed")
        assert {s.member for s in store.assignment().tasks.values()} == {NEW_A}
    finally:
        assignor.stop()


def test_a_leader_that_takes_over_a_live_group_does_not_wait() -> None:
    store, herder = Store(), Herder()
    with store.lock:
        store.members.add("h:3/9/z")  # another member is live: this is a failover, not a group restart
    assignor = _assignor(store, herder)
    try:
        assert assignor.place(("c", 2)) is False  # placed on the least loaded member at once, not held
        assert assignor.owner(("c", 2)) == "h:3/9/z"
    finally:
        assignor.stop()


def test_a_lone_runtime_restarted_at_a_new_address_does_not_wait() -> None:
    store, herder = Store(), Herder()
    store.written = Assignment(3, OLD_B, {key: Slot(OLD_B) for key in TASKS})  # one worker ran everything
    assignor = _assignor(store, herder)
    try:
        assert all(assignor.place(key) for key in sorted(TASKS))  # its successor at h:1 starts them at once
    finally:
        assignor.stop()


def test_the_leader_plans_again_only_when_what_it_plans_from_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Members report every heartbeat and the leader reads its own assignment back: a step that finds the desired
    tasks, the members' reports and the live members as they were plans nothing (over thousands of tasks a plan
    costs milliseconds, and the leader was woken several times a second)."""
    plans = []

    def counted_plan(*args, **kwargs):
        plans.append(1)
        return plan(*args, **kwargs)

    monkeypatch.setattr(assignor_module, "plan", counted_plan)
    store, herder = Store(), Herder()
    with store.lock:
        store.members.add("h:3/9/z")  # a live group: nothing to wait for
    assignor = _assignor(store, herder)
    try:
        for key in sorted(TASKS):
            assignor.place(key)
        wait_until(lambda: {s.member for s in store.assignment().tasks.values()} == {NEW_A, "h:3/9/z"}, 10,
                   message="the tasks spread over the two live members")
        asked = herder.asked
        wait_until(lambda: herder.asked >= asked + 3, 10, message="the leader's next looks (the old members forgotten)")
        planned, asked = len(plans), herder.asked
        for _ in range(10):
            assignor.wake()
        wait_until(lambda: herder.asked >= asked + 10, 10, message="ten more looks of the leader")
        assert len(plans) == planned  # nothing changed: no plan
        store.report_changes += 1  # a member reports other tasks
        wait_until(lambda: len(plans) == planned + 1, 10, message="a plan after the report changed")
        with store.lock:
            store.members.discard("h:3/9/z")  # a member drops out: planned again (its absence then runs out)
        wait_until(lambda: len(plans) > planned + 1, 10, message="a plan after a member dropped out")
    finally:
        assignor.stop()
