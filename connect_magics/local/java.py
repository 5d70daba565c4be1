"""Finding a Java runtime that both the embedded broker and Spark 4 accept."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MIN_JAVA = 17
#: Spark 4 supports Java 17 and 21; the broker runs on anything from 17.
SPARK_JAVA_VERSIONS = (17, 21)


class JavaNotFoundError(RuntimeError):
    """No usable Java runtime; the message says what was found and what is needed."""


@dataclass(frozen=True)
class Java:
    executable: str
    major: int

    @property
    def home(self) -> str:
        return str(Path(os.path.realpath(self.executable)).parent.parent)


def java_major_version(executable: str) -> int:
    """The major version that ``executable -version`` reports (8 for 1.8, 17 for 17.0.x)."""
    out = subprocess.run([executable, "-version"], capture_output=True, text=True, timeout=30)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise JavaNotFoundError(f"Could not read the version of {executable}: {out.stderr.strip()[:200]}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def _candidates() -> list[str]:
    found = []
    if os.environ.get("JAVA_HOME"):
        found.append(os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
    on_path = shutil.which("java")
    if on_path:
        found.append(on_path)
    for root in ("/usr/lib/jvm", "/Library/Java/JavaVirtualMachines"):
        if os.path.isdir(root):
            for name in sorted(os.listdir(root)):
                for sub in ("bin/java", "Contents/Home/bin/java"):
                    path = os.path.join(root, name, sub)
                    if os.path.isfile(path):
                        found.append(path)
    return list(dict.fromkeys(found))


def find_java(executable: str | None = None, prefer: tuple[int, ...] = SPARK_JAVA_VERSIONS) -> Java:
    """Choose a Java: ``executable`` if given, else ``JAVA_HOME``, ``java`` on the PATH and the usual
    JDK folders, preferring the versions in ``prefer`` (those Spark supports) over other ones >= 17.

    >>> find_java().major >= 17  # doctest: +SKIP
    True
    """
    if executable is not None:
        if not (os.path.isfile(executable) or shutil.which(executable)):
            raise JavaNotFoundError(f"Java executable {executable} does not exist. Install a JDK {MIN_JAVA}+ "
                                    "(for Spark 4: 17 or 21) and set JAVA_HOME.")
        major = java_major_version(executable)
        if major < MIN_JAVA:
            raise JavaNotFoundError(f"Java {MIN_JAVA} or newer is needed, but {executable} is Java {major}. "
                                    "Install a JDK 17 or 21 and set JAVA_HOME to it.")
        return Java(executable, major)
    seen: list[Java] = []
    for path in _candidates():
        try:
            seen.append(Java(path, java_major_version(path)))
        except (OSError, subprocess.SubprocessError, JavaNotFoundError):
            continue
    usable = [j for j in seen if j.major >= MIN_JAVA]
    for j in usable:
        if j.major in prefer:
            return j
    if usable:
        return usable[0]
    if seen:
        listing = ", ".join(f"Java {j.major} at {j.executable}" for j in seen)
        raise JavaNotFoundError(f"Java {MIN_JAVA} or newer is needed; found only {listing}. "
                                "Install a JDK 17 or 21 and set JAVA_HOME to it.")
    raise JavaNotFoundError(f"No Java found (looked at JAVA_HOME, the PATH and /usr/lib/jvm). Java {MIN_JAVA} or "
                            "newer is needed: install a JDK 17 or 21 and set JAVA_HOME to it.")


def java_command(java: str, heap: str, log4j_config: str | os.PathLike[str], classpath: str, main: str,
                 *args: str, options: Sequence[str] = ()) -> list[str]:
    """The command line of a Kafka JVM: ``heap`` as -Xmx, G1, quick start (C1 only), log4j2 config, then
    ``options`` (e.g. a ``-javaagent:``)."""
    return [java, f"-Xmx{heap}", "-Xms128m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={log4j_config}", *options,
            "-cp", classpath, main, *args]
