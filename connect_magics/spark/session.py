"""Getting a SparkSession: the caller's active one, or a small local one with quiet logs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java
from connect_magics.spark.quiet_jvm import jvm_stderr_to, log4j2_config, log_path


def active_spark_session() -> Any | None:
    """The SparkSession active in this thread, if any (duck-typed; works with Spark Connect too)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


def local_spark_session(app_name: str = "connect_magics", memory: str = "1g",
                        warehouse: Path | None = None) -> Any:
    """A local SparkSession with 2 cores, ``memory`` of driver heap and errors-only logging; the JVM's
    stderr goes to ``spark-jvm.log`` in the cache directory, not into the terminal or the cell.

    Chooses a Java that Spark 4 supports (17 or 21) explicitly, through JAVA_HOME, unless
    JAVA_HOME already points at one.
    """
    from pyspark.sql import SparkSession

    java = find_java(prefer=SPARK_JAVA_VERSIONS)
    if java.major not in SPARK_JAVA_VERSIONS:
        raise RuntimeError(f"Spark 4 needs Java 17 or 21; the only Java found is {java.major} at "
                           f"{java.executable}. Install a JDK 17 or 21 and set JAVA_HOME.")
    os.environ["JAVA_HOME"] = java.home
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (SparkSession.builder.master("local[2]").appName(app_name)
               .config("spark.driver.memory", memory)
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j2_config()}")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if warehouse is not None:
        builder = builder.config("spark.sql.warehouse.dir", str(warehouse))
    with jvm_stderr_to(log_path()):  # the JVM's start-up lines go to a log file (spark/quiet_jvm.py)
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
