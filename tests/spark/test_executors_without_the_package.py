"""executor="spark" where the executors' Python lacks connect_magics (issue 27): the task is FAILED with an
error that says what to install and where to read how, not a traceback from a Spark task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HOST = Path(__file__).parent / "missing_package_host.py"


def test_executors_without_connect_magics_fail_the_task_with_what_to_install(bootstrap: str, unique: str,
                                                                            tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    done = subprocess.run([sys.executable, str(HOST), bootstrap, f"nopkg-{unique}", str(source), f"nopkg-{unique}",
                           str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    result = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert result["state"] == "FAILED"
    first = result["trace"].splitlines()[0]
    assert first.startswith("The Spark job of task src-0 (generation 1) failed; running it again from the "
                            "committed offsets in 1 s: The Spark executors' Python cannot import connect_magics, "
                            "which task src-0 runs with: install connect-magics on every node"), first
    assert 'see docs/deploy.md, "Spark executors"' in first
