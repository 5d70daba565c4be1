"""A local Schema Registry for tests and tutorials: Apicurio Registry, which speaks Confluent's API.

Confluent's Schema Registry is not published where these machines can fetch it; Apicurio Registry is,
as a ready-to-run Quarkus distribution on Maven Central (``io.apicurio:apicurio-registry-app``,
classifier ``all``, a ``tar.gz`` of about 160 MB). The first use downloads it with the Ivy jar that ships
inside pyspark (else ``mvn``) into the per-user cache (:func:`~connect_magics.local.jars.cache_dir`) and
unpacks it there once; later uses work offline.

Version 3.3.3 needs Java 21 or newer; when no such Java is found, 3.0.9 (which runs on Java 17) is used.
The registry keeps everything in memory (an in-memory H2 database): a restart starts empty.
``$CONNECT_MAGICS_SCHEMA_REGISTRY_VERSION`` chooses another version where none is passed. Known difference:
3.3.3 answers ``GET /schemas/ids/{id}?format=serialized`` with an error for the base64 descriptors that
confluent-kafka's ``ProtobufSerializer`` registers, so its ``ProtobufDeserializer`` fails there; 3.0.9 answers
it (Avro and JSON Schema work on both).

Confluent's API is served under ``/apis/ccompat/v7``, which is :attr:`SchemaRegistry.url`: give it to
confluent-kafka's ``SchemaRegistryClient`` or to a converter's ``schema.registry.url``.

>>> with SchemaRegistry() as registry:  # doctest: +SKIP
...     from confluent_kafka.schema_registry import SchemaRegistryClient
...     SchemaRegistryClient({"url": registry.url}).get_subjects()
[]

Schema ids are Apicurio's *content* ids (``apicurio.ccompat.legacy-id-mode.enabled=false``): like Confluent's
ids they name a schema's content, so one schema registered under two subjects has one id, and the id written
in a record by a serializer is the one ``GET /schemas/ids/{id}`` answers. ``PUT /config/{subject}`` sets a
subject's compatibility; the default one is BACKWARD, as Confluent's, where a subject's setting can lift it (3.1
on; 3.0 keeps a global rule in force over a subject's NONE, so there the default is Apicurio's: none). See
:func:`default_compatibility`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from connect_magics.local.broker import HOST, file_tail, free_port, port_in_use
from connect_magics.local.jars import _ivy_jar, cache_dir, cache_lock
from connect_magics.local.java import Java, find_java
from connect_magics.local.orphan_guard import end_with_this_process

GROUP = "io.apicurio"
ARTIFACT = "apicurio-registry-app"
CLASSIFIER = "all"
#: The newest version known to work here; it needs Java 21 or newer.
DEFAULT_VERSION = "3.3.3"
#: The version used when only Java 17 is found.
JAVA17_VERSION = "3.0.9"
#: Java needed by the versions we know; others are taken to need Java 21 from 3.1 on, 17 before.
KNOWN_JAVA = {"3.3.3": 21, "3.0.9": 17}
#: The download's size in MB for the progress lines (others: reported in steps of 32 MB).
KNOWN_SIZE_MB = {"3.3.3": 159, "3.0.9": 109}
DEFAULT_HEAP = "512m"
#: The environment variable that chooses the version when none is passed (tests, CI, notebooks).
VERSION_ENV = "CONNECT_MAGICS_SCHEMA_REGISTRY_VERSION"
CCOMPAT_PATH = "/apis/ccompat/v7"
COMPATIBILITY_LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                        "FULL_TRANSITIVE", "NONE")


class SchemaRegistryError(RuntimeError):
    """The registry could not be downloaded, started or stopped; the message says why and what to do."""


# -- versions and Java ---------------------------------------------------------------------------------
def _version_tuple(version: str) -> tuple[int, ...]:
    parts = version.split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise SchemaRegistryError(f"Apicurio Registry version {version!r}: expected digits and dots, e.g. "
                                  f"{DEFAULT_VERSION}")
    return tuple(int(p) for p in parts)


def required_java(version: str) -> int:
    """The oldest Java that Apicurio Registry ``version`` runs on.

    >>> required_java("3.3.3"), required_java("3.0.9")
    (21, 17)
    """
    if version in KNOWN_JAVA:
        return KNOWN_JAVA[version]
    return 21 if _version_tuple(version) >= (3, 1) else 17


def choose_version(java_major: int, version: str | None = None) -> str:
    """The Apicurio Registry version to run on a Java ``java_major``: ``version`` if given (refused if that Java is
    too old for it), else :data:`DEFAULT_VERSION` on Java 21 or newer and :data:`JAVA17_VERSION` below.

    >>> choose_version(25), choose_version(17)
    ('3.3.3', '3.0.9')
    """
    if version is None:
        return DEFAULT_VERSION if java_major >= required_java(DEFAULT_VERSION) else JAVA17_VERSION
    needed = required_java(version)
    if java_major < needed:
        raise SchemaRegistryError(f"Apicurio Registry {version} needs Java {needed} or newer, but the Java found is "
                                  f"{java_major}. Install a JDK {needed}+ (or pass java=PATH), or use version "
                                  f"{JAVA17_VERSION}, which runs on Java 17.")
    return version


def default_compatibility(version: str, requested: str | None = None) -> str:
    """The registry's default compatibility level: ``requested`` if given, else Confluent's (BACKWARD) where a
    subject's ``PUT /config/{subject}`` overrides it (Apicurio 3.1 on), else NONE (3.0 keeps a global rule in
    force over a subject's NONE, so a global BACKWARD could never be lifted there).

    >>> default_compatibility("3.3.3"), default_compatibility("3.0.9"), default_compatibility("3.0.9", "full")
    ('BACKWARD', 'NONE', 'FULL')
    """
    if requested is not None:
        level = requested.upper()
        if level not in COMPATIBILITY_LEVELS:
            raise SchemaRegistryError(f"compatibility {requested!r}: expected one of {', '.join(COMPATIBILITY_LEVELS)}"
                                      ", or None for the default")
        return level
    return "BACKWARD" if _version_tuple(version) >= (3, 1) else "NONE"


def registry_java(java: str | None = None, version: str | None = None) -> tuple[Java, str]:
    """The Java to run the registry with and the version it runs: ``java`` if given, else the first Java 21+
    found (JAVA_HOME, the PATH, the usual JDK folders), else any Java 17+ (then with :data:`JAVA17_VERSION`)."""
    found = find_java(java, prefer=tuple(range(21, 100)))
    return found, choose_version(found.major, version)


# -- resolution from Maven Central ----------------------------------------------------------------------
def coordinates(version: str) -> str:
    """Maven's ``group:artifact:version:type:classifier`` of the distribution.

    >>> coordinates("3.3.3")
    'io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all'
    """
    return f"{GROUP}:{ARTIFACT}:{version}:tar.gz:{CLASSIFIER}"


def archive_name(version: str) -> str:
    return f"{ARTIFACT}-{version}-{CLASSIFIER}.tar.gz"


def ivy_module_xml(version: str) -> str:
    """An Ivy module asking for the distribution alone (``transitive="false"``: the tar.gz holds every jar)."""
    return ('<ivy-module version="2.0" xmlns:m="http://ant.apache.org/ivy/maven">\n'
            '  <info organisation="connect-magics" module="schema-registry"/>\n  <dependencies>\n'
            f'    <dependency org="{GROUP}" name="{ARTIFACT}" rev="{version}" transitive="false">\n'
            f'      <artifact name="{ARTIFACT}" type="tar.gz" ext="tar.gz" m:classifier="{CLASSIFIER}"/>\n'
            "    </dependency>\n  </dependencies>\n</ivy-module>\n")


#: Ivy's Maven Central resolver without reading POMs: the parent POM of some versions (3.0.9) is not
#: published, which Ivy's default settings fail on; the distribution needs none of them.
IVY_SETTINGS_XML = ('<ivysettings>\n  <settings defaultResolver="central"/>\n'
                    '  <resolvers><ibiblio name="central" m2compatible="true" usepoms="false"/></resolvers>\n'
                    "</ivysettings>\n")


def ivy_command(java: str, ivy_jar: str, staging: Path) -> list[str]:
    """Ivy's command line resolving the module of :func:`ivy_module_xml` (in ``staging/ivy.xml``) into
    ``staging/download`` with a cache inside ``staging`` (removed afterwards: the archive is not kept twice)."""
    return [java, "-jar", ivy_jar, "-settings", str(staging / "ivysettings.xml"), "-ivy", str(staging / "ivy.xml"),
            "-confs", "default", "-types", "tar.gz", "-cache", str(staging / "ivy-cache"),
            "-retrieve", str(staging / "download" / "[artifact]-[revision](-[classifier]).[ext]")]


def mvn_command(version: str, staging: Path) -> list[str]:
    """``mvn dependency:copy`` of the distribution into ``staging/download`` (no project needed)."""
    return ["mvn", "-B", "dependency:copy", f"-Dartifact={coordinates(version)}",
            f"-DoutputDirectory={staging / 'download'}", "-Dmdep.overWriteReleases=true"]


def distribution_dir(version: str) -> Path:
    """Where ``version`` is unpacked in the per-user cache."""
    return cache_dir() / f"apicurio-registry-{version}"


def _largest_file(path: Path) -> int:
    """The size of the largest file under ``path`` (the archive being downloaded, or copied from a cache)."""
    largest = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                largest = max(largest, os.path.getsize(os.path.join(root, name)))
            except OSError:
                continue
    return largest


def _report_download(path: Path, version: str, say: Callable[[str], None], done: threading.Event) -> None:
    """Progress lines while the archive grows under ``path``: every fifth of its known size, else every 32 MB,
    and its final size once ``done`` is set."""
    expected = KNOWN_SIZE_MB.get(version)
    step = expected / 5 if expected else 32
    reported = 0.0
    of = f" of about {expected} MB" if expected else ""
    while not done.wait(0.5):
        mb = _largest_file(path) / 1e6
        if mb >= reported + step:
            reported = mb - mb % step
            say(f"  downloaded {mb:.0f} MB{of}")
    mb = _largest_file(path) / 1e6
    if mb > reported:
        say(f"  downloaded {mb:.0f} MB{of}")


def _unpack(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python < 3.11.4: refuse members that would land outside ``into``
            root = into.resolve()
            for member in tar.getmembers():
                if not (root / member.name).resolve().is_relative_to(root):
                    raise SchemaRegistryError(f"{archive.name}: member {member.name} points outside the archive")
            tar.extractall(into)


def resolve_distribution(version: str = DEFAULT_VERSION, java: str = "java",
                         progress: Callable[[str], None] | None = None) -> Path:
    """The unpacked Apicurio Registry ``version`` in the per-user cache, downloaded (once, progress lines to
    ``progress``, by default stderr) with pyspark's Ivy or ``mvn``.

    >>> resolve_distribution("3.3.3")  # doctest: +SKIP
    PosixPath('/home/me/.cache/connect_magics/apicurio-registry-3.3.3')
    """
    _version_tuple(version)
    target = distribution_dir(version)
    if (target / ".complete").exists():
        return target
    with cache_lock(target.name):
        if (target / ".complete").exists():  # downloaded by another process meanwhile
            return target
        return _download_distribution(version, java, target, progress)


def _download_distribution(version: str, java: str, target: Path, progress: Callable[[str], None] | None) -> Path:
    """:func:`resolve_distribution`'s download into ``target``, under its cache lock."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    size = f"about {KNOWN_SIZE_MB[version]} MB" if version in KNOWN_SIZE_MB else "more than 100 MB"
    say(f"Downloading Apicurio Registry {version} ({coordinates(version)}, {size}) from Maven Central into "
        f"{target} (once) ...")
    staging = Path(tempfile.mkdtemp(prefix="apicurio-registry-", dir=cache_dir()))
    try:
        ivy = _ivy_jar()
        if ivy:
            (staging / "ivy.xml").write_text(ivy_module_xml(version))
            (staging / "ivysettings.xml").write_text(IVY_SETTINGS_XML)
            cmd, tool = ivy_command(java, ivy, staging), "Ivy (from pyspark)"
        elif shutil.which("mvn"):
            cmd, tool = mvn_command(version, staging), "mvn"
        else:
            raise SchemaRegistryError("Cannot download Apicurio Registry: neither pyspark's Ivy jar nor mvn is "
                                      "available. Install pyspark or Maven.")
        done = threading.Event()
        watcher = threading.Thread(target=_report_download, args=(staging, version, say, done), daemon=True)
        watcher.start()
        try:
            out = subprocess.run(cmd, cwd=staging, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        finally:
            done.set()
            watcher.join()
        archive = staging / "download" / archive_name(version)
        if out.returncode != 0 or not archive.is_file():
            tail = "\n".join(line for line in out.stdout.splitlines() if not line.startswith("..."))[-2000:]
            raise SchemaRegistryError(f"Failed to download {coordinates(version)} from Maven Central with {tool} "
                                      f"(exit code {out.returncode}). Check the version and your network.\n{tail}")
        say(f"  unpacking {archive.name} ({archive.stat().st_size / 1e6:.0f} MB) ...")
        _unpack(archive, staging / "unpacked")
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(staging / "unpacked"), str(target))
        launcher(target)  # refuses a distribution of an unknown layout before it is marked complete
        (target / ".complete").write_text(version)
        say(f"Apicurio Registry {version} ready in {target}")
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def launcher(distribution: Path) -> Path:
    """The jar that starts the distribution: ``quarkus-run.jar`` (3.1 on), else ``*-runner.jar`` (3.0)."""
    fast = distribution / "quarkus-run.jar"
    if fast.is_file():
        return fast
    runners = sorted(distribution.glob("*-runner.jar"))
    if runners:
        return runners[0]
    raise SchemaRegistryError(f"{distribution} holds neither quarkus-run.jar nor a *-runner.jar: not an Apicurio "
                              "Registry distribution. Remove the folder to download it again.")


