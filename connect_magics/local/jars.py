"""Resolving the official Apache Kafka server jars from Maven Central into a per-user cache.

The first call downloads them with the Ivy jar that ships inside pyspark (so nothing but Java and
pip is needed), or with ``mvn`` when pyspark's Ivy is missing; later calls work offline. An
existing Kafka installation can be used instead by setting ``KAFKA_HOME``.

>>> classpath = kafka_classpath("4.1.1")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_KAFKA_VERSION = "4.1.1"
LOG4J_VERSION = "2.24.3"
KAFKA_ARTIFACT = "org.apache.kafka:kafka_2.13"
CONNECT_ARTIFACT = "org.apache.kafka:connect-runtime"

#: Kafka 4 logs through log4j2; the Maven artifacts leave the binding to the distribution.
_LOG4J_BINDING = [
    ("org.apache.logging.log4j", "log4j-slf4j2-impl", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
]


@dataclass(frozen=True)
class JarBundle:
    """A set of Maven artifacts (``None`` as version: the Kafka version) resolved into one cached folder.

    ``marker`` is the artifact whose jar proves a resolution worked.
    """

    name: str
    marker: str
    dependencies: tuple[tuple[str, str, str | None], ...]
    group: str = "org.apache.kafka"

    @property
    def artifact(self) -> str:
        return f"{self.group}:{self.marker}"


BROKER_JARS = JarBundle("kafka", "kafka_2.13", (("org.apache.kafka", "kafka_2.13", None), *_LOG4J_BINDING))
#: A distributed Kafka Connect worker with the FileStream connectors and the JSON converter.
CONNECT_JARS = JarBundle("kafka-connect", "connect-runtime", (
    ("org.apache.kafka", "connect-runtime", None), ("org.apache.kafka", "connect-file", None),
    ("org.apache.kafka", "connect-json", None), *_LOG4J_BINDING))

#: Prometheus' JMX exporter as a Java agent (the way Kafka Connect deployments publish metrics to Prometheus);
#: resolved with its own version in place of Kafka's.
JMX_EXPORTER_VERSION = "1.0.1"
JMX_EXPORTER_JARS = JarBundle("jmx-exporter", "jmx_prometheus_javaagent",
                              (("io.prometheus.jmx", "jmx_prometheus_javaagent", None),), "io.prometheus.jmx")


class KafkaDownloadError(RuntimeError):
    """The Kafka jars could not be resolved; the message names the artifact and the source."""


def cache_dir() -> Path:
    """The per-user cache: ``$CONNECT_MAGICS_CACHE``, else ``$XDG_CACHE_HOME/connect_magics``, else ``~/.cache``."""
    if os.environ.get("CONNECT_MAGICS_CACHE"):
        return Path(os.environ["CONNECT_MAGICS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "connect_magics"


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Hold the per-user cache's lock of ``name`` (a file lock, so across processes): one process downloads a
    bundle while others starting at the same time (two notebooks, parallel test workers) wait, then find it.

    >>> with cache_lock("kafka-4.1.1"):  # doctest: +SKIP
    ...     pass
    """
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _ivy_jar() -> str | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "ivy-*.jar")))
    return jars[-1] if jars else None


def _ivy_xml(bundle: JarBundle, version: str) -> str:
    deps = "\n".join(
        f'    <dependency org="{g}" name="{a}" rev="{v or version}" conf="default->default"/>'
        for g, a, v in bundle.dependencies)
    return (f'<ivy-module version="2.0">\n  <info organisation="connect-magics" module="{bundle.name}"/>\n'
            f"  <dependencies>\n{deps}\n  </dependencies>\n</ivy-module>\n")


def _pom_xml(bundle: JarBundle, version: str) -> str:
    deps = "\n".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v or version}</version>"
        "</dependency>" for g, a, v in bundle.dependencies)
    return ("<project><modelVersion>4.0.0</modelVersion><groupId>connect-magics</groupId>"
            f"<artifactId>{bundle.name}</artifactId><version>1</version><dependencies>{deps}"
            "</dependencies></project>")


def _run_streaming(cmd: list[str], progress: Callable[[str], None], cwd: str) -> tuple[int, list[str]]:
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        lines.append(line)
        if "downloading" in line or "Downloaded" in line:
            progress("  downloading " + line.split()[1 if line.startswith("downloading") else -1].rsplit("/", 1)[-1])
    return proc.wait(), lines


def kafka_classpath(version: str = DEFAULT_KAFKA_VERSION, java: str = "java",
                    progress: Callable[[str], None] | None = None) -> str:
    """A Java classpath holding the Kafka ``version`` server and a log4j2 binding.

    Uses ``$KAFKA_HOME/libs`` when ``KAFKA_HOME`` is set; otherwise the cached jars, downloading
    them first if needed (progress lines go to ``progress``, by default stderr).
    """
    return resolve_classpath(BROKER_JARS, version, java, progress)


