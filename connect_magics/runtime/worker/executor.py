"""Where tasks run. The thread executor runs each task on a daemon thread of the kernel process;
a Spark executor implements the same interface to run tasks as Spark jobs."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable


class TaskHandle(ABC):
    @abstractmethod
    def join(self, timeout: float | None = None) -> bool:
        """Wait for the task to end; True if it has."""


class Executor(ABC):
    """Runs task bodies somewhere and hands back a handle to wait on."""

    name: str

    @abstractmethod
    def submit(self, name: str, body: Callable[[], None]) -> TaskHandle: ...

    def close(self) -> None:
        """Release whatever the executor holds."""


class _ThreadHandle(TaskHandle):
    def __init__(self, thread: threading.Thread) -> None:
        self._thread = thread

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()


class ThreadExecutor(Executor):
    """Each task on its own daemon thread in the driver: the lowest latency, the default on a laptop."""

    name = "threads"

    def submit(self, name: str, body: Callable[[], None]) -> TaskHandle:
        thread = threading.Thread(target=body, name=f"task-{name}", daemon=True)
        thread.start()
        return _ThreadHandle(thread)
