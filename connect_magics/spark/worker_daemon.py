"""The Python worker daemon of local SparkSessions (``spark.python.daemon.module``): PySpark's own daemon,
with what every task's Python worker imports (and the installed plugins' entry points) loaded once, before
the daemon forks its workers.

Without it each new Python worker imports pandas, pyarrow and connect_magics again and scans the installed
distributions for plugins (seconds per worker on a busy machine; a task of the Spark executor holds its
worker for good, so every task start pays them).
Forked workers share these modules with the daemon. Set ``spark.python.daemon.module`` to
``connect_magics.spark.worker_daemon`` on a cluster's session to get the same there.
"""

from __future__ import annotations

import pandas  # noqa: F401 - loaded before the daemon forks
import pyarrow  # noqa: F401
from pyspark.daemon import manager

from connect_magics.spark.task_host import prepare_worker

if __name__ == "__main__":
    prepare_worker()
    manager()
