"""Kafka Connect worker.properties files for a secured cluster, written as deployments write them, and the
FileStream pipeline that tests/interop/test_secured_worker_properties.py runs with each of them on three
surfaces: Apache Kafka Connect's Java worker, ``connect-magics worker --config`` and ``ConnectRuntime``.

A file holds everything a distributed worker needs (cluster, group, internal topics, converters, REST
listener) and the security settings with Kafka's Java names: once at the top level (the internal topics'
clients) and again under ``producer.``, ``consumer.`` and ``admin.`` (the tasks' clients), as Kafka Connect
needs them. The three surfaces get the same file, one after another (they share its group and its
``listeners`` port), and each runs its own connectors, topic and files.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient
from helpers import RestClient, wait_until
from jproperties import Properties

from connect_magics import ConnectRuntime
from connect_magics.local.broker import HOST
from connect_magics.local.secured import SecuredBroker

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
#: The prefixes of the tasks' clients' settings in a worker.properties.
CLIENT_PREFIXES = ("producer.", "consumer.", "admin.")
LINES = 1000
PIPELINE_TIMEOUT = 120.0


def jaas(module: str, username: str, password: str) -> str:
    return f'{module} required username="{username}" password="{password}";'


# -- worker.properties -----------------------------------------------------------------------------------

@dataclass
class WorkerFile:
    """One worker.properties as a user copies it from their deployment, and what the harness knows of it."""

    case: str
    path: Path
    group: str  # group.id, and the prefix of the internal topics, this case's connectors and data topics
    principal: str  # the worker's principal, User:...
    rest_port: int
    secrets: list[str] = field(default_factory=list)  # strings that must not be in the file (config provider)
    secrets_file: Path | None = None  # what FileConfigProvider reads

    @property
    def text(self) -> str:
        return self.path.read_text()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.rest_port}"

    def properties(self) -> dict[str, str]:
        """The file parsed with jproperties, as ``worker_config`` for ``ConnectRuntime``."""
        props = Properties()
        with open(self.path, "rb") as f:
            props.load(f, "utf-8")
        return {key: value.data for key, value in props.items()}


def _escape(value: str) -> str:
    """A properties-file value: backslashes escaped, a leading space kept."""
    value = value.replace("\\", "\\\\")
    return "\\" + value if value.startswith(" ") else value


def worker_properties_text(title: str, bootstrap: str, group: str, rest_port: int,
                           security: Sequence[tuple[str, str]], *, extra: Sequence[tuple[str, str]] = (),
                           providers: Mapping[str, str] | None = None, wrap_jaas: bool = False) -> str:
    """A distributed worker's properties file: ``security`` settings at the top level and again under each of
    ``producer.``, ``consumer.``, ``admin.``; ``providers`` maps config provider names to classes.
    ``wrap_jaas`` writes the top-level ``sasl.jaas.config`` over two lines (a ``\\`` continuation), as
    Kafka's docs show it."""
    out = [f"# {title}", "# Apache Kafka Connect, distributed mode", "",
           f"bootstrap.servers={bootstrap}", f"group.id={group}",
           f"config.storage.topic={group}-configs", f"offset.storage.topic={group}-offsets",
           f"status.storage.topic={group}-status", "config.storage.replication.factor=1",
           "offset.storage.replication.factor=1", "status.storage.replication.factor=1",
           f"key.converter={JSON_CONVERTER}", f"value.converter={JSON_CONVERTER}",
           "offset.flush.interval.ms=1000", "plugin.discovery=service_load", "scheduled.rebalance.max.delay.ms=0",
           "", "# REST API", f"listeners=http://{HOST}:{rest_port}", f"rest.advertised.host.name={HOST}",
           f"rest.advertised.port={rest_port}"]
    out += [f"{key}={_escape(value)}" for key, value in extra]
    if providers:
        out += ["", "# secrets", f"config.providers={','.join(providers)}"]
        out += [f"config.providers.{name}.class={cls}" for name, cls in providers.items()]
    out += ["", "# the worker's own clients (config, offsets and status topics, the group)"]
    for key, value in security:
        if wrap_jaas and key == "sasl.jaas.config":
            module, rest = value.split(" required ", 1)
            out.append(f"{key}={module} required \\\n    {_escape(rest)}")
        else:
            out.append(f"{key}={_escape(value)}")
    for prefix in CLIENT_PREFIXES:
        out += ["", f"# the connectors' {prefix.rstrip('.')} clients"]
        out += [f"{prefix}{key}={_escape(value)}" for key, value in security]
    return "\n".join(out) + "\n"


