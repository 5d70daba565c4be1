"""Executors' Pythons without the installed connect_magics, for the host scripts of the tests where the nodes
lack it: this environment's Python started through a wrapper whose PYTHONPATH puts a ``sitecustomize`` first,
and a classic session built as a platform builds it (no connect_magics settings), whose executors run it."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java

#: connect_magics cannot be imported at all (by name, wherever it is).
BLOCKED = '''import sys


class _WithoutConnectMagics:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "connect_magics":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _WithoutConnectMagics())
'''

ORIGINS = "connect_magics_origins.txt"

#: connect_magics can be imported from a zip on sys.path only (one the session shipped), never from the
#: installed (editable) location or a source tree; each process that imports it appends
#: ``{pid} {origin}`` to ``ORIGINS`` beside this sitecustomize.
ONLY_FROM_A_ZIP = '''import os
import sys
from importlib.machinery import PathFinder

ORIGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "@ORIGINS@")


class _ConnectMagicsFromZipsOnly:
    def find_spec(self, name, path=None, target=None):
        if name != "connect_magics":
            return None
        spec = PathFinder.find_spec(name, [entry for entry in sys.path if os.path.isfile(entry)])
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        with open(ORIGINS, "a") as origins:
            origins.write(f"{os.getpid()} {spec.origin}\\n")
        return spec


sys.meta_path.insert(0, _ConnectMagicsFromZipsOnly())
'''.replace("@ORIGINS@", ORIGINS)


def executor_python(workdir: Path, sitecustomize: str) -> Path:
    """This environment's Python, with ``sitecustomize`` run first in every process it starts."""
    (workdir / "sitecustomize.py").write_text(sitecustomize)
    wrapper = workdir / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{workdir}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper


def platform_session(executors_python: Path) -> SparkSession:
    """A local classic session with one core whose executors run ``executors_python`` (``PYSPARK_PYTHON``)."""
    os.environ["JAVA_HOME"] = find_java(prefer=SPARK_JAVA_VERSIONS).home
    os.environ["PYSPARK_PYTHON"] = str(executors_python)
    return (SparkSession.builder.master("local[1]")
            .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false").getOrCreate())
