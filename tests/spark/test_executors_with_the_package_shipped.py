"""executor="spark" where the executors' Python lacks connect_magics and the session ships it
(``connect_magics.spark.ship_to_executors``, issue 27), on a classic and a Spark Connect session: the pipeline
runs, every record once, and the task's Python imported connect_magics from the shipped zip. Without the call: test_executors_without_the_package.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from raw_topics import create_topics, read_records

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HOST = Path(__file__).parent / "shipped_package_host.py"
COUNT = 500


@pytest.mark.parametrize("session", ["classic", "connect"])
def test_shipped_connect_magics_runs_the_pipeline_on_executors_without_it(session: str, bootstrap: str, unique: str,
                                                                         tmp_path: Path) -> None:
    topic = f"shipped-{unique}"
    create_topics(bootstrap, topic)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(COUNT)))
    done = subprocess.run([sys.executable, str(HOST), session, bootstrap, f"shipped-{unique}", str(source), topic,
                           str(COUNT), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    result = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])

    # every record exactly once
    values = [value.decode() for _, value in read_records(bootstrap, topic)]
    assert sorted(values) == sorted(f"line-{i}" for i in range(COUNT)), (len(values), len(set(values)))

    # the executors' Python alone cannot import connect_magics (neither the editable install nor this tree) ...
    alone = subprocess.run([str(tmp_path / "python"), "-c", "import connect_magics"], capture_output=True, text=True)
    assert alone.returncode != 0 and "No module named 'connect_magics'" in alone.stderr, alone.stderr[-2000:]
    # ... and the task's (worker_id host:spark-PID) imported it from the shipped zip, added to the session once
    # (a classic session lists its files; a Spark Connect session does not)
    assert result["task"]["state"] == "RUNNING", result["task"]
    pid = result["task"]["worker_id"].rsplit("spark-", 1)[1]
    origins = result["origins"]
    assert origins[pid].endswith("/connect_magics.zip/connect_magics/__init__.py"), origins
    assert [Path(p).name for p in result["shipped"]] == ["connect_magics.zip"]
    if session == "classic":
        assert sum(Path(f).name == "connect_magics.zip" for f in result["files"]) == 1, result["files"]
