"""What runs in the process that hosts a task instance (a Spark executor's Python worker, a task process):
one task instance, from its spec to its end.

The process builds the task's runner again from its
:class:`~connect_magics.runtime.worker.task_factory.TaskSpec` (plugins resolved there), talks to Kafka
directly, writes its statuses to the status topic, follows the task control topic (pause, resume, stop,
a newer generation) and publishes its metrics there. It commits through a
:class:`~connect_magics.runtime.worker.fencing.TaskFence`, so once a newer instance of the task started
(a Spark retry, a speculative copy, the herder's next generation) this one can no longer commit.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.plugins.registry import Plugins, entry_point_plugins
from connect_magics.runtime.worker.offset_stores import connector_store_spec, start_connector_store
from connect_magics.runtime.worker.task_factory import TaskSpec, build_runner
from connect_magics.runtime.worker.task_runner import TaskRunner, TaskServices
from connect_magics.storage.authorization import KafkaAccessError, first_line_trace
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.offset_store import OffsetStore
from connect_magics.storage.status_store import StatusStore
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)

METRICS_INTERVAL_S = 2.0


@dataclass(frozen=True)
class HostedTask:
    """Everything a hosting process needs to run one task instance (pickled into a Spark job, or passed to
    a task process)."""

    spec: TaskSpec
    bootstrap_servers: str
    group_id: str
    worker_props: dict[str, str]
    control_topic: str
    registrations: list[tuple[type, tuple[str, ...], str, str | None, bool]]
    worker_id: str | None = None  # the statuses' worker id; None: the hosting process's (worker_id())


@functools.cache
def installed_plugins() -> tuple[tuple[type, str | None], ...]:
    """The installed distributions' entry-point plugins, discovered once per Python worker process: scanning
    every distribution's metadata takes about a second, and every task start needs the result. The worker
    daemon (:mod:`connect_magics.spark.worker_daemon`) and the executor's warm-up job call it early, so that
    tasks find it ready. A plugin distribution installed into a running executor is seen by new workers only.
    """
    return tuple(entry_point_plugins())


def prepare_worker() -> None:
    """Load what starting a task needs (the built-in plugins' modules, the entry points) into this process."""
    Plugins(entry_points=installed_plugins())


def worker_id() -> str:
    """How statuses name an executor-side worker: ``{host}:spark-{pid}`` (Kafka Connect's is host:port)."""
    return f"{socket.gethostname()}:spark-{os.getpid()}"


def run_hosted_task(hosted: HostedTask) -> dict[str, Any]:
    """Run the task until it is stopped, fails, is fenced, or was superseded before it started; returns how
    it ended: ``{"connector", "task", "generation", "outcome", "worker_id"}``."""
    _log_to_stderr()
    spec = hosted.spec
    tid = spec.task_id
    wc = WorkerConfig(hosted.bootstrap_servers, hosted.group_id, hosted.worker_props)
    wid = hosted.worker_id or worker_id()
    result = {"connector": tid.connector, "task": tid.task, "generation": spec.generation, "worker_id": wid}
    status = StatusStore(wc["status.storage.topic"], wc.client_config(), wid, wc.retry_policy,
                         wc.int("status.storage.request.timeout.ms"))
    stores: list[OffsetStore] = []
    runner: list[TaskRunner] = []

    def follow(connector: str, task: int, control: dict[str, Any]) -> None:
        if (connector, task) != (tid.connector, tid.task) or not runner:
            return
        if control["generation"] > spec.generation or (control["generation"] == spec.generation
                                                       and control["state"] == "STOPPED"):
            runner[0].stop()
        elif control["generation"] == spec.generation:
            runner[0].transition_to(TargetState.PAUSED if control["state"] == "PAUSED" else TargetState.STARTED)

    control = TaskControlStore(hosted.control_topic, wc.client_config(), follow)
    if spec.connector_type == "source":
        stores.append(OffsetStore(wc["offset.storage.topic"], wc.client_config()))
    try:
        own = connector_store_spec(spec.connector_config, wc) if stores else None
        # The topics are read at the same time, while the plugins load (a start is mostly waiting for the
        # broker). The control topic's history is only followed once the runner exists; the check below
        # reads its newest state.
        starts: list[Callable[[], Any]] = [status.start, control.start, *(store.start for store in stores)]
        if own is not None:
            starts.append(lambda: start_connector_store(own, wc))
        with ThreadPoolExecutor(len(starts), thread_name_prefix="task-start") as pool:
            futures = [pool.submit(start) for start in starts]
            plugins = Plugins(plugin_path=wc.get("plugin.path"), entry_points=installed_plugins())
            for cls, names, location, version, isolated in hosted.registrations:
                plugins.register(cls, names, location, version, isolated)
        try:
            started = [future.result() for future in futures]  # raises the first failure
        except KafkaAccessError as e:  # a missing ACL: FAILED until restarted, as a task's own failure
            status.put_task(tid.connector, tid.task, "FAILED",
                            first_line_trace(e, lambda err: "".join(traceback.format_exception(err))))
            return {**result, "outcome": "failed"}
        if own is not None:
            stores.append(started[-1])
        built, _ = build_runner(spec, TaskServices(plugins, wc, status, control=control), stores)
        runner.append(built)
        current = control.control(tid.connector, tid.task)
        if current is None or current["generation"] != spec.generation or current["state"] == "STOPPED":
            built.chain.close()
            return {**result, "outcome": "superseded"}
        built.transition_to(TargetState.PAUSED if current["state"] == "PAUSED" else TargetState.STARTED)
        publisher = threading.Thread(target=_publish_metrics, args=(built, control, spec.generation, wid),
                                     name=f"metrics-{tid}", daemon=True)
        publisher.start()
        built.run()
        _publish(built, control, spec.generation, wid)
        outcome = "fenced" if built.fenced else "failed" if built.failed else "stopped"
        return {**result, "outcome": outcome}
    finally:
        control.stop()
        for store in stores:
            store.stop()
        status.stop()


def _publish(runner: TaskRunner, control: TaskControlStore, generation: int, wid: str) -> None:
    control.put_metrics(runner.id.connector, runner.id.task, {
        "generation": generation, "worker_id": wid, "pid": os.getpid(), "group": runner.METRICS_GROUP,
        "task": runner.metrics(), "errors": runner.errors.metrics()})


def _publish_metrics(runner: TaskRunner, control: TaskControlStore, generation: int, wid: str) -> None:
    _publish(runner, control, generation, wid)
    while not runner.done.wait(METRICS_INTERVAL_S):
        try:
            _publish(runner, control, generation, wid)
        except Exception:  # noqa: BLE001 - metrics must never stop the task
            log.debug("Publishing the metrics of %s failed", runner.id, exc_info=True)


def _log_to_stderr() -> None:
    """Warnings and errors of the runtime go to the hosting process's stderr (Spark's executor log; a task
    process shares its worker's); ``CONNECT_MAGICS_TASK_LOG_LEVEL`` (``INFO``, ``DEBUG``) says more."""
    root = logging.getLogger("connect_magics")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"%(asctime)s %(levelname)s [task pid {os.getpid()}] %(threadName)s "
                                               "%(name)s: %(message)s"))
        root.addHandler(handler)
        level = os.environ.get("CONNECT_MAGICS_TASK_LOG_LEVEL", "").upper()
        root.setLevel(level if level in ("DEBUG", "INFO", "WARNING", "ERROR") else logging.WARNING)
