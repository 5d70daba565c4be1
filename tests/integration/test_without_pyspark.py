"""The core package without Spark: pyspark cannot be imported, and the runtime, its REST API, the magics
and the threads and processes executors still run a pipeline; what needs Spark says how to install it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.broker

HOST = Path(__file__).parent.parent / "no_pyspark_host.py"


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_a_pipeline_runs_without_pyspark(bootstrap: str, unique: str, tmp_path: Path, executor: str) -> None:
    file_in, file_out = tmp_path / "in.txt", tmp_path / "out.txt"
    file_in.write_text("".join(f"line {i}\n" for i in range(50)))
    done = subprocess.run([sys.executable, str(HOST), bootstrap, f"nospark-{unique}-{executor}", str(file_in),
                           str(file_out), executor], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert file_out.read_text() == file_in.read_text()
    assert seen["rest_status"] == "RUNNING" and seen["magics"] is True and seen["pyspark_loaded"] is False
    assert "needs pyspark (3.5 or 4.x), which is not installed: pip install 'connect-magics[spark]'" in seen["read_topic"]
