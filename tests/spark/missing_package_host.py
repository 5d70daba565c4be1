"""Runs a FileStreamSource with ``executor="spark"`` on a classic session whose executors' Python cannot import
connect_magics (as on a cluster where only the driver has it), in a process of its own (one SparkContext per
process). The session is built as a platform builds it (no connect_magics settings).

Usage: python missing_package_host.py BOOTSTRAP GROUP SOURCE_FILE TOPIC WORKDIR; prints ``RESULT {json}``: the
task's state and trace once it is FAILED."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from connect_magics import ConnectRuntime
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import wait_until  # noqa: E402  (tests/helpers.py)

#: Imported by every Python the wrapper below starts: connect_magics cannot be imported there.
BLOCKER = '''import sys


class _WithoutConnectMagics:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "connect_magics":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _WithoutConnectMagics())
'''


def python_without_connect_magics(workdir: Path) -> Path:
    """This environment's Python, with connect_magics made impossible to import (a sitecustomize)."""
    (workdir / "sitecustomize.py").write_text(BLOCKER)
    wrapper = workdir / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{workdir}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper


def main(bootstrap: str, group: str, source: str, topic: str, workdir: str) -> int:
    os.environ["JAVA_HOME"] = find_java(prefer=SPARK_JAVA_VERSIONS).home
    os.environ["PYSPARK_PYTHON"] = str(python_without_connect_magics(Path(workdir)))  # the executors' Python
    spark = (SparkSession.builder.master("local[1]")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    with ConnectRuntime(bootstrap, group, spark=spark, executor="spark") as rt:
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": source, "topic": topic})

        def failed() -> dict | None:
            tasks = rt.connector_status("src")["tasks"]
            return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

        task = wait_until(failed, 180, message="the task FAILED")
        print("RESULT", json.dumps({"state": task["state"], "trace": task.get("trace", "")}), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
