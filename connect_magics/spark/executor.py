"""``executor="spark"``: every task instance is one long-running Spark job on the executors.

The job is a one-row DataFrame mapped with ``mapInPandas`` (DataFrame APIs only, so classic sessions
and Spark Connect sessions both work); its function runs
:func:`~connect_magics.runtime.executors.task_host.run_hosted_task` in an executor's Python worker until
the task is stopped. The herder controls it through the task control topic, as every hosted executor
does (:mod:`connect_magics.runtime.executors.hosted`). When the Spark job fails (the task's Python
worker killed, the executor lost, a Spark task error), the handle starts the next generation, which
fences the failed one and resumes from the committed offsets; on a cluster, Spark first runs a lost Spark
task again itself, in the same job and generation. See docs/spark.md for the design, its costs and the
alternatives.

>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb", spark=spark, executor="spark")  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.executors.hosted import HostedExecutor, HostedTaskHandle, first_line
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.worker.task_factory import TaskSpec
from connect_magics.spark.job_tags import JobTags

log = logging.getLogger(__name__)

#: What a task's Spark job returns: one row, how the instance ended (task_host.run_hosted_task).
RESULT_SCHEMA = "connector string, task bigint, generation bigint, outcome string, worker_id string"
CORE_WAIT_S = 20.0  # a job not started after this long is reported as waiting for a core when cores are unknown
WARM_UP_WAIT_S = 60.0  # longest a task's first job waits for the warm-up job still running


class SparkExecutor(HostedExecutor):
    """Runs each task instance as a Spark job on ``spark``'s executors (see the module's docs)."""

    name = "spark"

    def __init__(self, spark: Any, worker_config: WorkerConfig, plugins: Plugins) -> None:
        super().__init__(worker_config, plugins)
        self.spark = spark
        self.tags = JobTags(spark)
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
            self.tags.add(self._warm_tag)
            try:
                self.spark.range(n, numPartitions=n).mapInPandas(_warm_up_job, "ready long").collect()
            finally:
                self.tags.remove(self._warm_tag)
        except Exception as e:  # noqa: BLE001 - see the docstring
            log.debug("The Spark executor's warm-up job failed: %s", first_line(e))
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

    def handle(self, spec: TaskSpec, metrics_group: str) -> SparkTaskHandle:
        return SparkTaskHandle(self, spec, metrics_group)

    def close(self) -> None:
        try:
            self.tags.interrupt(self._warm_tag)
        except Exception as e:  # noqa: BLE001 - the session may be stopped already
            log.debug("Could not cancel the warm-up job: %s", first_line(e))
        super().close()


class SparkTaskHandle(HostedTaskHandle):
    """One task on Spark: a driver thread that runs its job, and again (next generation) if the job fails."""

    instance_name = "Spark job"
    _executor: SparkExecutor

    def __init__(self, executor: SparkExecutor, spec: TaskSpec, metrics_group: str) -> None:
        self._submitted: float | None = None  # when the current job was submitted (monotonic), None if none
        self._warming = False  # waiting for the executor's warm-up job before the first job
        super().__init__(executor, spec, metrics_group)

    @property
    def tag(self) -> str:
        """The Spark job tag of the current generation (``JobTags.interrupt`` cancels it)."""
        wc = self._executor.worker_config
        return f"connect-magics-{wc['group.id']}-{self.id}-{self.generation}"

    def _before_first(self) -> None:
        """Wait for the executor's warm-up job (up to WARM_UP_WAIT_S), unless stopped."""
        deadline = time.monotonic() + WARM_UP_WAIT_S
        self._warming = True
        while not self._stopping and time.monotonic() < deadline and not self._executor.wait_ready(0.25):
            pass
        self._warming = False

    def _run_instance(self, payload: bytes) -> dict[str, Any] | None:
        spark, tag = self._executor.spark, self.tag
        self._executor.tags.add(tag)
        self._submitted = time.monotonic()
        self._executor.handles.add(self)
        check = threading.Timer(CORE_WAIT_S, self._warn_if_waiting)
        check.daemon = True
        check.start()
        try:
            rows = spark.range(1, numPartitions=1).mapInPandas(_job(payload), RESULT_SCHEMA).collect()
            return rows[0].asDict() if rows else None
        except Exception as e:
            explained = missing_module_error(e, str(self.id))
            if explained is None:
                raise
            raise explained from e
        finally:
            check.cancel()
            self._executor.handles.discard(self)
            self._submitted = None
            self._executor.tags.remove(tag)

    def _cancel(self) -> None:
        self._executor.tags.interrupt(self.tag)

    def _warn_if_waiting(self) -> None:
        reason = self.waiting()
        if reason is not None:
            log.warning("Task %s has not started: %s (docs/spark.md)", self.id, reason)

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


def missing_module_error(error: BaseException, task: str) -> ModuleNotFoundError | None:
    """A clear error for a Spark job that failed because the executors' Python cannot import a module the task
    needs (connect_magics itself, or a connector plugin or one of its libraries); None for other failures.

    >>> str(missing_module_error(Exception("...ModuleNotFoundError: No module named 'connect_magics'"), "t-0"))[:70]
    "The Spark executors' Python cannot import connect_magics, which task t"
    """
    found = _MISSING_MODULE.search(str(error))
    if found is None:
        return None
    module = found.group(1)
    what = ("connect_magics" if module.split(".")[0] == "connect_magics"
            else f"module '{module}' (its connector plugin's, or a library the plugin uses)")
    ship = "spark" if what == "connect_magics" else f"spark, {module.split('.')[0]!r}"
    return ModuleNotFoundError(
        f"The Spark executors' Python cannot import {what}, which task {task} runs with: install "
        f"{'connect-magics' if what == 'connect_magics' else 'it'} on every node (a Databricks cluster library, an "
        f"EMR bootstrap action) or ship it with the session (connect_magics.spark.ship_to_executors({ship}), or "
        "spark.archives with a packed environment); see docs/deploy.md, \"Spark executors\"", name=module)


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def _job(payload: bytes):
    """The ``mapInPandas`` function of a task's job: run the task, then return one row of how it ended."""
    def run(batches):
        import pickle

        import pandas as pd

        from connect_magics.runtime.executors.task_host import run_hosted_task

        for _ in batches:  # the one input row
            pass
        yield pd.DataFrame([run_hosted_task(pickle.loads(payload))])
    return run


def _warm_up_job(batches):
    """The warm-up job's function: the task host imported and prepared in this Python worker."""
    import pandas as pd

    from connect_magics.runtime.executors.task_host import prepare_worker

    prepare_worker()

    for batch in batches:
        yield pd.DataFrame({"ready": [1] * len(batch)})
