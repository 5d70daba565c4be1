"""Getting a SparkSession: the caller's active one, or a small local one with quiet logs and, on request,
Maven packages (Spark's Kafka source, Delta Lake; see :mod:`connect_magics.spark.packages`)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from connect_magics.local.jars import cache_lock
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java
from connect_magics.spark.packages import package_confs, unresolved_artifacts
from connect_magics.spark.quiet_jvm import jvm_stderr_to, log4j2_config, log_path


def active_spark_session() -> Any | None:
    """The SparkSession active in this thread, if any (duck-typed; works with Spark Connect too)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


def spark_session(spark: Any = None) -> Any:
    """``spark`` if given, else the session active in this thread, else :func:`local_spark_session`."""
    return spark or active_spark_session() or local_spark_session()


def local_spark_session(app_name: str = "connect_magics", memory: str = "1g",
                        warehouse: Path | None = None, packages: Iterable[str] = (), master: str = "local[2]",
                        conf: Mapping[str, str] | None = None) -> Any:
    """A SparkSession driven from this process (``master``, by default local with 2 cores), ``memory`` of driver
    heap and errors-only logging; the JVM's stderr goes to ``spark-jvm.log`` in the cache directory, not into
    the terminal or the cell. ``conf``: more Spark settings (they win over these), e.g. for a cluster's
    ``master="spark://host:7077"``: ``{"spark.executor.memory": "512m", "spark.cores.max": "2"}``.

    With ``executor="spark"`` every running task holds one of the session's task slots: give it more
    slots than tasks (``master="local[4]"``) to leave room for queries.

    ``packages`` names Maven packages to load (``"kafka"``, ``"delta"``), in the versions that fit the
    installed pyspark; the first session resolves them from Maven Central into Ivy's cache. A package
    that cannot be resolved raises a RuntimeError naming the missing ``group:artifact:version``.
    Chooses a Java that Spark 4 supports (17 or 21) explicitly, through JAVA_HOME, unless
    JAVA_HOME already points at one.

    >>> spark = local_spark_session(packages=["kafka"])  # doctest: +SKIP
    >>> spark.read.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9092")  # doctest: +SKIP
    """
    confs = package_confs(packages)
    from pyspark.sql import SparkSession

    java = find_java(prefer=SPARK_JAVA_VERSIONS)
    if java.major not in SPARK_JAVA_VERSIONS:
        raise RuntimeError(f"Spark 4 needs Java 17 or 21; the only Java found is {java.major} at "
                           f"{java.executable}. Install a JDK 17 or 21 and set JAVA_HOME.")
    os.environ["JAVA_HOME"] = java.home
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors' Python workers: this environment
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.driver.memory", memory)
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j2_config()}")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if os.environ["PYSPARK_PYTHON"] == sys.executable:  # a Python that has connect_magics
        # Python workers fork from a daemon that loaded pandas, pyarrow and connect_magics once
        builder = builder.config("spark.python.daemon.module", "connect_magics.spark.worker_daemon")
    if warehouse is not None:
        builder = builder.config("spark.sql.warehouse.dir", str(warehouse))
    for key, value in {**confs, **(conf or {})}.items():
        builder = builder.config(key, value)
    _check_packages(confs)
    try:
        # Ivy resolves the packages into its shared cache: one process at a time (two kernels, test workers)
        with cache_lock("spark-packages") if confs else contextlib.nullcontext(), jvm_stderr_to(log_path()):
            session = builder.getOrCreate()  # the JVM's start-up lines go to a log file (spark/quiet_jvm.py)
    except Exception as e:
        if not confs:
            raise
        coordinates = confs["spark.jars.packages"].split(",")
        missing = unresolved_artifacts(log_path().read_text(errors="replace"))
        if not missing:
            raise
        raise RuntimeError(f"Cannot start a SparkSession with packages {coordinates}: Ivy cannot resolve "
                           f"{', '.join(missing)} from Maven Central (check the version and the network; "
                           f"Ivy's report is in {log_path()})") from e
    session.sparkContext.setLogLevel("ERROR")
    return session


def _check_packages(confs: dict[str, str]) -> None:
    """A running Spark ignores new packages (and must keep its catalog): refuse to reuse one that lacks them."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    wanted = [c for c in confs.get("spark.jars.packages", "").split(",") if c]
    if context is None or not wanted:
        return
    loaded = (context.getConf().get("spark.jars.packages") or "").split(",")
    absent = [c for c in wanted if c not in loaded]
    if absent:
        raise RuntimeError(f"A SparkSession is already running without {', '.join(absent)}; packages load only "
                           "when Spark starts: stop it (spark.stop()) and ask again, or start it with "
                           "spark.jars.packages")
