"""Spark packages that cannot be loaded give an error naming the artifact (from Ivy's report, against Maven
Central); a running session is not reused for packages it lacks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from connect_magics.spark.packages import delta_coordinate, pyspark_scala_version
from connect_magics.spark.session import local_spark_session


def test_a_running_session_without_the_package_is_not_reused(spark) -> None:
    from importlib import metadata

    delta = delta_coordinate(metadata.version("delta-spark"), pyspark_scala_version())
    with pytest.raises(RuntimeError, match=f"A SparkSession is already running without {delta}; packages load "
                                           "only when Spark starts"):
        local_spark_session(packages=["delta"])
    assert spark.conf.get("spark.sql.catalog.spark_catalog", None) is None  # nothing changed


@pytest.mark.slow
def test_a_session_whose_package_cannot_be_resolved_names_it() -> None:
    # A fresh process (one JVM per process) whose delta-spark claims a version Maven Central does not have.
    script = ("import connect_magics.spark.packages as p\n"
              "p.installed_delta_version = lambda: '0.0.0-missing'\n"
              "from connect_magics.spark.session import local_spark_session\n"
              "try:\n    local_spark_session(packages=['delta'])\n"
              "except RuntimeError as e:\n    print('ERROR:', e)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    error = next(line for line in out.stdout.splitlines() if line.startswith("ERROR:"))
    missing = delta_coordinate("0.0.0-missing", pyspark_scala_version())
    assert f"Ivy cannot resolve {missing} from Maven Central" in error
