"""What an executor is: the herder hands an :class:`Executor` a task's spec and the runner built from it,
and gets back a :class:`TaskHandle` to control it with (see the package's docs for the executors)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.task_control import TaskControlStore

#: Writes a task's status for the worker: (task, state, trace).
StatusReporter = Callable[[TaskId, str, "str | None"], None]


class TaskHandle(ABC):
    """The herder's view of one running task instance."""

    id: TaskId
    metrics_group: str  # Kafka Connect's metric group of the task type

    @abstractmethod
    def transition_to(self, state: TargetState) -> None:
        """Pause or resume the task."""

    @abstractmethod
    def stop(self) -> None:
        """Ask the task to stop (commit what it can, then end); returns at once."""

    @abstractmethod
    def join(self, timeout: float | None = None) -> bool:
        """Wait for the task to end; True if it has."""

    @abstractmethod
    def metrics(self) -> dict[str, float]:
        """The task's ``source-task-metrics`` / ``sink-task-metrics``."""

    @abstractmethod
    def error_metrics(self) -> dict[str, Any]:
        """The task's ``task-error-metrics``."""

    def waiting(self) -> str | None:
        """Why the task has not started yet when it waits for a resource (a free Spark core), else None."""
        return None


class Executor(ABC):
    """Runs task instances somewhere and hands back handles to control them."""

    name: str
    #: Whether tasks commit through a :class:`~connect_magics.runtime.worker.fencing.TaskFence`.
    fences_tasks: bool = False
    #: Whether task instances build their Kafka clients in this process (then the herder admits a task only if
    #: the process can build them: runtime/worker/capacity.py).
    clients_in_process: bool = False
    #: The task control topic, where every fenced instance's generation is written (None: not followed).
    control: TaskControlStore | None = None
    #: Set by the herder: how the executor writes the status of a task whose instance ended by itself
    #: (a thread, a process, a Spark job that died), so that no ended task is left shown RUNNING.
    report_status: StatusReporter | None = None

    def reserve_generation(self, task_id: TaskId, state: TargetState) -> int:
        """The generation of an instance about to be built in this process (0: the executor numbers its
        instances itself, or does not fence them)."""
        return 0

    def task_ended(self, task_id: TaskId, trace: str) -> None:
        """An instance ended without reporting it (see :attr:`report_status`): show the task FAILED."""
        if self.report_status is not None:
            self.report_status(task_id, "FAILED", trace)

    @abstractmethod
    def start(self, spec: TaskSpec, runner: TaskRunner) -> TaskHandle:
        """Run the task ``spec`` describes; ``runner`` was built from it in this process."""

    def known_tasks(self, connector: str) -> set[int]:
        """Indexes of the connector's tasks this executor knows were started (also by earlier runtimes)."""
        return set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the executor's own start-up work is done (Spark: its warm-up job), so that a task
        started now pays none of it; True when it is done. Tasks never need this: they wait by themselves."""
        return True

    def close(self) -> None:
        """Release whatever the executor holds."""
