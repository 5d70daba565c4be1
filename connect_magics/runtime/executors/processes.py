"""``executor="processes"``: every task instance in a process of its own, started by this one.

Threads of one Python process share its GIL: four sink tasks on threads do less than one task alone
(docs/design.md, "Why four tasks on threads stay short"). Each task process has its own interpreter,
so tasks use every core, as a Java worker's task threads do. The process runs
:func:`~connect_magics.runtime.executors.task_host.run_hosted_task`, like a task on a Spark executor,
and is controlled the same way (:mod:`connect_magics.runtime.executors.hosted`): when it dies, the next
generation fences whatever it left and resumes from the committed offsets. Its statuses carry this
worker's id, as a Java worker's tasks carry theirs. A task process ends when this process does (it
watches a pipe from it), as a Java worker's task threads end with the worker.

>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb", executor="processes")  # doctest: +SKIP
>>> rt.create_connector("out", {"connector.class": "FileStreamSink", "topics": "lines",
...                             "file": "/tmp/out.txt", "tasks.max": "4"})        # doctest: +SKIP
"""

from __future__ import annotations

import faulthandler
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from typing import IO, Any

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.executors.hosted import HostedExecutor, HostedTaskHandle
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.worker.task_factory import TaskSpec

ORPHAN_EXIT_CODE = 70  # a task process whose worker process ended exits with this code
EXIT_WAIT_S = 30.0  # longest wait for a task process to exit once its task ended
_LENGTH = struct.Struct(">Q")


class ProcessExecutor(HostedExecutor):
    """Runs each task instance in a process of its own (see the module's docs)."""

    name = "processes"

    def __init__(self, worker_config: WorkerConfig, plugins: Plugins) -> None:
        super().__init__(worker_config, plugins)
        self.hosted_worker_id = worker_config.worker_id

    def handle(self, spec: TaskSpec, metrics_group: str) -> ProcessTaskHandle:
        return ProcessTaskHandle(self, spec, metrics_group)


class ProcessTaskHandle(HostedTaskHandle):
    """One task in a process: a thread here that starts its process, and the next one if it dies.

    The process is this module run by this Python (``python -m``, so that nothing of the caller's
    ``__main__`` runs again there). Its stdin brings the pickled task and then stays open: the process
    ends when it reads end-of-file, that is when this process is gone. How the task ended comes back as
    one line of JSON on a pipe of its own (the task may print to stdout)."""

    instance_name = "process"

    def __init__(self, executor: ProcessExecutor, spec: TaskSpec, metrics_group: str) -> None:
        self.process: subprocess.Popen | None = None  # the current instance's
        super().__init__(executor, spec, metrics_group)

    def _run_instance(self, payload: bytes) -> dict[str, Any] | None:
        result_read, result_write = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(result_write)], stdin=subprocess.PIPE,
                pass_fds=(result_write,), env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))})
        finally:
            os.close(result_write)  # the process holds its own copy: its end closes the pipe
        self.process = process
        assert process.stdin is not None
        with os.fdopen(result_read, "rb") as results:
            try:
                process.stdin.write(_LENGTH.pack(len(payload)) + payload)
                process.stdin.flush()
            except BrokenPipeError:
                pass  # it ended already: its exit code says why
            line = results.readline()  # until the task ends
        try:  # stdin stays open until the process ended: its end-of-file would make it exit as orphaned
            process.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:  # a thread of the task's plugin keeps the interpreter alive
            process.kill()
            process.wait()
        process.stdin.close()
        if not line:  # it died before its task ended
            raise RuntimeError(f"the task's process {process.pid} exited with code {process.returncode}")
        return json.loads(line)

    def _cancel(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()


def host_task_process(worker: int, results: IO[bytes]) -> None:
    """A task process's work: read the task from the file descriptor ``worker``, run it, write how it ended
    to ``results``. Exits at once (``ORPHAN_EXIT_CODE``) when ``worker`` reaches end-of-file: the worker
    process is gone. (Raw reads: a thread blocked in a buffered reader would stop the interpreter's exit.)"""
    from connect_magics.runtime.executors.task_host import run_hosted_task

    (length,) = _LENGTH.unpack(_read_exactly(worker, _LENGTH.size))
    hosted = pickle.loads(_read_exactly(worker, length))
    threading.Thread(target=_exit_at_end_of, args=(worker,), name="worker-watch", daemon=True).start()
    results.write(json.dumps(run_hosted_task(hosted)).encode() + b"\n")
    results.flush()


def _read_exactly(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            os._exit(ORPHAN_EXIT_CODE)  # the worker process ended before it sent the task
        data += chunk
    return data


def _exit_at_end_of(fd: int) -> None:
    while os.read(fd, 1):  # the worker sends nothing more: this ends when it is gone
        pass
    os._exit(ORPHAN_EXIT_CODE)


if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 PID` prints where a task process's threads are (stderr)
    with os.fdopen(int(sys.argv[1]), "wb") as out:
        host_task_process(sys.stdin.fileno(), out)
