"""The group's task assignment and its members' reports, in the group's control topic.

Two kinds of records share ``task.control.storage.topic`` with task control and forwarded requests:

- ``assignment`` → ``{"version": 7, "leader": member, "tasks": [[connector, task, member or null, restarts], ...]}``,
  written by the group's leader (runtime/group/assignor.py). ``restarts`` counts the restarts asked of a task
  that runs on another member: its owner restarts it when the number grows.
- ``member-{member}`` → ``{"worker_id": ..., "tasks": [[connector, task], ...]}``: what a member runs now,
  written by the member after every change and every ``heartbeat.interval.ms`` (runtime/group/task_worker.py);
  a tombstone when it left cleanly. The records' timestamps say which members are live: those whose last report
  is at most ``session.timeout.ms`` older than the newest report of any member (see :meth:`AssignmentStore.live`).

Versions only grow: a record whose version is not above the newest seen is ignored, so that a leader that lost
its group (paused, partitioned) and writes an old view when it wakes changes nothing.

>>> store = AssignmentStore("nb-task-control", {"bootstrap.servers": "127.0.0.1:9092"}, print)  # doctest: +SKIP
>>> store.start(); store.assignment()                                                        # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import BadRecord, KafkaLog, json_object, text_key

log = logging.getLogger(__name__)

ASSIGNMENT_KEY = "assignment"
MEMBER_PREFIX = "member-"

TaskKey = tuple[str, int]


@dataclass(slots=True)
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
        self._seen: dict[str, int] = {}  # member -> timestamp (ms) of its last report
        self._newest = 0  # the newest report's timestamp (ms)
        #: Counts changes of what the members say (a report's tasks, a member that left or came): the leader plans
        #: again only when it, the live members or the desired tasks changed (a report repeated says nothing new).
        self.report_changes = 0
        self._on_change = on_change
        self.log = KafkaLog(topic, client_config, self._apply, on_batch=self._apply_batch)

    def start(self, timeout: float = 30.0) -> AssignmentStore:
        self.log.start(timeout)
        return self

    def stop(self) -> None:
        self.log.stop()

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    def _apply_batch(self, messages: list) -> None:
        changed = False
        for m in messages:
            try:
                changed = self._apply(m.key(), m.value(), m.partition(), m.offset(), m.timestamp()[1]) or changed
            except BadRecord as e:
                log.warning("Skipping the record of %s at %s/%s with key %r: %s", self.log.topic, m.partition(),
                            m.offset(), m.key(), e)
            except (TypeError, ValueError, KeyError):
                log.exception("Skipping a record of %s at %s/%s that could not be read", self.log.topic,
                              m.partition(), m.offset())
        if changed:
            self._on_change()

    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int, timestamp: int = 0) -> bool:
        """Apply one record; True if it was one of ours."""
        k = text_key(key) if key else ""
        if k == ASSIGNMENT_KEY:
            data = json_object(value, 'an assignment {"version": N, "tasks": [...]}')
            if data is None:
                return
            with self._lock:
                if int(data.get("version", 0)) <= self._assignment.version:
                    return False  # the leader's own, already kept; or written by a leader that no longer leads
            assignment = Assignment.from_json(data)
            with self._lock:
                if assignment.version <= self._assignment.version:
                    return False
                self._assignment = assignment
        elif k.startswith(MEMBER_PREFIX):
            member = k[len(MEMBER_PREFIX):]
            data = json_object(value, 'a member report {"worker_id": ..., "tasks": [...]}')
            with self._lock:
                if data is None:
                    self._reports.pop(member, None)
                    self._seen.pop(member, None)
                    self._left.add(member)
                    self.report_changes += 1
                else:
                    report = Report(str(data.get("worker_id")), {(str(c), int(t)) for c, t in data.get("tasks", [])})
                    if self._reports.get(member) != report or member in self._left:
                        self.report_changes += 1
                    self._reports[member] = report
                    self._left.discard(member)
                    self._seen[member] = timestamp
                    self._newest = max(self._newest, timestamp)
        else:
            return False  # task control, metrics, forwarded requests: not ours
        return True

    # -- reading ----------------------------------------------------------------------------------
    def assignment(self) -> Assignment:
        with self._lock:
            return self._assignment.copy()

    def version(self) -> int:
        """The newest assignment's version."""
        with self._lock:
            return self._assignment.version

    def assigned_to(self, member: str) -> dict[TaskKey, int]:
        """The tasks the newest assignment gives ``member``, with their restart counts (no copy of the rest)."""
        with self._lock:
            return self._assignment.of(member)

    def reports(self) -> dict[str, Report]:
        with self._lock:
            return {m: Report(r.worker_id, set(r.tasks)) for m, r in self._reports.items()}

    def left(self) -> set[str]:
        with self._lock:
            return set(self._left)

    def live(self, session_timeout_ms: int) -> set[str]:
        """The members whose last report is at most ``session_timeout_ms`` older than the newest report: a member
        that stopped reporting (killed, paused, partitioned) drops out, and while nothing is read at all (the
        broker is away) nobody does."""
        with self._lock:
            return {m for m, ts in self._seen.items() if self._newest - ts <= session_timeout_ms}

    # -- writing ----------------------------------------------------------------------------------
    def put_assignment(self, assignment: Assignment, timeout: float = 30.0) -> None:
        """Write ``assignment`` and keep it as the newest (the caller no longer changes it)."""
        self.log.write([(ASSIGNMENT_KEY, dumps(assignment.to_json()))], timeout)
        with self._lock:
            if assignment.version > self._assignment.version:
                self._assignment = assignment

    def put_report(self, member: str, worker_id: str, tasks: set[TaskKey], timeout: float = 30.0) -> None:
        self.log.write([(MEMBER_PREFIX + member, dumps({"worker_id": worker_id,
                                                         "tasks": [list(t) for t in sorted(tasks)]}))], timeout)

    def withdraw_report(self, member: str, timeout: float = 10.0) -> None:
        """Say this member left cleanly: its tasks are stopped, and may go to others at once."""
        self.log.write([(MEMBER_PREFIX + member, None)], timeout)
