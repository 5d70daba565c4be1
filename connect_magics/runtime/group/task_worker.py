"""A follower's side of task placement: it runs the tasks the group's assignment gives it.

Every member reads the assignment (storage/assignment_store.py) and the config topic. While this runtime
follows, a loop keeps the task instances here equal to its share: it starts a task that was given to it, stops
one that was taken away (its offsets committed), restarts one whose connector config or task config changed or
whose restart count grew, and pauses or resumes them with their connectors' target states. After every change,
and every ``heartbeat.interval.ms`` (the leader too), it reports what it runs (``member-{member}``): how the leader
knows a revoked task was let go, and which members are live. The report is due in the middle of a long series of
task starts too (a killed member's hundreds of tasks arriving): a member busy starting them must not look gone.

When this runtime becomes the leader, :meth:`TaskWorker.hand_over` gives the running instances to the herder,
which keeps them if their configs hold: a change of leader restarts nothing that needs no restart.

>>> worker = TaskWorker(herder, config_store, assignments, "host:8083/12/ab", "host:8083")  # doctest: +SKIP
>>> worker.start(); worker.activate()                                                      # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connect_magics.runtime.executors.base import TaskHandle
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.storage.assignment_store import AssignmentStore, TaskKey
from connect_magics.storage.config_store import ConfigStore, TargetState

if TYPE_CHECKING:
    from connect_magics.runtime.herder import Herder

log = logging.getLogger(__name__)

LOOK_INTERVAL_S = 1.0  # at the latest; every assignment or config record wakes the loop at once


@dataclass
class Hosted:
    handle: TaskHandle | None  # None: it failed to start (its status says FAILED); retried when asked to
    config: dict[str, str]
    task_config: dict[str, str]
    restarts: int
    state: TargetState


class TaskWorker:
    def __init__(self, herder: Herder, configs: ConfigStore, store: AssignmentStore, me: str,
                 worker_id: str, heartbeat: float = 3.0) -> None:
        self.herder, self.configs, self.store, self.me, self.worker_id = herder, configs, store, me, worker_id
        self.heartbeat = heartbeat
        self._next_report = 0.0  # monotonic time of the next report, changed or not
        self._cond = threading.Condition()
        self._reconciling = threading.Lock()  # held while the running set changes
        self._running: dict[TaskKey, Hosted] = {}
        self._reported: set[TaskKey] | None = None
        self._active = False
        self._closing = False
        self._pending = True  # something changed since the last look
        #: (assignment version, config changes) when every task of this member's share last ran as wanted: until
        #: either changes, a look has nothing to compare (hundreds of tasks' configs, at every record read)
        self._settled: tuple[int, int] | None = None
        self._thread = threading.Thread(target=self._run, name="group-tasks", daemon=True)
        herder.hosts_task = self.hosts
        herder.hosted_handles = self.handles

    def start(self) -> TaskWorker:
        self._thread.start()
        return self

    def wake(self) -> None:
        with self._cond:
            self._pending = True
            self._cond.notify_all()

    def activate(self) -> None:
        """Run this member's share (it follows)."""
        with self._cond:
            self._active = self._pending = True
            self._settled = None
            self._cond.notify_all()

    def hand_over(self) -> dict[TaskKey, TaskHandle]:
        """Stop following: the running instances, for the herder of the new leader to keep."""
        with self._reconciling:
            with self._cond:
                self._active = False
            handles = {key: h.handle for key, h in self._running.items() if h.handle is not None}
            self._running.clear()
            self._reported = self._settled = None
            return handles

    def hosts(self, task_id: TaskId) -> bool:
        hosted = self._running.get((task_id.connector, task_id.task))
        return hosted is not None and hosted.handle is not None

    def handles(self) -> dict[TaskKey, TaskHandle]:
        """The instances running here for the assignment (for the worker's metrics)."""
        return {key: h.handle for key, h in list(self._running.items()) if h.handle is not None}

    def running(self) -> set[TaskKey]:
        """The tasks this member runs for the assignment now."""
        return {key for key, h in self._running.items() if h.handle is not None}

    def close(self) -> None:
        """Stop every task hosted here and say this member left (its tasks may go to others at once)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(60)
        with self._reconciling:
            self._stop(list(self._running))
        try:
            self.store.withdraw_report(self.me)
        except Exception:  # noqa: BLE001 - the leader then waits scheduled.rebalance.max.delay.ms
            log.warning("Could not say that member %s left the group", self.me, exc_info=True)

    # -- the loop -------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait(max(0.0, min(LOOK_INTERVAL_S, self._next_report - time.monotonic())))
                self._pending = False
                if self._closing:
                    return
            try:
                with self._reconciling:
                    if self._active:
                        self._reconcile()
                    if time.monotonic() >= self._next_report:
                        self._report()
            except Exception:  # noqa: BLE001 - e.g. the broker is unreachable: again at the next look
                log.exception("Member %s could not take up its share of the group's tasks", self.me)

    def _report(self) -> None:
        """Say what this member runs (also a heartbeat: the leader counts a member live while it reports)."""
        held = set(self._running)
        self._next_report = time.monotonic() + self.heartbeat
        self.store.put_report(self.me, self.worker_id, held)
        self._reported = held

    def _reconcile(self) -> None:
        inputs = (self.store.version(), self.configs.changes)
        if inputs == self._settled:
            return
        mine = self.store.assigned_to(self.me)
        stale = []
        for key, hosted in self._running.items():
            config, task_config = self._configs(key)
            if key not in mine or mine[key] != hosted.restarts or config != hosted.config \
                    or task_config != hosted.task_config:
                stale.append(key)
                continue
            state = self.configs.target_state(key[0]) or TargetState.STARTED
            if state is not hosted.state and hosted.handle is not None:
                hosted.handle.transition_to(state)
                hosted.state = state
        self._stop(stale)
        for key, restarts in sorted(mine.items()):
            if key in self._running:
                continue
            config, task_config = self._configs(key)
            state = self.configs.target_state(key[0]) or TargetState.STARTED
            if config is None or task_config is None or state is TargetState.STOPPED:
                continue  # this member has not read the configs yet, or the connector stopped meanwhile
            handle = self.herder.start_hosted(key[0], key[1], config, task_config, state)
            self._running[key] = Hosted(handle, config, task_config, restarts, state)
            if time.monotonic() >= self._next_report:  # hundreds of starts outlast a session: stay live
                self._report()
        if set(self._running) != self._reported:
            self._report()
            log.info("Member %s runs %d task(s) of the group", self.me, len(self._running))
        self._settled = inputs if mine.keys() == self._running.keys() else None

    def _configs(self, key: TaskKey) -> tuple[dict[str, str] | None, dict[str, str] | None]:
        config = self.configs.connector_config(key[0])
        tasks = self.configs.task_configs(key[0]) if config is not None else []
        return config, tasks[key[1]] if key[1] < len(tasks) else None

    def _stop(self, keys: list[TaskKey]) -> None:
        """Stop these tasks together (each commits what it can); a task whose connector no longer has it (deleted,
        stopped, fewer tasks) leaves no status behind."""
        hosted = [(key, self._running.pop(key)) for key in keys]
        handles = [h.handle for _, h in hosted if h.handle is not None]
        self.herder.stop_handles(handles)
        for key, _ in hosted:
            if self._configs(key)[1] is None:
                self.herder.status.remove_task(*key)
