"""A local SparkSession starts without writing the JVM's start-up lines to the process's stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
from connect_magics.spark.session import local_spark_session
session = local_spark_session("quiet")
print(session.range(3).count())
session.stop()
"""


@pytest.mark.spark
def test_local_spark_session_keeps_stderr_quiet(tmp_path) -> None:
    env = {**__import__("os").environ, "CONNECT_MAGICS_CACHE": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "3" and proc.stderr == ""
    log = (tmp_path / "spark-jvm.log").read_text()
    # the JVM's lines went to the log file instead: Spark 4's JDK warning, or Spark 3.5's log level hint
    assert "incubator modules" in log or "Setting default log level" in log
    assert "Using Spark's default log4j profile" not in log and "NativeCodeLoader" not in log
