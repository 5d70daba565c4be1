"""Executors whose task instances run in other processes (:mod:`~connect_magics.runtime.executors.task_host`).

Such an instance cannot be stopped by a method call or trusted to be gone when its process is lost, so
the herder controls it through the task control topic (:mod:`connect_magics.storage.task_control`): a
generation per instance and the target state. Every instance commits through a
:class:`~connect_magics.runtime.worker.fencing.TaskFence`, so when an instance fails (its process
killed, a Spark job lost) the handle starts the next generation, which fences whatever is left of the
failed one and resumes from the committed offsets. Subclasses say how one instance runs
(:meth:`HostedTaskHandle._run_instance`) and how it is cancelled (:meth:`HostedTaskHandle._cancel`).
"""

from __future__ import annotations

import logging
import sys
import threading
from abc import abstractmethod
from typing import Any

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.executors.base import Executor, TaskHandle
from connect_magics.runtime.executors.task_host import HostedTask
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)

CONTROL_TOPIC_CONFIG = "task.control.storage.topic"
RETRY_BACKOFF_S = (1.0, 30.0)  # first and longest wait before a failed instance runs again
_STATE_NAMES = {TargetState.STARTED: "STARTED", TargetState.PAUSED: "PAUSED"}


class HostedExecutor(Executor):
    """Runs each task instance in another process and follows it through the task control topic."""

    fences_tasks = True
    #: The statuses' worker id of its tasks; None: the hosting process names itself (``host:spark-pid``).
    hosted_worker_id: str | None = None

    def __init__(self, worker_config: WorkerConfig, plugins: Plugins) -> None:
        self.worker_config = worker_config
        self.plugins = plugins
        self.control_topic = worker_config[CONTROL_TOPIC_CONFIG]  # created by the runtime
        self.control = TaskControlStore(self.control_topic, worker_config.client_config()).start()

    @abstractmethod
    def handle(self, spec: TaskSpec, metrics_group: str) -> HostedTaskHandle:
        """A handle that starts running ``spec`` at once."""

    def start(self, spec: TaskSpec, runner: TaskRunner) -> TaskHandle:
        runner.chain.close()  # built here to check that its plugins load; it runs in another process
        return self.handle(spec, runner.METRICS_GROUP)

    def known_tasks(self, connector: str) -> set[int]:
        return self.control.tasks(connector)

    def payload(self, spec: TaskSpec) -> bytes:
        """The pickled :class:`HostedTask`; plugin classes registered in this process travel by value unless
        they come from an installed package. It loads with plain :func:`pickle.loads`."""
        dumps = _cloudpickle().dumps  # cloudpickle pickles classes of notebook cells by value
        registrations = list(self.plugins.registrations)
        for cls, *_ in registrations:
            _pickle_module_by_value(cls)
        wc = self.worker_config
        # as given: secrets from config providers are resolved in the task's process, never pickled
        props = {k: v for k, v in wc.originals.items() if k not in ("bootstrap.servers", "group.id")}
        return dumps(HostedTask(spec, wc["bootstrap.servers"], wc["group.id"], props, self.control_topic,
                                registrations, self.hosted_worker_id))

    def close(self) -> None:
        self.control.stop()


class HostedTaskHandle(TaskHandle):
    """One task in another process: a thread here that runs its instance, and runs the next generation when
    that one fails, with a growing back-off (``RETRY_BACKOFF_S``)."""

    #: What an instance is, for the log: "Spark job", "process".
    instance_name = "instance"

    def __init__(self, executor: HostedExecutor, spec: TaskSpec, metrics_group: str) -> None:
        self.id = spec.task_id
        self.metrics_group = metrics_group
        self._executor = executor
        self._spec = spec
        self._state = _STATE_NAMES.get(spec.target_state, "STARTED")
        self._cond = threading.Condition()
        self._stopping = False
        self.result: dict[str, Any] | None = None  # how the last instance ended (task_host.run_hosted_task)
        self.runs = 0  # instances started for this handle (one more after every failed one)
        self._new_generation()
        self._thread = threading.Thread(target=self._run, name=f"{executor.name}-task-{spec.task_id}", daemon=True)
        self._thread.start()

    @property
    def generation(self) -> int:
        return self._spec.generation

    def _new_generation(self) -> None:
        control = self._executor.control
        generation = control.next_generation(self.id.connector, self.id.task)
        self._spec = self._spec.with_generation(generation)
        control.put_control(self.id.connector, self.id.task, generation, self._state)

    def _before_first(self) -> None:
        """Called on the handle's thread before the first instance runs."""

    @abstractmethod
    def _run_instance(self, payload: bytes) -> dict[str, Any] | None:
        """Run the current generation's instance until it ends; returns how it ended, raises if it failed."""

    @abstractmethod
    def _cancel(self) -> None:
        """End the current instance now, without waiting for it (its successor fences what is left)."""

    def _run(self) -> None:
        backoff = RETRY_BACKOFF_S[0]
        self._before_first()
        while not self._stopping:
            self.runs += 1
            try:
                self.result = self._run_instance(self._executor.payload(self._spec))
                log.info("The %s of task %s ended: %s", self.instance_name, self.id, self.result)
                return
            except Exception as e:  # noqa: BLE001 - the instance failed: run the next one
                if self._stopping:
                    return
                what = (f"The {self.instance_name} of task {self.id} (generation {self.generation}) failed; "
                        f"running it again from the committed offsets in {backoff:.0f} s: {first_line(e)}")
                log.warning("%s", what)
                self._executor.task_ended(self.id, what)  # not RUNNING while no instance runs
            with self._cond:
                self._cond.wait(backoff)
            backoff = min(backoff * 2, RETRY_BACKOFF_S[1])
            if not self._stopping:
                self._new_generation()  # fences whatever is left of the failed instance

    # -- TaskHandle -------------------------------------------------------------------------------
    def transition_to(self, state: TargetState) -> None:
        self._state = _STATE_NAMES.get(state, "STARTED")
        self._executor.control.put_control(self.id.connector, self.id.task, self.generation, self._state)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._executor.control.put_control(self.id.connector, self.id.task, self.generation, "STOPPED")

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        if self._thread.is_alive():  # past the graceful timeout
            self._cancel()
            return False
        return True

    def published(self) -> dict[str, Any] | None:
        """What the current generation last published (metrics, worker id, pid), None before it did."""
        value = self._executor.control.metrics(self.id.connector, self.id.task)
        return value if value is not None and value.get("generation") == self.generation else None

    def metrics(self) -> dict[str, float]:
        return (self.published() or {}).get("task", {})

    def error_metrics(self) -> dict[str, Any]:
        return (self.published() or {}).get("errors", {})


def _cloudpickle() -> Any:
    """Spark's own cloudpickle where pyspark is installed (what its executors load with), else cloudpickle's
    package (task processes need no Spark)."""
    try:
        from pyspark import cloudpickle
    except ImportError:
        import cloudpickle
    return cloudpickle


def _pickle_module_by_value(cls: type) -> None:
    """Classes from modules another process may not import (notebook cells, test files) travel by value."""
    register_pickle_by_value = _cloudpickle().register_pickle_by_value
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None) or ""
    if module is None or cls.__module__ == "__main__" or cls.__module__.startswith("connect_magics"):
        return
    if "site-packages" in path or "dist-packages" in path:
        return
    register_pickle_by_value(module)


def first_line(e: BaseException) -> str:
    """The first line of an error's message (Spark's run to many lines)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