# -- the server -----------------------------------------------------------------------------------------
def registry_properties(port: int, management_port: int, work_dir: Path,
                        compatibility: str = "BACKWARD") -> dict[str, str]:
    """The system properties the registry runs with: loopback only, in-memory storage, a small pool, no access
    log, Confluent-compatible ids, deletions allowed (as Confluent's ``DELETE /subjects``), ``compatibility`` as
    the global rule (NONE: no global rule)."""
    props = {
        "quarkus.http.host": HOST,
        "quarkus.http.port": str(port),
        "quarkus.management.host": HOST,  # health and metrics (3.1 on): a port of their own, else 9000 for all
        "quarkus.management.port": str(management_port),
        "quarkus.http.access-log.enabled": "false",
        "quarkus.otel.sdk.disabled": "true",
        "apicurio.storage.kind": "sql",
        "apicurio.storage.sql.kind": "h2",
        "apicurio.datasource.url": f"jdbc:h2:mem:connect_magics_{port}",
        "apicurio.datasource.jdbc.initial-size": "2",
        "apicurio.datasource.jdbc.min-size": "2",
        "apicurio.datasource.jdbc.max-size": "20",
        "apicurio.ccompat.legacy-id-mode.enabled": "false",
        "apicurio.rest.deletion.artifact.enabled": "true",
        "apicurio.rest.deletion.artifact-version.enabled": "true",
        "apicurio.rest.deletion.group.enabled": "true",
        "apicurio.storage.snapshot.location": str(work_dir),
        "apicurio.import.work-dir": str(work_dir),
    }
    if compatibility != "NONE":
        props["apicurio.rules.global.compatibility"] = compatibility
    return props


