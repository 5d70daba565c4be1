"""``executor="threads"``: each task on a daemon thread of this process (the default)."""

from __future__ import annotations

import logging
import threading
import traceback
from typing import Any

from connect_magics.runtime.executors.base import Executor, TaskHandle
from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)


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
    clients_in_process = True

    def __init__(self, fence_tasks: bool = False, control: TaskControlStore | None = None) -> None:
        """``control``: the task control topic (started), where each instance's generation is written before
        it claims its fence, so that a broken producer is told from a successor (runtime/worker/fencing.py)."""
        self.fences_tasks = fence_tasks
        self.control = control

    def reserve_generation(self, task_id: TaskId, state: TargetState) -> int:
        if self.control is None or not self.fences_tasks:
            return 0
        return self.control.reserve_generation(task_id.connector, task_id.task, state.value)

    def known_tasks(self, connector: str) -> set[int]:
        return self.control.tasks(connector) if self.control is not None else set()

    def start(self, spec: TaskSpec, runner: TaskRunner) -> TaskHandle:
        thread = threading.Thread(target=self._run, args=(runner,), name=f"task-{spec.task_id}", daemon=True)
        thread.start()
        return LocalTaskHandle(runner, thread)

    def _run(self, runner: TaskRunner) -> None:
        """The runner's life; if the thread ends before the runner settled its status (an exception raised
        into the thread while it stopped), the task is shown FAILED."""
        error: BaseException | None = None
        try:
            runner.run()
        except BaseException as e:  # noqa: BLE001 - reported below
            error = e
        finally:
            if not runner.done.is_set():
                cause = "".join(traceback.format_exception(error)) if error is not None else "no error"
                log.error("The thread of task %s ended before the task settled its status: %s", runner.id, cause)
                self.task_ended(runner.id, f"The thread of task {runner.id} ended unexpectedly: {cause}")

    def close(self) -> None:
        if self.control is not None:
            self.control.stop()