def write_secrets(path: Path, secrets: Mapping[str, str]) -> Path:
    path.write_text("# read by FileConfigProvider\n" + "".join(f"{k}={v}\n" for k, v in secrets.items()))
    path.chmod(0o600)
    return path


def placeholder(secrets_file: Path, key: str) -> str:
    return "${file:" + str(secrets_file) + ":" + key + "}"


def grant_worker(broker: SecuredBroker, principal: str, group: str, sink_groups: bool = True) -> None:
    """Generous ACLs for a worker whose group, internal topics, connectors and data topics start with ``group``:
    ALL on the cluster, on topics, groups and transactional ids with that prefix (the sink connectors' groups
    ``connect-{group}...`` too unless ``sink_groups`` is false), and on Kafka Connect's leader transactional id
    ``connect-cluster-{group}``."""
    broker.grant(principal, "CLUSTER", "kafka-cluster", operation="ALL")
    broker.grant(principal, "TOPIC", group, "PREFIXED", "ALL")
    broker.grant(principal, "GROUP", group, "PREFIXED", "ALL")
    if sink_groups:
        broker.grant(principal, "GROUP", f"connect-{group}", "PREFIXED", "ALL")
    broker.grant(principal, "TRANSACTIONAL_ID", group, "PREFIXED", "ALL")
    broker.grant(principal, "TRANSACTIONAL_ID", f"connect-cluster-{group}", "PREFIXED", "ALL")


# -- the surfaces ----------------------------------------------------------------------------------------

class Surface(Protocol):
    """Where connectors are created: a Kafka Connect REST API or a ConnectRuntime."""

    label: str

    def create(self, name: str, config: dict[str, str]) -> None: ...

    def status(self, name: str) -> dict[str, Any] | None: ...

    def delete(self, name: str) -> None: ...

    def offsets(self, name: str) -> list[dict[str, Any]]: ...


class RestSurface:
    def __init__(self, label: str, url: str) -> None:
        self.label = label
        self.call = RestClient(url)

    def create(self, name: str, config: dict[str, str]) -> None:
        status, body, _ = self.call("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, f"{self.label}: creating {name} answered {status}: {body}"

    def status(self, name: str) -> dict[str, Any] | None:
        status, body, _ = self.call("GET", f"/connectors/{name}/status")
        return body if status == 200 else None

    def delete(self, name: str) -> None:
        status, body, _ = self.call("DELETE", f"/connectors/{name}")
        assert status == 204, f"{self.label}: deleting {name} answered {status}: {body}"

    def offsets(self, name: str) -> list[dict[str, Any]]:
        status, body, _ = self.call("GET", f"/connectors/{name}/offsets")
        assert status == 200, f"{self.label}: the offsets of {name} answered {status}: {body}"
        return body["offsets"]


class RuntimeSurface:
    def __init__(self, label: str, rt: ConnectRuntime) -> None:
        self.label = label
        self.rt = rt

    def create(self, name: str, config: dict[str, str]) -> None:
        self.rt.create_connector(name, config)

    def status(self, name: str) -> dict[str, Any] | None:
        try:
            return self.rt.connector_status(name)
        except Exception:  # noqa: BLE001 - not there (yet)
            return None

    def delete(self, name: str) -> None:
        self.rt.delete_connector(name)

    def offsets(self, name: str) -> list[dict[str, Any]]:
        return self.rt.get_offsets(name)["offsets"]


@contextlib.contextmanager
def cli_worker(worker: WorkerFile, log: Path, timeout: float = 120.0) -> Iterator[RestSurface]:
    """``connect-magics worker --config FILE`` as a subprocess (the console script next to this Python), until
    its REST API answers; SIGTERM on leaving, and it must exit with 0."""
    script = Path(sys.executable).with_name("connect-magics")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "connect_magics.cli"]
    with open(log, "ab") as out:
        proc = subprocess.Popen([*command, "worker", "--config", str(worker.path)], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    surface = RestSurface("connect-magics worker", worker.url)

    def tail() -> str:
        return log.read_text(errors="replace")[-4000:]

    try:
        wait_until(lambda: proc.poll() is not None or surface.call("GET", "/connectors")[0] == 200, timeout,
                   interval=0.2, message=lambda: f"connect-magics worker's REST API at {worker.url}:\n{tail()}")
        assert proc.poll() is None, f"connect-magics worker exited with {proc.returncode}:\n{tail()}"
        yield surface
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        assert code == 0, f"connect-magics worker exited with {code} on SIGTERM:\n{tail()}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


# -- the pipeline ----------------------------------------------------------------------------------------

def _failure(status: dict[str, Any] | None) -> str | None:
    """The trace of a FAILED connector or task in a status answer, if any."""
    if not status:
        return None
    for part in (status.get("connector", {}), *status.get("tasks", [])):
        if part.get("state") == "FAILED":
            return f"{status['name']} {part.get('id', 'connector')} FAILED: {part.get('trace', '(no trace)')}"
    return None


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@dataclass
class PipelineResult:
    lines_in: int
    lines_out: list[str]
    expected: list[str]


def committed_offset(admin: AdminClient, group: str, topic: str) -> int | None:
    """The offset ``group`` committed for partition 0 of ``topic`` (None: none)."""
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])
    answer = admin.list_consumer_group_offsets([request], request_timeout=10)[group].result(15)
    offset = answer.topic_partitions[0].offset
    return offset if offset >= 0 else None


