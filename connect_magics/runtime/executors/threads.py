"""``executor="threads"``: each task on a daemon thread of this process (the default)."""

from __future__ import annotations

import threading
from typing import Any

from connect_magics.runtime.executors.base import Executor, TaskHandle
from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.storage.config_store import TargetState


class LocalTaskHandle(TaskHandle):
    """A runner running in this process."""

    def __init__(self, runner: TaskRunner, thread: threading.Thread) -> None:
        self.runner = runner
        self.id = runner.id
        self.metrics_group = runner.METRICS_GROUP
        self._thread = thread

    def transition_to(self, state: TargetState) -> None:
        self.runner.transition_to(state)

    def stop(self) -> None:
        self.runner.stop()

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def metrics(self) -> dict[str, float]:
        return self.runner.metrics()

    def error_metrics(self) -> dict[str, Any]:
        return self.runner.errors.metrics()


class ThreadExecutor(Executor):
    """Each task on its own daemon thread in the driver: the lowest latency, the default on a laptop."""

    name = "threads"

    def __init__(self, fence_tasks: bool = False) -> None:
        self.fences_tasks = fence_tasks

    def start(self, spec: TaskSpec, runner: TaskRunner) -> TaskHandle:
        thread = threading.Thread(target=runner.run, name=f"task-{spec.task_id}", daemon=True)
        thread.start()
        return LocalTaskHandle(runner, thread)