def connect_classpath(version: str = DEFAULT_KAFKA_VERSION, java: str = "java",
                      progress: Callable[[str], None] | None = None) -> str:
    """A Java classpath for an Apache Kafka Connect worker (``connect-runtime``, ``connect-file``,
    ``connect-json`` and a log4j2 binding), resolved like :func:`kafka_classpath`.

    >>> connect_classpath("4.1.1")  # doctest: +SKIP
    '/home/me/.cache/connect_magics/kafka-connect-4.1.1/lib/*'
    """
    return resolve_classpath(CONNECT_JARS, version, java, progress)


def jmx_exporter_jar(java: str = "java", progress: Callable[[str], None] | None = None) -> str:
    """The path of Prometheus' JMX exporter agent jar (:data:`JMX_EXPORTER_VERSION`), downloaded once.

    >>> f"-javaagent:{jmx_exporter_jar()}=9404:exporter.yaml"  # doctest: +SKIP
    """
    folder = resolve_classpath(JMX_EXPORTER_JARS, JMX_EXPORTER_VERSION, java, progress, use_kafka_home=False)
    return str(next(Path(folder).parent.glob(f"{JMX_EXPORTER_JARS.marker}-*.jar")))


def resolve_classpath(bundle: JarBundle, version: str, java: str = "java",
                      progress: Callable[[str], None] | None = None, use_kafka_home: bool = True) -> str:
    """The classpath of ``bundle`` at Kafka ``version``: ``$KAFKA_HOME/libs`` if set (and ``use_kafka_home``),
    else the per-user cache, downloading the jars there first (once) with pyspark's Ivy or ``mvn``."""
    if use_kafka_home and os.environ.get("KAFKA_HOME"):
        libs = Path(os.environ["KAFKA_HOME"]) / "libs"
        if not libs.is_dir():
            raise KafkaDownloadError(f"KAFKA_HOME={os.environ['KAFKA_HOME']} has no libs/ folder of Kafka jars.")
        return str(libs / "*")
    target = cache_dir() / f"{bundle.name}-{version}" / "lib"
    if (target / ".complete").exists():
        return str(target / "*")
    with cache_lock(f"{bundle.name}-{version}"):
        if (target / ".complete").exists():  # downloaded by another process meanwhile
            return str(target / "*")
        return _download_bundle(bundle, version, java, target, progress)


def _download_bundle(bundle: JarBundle, version: str, java: str, target: Path,
                     progress: Callable[[str], None] | None) -> str:
    """:func:`resolve_classpath`'s download into ``target``, under the bundle's cache lock."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    say(f"Downloading {bundle.artifact}:{version} from Maven Central into {target} (once) ...")
    staging = Path(tempfile.mkdtemp(prefix=f"{bundle.name}-jars-", dir=cache_dir()))
    try:
        ivy = _ivy_jar()
        if ivy:
            (staging / "ivy.xml").write_text(_ivy_xml(bundle, version))
            cmd = [java, "-jar", ivy, "-ivy", "ivy.xml", "-confs", "default", "-types", "jar", "bundle",
                   "-cache", str(cache_dir() / "ivy-cache"),
                   "-retrieve", str(staging / "lib" / "[artifact]-[revision](-[classifier]).[ext]")]
            tool = "Ivy (from pyspark)"
        elif shutil.which("mvn"):
            (staging / "pom.xml").write_text(_pom_xml(bundle, version))
            cmd = ["mvn", "-B", "dependency:copy-dependencies", "-DincludeScope=runtime",
                   f"-DoutputDirectory={staging / 'lib'}"]
            tool = "mvn"
        else:
            raise KafkaDownloadError("Cannot download the Kafka jars: neither pyspark's Ivy jar nor mvn is "
                                     "available. Install pyspark, or Maven, or set KAFKA_HOME to a Kafka "
                                     "installation.")
        code, lines = _run_streaming(cmd, say, str(staging))
        jars = list((staging / "lib").glob(f"{bundle.marker}-*.jar")) if (staging / "lib").is_dir() else []
        if code != 0 or not jars:
            tail = "\n".join(lines[-15:])
            raise KafkaDownloadError(f"Failed to download {bundle.artifact}:{version} from Maven Central with "
                                     f"{tool} (exit code {code}). Check the version and your network, or set "
                                     f"KAFKA_HOME to a Kafka installation.\n{tail}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(staging / "lib"), str(target))
        (target / ".complete").write_text(version)
        say(f"{bundle.artifact}:{version}: {len(list(target.glob('*.jar')))} jars ready in {target}")
        return str(target / "*")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