def run_file_pipeline(surface: Surface, name: str, topic: str, directory: Path, admin: AdminClient, *,
                      create_topic: bool = True, source_extra: Mapping[str, str] | None = None,
                      sink_extra: Mapping[str, str] | None = None,
                      timeout: float = PIPELINE_TIMEOUT) -> PipelineResult:
    """FileStreamSource (``{name}-src``) from a file of :data:`LINES` lines into ``topic``, FileStreamSink
    (``{name}-snk``) from ``topic`` into another file; waits until the sink wrote as many lines as the source
    read (or a connector or task failed) and both committed their offsets (the source's as the surface answers
    them, the sink's group's as ``admin``, the harness's, reads them), then deletes both connectors.
    ``create_topic``: the source creates ``topic`` (KIP-158's default group, with the worker's admin client)."""
    source_file, sink_file = directory / f"{name}-in.txt", directory / f"{name}-out.txt"
    expected = [f"{name} line {n}" for n in range(1, LINES + 1)]
    source_text = "".join(f"{line}\n" for line in expected)  # ASCII: its length is the file's size
    source_file.write_text(source_text)
    source = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source_file), "topic": topic,
              **({"topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}
                 if create_topic else {}), **(source_extra or {})}
    sink = {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(sink_file), "topics": topic,
            **(sink_extra or {})}
    names = (f"{name}-src", f"{name}-snk")
    group = f"connect-{names[1]}"
    failures: list[str] = []

    def failed() -> bool:
        for connector in names:
            if (failure := _failure(surface.status(connector))) is not None:
                failures.append(failure)
                return True
        return False

    def progress() -> str:
        statuses = {c: surface.status(c) for c in names}
        return f"{len(_lines(sink_file))} lines in {sink_file}; statuses {statuses}"

    def wait_for(condition: Callable[[], bool], what: Callable[[], str], seconds: float) -> None:
        """Until ``condition`` holds; a FAILED connector or task ends the wait at once, with its trace."""
        wait_until(lambda: failed() or condition(), seconds, interval=0.25,
                   message=lambda: f"{surface.label}: {what()}; {progress()}")
        assert not failures, f"{surface.label}: " + "\n".join(failures)

    source_offsets = [{"partition": {"filename": str(source_file)}, "offset": {"position": len(source_text)}}]
    try:
        surface.create(names[0], source)
        surface.create(names[1], sink)
        wait_for(lambda: len(_lines(sink_file)) >= LINES, lambda: f"{LINES} lines in the sink's file", timeout)
        wait_for(lambda: surface.offsets(names[0]) == source_offsets,
                 lambda: f"the source's offsets {source_offsets} (now {surface.offsets(names[0])})", 30)
        wait_for(lambda: committed_offset(admin, group, topic) == LINES,
                 lambda: f"group {group} committing offset {LINES} of {topic} "
                         f"(now {committed_offset(admin, group, topic)})", 30)
    except BaseException:  # the next surface runs on the same group: it must not find these connectors
        for connector in names:
            with contextlib.suppress(Exception):
                surface.delete(connector)
        raise
    for connector in names:
        surface.delete(connector)
    return PipelineResult(LINES, _lines(sink_file), expected)
