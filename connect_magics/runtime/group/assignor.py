"""The leader's side of task placement: it keeps the group's assignment (runtime/group/assignment.py) current
and writes it to the control topic, where every member reads its share (runtime/group/task_worker.py).

The herder asks :meth:`TaskAssignor.place` before it starts a task: True means "here" (the leader runs it
itself), False that another member runs it (or will, once its old member let go). A loop wakes on every change
(a task placed, a report, a member joining or leaving, at the latest every ``interval``), reads who is live (the
members' reports, written every ``heartbeat.interval.ms``), plans, stops on the leader what leaves it, writes the new assignment, and starts on
the leader what came to it.

>>> assignor = TaskAssignor(store, herder, "host:8083/12/ab", wc)  # doctest: +SKIP
>>> assignor.start(); assignor.place(("lines", 0))                          # doctest: +SKIP
True
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.group.assignment import Group, Revocation, plan, returning_member, worker_of
from connect_magics.storage.assignment_store import Assignment, AssignmentStore, Slot, TaskKey

log = logging.getLogger(__name__)

DELAY_KEY = "scheduled.rebalance.max.delay.ms"
INITIAL_DELAY_S = 3.0  # the broker's group.initial.rebalance.delay.ms default: how long a group's first member waits


class LeaderTasks(Protocol):
    """What the assignor needs of the leader's herder."""

    def desired_tasks(self) -> set[TaskKey]: ...
    def start_assigned(self, connector: str, task: int) -> None: ...
    def stop_assigned(self, tasks: set[TaskKey]) -> None: ...


