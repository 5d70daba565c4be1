"""binder/ says what the notebooks need: a JDK Spark 4 supports, JupyterLab, this project, the Kafka jars."""

from __future__ import annotations

import importlib
from pathlib import Path

from connect_magics.local.java import SPARK_JAVA_VERSIONS

BINDER = Path(__file__).resolve().parents[2] / "binder"


def test_apt_installs_a_jdk_spark_supports() -> None:
    packages = BINDER.joinpath("apt.txt").read_text().split()
    assert any(f"openjdk-{v}-jdk-headless" in packages for v in SPARK_JAVA_VERSIONS)


def test_post_build_installs_the_project_and_fetches_the_kafka_jars() -> None:
    script = BINDER.joinpath("postBuild").read_text()
    assert script.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in script
    assert BINDER.joinpath("postBuild").stat().st_mode & 0o111, "postBuild must be executable"
    assert "pip install --no-cache-dir -e ." in script
    call = next(line for line in script.splitlines() if line.startswith("python -c"))
    module, name = "connect_magics.local.jars", "kafka_classpath"
    assert f"from {module} import {name}" in call and callable(getattr(importlib.import_module(module), name))


def test_requirements_bring_jupyterlab() -> None:
    lines = [line for line in BINDER.joinpath("requirements.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    assert lines == ["jupyterlab>=4"]
