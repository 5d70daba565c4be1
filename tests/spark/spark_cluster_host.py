"""A Connect worker whose tasks run as Spark jobs on a Spark standalone cluster, with Kafka Connect's REST API,
in a process of its own (the test process holds a local SparkContext, and a process has only one).

Usage: python spark_cluster_host.py BOOTSTRAP GROUP MASTER_URL [WORKER_PROPS_JSON]; prints ``REST <url>`` once
the REST API listens, and runs until SIGTERM (then closes the runtime, stopping its tasks, and the session).
The application takes ``spark.cores.max=3`` one-core executors (one per task: a source and two sink tasks), which
the master spreads over the workers; the executors' Python workers run this Python, with this connect_magics.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path

import connect_magics
from connect_magics import ConnectRuntime
from connect_magics.rest import RestServer
from connect_magics.spark.session import local_spark_session

CLUSTER_CONF = {
    "spark.cores.max": "3",
    "spark.executor.cores": "1",
    "spark.executor.memory": "512m",
    # every task instance in a Python worker of its own: a restarted task has a new pid (the test tells instances
    # apart by it), also when Spark gives its job the executor the previous instance just left
    "spark.python.worker.reuse": "false",
}


def main(bootstrap: str, group: str, master: str, props: str = "{}") -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s")
    logging.getLogger("connect_magics").setLevel(logging.INFO)
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python workers: this environment
    # ... and this checkout's connect_magics (an editable install elsewhere must not shadow it)
    source_root = str(Path(connect_magics.__file__).resolve().parents[1])
    python_path = os.pathsep.join(p for p in (source_root, os.environ.get("PYTHONPATH", "")) if p)
    spark = local_spark_session("connect-magics-cluster-test", memory="512m", master=master,
                                conf={**CLUSTER_CONF, "spark.executorEnv.PYTHONPATH": python_path})
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        with ConnectRuntime(bootstrap, group, json.loads(props), spark=spark, executor="spark") as rt, \
                RestServer(rt, port=0) as server:
            print("REST", server.url, flush=True)
            stop.wait()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
