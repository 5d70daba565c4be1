"""Runs a FileStreamSource with ``executor="spark"`` on a classic session whose executors' Python cannot import
connect_magics (as on a cluster where only the driver has it), in a process of its own (one SparkContext per
process). The session is built as a platform builds it (no connect_magics settings).

Usage: python missing_package_host.py BOOTSTRAP GROUP SOURCE_FILE TOPIC WORKDIR; prints ``RESULT {json}``: the
task's state and trace once it is FAILED."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from executor_python import BLOCKED, executor_python, platform_session  # tests/spark, beside this script

from connect_magics import ConnectRuntime

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import wait_until  # noqa: E402  (tests/helpers.py)


def main(bootstrap: str, group: str, source: str, topic: str, workdir: str) -> int:
    spark = platform_session(executor_python(Path(workdir), BLOCKED))
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
