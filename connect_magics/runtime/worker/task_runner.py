"""What the worker runs for every task: its lifecycle, target state and status reporting.

:class:`TaskRunner` is the part shared by source and sink tasks (Kafka's ``WorkerTask``): it starts
the task, pauses and resumes it, reports RUNNING / PAUSED / FAILED (with the trace) / UNASSIGNED,
and stops it, never letting an exception escape its thread.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka.admin import AdminClient

from connect_magics.api.connector import Task
from connect_magics.api.records import ConnectRecord, Headers
from connect_magics.runtime.config.connector_config import TransformationChain
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.worker import gc_threshold
from connect_magics.runtime.worker.error_handling import (
    ErrorSettings,
    RecordErrorHandler,
    Stage,
    StagedError,
    staged,
)
from connect_magics.runtime.worker.fencing import TaskFence, TaskFencedError
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.runtime.worker.task_metrics import TaskStats
from connect_magics.storage.authorization import first_line_trace
from connect_magics.storage.client_limit import Reservation, new_client
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.fence import TransactionLostError
from connect_magics.storage.status_store import StatusStore
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class TaskServices:
    """What every task needs from the worker."""

    plugins: Plugins
    worker_config: WorkerConfig
    status: StatusStore
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The task control topic, where each fenced instance's generation is (see runtime/worker/fencing.py).
    control: TaskControlStore | None = None
    _admins: dict[tuple, AdminClient] = field(default_factory=dict, repr=False)
    _admins_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def shared_admin(self, config: Mapping[str, Any], what: str) -> AdminClient:
        """One admin client per distinct admin config for all the tasks of this worker (KIP-158's topic
        checks and creations): a Kafka client per task would take one of the process's thread-specific-data
        keys each (runtime/worker/capacity.py). Admin clients are thread-safe."""
        key = tuple(sorted((k, str(v)) for k, v in config.items() if k != "logger"))
        with self._admins_lock:
            admin = self._admins.get(key)
            if admin is None:
                admin = self._admins[key] = new_client(AdminClient, {**config, "logger": client_logger("admin")},
                                                       what)
            return admin

    def close(self) -> None:
        """Let go of the shared admin clients (each is destroyed with its last reference), so that none stays
        connected while what holds these services waits for the garbage collector."""
        with self._admins_lock:
            self._admins.clear()


class TaskRunner(ABC):
    """Runs one task on whatever thread the executor gives it, until :meth:`stop`."""

    def __init__(self, task_id: TaskId, task: Task, task_config: Mapping[str, str],
                 connector_config: Mapping[str, str], services: TaskServices, target_state: TargetState,
                 key_converter: Any, value_converter: Any, header_converter: Any,
                 chain: TransformationChain, version: str | None = None, fence: TaskFence | None = None) -> None:
        self.id = task_id
        self.task = task
        self.task_config = dict(task_config)
        self.connector_config = dict(connector_config)
        self.services = services
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self.version = version
        self.fence = fence  # commits go through it when set: see runtime/worker/fencing.py
        #: The Kafka clients promised to this instance in its process (runtime/worker/capacity.py), or None.
        self.clients: Reservation | None = None
        self.errors = RecordErrorHandler(ErrorSettings.from_config(connector_config), str(task_id), self._backoff)
        self._target = target_state
        self._cond = threading.Condition()
        self._stopping = False
        self._failed = False
        self._fenced = False
        self._started_task: Task | None = None  # the instance whose start() returned
        self._stopped_task: Task | None = None  # the instance whose stop() was called (once: see _stop_task)
        self._task_stop_lock = threading.Lock()
        self.done = threading.Event()
        self.on_stopped: Callable[[TaskRunner], None] | None = None
        self.task_stats = TaskStats()  # connector-task-metrics: batch sizes, commit times, running / paused

    # -- control (any thread) --------------------------------------------------------------
    def transition_to(self, state: TargetState) -> None:
        with self._cond:
            self._target = state
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def _stop_task(self) -> None:
        """Call the task instance's ``stop()``, once, from whichever thread asks first."""
        task = self.task
        with self._task_stop_lock:
            if self._stopped_task is task:
                return
            self._stopped_task = task
        try:
            task.stop()
        except Exception:  # noqa: BLE001
            log.warning("Task %s raised while stopping", self.id, exc_info=True)

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def paused(self) -> bool:
        return self._target is TargetState.PAUSED

    @property
    def failed(self) -> bool:
        return self._failed

    @property
    def fenced(self) -> bool:
        """True once a newer instance of this task took over (it then stops without committing)."""
        return self._fenced

    METRICS_GROUP: str  # Kafka Connect's metric group of the task type
    #: Claim the fence before the task starts (exactly once), or let the claim finish in the background
    #: (at least once: the task runs at once, even while the broker is away; its first commit waits).
    CLAIM_BEFORE_START = False

    @abstractmethod
    def metrics(self) -> dict[str, float]:
        """The task's :attr:`METRICS_GROUP` metrics (read from any thread)."""

    def _backoff(self, seconds: float) -> bool:
        """Wait ``seconds`` (woken by :meth:`stop`); False if the task is stopping."""
        with self._cond:
            if not self._stopping:
                self._cond.wait(seconds)
            return not self._stopping

    def wait_while_paused(self, timeout: float = 0.1) -> bool:
        """Block while paused (up to ``timeout``); True if the task should run now."""
        with self._cond:
            if self._target is TargetState.PAUSED and not self._stopping:
                self._cond.wait(timeout)
            return self._target is not TargetState.PAUSED and not self._stopping

    def _report(self, state: str, trace: str | None = None) -> None:
        self.services.status.put_task(self.id.connector, self.id.task, state, trace, self.version)

    # -- the thread body ---------------------------------------------------------------------
    def run(self) -> None:
        """The task's whole life; returns when stopped or failed."""
        reported_paused = stopped_failing = False
        gc_threshold.raise_once()
        try:
            # Earlier instances can no longer commit once this is done. A claim may wait for its turn (hundreds
            # of tasks starting at once): a task stopped meanwhile gives up its turn and ends.
            if self.fence is not None and not self.fence.claim(self.CLAIM_BEFORE_START, lambda: self._stopping):
                return
            self.initialize()
            self.task.start(self.task_config)
            self._started_task = self.task
            if self.paused:
                self._report("PAUSED")
                reported_paused = True
                self.task_stats.pause(True)
            else:
                self._report("RUNNING")
            while not self._stopping:
                if self.fence is not None:  # a claim refused for a missing ACL fails the task now
                    self.fence.check_claim()
                if self.paused != reported_paused:
                    reported_paused = self.paused
                    self.task_stats.pause(reported_paused)
                    self.on_pause_change(reported_paused)
                    self._report("PAUSED" if reported_paused else "RUNNING")
                try:
                    self.execute_once()
                except TransactionLostError as e:
                    self.transaction_lost(e)
        except TaskFencedError:
            self._fenced = True
            log.warning("Task %s was fenced by a newer instance and stops without committing", self.id)
        except BaseException as e:  # noqa: BLE001 - a task failure must never escape its thread
            self._failed = True  # what it was doing is not committed (an exactly-once task aborts its transaction)
            if self._stopping:  # as Kafka's WorkerTask: a warning, and the status of a stopped task (not FAILED)
                stopped_failing = True
                log.warning("Task %s threw an exception after being scheduled for shutdown", self.id, exc_info=True)
            else:
                log.error("Task %s failed", self.id, exc_info=True)
                self._report("FAILED", first_line_trace(e, lambda err: "".join(traceback.format_exception(err))))
        finally:
            # Safe after a failure too: only acknowledged (source) or put (sink) records are committed.
            try:
                if not self._fenced:
                    self.commit_on_stop()
            except TaskFencedError:
                self._fenced = True
                log.warning("Task %s was fenced by a newer instance: its last offsets are not committed", self.id)
            except Exception:  # noqa: BLE001
                log.warning("Task %s could not commit its offsets while stopping", self.id, exc_info=True)
            self._stop_task()
            try:
                self.close()
            except Exception:  # noqa: BLE001
                log.warning("Closing task %s failed", self.id, exc_info=True)
            self.chain.close()
            if self.fence is not None:
                self.fence.close()
            # a fenced or superseded instance's successor owns the status (its RUNNING must not be overwritten)
            if (not self._failed or stopped_failing) and not self._fenced and not self._superseded():
                self._report("UNASSIGNED")
            if self.clients is not None:  # what it never built is free for other tasks
                self.clients.release()
            self.done.set()
            if self.on_stopped is not None:
                self.on_stopped(self)

    def _superseded(self) -> bool:
        """True if a newer instance of this task was started (its generation is newer than this one's)."""
        owner = self.fence.owner if self.fence is not None else None
        return owner is not None and owner.superseded()

    @abstractmethod
    def initialize(self) -> None:
        """Create clients and the task context (before ``task.start``)."""

    @abstractmethod
    def execute_once(self) -> None:
        """One iteration: poll/put some records, maybe commit offsets. Must return within ~100 ms when idle."""

    def transaction_lost(self, error: TransactionLostError) -> None:
        """A transaction of the task's fence was lost while no newer instance exists (a broker outage, a
        coordinator that moved): go on. Runners whose transactions hold records override this; by default
        the task fails with the cause."""
        raise error

    def on_pause_change(self, paused: bool) -> None:
        """Called on the task thread when the task is paused or resumed."""

    def timed_commit(self, commit: Callable[[], bool | None]) -> bool | None:
        """Run ``commit`` (True: committed, False: failed, None: nothing to commit now) and count its time and
        outcome in :attr:`task_stats` (an exception is a failure)."""
        started = time.perf_counter()
        outcome: bool | None = False
        try:
            outcome = commit()
            return outcome
        finally:
            if outcome is not None:
                self.task_stats.commit(time.perf_counter() - started, outcome)

    @abstractmethod
    def commit_on_stop(self) -> None:
        """Commit what can be committed before the task stops."""

    @abstractmethod
    def close(self) -> None:
        """Release clients."""

    # -- helpers for subclasses ------------------------------------------------------------
    def recover(self, convert: Callable[[], T], record: Any) -> T | None:
        """Run a record's conversion again, stage by stage, after the fast path failed; on a
        :class:`StagedError` let the error handler retry, report, skip (None) or fail the task."""
        try:
            return convert()
        except StagedError as e:
            return self.errors.handle(e, convert, record)

    def transform(self, record: ConnectRecord) -> ConnectRecord | None:
        """The transformation chain, with each failure naming its transformation."""
        for stage in self.chain.stages:
            record = staged(Stage.TRANSFORMATION, stage.transform, stage.apply, record)
            if record is None:
                return None
        return record

    def headers_to_kafka(self, topic: str, headers: Headers) -> list[tuple[str, bytes | None]]:
        return [(h.key, self.header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                for h in headers]

    def headers_from_kafka(self, topic: str, raw: list[tuple[str, bytes | None]] | None) -> Headers:
        headers = Headers()
        if not raw:
            return headers
        for key, value in raw:
            sv = self.header_converter.to_connect_header(topic, key, value)
            headers.add(key, sv.value, sv.schema)
        return headers
