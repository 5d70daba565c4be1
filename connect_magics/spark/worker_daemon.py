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

import os
import sys


def _quick_imports_path(path: list[str]) -> list[str]:
    """``sys.path`` with the entries that make a Python worker's imports slow moved to its end: Spark puts
    ``spark.jars.packages``' jars first (every import looks into each, tens of MB of zip directories), and
    ``pyspark.zip``, whose sources are compiled again in every new worker, before an installed PySpark
    that the zip comes from (the same code, with its bytecode cached).

    >>> _quick_imports_path(["/u/a.jar", "/sp/pyspark/python/lib/pyspark.zip", "/lib/python3.11", "/sp"])
    ['/lib/python3.11', '/sp', '/u/a.jar', '/sp/pyspark/python/lib/pyspark.zip']
    """
    def slow(entry: str) -> bool:
        if entry.endswith(".jar"):
            return True
        installed = next((p for p in path if entry.startswith(os.path.join(p, "pyspark", "python", "lib", ""))),
                         None)
        return installed is not None and entry.endswith(".zip")

    return [e for e in path if not slow(e)] + [e for e in path if slow(e)]


sys.path[:] = _quick_imports_path(sys.path)

import pandas  # noqa: E402, F401 - loaded before the daemon forks
import pyarrow  # noqa: E402, F401
from pyspark.daemon import manager  # noqa: E402

from connect_magics.runtime.executors.task_host import prepare_worker  # noqa: E402

if __name__ == "__main__":
    prepare_worker()
    manager()