_RUNNING: weakref.WeakSet[SchemaRegistry] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for registry in list(_RUNNING):
        registry.stop()


@dataclass(frozen=True)
class _Process:
    popen: subprocess.Popen
    started: float


class SchemaRegistry:
    """Apicurio Registry run as a Java subprocess on ``127.0.0.1``, in memory; :attr:`url` is Confluent's API.

    ``port`` defaults to a free one; ``version`` to ``$CONNECT_MAGICS_SCHEMA_REGISTRY_VERSION``, else (as ``java``)
    to :func:`registry_java`'s choice; ``work_dir``
    (its log ``registry.log``) to a temporary directory removed by :meth:`stop`. ``compatibility`` is the
    default compatibility level of subjects (None: :func:`default_compatibility`'s, BACKWARD as Confluent's where
    the version allows it); :attr:`compatibility` is the level in force once started.
    ``progress`` gets the lines of a first download. A registry started by this process is stopped when the
    process exits.
    """

    def __init__(self, port: int | None = None, version: str | None = None, java: str | None = None,
                 work_dir: str | os.PathLike[str] | None = None, heap: str = DEFAULT_HEAP,
                 compatibility: str | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        if port is not None and not 0 < port < 65536:
            raise SchemaRegistryError(f"port {port}: must be between 1 and 65535 (or None for a free one)")
        if compatibility is not None:
            default_compatibility(DEFAULT_VERSION, compatibility)  # refuses an unknown level now
        version = version or os.environ.get(VERSION_ENV) or None
        if version is not None:
            try:
                _version_tuple(version)
            except SchemaRegistryError as e:
                source = f" (from ${VERSION_ENV})" if version == os.environ.get(VERSION_ENV) else ""
                raise SchemaRegistryError(f"{e}{source}") from None
        self.port = port or free_port()
        self.requested_version = version
        self.version: str | None = None  # known once started
        self._java = java
        self.heap = heap
        self.requested_compatibility = compatibility
        self.compatibility: str | None = None  # known once started
        self.progress = progress
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir) if work_dir else \
            Path(tempfile.gettempdir()) / f"connect-magics-registry-{uuid.uuid4().hex[:12]}"  # made by start()
        self._proc: _Process | None = None
        self.startup_seconds: float | None = None

    @property
    def url(self) -> str:
        """Confluent's Schema Registry API: ``http://127.0.0.1:PORT/apis/ccompat/v7``."""
        return f"http://{HOST}:{self.port}{CCOMPAT_PATH}"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "registry.log"

    def log_tail(self, lines: int = 40) -> str:
        return file_tail(self.log_file, lines, "(no registry log)")

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.popen.poll() is None

    def command(self, java: str, distribution: Path, management_port: int) -> list[str]:
        """The registry's Java command line."""
        compatibility = default_compatibility(self.version or self.requested_version or DEFAULT_VERSION,
                                              self.requested_compatibility)
        props = registry_properties(self.port, management_port, self.work_dir, compatibility)
        return [java, f"-Xmx{self.heap}", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.awt.headless=true", *(f"-D{k}={v}" for k, v in props.items()),
                "-jar", str(launcher(distribution))]

    def start(self, timeout: float = 120.0) -> SchemaRegistry:
        """Start the registry (downloading it first if needed) and return once ``GET /subjects`` answers."""
        if self.is_running():
            return self
        if port_in_use(self.port):
            raise SchemaRegistryError(f"Port {self.port} on {HOST} is already in use: choose another port, or "
                                      "none for a free one.")
        java, self.version = registry_java(self._java, self.requested_version)
        self.compatibility = default_compatibility(self.version, self.requested_compatibility)
        distribution = resolve_distribution(self.version, java.executable, self.progress)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        management_port = free_port()
        began = time.monotonic()
        with open(self.log_file, "ab") as log:
            popen = subprocess.Popen(self.command(java.executable, distribution, management_port), cwd=self.work_dir,
                                     stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self._proc = _Process(popen, began)
        _RUNNING.add(self)
        end_with_this_process(popen.pid)  # even if this process is killed and runs no exit handler
        try:
            self._wait_ready(timeout, java)
        except BaseException:
            self.stop(timeout=10)
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _wait_ready(self, timeout: float, java: Java) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        probe = self.url + "/subjects"
        while time.monotonic() < deadline:
            code = self._proc.popen.poll()
            if code is not None:
                raise SchemaRegistryError(
                    f"Apicurio Registry {self.version} (Java {java.major}, {java.executable}) exited with code "
                    f"{code} while starting. Tail of its log ({self.log_file}):\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(probe, timeout=1) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)  # polling the port, within the deadline
        raise SchemaRegistryError(f"Apicurio Registry {self.version} did not answer {probe} within {timeout:.0f} s. "
                                  f"Tail of its log ({self.log_file}):\n{self.log_tail()}")

    def stop(self, timeout: float = 20.0) -> None:
        """Stop (SIGTERM, then SIGKILL after ``timeout`` seconds); remove the work directory if it was made here."""
        _RUNNING.discard(self)
        proc, self._proc = self._proc, None
        if proc is not None and proc.popen.poll() is None:
            try:
                os.killpg(proc.popen.pid, signal.SIGTERM)  # its own session: the JVM and nothing else
            except ProcessLookupError:
                pass
            try:
                proc.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.popen.pid, signal.SIGKILL)
                proc.popen.wait(timeout=10)
        if self._own_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> SchemaRegistry:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"SchemaRegistry({self.url}, {state}, version={self.version or self.requested_version})"