class TaskAssignor:
    def __init__(self, store: AssignmentStore, herder: LeaderTasks, me: str, worker_config: WorkerConfig,
                 interval: float = 1.0) -> None:
        self.store, self.herder, self.me = store, herder, me
        self.session_ms = worker_config.int("session.timeout.ms")
        self.delay = worker_config.int(DELAY_KEY) / 1000
        self.revoke_timeout = worker_config.int("rebalance.timeout.ms") / 1000
        self.interval = interval
        self._cond = threading.Condition()
        self._assignment = Assignment()
        self._revoking: dict[TaskKey, Revocation] = {}
        self._live: dict[str, str] = {me: worker_of(me)}
        self._missing_since: dict[str, float] = {}
        self._dirty = False
        self._stopping = False
        self._written: dict[TaskKey, Slot] | None = None  # the tasks of the last assignment written
        self._placed: set[TaskKey] = set()  # placed by the herder since the current step read the desired tasks
        self._thread: threading.Thread | None = None
        self._awaited: set[str] = set()  # workers of the last assignment a leader that started alone waits for
        self._await_until = 0.0
        self._inputs: tuple | None = None  # what the last step planned from: desired tasks, report changes, live

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Take over the assignment in the topic (read to its end) with a newer version, and start the loop."""
        self.store.read_to_end()
        with self._cond:
            self._assignment = self.store.assignment()
            self._assignment.leader = self.me
            self._written = None  # the new leader writes its first assignment at once
            self._live = self._read_live() or {self.me: worker_of(self.me)}
            # A leader that starts alone while the last assignment spread tasks over several workers (the whole
            # group restarted) waits up to INITIAL_DELAY_S (at most the rebalance delay) for them to report before
            # it places their tasks, as the group coordinator delays a new group's first rebalance: each worker
            # gets its tasks back instead of the first one up starting them all. A lone runtime restarted (one
            # worker in the last assignment, maybe at a new address) does not wait.
            workers = {worker_of(s.member) for s in self._assignment.tasks.values() if s.member}
            alone = set(self._live.values()) == {worker_of(self.me)}
            self._awaited = workers - {worker_of(self.me)} if alone and len(workers) > 1 else set()
            self._await_until = time.monotonic() + min(INITIAL_DELAY_S, self.delay)
            self._dirty = True
            self._stopping = False
        self._thread = threading.Thread(target=self._run, name="task-assignor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(30)
        self._thread = None

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    # -- the herder's questions ------------------------------------------------------------------------
    def place(self, key: TaskKey) -> bool:
        """Whether the leader runs task ``key`` now: placed on the least loaded live member if it has none."""
        with self._cond:
            slot = self._assignment.tasks.get(key)
            if slot is None:
                slot = self._assignment.tasks[key] = Slot(None)
            if slot.member is not None and slot.member not in self._live:  # the plan's rules, at once (a restore)
                returning = returning_member(slot.member, self._live)
                if returning is None and worker_of(slot.member) in self._awaited_workers():
                    pass  # its worker may report in a moment: the task stays its own
                elif returning is not None or slot.member in self.store.left():
                    slot.member = returning
                    self._dirty = True
            if slot.member is None and key not in self._revoking:
                loads = dict.fromkeys(self._live, 0)
                for s in self._assignment.tasks.values():
                    if s.member in loads:
                        loads[s.member] += 1
                slot.member = min(loads, key=lambda m: (loads[m], m != self.me, m))
                self._dirty = True
                self._cond.notify_all()
            self._placed.add(key)
            return slot.member == self.me

    def restart_remote(self, key: TaskKey) -> None:
        """Ask the member running ``key`` to restart it."""
        with self._cond:
            slot = self._assignment.tasks.get(key)
            if slot is not None and slot.member not in (None, self.me):
                slot.restarts += 1
                self._dirty = True
                self._cond.notify_all()

    def share(self) -> float:
        """The part of new tasks the leader takes: one over the number of live members."""
        with self._cond:
            return 1.0 / max(1, len(self._live))

    def owner(self, key: TaskKey) -> str | None:
        with self._cond:
            slot = self._assignment.tasks.get(key)
            return slot.member if slot is not None else None

    def assignment(self) -> Assignment:
        with self._cond:
            return self._assignment.copy()

    def _awaited_workers(self) -> set[str]:
        """The workers of the last assignment a leader that started alone still waits for (under ``_cond``)."""
        if self._awaited:
            if time.monotonic() >= self._await_until:
                self._awaited = set()
            else:
                self._awaited -= set(self._live.values())
        return self._awaited

    # -- the loop -------------------------------------------------------------------------------------
    def _read_live(self) -> dict[str, str] | None:
        """The live members, from their reports in the control topic (storage/assignment_store.py). Not from the
        coordinator's group description: an admin client whose DescribeGroups request times out (a broker outage)
        aborts the process (librdkafka issue 4605)."""
        live = {m: worker_of(m) for m in self.store.live(self.session_ms)}
        live[self.me] = worker_of(self.me)
        return live

    def _run(self) -> None:
        next_look = 0.0
        while True:
            with self._cond:
                if not self._dirty and not self._stopping:
                    self._cond.wait(max(0.0, next_look - time.monotonic()))
                if self._stopping:
                    return
            now = time.monotonic()
            if now >= next_look:
                live = self._read_live()
                next_look = time.monotonic() + self.interval
                if live is not None:
                    with self._cond:
                        self._live = live
            try:
                self._step()
            except Exception:  # noqa: BLE001 - e.g. the broker is unreachable: try again at the next look
                log.exception("Assigning the group's tasks failed; retrying")
                with self._cond:
                    self._dirty = True
                    self._cond.wait(1.0)

    def _step(self) -> None:
        with self._cond:
            self._placed = set()
        desired = self.herder.desired_tasks()
        report_changes = self.store.report_changes
        with self._cond:
            desired |= self._placed  # a task the herder started meanwhile (a resume, a restart) is wanted
            # Woken by a record read (a member's periodic report, the leader's own assignment read back) or the
            # periodic look: nothing to plan unless an input changed or a member's absence or a revocation runs
            # out. A step costs milliseconds over thousands of tasks, and reports come every heartbeat.
            inputs = (desired, report_changes, dict(self._live))
            if not self._dirty and inputs == self._inputs \
                    and not (self._missing_since or self._revoking or self._awaited):
                return
            self._inputs, self._dirty = inputs, False
        reports, left = self.store.reports(), self.store.left()
        now = time.monotonic()
        with self._cond:
            # Since when each member that holds tasks has been missing (one whose tasks all moved is forgotten).
            held = {slot.member for slot in self._assignment.tasks.values() if slot.member is not None}
            self._missing_since = {m: self._missing_since.get(m, now) for m in held if m not in self._live}
            missing_since = dict(self._missing_since)
            awaited = self._awaited_workers()
            if awaited:  # their members count as just missing, not as gone: their tasks stay theirs for now
                left = {m for m in left if worker_of(m) not in awaited}
                missing_since.update((m, now) for m in missing_since if worker_of(m) in awaited)
            group = Group(dict(self._live), self.me, reports, left, missing_since)
            step = plan(self._assignment, group, desired, dict(self._revoking), now, self.delay, self.revoke_timeout)
            self._assignment.tasks, self._revoking = step.assignment.tasks, step.revoking
        if step.stop_here:
            self.herder.stop_assigned(step.stop_here)  # committed before another member may start them
        with self._cond:
            if self._stopping:
                return
            snapshot = None
            if self._written is None or self._assignment.tasks != self._written:
                self._assignment.version = max(self._assignment.version, self.store.version()) + 1
                snapshot = self._assignment.copy()
        if snapshot is not None:
            self.store.put_assignment(snapshot)
            with self._cond:
                self._written = snapshot.tasks
            log.info("Group assignment %d: %s", snapshot.version, _summary(snapshot))
        for connector, task in sorted(step.start_here):
            self.herder.start_assigned(connector, task)


def _summary(assignment: Assignment) -> str:
    counts: dict[str, int] = {}
    for slot in assignment.tasks.values():
        name = slot.member or "(moving)"
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{m}: {n}" for m, n in sorted(counts.items())) or "no tasks"
