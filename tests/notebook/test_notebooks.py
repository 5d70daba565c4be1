"""The tutorial notebooks, executed with nbval in a subprocess (a fresh kernel, the embedded broker)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.notebook
@pytest.mark.parametrize("notebook", ["quickstart.ipynb", "02-offsets.ipynb", "03-topic-creation.ipynb",
                                      "04-plugin-versions.ipynb", "05-spark.ipynb", "06-secured-cluster.ipynb",
                                      "07-schema-registry.ipynb", "08-database-pipeline.ipynb"])
def test_notebook_runs_with_nbval(notebook: str) -> None:
    """Every cell runs; cells marked NBVAL_CHECK_OUTPUT give the stored outputs (stdout and stderr too), once
    ports, temporary paths, timestamps and ids are replaced as notebooks/nbval-sanitize.cfg says."""
    cmd = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider",
           "--nbval-sanitize-with", "notebooks/nbval-sanitize.cfg", "-q", f"notebooks/{notebook}"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"nbval failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    assert " passed" in proc.stdout and "failed" not in proc.stdout
