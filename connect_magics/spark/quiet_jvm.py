"""Starting Spark's JVM without its start-up chatter in the user's terminal or notebook cell.

A local SparkSession's JVM writes four lines to the process's stderr as it starts: the JDK's ``WARNING:
Using incubator modules``, log4j's ``Using Spark's default log4j profile``, ``Setting default log level``
(with its ``sc.setLogLevel`` hint) and a ``NativeCodeLoader`` warning. ipykernel forwards a process's
file-descriptor output into the running cell, and nbval compares it, so they are noise. Two measures:

* :func:`log4j2_config` -- a log4j2 file at ERROR level, passed with ``-Dlog4j2.configurationFile``:
  Spark prints its "default profile" lines only when it falls back to its own file;
* :func:`jvm_stderr_to` -- file descriptor 2 pointed at a log file while the JVM is launched, so the
  JVM (which inherits it) writes its stderr there for good; the kernel's stderr is restored after.
  Errors stay findable: the file is ``spark-jvm.log`` in the connect_magics cache directory.

>>> with jvm_stderr_to(log_path()):  # doctest: +SKIP
...     session = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log4j2_config()}")
...     session = session.getOrCreate()
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from connect_magics.local.jars import cache_dir

__all__ = ["jvm_stderr_to", "log4j2_config", "log_path"]

LOG4J2 = """\
# connect_magics: Spark's JVM logs errors only, to stderr (which is redirected to spark-jvm.log)
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def log_path() -> Path:
    """Where the JVM's stderr goes: ``spark-jvm.log`` in the connect_magics cache directory."""
    return cache_dir() / "spark-jvm.log"


def log4j2_config() -> Path:
    """A log4j2 properties file at ERROR level (written into the cache directory once)."""
    path = cache_dir() / "log4j2-spark.properties"
    if not path.exists() or path.read_text() != LOG4J2:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LOG4J2)
    return path


@contextlib.contextmanager
def jvm_stderr_to(path: Path) -> Iterator[None]:
    """Point file descriptor 2 at ``path`` (truncated: the latest JVM's log) for the duration; child processes started
    meanwhile keep writing there. Python's ``sys.stderr`` is flushed first and restored after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "wb") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
