"""A member starting many tasks keeps reporting (runtime/group/task_worker.py): its report is its heartbeat, and a
killed member's hundreds of tasks arriving at once must not make it look gone to the leader (who would then move
its tasks too). The stores and the herder are in-memory stand-ins: this is the member's loop, not Kafka."""

from __future__ import annotations

import threading
import time
from typing import Any

from helpers import wait_until

from connect_magics.runtime.group.task_worker import TaskWorker
from connect_magics.storage.assignment_store import Assignment, Slot, TaskKey

ME = "h:2/2/b"
TASKS = 20
START_S = 0.02  # what a task start takes here (its clients, its fence); 20 of them outlast the heartbeat many times


class Store:
    def __init__(self) -> None:
        self.reports: list[tuple[float, set[TaskKey]]] = []

    def assignment(self) -> Assignment:
        return Assignment(1, "h:1/1/a", {("c", i): Slot(ME) for i in range(TASKS)})

    looks = 0  # how often the member looked at the assignment's version: once a look

    def version(self) -> int:
        self.looks += 1
        return 1

    def assigned_to(self, member: str) -> dict[TaskKey, int]:
        return self.assignment().of(member)

    def put_report(self, member: str, worker_id: str, tasks: set[TaskKey], timeout: float = 30.0) -> None:
        self.reports.append((time.monotonic(), set(tasks)))

    def withdraw_report(self, member: str, timeout: float = 10.0) -> None:
        pass


class Configs:
    changes = 0  # bumped by a test: a config record was read
    looked_up = 0  # connector configs looked up (compared or started with)

    def connector_config(self, name: str) -> dict[str, str]:
        self.looked_up += 1
        return {"connector.class": "SequenceSource"}

    def task_configs(self, name: str) -> list[dict[str, str]]:
        return [{"task.id": str(i)} for i in range(TASKS)]

    def target_state(self, name: str) -> None:
        return None


class Herder:
    def __init__(self) -> None:
        self.started: list[tuple[float, TaskKey]] = []
        self.lock = threading.Lock()

    def start_hosted(self, connector: str, task: int, *_: Any) -> object:
        time.sleep(START_S)  # a stand-in for a slow start, not a wait for another thread
        with self.lock:
            self.started.append((time.monotonic(), (connector, task)))
        return object()

    def stop_handles(self, handles: list[object]) -> None:
        pass


def test_a_member_reports_while_it_starts_many_tasks() -> None:
    store, herder = Store(), Herder()
    worker = TaskWorker(herder, Configs(), store, ME, "h:2", heartbeat=0.05)  # type: ignore[arg-type]
    worker.start()
    worker.activate()
    try:
        wait_until(lambda: len(herder.started) == TASKS and store.reports and len(store.reports[-1][1]) == TASKS, 30,
                   message="every task started and reported")
        first_start, last_start = herder.started[0][0], herder.started[-1][0]
        during = [tasks for at, tasks in store.reports if first_start <= at < last_start]
        # reports came between the starts, each naming the tasks started so far
        assert len(during) >= 3, (len(store.reports), last_start - first_start)
        assert all(0 < len(tasks) < TASKS for tasks in during)
        assert [len(t) for t in during] == sorted(len(t) for t in during)
    finally:
        worker.close()


def test_a_settled_member_compares_nothing_until_the_assignment_or_a_config_changes() -> None:
    """Each record read wakes the member (reports every heartbeat, config records): with its whole share running as
    assigned and neither the assignment's version nor the configs changed, a look compares no task's configs."""
    store, herder, configs = Store(), Herder(), Configs()
    worker = TaskWorker(herder, configs, store, ME, "h:2", heartbeat=0.05)  # type: ignore[arg-type]
    worker.start()
    worker.activate()
    try:
        wait_until(lambda: len(herder.started) == TASKS, 30, message="every task started")
        looks = store.looks
        wait_until(lambda: store.looks >= looks + 2, 10, message="two more looks (the share settled)")
        looked_up, looks = configs.looked_up, store.looks
        for _ in range(10):
            worker.wake()
        wait_until(lambda: store.looks >= looks + 10, 10, message="ten more looks")
        assert configs.looked_up == looked_up
        configs.changes += 1  # a config record was read: each task's configs compared once more
        wait_until(lambda: configs.looked_up >= looked_up + TASKS, 10, message="the configs compared again")
        assert len(herder.started) == TASKS  # nothing changed for real: nothing restarted
    finally:
        worker.close()
