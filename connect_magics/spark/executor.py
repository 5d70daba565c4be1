"""``executor="spark"``: every task instance is one long-running Spark job on the executors.

The job is a one-row DataFrame mapped with ``mapInPandas`` (DataFrame APIs only, so classic sessions
and Spark Connect sessions both work); its function runs :func:`~connect_magics.spark.task_host.run_hosted_task`
in an executor's Python worker until the task is stopped. The herder controls it through the task
control topic (:mod:`connect_magics.storage.task_control`): a generation per instance and the target
state. When the Spark job fails (the task's Python worker killed, the executor lost, a Spark task error),
the handle starts the next generation, which fences the failed one and resumes from the committed
offsets. See docs/spark.md for the design, its costs and the alternatives.

>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb", spark=spark, executor="spark")  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from pyspark.cloudpickle import dumps as pickle_dumps
from pyspark.cloudpickle import loads as pickle_loads
from pyspark.cloudpickle import register_pickle_by_value

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.worker.executor import Executor, TaskHandle
from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.spark.task_host import RESULT_SCHEMA, HostedTask
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)

CONTROL_TOPIC_CONFIG = "task.control.storage.topic"
RETRY_BACKOFF_S = (1.0, 30.0)  # first and longest wait before a failed Spark job runs again
_STATE_NAMES = {TargetState.STARTED: "STARTED", TargetState.PAUSED: "PAUSED"}
CORE_WAIT_S = 20.0  # a job not started after this long is reported as waiting for a core when cores are unknown
WARM_UP_WAIT_S = 60.0  # longest a task's first job waits for the warm-up job still running


class SparkExecutor(Executor):
    """Runs each task instance as a Spark job on ``spark``'s executors (see the module's docs)."""

    name = "spark"
    fences_tasks = True

    def __init__(self, spark: Any, worker_config: WorkerConfig, plugins: Plugins) -> None:
        self.spark = spark
        self.worker_config = worker_config
        self.plugins = plugins
        self.control_topic = worker_config[CONTROL_TOPIC_CONFIG]  # created by the runtime
        self.control = TaskControlStore(self.control_topic, worker_config.client_config()).start()
        self.handles: set[SparkTaskHandle] = set()  # whose Spark job is submitted and not ended
        self._warm_tag = f"connect-magics-{worker_config['group.id']}-warm-up"
        self._warmed = threading.Event()
        threading.Thread(target=self._warm_up, name="spark-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        """Run a job of one trivial Spark task per core now, while the runtime waits for its first connector:
        the session's first job (the JVM's warm-up, the Python worker daemon) and Python workers that have
        imported the task host, which Spark keeps for the tasks' jobs (``spark.python.worker.reuse``), are
        then paid for before a task starts rather than by it. Tasks' jobs wait for it (up to
        ``WARM_UP_WAIT_S``): submitted beside it, they would race it for the Python workers, and a warm-up
        left behind tasks that hold every core would stay pending for as long as they run. A failure here
        is only logged: the tasks' jobs then pay for it themselves."""
        n = self.cores() or 1
        try:
            self.spark.addTag(self._warm_tag)
            try:
                self.spark.range(n, numPartitions=n).mapInPandas(_warm_up_job, "ready long").collect()
            finally:
                self.spark.removeTag(self._warm_tag)
        except Exception as e:  # noqa: BLE001 - see the docstring
            log.debug("The Spark executor's warm-up job failed: %s", _first_line(e))
        finally:
            self._warmed.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait for the warm-up job (see :meth:`_warm_up`); True once it ended, however it ended.

        >>> rt.executor.wait_ready(60)  # doctest: +SKIP
        True
        """
        return self._warmed.wait(timeout)

    def cores(self) -> int | None:
        """The session's task slots (classic sessions; None on Spark Connect, which does not tell)."""
        try:
            return int(self.spark.sparkContext.defaultParallelism)
        except Exception:  # noqa: BLE001 - Spark Connect has no sparkContext
            return None

    def start(self, spec: TaskSpec, runner: TaskRunner) -> TaskHandle:
        runner.chain.close()  # built here to check that its plugins load; it runs on an executor
        return SparkTaskHandle(self, spec, runner.METRICS_GROUP)

    def known_tasks(self, connector: str) -> set[int]:
        return self.control.tasks(connector)

    def payload(self, spec: TaskSpec) -> bytes:
        """The pickled :class:`HostedTask`; plugin classes registered in this process travel by value unless
        they come from an installed package."""
        registrations = list(self.plugins.registrations)
        for cls, *_ in registrations:
            _pickle_module_by_value(cls)
        wc = self.worker_config
        props = {k: v for k, v in wc.items() if k not in ("bootstrap.servers", "group.id")}
        return pickle_dumps(HostedTask(spec, wc["bootstrap.servers"], wc["group.id"], props, self.control_topic,
                                       registrations))

    def close(self) -> None:
        try:
            self.spark.interruptTag(self._warm_tag)
        except Exception as e:  # noqa: BLE001 - the session may be stopped already
            log.debug("Could not cancel the warm-up job: %s", _first_line(e))
        self.control.stop()


