"""The group's task assignment and its members' reports, in the group's control topic.

Two kinds of records share ``task.control.storage.topic`` with task control and forwarded requests:

- ``assignment`` → ``{"version": 7, "leader": member, "tasks": [[connector, task, member or null, restarts], ...]}``,
  written by the group's leader (runtime/group/assignor.py). ``restarts`` counts the restarts asked of a task
  that runs on another member: its owner restarts it when the number grows.
- ``member-{member}`` → ``{"worker_id": ..., "tasks": [[connector, task], ...]}``: what a member runs now,
  written by the member after every change (runtime/group/task_worker.py); a tombstone when it left cleanly.

Versions only grow: a record whose version is not above the newest seen is ignored, so that a leader that lost
its group (paused, partitioned) and writes an old view when it wakes changes nothing.

>>> store = AssignmentStore("nb-task-control", {"bootstrap.servers": "127.0.0.1:9092"}, print)  # doctest: +SKIP
>>> store.start(); store.assignment()                                                        # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import KafkaLog, json_object, text_key

ASSIGNMENT_KEY = "assignment"
MEMBER_PREFIX = "member-"

TaskKey = tuple[str, int]


@dataclass
class Slot:
    """Where one task runs: ``member`` (None while unassigned, e.g. revoked and not yet given to another), and
    how many restarts were asked of it on another member."""

    member: str | None
    restarts: int = 0


@dataclass
class Assignment:
    version: int = 0
    leader: str | None = None
    tasks: dict[TaskKey, Slot] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "leader": self.leader,
                "tasks": [[c, t, s.member, s.restarts] for (c, t), s in sorted(self.tasks.items())]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Assignment:
        tasks = {(str(c), int(t)): Slot(m, int(r)) for c, t, m, r in data.get("tasks", [])}
        return cls(int(data.get("version", 0)), data.get("leader"), tasks)

    def of(self, member: str) -> dict[TaskKey, int]:
        """The tasks assigned to ``member``, with their restart counts."""
        return {key: slot.restarts for key, slot in self.tasks.items() if slot.member == member}

    def copy(self) -> Assignment:
        return Assignment(self.version, self.leader, {k: Slot(s.member, s.restarts) for k, s in self.tasks.items()})


@dataclass
class Report:
    """What a member says it runs."""

    worker_id: str
    tasks: set[TaskKey]


class AssignmentStore:
    """Reads the assignment and the members' reports; ``on_change()`` runs (on the reader thread) after each."""

    def __init__(self, topic: str, client_config: dict[str, str], on_change: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._assignment = Assignment()
        self._reports: dict[str, Report] = {}
        self._left: set[str] = set()  # members whose report was withdrawn (they left cleanly)
        self._on_change = on_change
        self.log = KafkaLog(topic, client_config, self._apply)

    def start(self, timeout: float = 30.0) -> AssignmentStore:
        self.log.start(timeout)
        return self

    def stop(self) -> None:
        self.log.stop()

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        k = text_key(key) if key else ""
        if k == ASSIGNMENT_KEY:
            data = json_object(value, 'an assignment {"version": N, "tasks": [...]}')
            if data is None:
                return
            assignment = Assignment.from_json(data)
            with self._lock:
                if assignment.version <= self._assignment.version:
                    return  # written by a leader that no longer leads
                self._assignment = assignment
        elif k.startswith(MEMBER_PREFIX):
            member = k[len(MEMBER_PREFIX):]
            data = json_object(value, 'a member report {"worker_id": ..., "tasks": [...]}')
            with self._lock:
                if data is None:
                    self._reports.pop(member, None)
                    self._left.add(member)
                else:
                    self._reports[member] = Report(str(data.get("worker_id")),
                                                   {(str(c), int(t)) for c, t in data.get("tasks", [])})
                    self._left.discard(member)
        else:
            return  # task control, metrics, forwarded requests: not ours
        self._on_change()

    # -- reading ----------------------------------------------------------------------------------
    def assignment(self) -> Assignment:
        with self._lock:
            return self._assignment.copy()

    def reports(self) -> dict[str, Report]:
        with self._lock:
            return {m: Report(r.worker_id, set(r.tasks)) for m, r in self._reports.items()}

    def left(self) -> set[str]:
        with self._lock:
            return set(self._left)

    # -- writing ----------------------------------------------------------------------------------
    def put_assignment(self, assignment: Assignment, timeout: float = 30.0) -> None:
        self.log.write([(ASSIGNMENT_KEY, dumps(assignment.to_json()))], timeout)
        with self._lock:
            if assignment.version > self._assignment.version:
                self._assignment = assignment.copy()

    def put_report(self, member: str, worker_id: str, tasks: set[TaskKey], timeout: float = 30.0) -> None:
        self.log.write([(MEMBER_PREFIX + member, dumps({"worker_id": worker_id,
                                                         "tasks": [list(t) for t in sorted(tasks)]}))], timeout)

    def withdraw_report(self, member: str, timeout: float = 10.0) -> None:
        """Say this member left cleanly: its tasks are stopped, and may go to others at once."""
        self.log.write([(MEMBER_PREFIX + member, None)], timeout)
