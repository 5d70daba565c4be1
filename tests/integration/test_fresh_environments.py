"""connect_magics installed into fresh virtualenvs as our users' platforms have them (issue 27):

- without pyspark: ``pip install -e .`` installs no pyspark, and a pipeline runs on the threads executor;
- with the Spark 3.5 that EMR 7 and Databricks 15/16 LTS run, installed first: ``pip install -e .[spark]``
  keeps it, and the Spark tests below pass on it (the executor pipeline on classic and Spark Connect
  sessions, a killed Python worker, SparkTableSink exactly once, ``read_topic``, offsets frames).

The rest of the suite runs on the pinned pyspark 4.x. pyspark 3.5.7 is the newest 3.5 whose
``spark-sql-kafka`` artifact Maven Central serves here (3.5.8 and 3.5.9 are on the package index only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.venv]

REPO = Path(__file__).resolve().parents[2]
SPARK_35 = ["pyspark[connect]==3.5.7", "delta-spark>=3.3,<3.4", "pytest>=8"]
SPARK_35_TESTS = [
    "tests/spark/test_spark_executor.py::test_file_pipeline_gives_the_same_output_on_every_executor",
    "tests/spark/test_spark_executor.py::test_a_task_whose_python_worker_is_killed_runs_again_from_its_offsets",
    "tests/spark/test_spark_executor.py::test_a_spark_connect_session_runs_connectors_on_the_spark_executor",
    "tests/spark/test_spark_table_executor.py::test_killed_python_worker_and_a_task_raising_once_leave_every_record_once",
    "tests/spark/test_read_topic.py",
    "tests/spark/test_offsets_frame_spark.py",
    "tests/spark/test_quiet_jvm.py",
    "tests/unit/test_spark_packages.py",
]


def fresh_venv(path: Path) -> tuple[Path, dict[str, str]]:
    """A new virtualenv at ``path``: its python, and an environment that runs its programs first."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return path / "bin" / "python", env


def pip(python: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", *args], capture_output=True, text=True,
                          env=env, timeout=1200, cwd=REPO)
    assert done.returncode == 0, f"pip install {' '.join(args)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"


def installed(python: Path, env: dict[str, str], package: str) -> str | None:
    done = subprocess.run([str(python), "-c", f"from importlib import metadata as m; print(m.version({package!r}))"],
                          capture_output=True, text=True, env=env, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else None


def test_without_pyspark_nothing_installs_it_and_a_pipeline_runs(bootstrap: str, unique: str,
                                                                 tmp_path: Path) -> None:
    python, env = fresh_venv(tmp_path / "venv")
    pip(python, env, "-e", ".")
    assert installed(python, env, "pyspark") is None
    file_in, file_out = tmp_path / "in.txt", tmp_path / "out.txt"
    file_in.write_text("".join(f"line {i}\n" for i in range(50)))
    done = subprocess.run([str(python), str(REPO / "tests" / "no_pyspark_host.py"), bootstrap, f"fresh-{unique}",
                           str(file_in), str(file_out), "threads"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert file_out.read_text() == file_in.read_text()
    assert seen["rest_status"] == "RUNNING" and seen["pyspark_loaded"] is False


def test_spark_3_5_installed_first_is_kept_and_the_spark_tests_pass_on_it(tmp_path: Path) -> None:
    python, env = fresh_venv(tmp_path / "venv")
    pip(python, env, *SPARK_35)
    pip(python, env, "-e", ".[spark]")
    assert installed(python, env, "pyspark") == "3.5.7"
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *SPARK_35_TESTS],
                          capture_output=True, text=True, env=env, timeout=1800, cwd=REPO)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1] and "failed" not in done.stdout.splitlines()[-1]