class SparkTaskHandle(TaskHandle):
    """One task on Spark: a driver thread that runs its job, and again (next generation) if the job fails."""

    def __init__(self, executor: SparkExecutor, spec: TaskSpec, metrics_group: str) -> None:
        self.id = spec.task_id
        self.metrics_group = metrics_group
        self._executor = executor
        self._spec = spec
        self._state = _STATE_NAMES.get(spec.target_state, "STARTED")
        self._cond = threading.Condition()
        self._stopping = False
        self.result: dict[str, Any] | None = None
        self.runs = 0  # Spark jobs started for this handle (one more after every failed job)
        self._submitted: float | None = None  # when the current job was submitted (monotonic), None if none
        self._warming = False  # waiting for the executor's warm-up job before the first job
        self._new_generation()
        self._thread = threading.Thread(target=self._run, name=f"spark-task-{spec.task_id}", daemon=True)
        self._thread.start()

    @property
    def generation(self) -> int:
        return self._spec.generation

    @property
    def tag(self) -> str:
        """The Spark job tag of the current generation (``spark.interruptTag`` cancels it)."""
        wc = self._executor.worker_config
        return f"connect-magics-{wc['group.id']}-{self.id}-{self.generation}"

    def _new_generation(self) -> None:
        control = self._executor.control
        generation = control.next_generation(self.id.connector, self.id.task)
        self._spec = self._spec.with_generation(generation)
        control.put_control(self.id.connector, self.id.task, generation, self._state)

    def _run(self) -> None:
        spark, backoff = self._executor.spark, RETRY_BACKOFF_S[0]
        self._wait_for_warm_up()
        while not self._stopping:
            payload, tag = self._executor.payload(self._spec), self.tag
            self.runs += 1
            spark.addTag(tag)
            self._submitted = time.monotonic()
            self._executor.handles.add(self)
            check = threading.Timer(CORE_WAIT_S, self._warn_if_waiting)
            check.daemon = True
            check.start()
            try:
                rows = spark.range(1, numPartitions=1).mapInPandas(_job(payload), RESULT_SCHEMA).collect()
                self.result = rows[0].asDict() if rows else None
                log.info("Spark job of task %s ended: %s", self.id, self.result)
                return
            except Exception as e:  # noqa: BLE001 - the task's Spark job failed: run it again
                if self._stopping:
                    return
                log.warning("The Spark job of task %s (generation %s) failed; running it again from the "
                            "committed offsets in %.0f s: %s", self.id, self.generation, backoff, _first_line(e))
            finally:
                check.cancel()
                self._executor.handles.discard(self)
                self._submitted = None
                spark.removeTag(tag)
            with self._cond:
                self._cond.wait(backoff)
            backoff = min(backoff * 2, RETRY_BACKOFF_S[1])
            if not self._stopping:
                self._new_generation()  # fences whatever is left of the failed instance

    def _wait_for_warm_up(self) -> None:
        """Before the first job: wait for the executor's warm-up job (up to WARM_UP_WAIT_S), unless stopped."""
        deadline = time.monotonic() + WARM_UP_WAIT_S
        self._warming = True
        while not self._stopping and time.monotonic() < deadline and not self._executor.wait_ready(0.25):
            pass
        self._warming = False

    def _warn_if_waiting(self) -> None:
        reason = self.waiting()
        if reason is not None:
            log.warning("Task %s has not started: %s (docs/spark.md)", self.id, reason)

    # -- TaskHandle -------------------------------------------------------------------------------
    def waiting(self) -> str | None:
        """"waiting for a free Spark core ..." while the task's job is submitted but the task has not started
        (every core held by running tasks, or, when the session does not tell its cores, for CORE_WAIT_S)."""
        if self._warming:
            return "waiting for the Spark executor's warm-up job (Spark's Python workers starting)"
        submitted = self._submitted
        if submitted is None or self.published() is not None:
            return None
        cores = self._executor.cores()
        if cores is not None:
            holding = sum(1 for h in list(self._executor.handles) if h is not self and h.published() is not None)
            if holding >= cores:
                return (f"waiting for a free Spark core: {holding} running tasks hold all {cores} of the "
                        "session's task slots")
            return None
        waited = time.monotonic() - submitted
        if waited >= CORE_WAIT_S:
            return f"waiting for a free Spark core: its Spark job has not started for {waited:.0f} s"
        return None

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
        if self._thread.is_alive():  # past the graceful timeout: cancel the job (its successor fences it)
            self._executor.spark.interruptTag(self.tag)
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


def _job(payload: bytes):
    """The ``mapInPandas`` function of a task's job: run the task, then return one row of how it ended."""
    def run(batches):
        import pandas as pd

        from connect_magics.spark.task_host import run_hosted_task

        for _ in batches:  # the one input row
            pass
        yield pd.DataFrame([run_hosted_task(pickle_loads(payload))])
    return run


def _warm_up_job(batches):
    """The warm-up job's function: the task host imported and prepared in this Python worker."""
    import pandas as pd

    from connect_magics.spark.task_host import prepare_worker

    prepare_worker()

    for batch in batches:
        yield pd.DataFrame({"ready": [1] * len(batch)})


def _pickle_module_by_value(cls: type) -> None:
    """Classes from modules an executor may not import (notebook cells, test files) travel by value."""
    import sys

    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None) or ""
    if module is None or cls.__module__ == "__main__" or cls.__module__.startswith("connect_magics"):
        return
    if "site-packages" in path or "dist-packages" in path:
        return
    register_pickle_by_value(module)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
