"""Least privilege (issue 25): on a broker with StandardAuthorizer and ``allow.everyone.if.no.acl.found=false``,
the worker's principal with exactly the ACLs docs/security.md lists runs the whole pipeline (FileStream source
and sink, KIP-558 topics, KIP-875 alter and reset, ``read_topic``; threads, and as slow tests task processes and
Spark); taking each listed ACL away in turn gives the promised error, naming the principal, the operation and
the resource, at once; a wrong password fails the start within seconds, naming authentication.

The ACLs are read from docs/security.md's table itself, so the document and this test cannot drift apart. One
secured broker for the module; every case has a group id and connector names of its own, so ACLs granted for
one case never serve another.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.local.secured import SecuredBroker
from connect_magics.storage.authorization import KafkaAuthenticationError, KafkaAuthorizationError

pytestmark = pytest.mark.broker

USER, PASSWORD = "connect", "connect-secret"
PRINCIPAL = f"User:{USER}"
DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
SECTION = "## ACLs the worker's principal needs"
#: The table's names that are not templates, as the placeholders the cases fill in.
PLACEHOLDERS = {
    "each topic a source connector writes": "{source topic}",
    "each topic a sink connector reads": "{sink topic}",
    "`errors.deadletterqueue.topic.name`": "{dead letter queue}",
    "a source connector's `offsets.storage.topic`": "{connector offsets}",
    "each topic `rt.read_topic` / `%connect peek` reads": "{read topic}",
}
RESOURCE_TYPES = {"Topic": "TOPIC", "Group": "GROUP", "TransactionalId": "TRANSACTIONAL_ID", "Cluster": "CLUSTER"}
KINDS = {"Topic": "topic", "Group": "group", "TransactionalId": "transactional id"}
#: A limit no case comes near: an error must come at once, never after a client's timeout.
PROMPT_S = 25.0


@dataclass(frozen=True)
class Row:
    """One row of docs/security.md's ACL table."""

    resource: str
    name: str  # a template: {group.id}, {connector}, or a placeholder of PLACEHOLDERS
    pattern: str
    operations: tuple[str, ...]
    when: str


def documented_rows() -> list[Row]:
    section = DOC.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or cells[0] not in RESOURCE_TYPES:
            continue
        resource, name, pattern, operations, when = cells[:5]
        name = PLACEHOLDERS.get(name, name.strip("`"))
        assert "{" not in name or name.count("{") == name.count("}"), name
        rows.append(Row(resource, name, pattern, tuple(o.strip() for o in operations.split(",")), when))
    return rows


ROWS = documented_rows()
REQUIRED = [r for r in ROWS if r.when != "optional"]  # the optional row (explain's broker defaults) is left out
CASES = [(row, op) for row in REQUIRED for op in row.operations]


def case_id(case: tuple[Row, str]) -> str:
    row, op = case
    return f"{row.resource}:{row.name}:{op}"


@dataclass
class Names:
    """What one case fills the table's templates with."""

    group: str
    sources: list[str] = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)
    source_topic: str | None = None
    sink_topic: str | None = None
    dead_letter_queue: str | None = None
    connector_offsets: str | None = None
    read_topic: str | None = None

    def expand(self, row: Row) -> list[str]:
        name = row.name
        if "{connector}" in name:  # sink groups for sinks; transactional ids for every connector
            connectors = self.sinks if row.resource == "Group" else self.sources + self.sinks
            return [name.replace("{group.id}", self.group).replace("{connector}", c) for c in connectors]
        value = {"{source topic}": self.source_topic, "{sink topic}": self.sink_topic,
                 "{dead letter queue}": self.dead_letter_queue, "{connector offsets}": self.connector_offsets,
                 "{read topic}": self.read_topic}.get(name, name.replace("{group.id}", self.group))
        return [] if value is None else [value]


GRANTED: set[tuple[str, str, str, str]] = set()  # (resource type, name, pattern, operation) granted so far


def grant(broker: SecuredBroker, names: Names, without: tuple[Row, str] | None = None) -> None:
    """Grant every documented ACL for ``names``, except the operation ``without`` of one row."""
    wanted: dict[tuple[str, str, str], list[str]] = {}
    for row in REQUIRED:
        for op in row.operations:
            if without == (row, op):
                continue
            operation = re.sub(r"(?<!^)(?=[A-Z])", "_", op).upper()  # DescribeConfigs -> DESCRIBE_CONFIGS
            for name in names.expand(row):
                binding = (RESOURCE_TYPES[row.resource], name, row.pattern.upper(), operation)
                if binding not in GRANTED:
                    wanted.setdefault(binding[:3], []).append(operation)
                    GRANTED.add(binding)
    for (resource_type, name, pattern), operations in wanted.items():
        broker.grant(PRINCIPAL, resource_type, name, pattern, operations)


def promised(op: str, row: Row, name: str) -> str:
    """The start of the message a missing ACL gives."""
    return f"Principal {PRINCIPAL} is not authorized to {op.upper()} {KINDS[row.resource]} '{name}'"


def worker_config(broker: SecuredBroker, **extra: str) -> dict[str, str]:
    """A worker.properties as Kafka Connect users write it (sasl.jaas.config, a JKS truststore)."""
    config = broker.java_client_config("SASL_SSL", USER, password=extra.pop("password", None))
    config.pop("bootstrap.servers")
    return {**config, "offset.flush.interval.ms": "500", **extra}


def short() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture(scope="module", autouse=True)
def no_remembered_secrets() -> Iterator[None]:
    """Values other modules' config providers resolved in this process (test_config_providers resolves a user
    named ``connect``) are hidden in status traces; this module resolves none, and its traces name ``connect``."""
    from connect_magics.security import redaction

    with redaction._lock:
        saved = set(redaction._secrets)
        redaction._secrets.clear()
        redaction._pattern.clear()
    yield
    for secret in saved:
        redaction.remember_secret(secret)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    broker = SecuredBroker(tmp_path_factory.mktemp("least-privilege"), users={USER: PASSWORD}, tls_clients=[],
                           heap="512m", server_properties={"auto.create.topics.enable": "false"})
    broker.start()
    yield broker
    broker.stop()


def admin_topic(broker: SecuredBroker, name: str, lines: tuple[str, ...] = ()) -> str:
    """Create ``name`` and write ``lines`` to it over the admin listener (the harness, not the worker)."""
    broker.admin().create_topics([NewTopic(name, 1, 1)])[name].result(30)
    if lines:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        for line in lines:
            producer.produce(name, line.encode())
        assert producer.flush(30) == 0
    return name


def failed_trace(rt: ConnectRuntime, connector: str) -> str:
    def trace() -> str | None:
        for task in rt.connector_status(connector)["tasks"]:
            if task["state"] == "FAILED":
                return task["trace"]
        return None

    return wait_until(trace, timeout=PROMPT_S, message=lambda: f"a FAILED task of {connector}: "
                                                               f"{rt.connector_status(connector)}")


# -- the whole pipeline on exactly the documented ACLs ---------------------------------------------------------

def run_pipeline(broker: SecuredBroker, tmp_path: Path, executor: str = "threads", spark: Any = None) -> None:
    group = f"lp{short()}"
    src, sink, topic = f"{group}-src", f"{group}-sink", f"{group}-lines"
    names = Names(group, [src], [sink], topic, topic, None, None, topic)
    grant(broker, names)
    documented = {(RESOURCE_TYPES[r.resource].replace("CLUSTER", "BROKER"), n, r.pattern.upper())
                  for r in REQUIRED for n in names.expand(r)}
    granted = {(b.restype.name, b.name, b.resource_pattern_type.name) for b in broker.acls(PRINCIPAL)
               if b.name.startswith((group, f"connect-{group}", f"connect-cluster-{group}"))}
    assert granted == documented  # exactly the table's resources for this group, nothing else

    lines = [f"line {i}" for i in range(20)]
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("".join(f"{line}\n" for line in lines))
    with ConnectRuntime(broker.listener("SASL_SSL"), group, worker_config(broker), spark=spark,
                        executor=executor) as rt:
        wait_until(lambda: rt.role == "leader", timeout=30, message="the runtime to lead its group")
        rt.create_connector(src, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic,
                                  "topic.creation.default.partitions": "1",  # KIP-158: the task creates it
                                  "topic.creation.default.replication.factor": "1"})
        rt.create_connector(sink, {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic})

        def copied() -> bool:
            for name in (src, sink):
                failed = [t["trace"] for t in rt.connector_status(name)["tasks"] if t["state"] == "FAILED"]
                assert not failed, failed[0]
            return sink_file.exists() and sink_file.read_text().splitlines() == lines

        wait_until(copied, timeout=90, message="the sink's file to hold every line")
        # KIP-558: the topics each connector used (written where its tasks run); a reset forgets them
        wait_until(lambda: rt.connector_topics(src) == {src: {"topics": [topic]}}
                   and rt.connector_topics(sink) == {sink: {"topics": [topic]}}, timeout=30,
                   message=lambda: f"KIP-558 topics: {rt.connector_topics(src)}, {rt.connector_topics(sink)}")
        rt.reset_connector_topics(sink)
        assert rt.connector_topics(sink) == {sink: {"topics": []}}
        end = source_file.stat().st_size
        wait_until(lambda: rt.get_offsets(src)["offsets"] == [{"partition": {"filename": str(source_file)},
                                                                 "offset": {"position": end}}]
                   and rt.get_offsets(sink)["offsets"] == [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                                                             "offset": {"kafka_offset": len(lines)}}],
                   timeout=60, message="both connectors' offsets committed")
        # KIP-875: alter, then reset, the offsets of both (a null offset deletes the sink partition's)
        for name in (src, sink):
            rt.stop_connector(name)
        wait_until(lambda: all(rt.connector_status(n)["connector"]["state"] == "STOPPED" for n in (src, sink)),
                   timeout=60, message="both connectors STOPPED")
        altered = "The offsets for this connector have been altered successfully"
        assert rt.alter_offsets(src, {"offsets": [{"partition": {"filename": str(source_file)},
                                                   "offset": {"position": 7}}]})["message"] == altered
        sink_partition = {"kafka_topic": topic, "kafka_partition": 0}
        assert rt.alter_offsets(sink, {"offsets": [{"partition": sink_partition,
                                                    "offset": {"kafka_offset": 3}}]})["message"] == altered
        assert rt.get_offsets(src)["offsets"][0]["offset"] == {"position": 7}
        assert rt.get_offsets(sink)["offsets"] == [{"partition": sink_partition, "offset": {"kafka_offset": 3}}]
        assert rt.alter_offsets(sink, {"offsets": [{"partition": sink_partition, "offset": None}]})["message"] \
            == altered
        assert rt.get_offsets(sink)["offsets"] == []
        for name in (src, sink):
            assert "reset successfully" in rt.reset_offsets(name)["message"]
            assert rt.get_offsets(name)["offsets"] == []
        if executor == "threads":  # read_topic: a consumer here, and Spark's Kafka source with the Java settings
            frame = rt.read_topic(topic, reader="consumer", spark=spark)  # the worker's JsonConverter
            assert sorted(r["value"] for r in frame.collect()) == sorted(lines)
            options = {f"kafka.{k}": v for k, v in worker_config(broker).items() if k.startswith(("sasl.", "ssl.",
                                                                                                   "security."))}
            frame = rt.read_topic(topic, reader="kafka-source", options=options, spark=spark)
            assert frame.count() == len(lines)


def test_the_whole_pipeline_runs_on_exactly_the_documented_acls(secured: SecuredBroker, tmp_path: Path,
                                                               spark: Any) -> None:
    run_pipeline(secured, tmp_path, spark=spark)


@pytest.mark.slow
def test_the_whole_pipeline_in_task_processes(secured: SecuredBroker, tmp_path: Path) -> None:
    run_pipeline(secured, tmp_path, executor="processes")


@pytest.mark.slow
def test_the_whole_pipeline_on_spark(secured: SecuredBroker, tmp_path: Path, spark: Any) -> None:
    run_pipeline(secured, tmp_path, executor="spark", spark=spark)


def test_every_documented_acl_is_exercised() -> None:
    """The table lists what the scenarios below know, and nothing the runtime does without."""
    assert len(REQUIRED) >= 15, REQUIRED
    assert {r.name for r in REQUIRED} <= set(STARTS) | set(TASKS) | {"{read topic}"}
    assert not [r for r in ROWS if r.resource == "Cluster" and r.when != "optional"]  # no IdempotentWrite


# -- each ACL taken away ---------------------------------------------------------------------------------------

#: Rows whose absence fails the runtime's start.
STARTS = ("{group.id}-configs", "{group.id}-offsets", "{group.id}-status", "{group.id}-task-control",
          "{group.id}-members", "connect-cluster-{group.id}")
#: Rows whose absence fails a task (or, for Delete on the sink's group, a reset), by the connector that shows it.
TASKS = {"{group.id}-{connector}-": "source", "{source topic}": "source", "{connector offsets}": "source",
         "{sink topic}": "sink", "connect-{connector}": "sink", "{dead letter queue}": "sink"}


@pytest.fixture(scope="module")
def worker(secured: SecuredBroker) -> Iterator[ConnectRuntime]:
    """A runtime with every worker ACL, for the connector rows: each case grants its connectors' own."""
    group = f"lpw{short()}"
    grant(secured, Names(group))
    with ConnectRuntime(secured.listener("SASL_SSL"), group, worker_config(secured)) as rt:
        yield rt


@pytest.mark.parametrize("case", [c for c in CASES if c[0].name in STARTS], ids=case_id)
def test_a_missing_worker_acl_fails_the_start_naming_it(secured: SecuredBroker, case: tuple[Row, str]) -> None:
    row, op = case
    names = Names(f"lp{short()}")
    grant(secured, names, without=case)
    started = time.monotonic()
    with pytest.raises(KafkaAuthorizationError) as raised:
        ConnectRuntime(secured.listener("SASL_SSL"), names.group, worker_config(secured)).close()
    assert time.monotonic() - started < PROMPT_S
    message = str(raised.value)
    assert message.startswith(promised(op, row, names.expand(row)[0])), message
    assert f"--allow-principal {PRINCIPAL} --operation {op}" in message


@pytest.mark.parametrize("case", [c for c in CASES if c[0].name in TASKS], ids=case_id)
def test_a_missing_connector_acl_fails_the_task_naming_it(secured: SecuredBroker, worker: ConnectRuntime,
                                                        tmp_path: Path, case: tuple[Row, str]) -> None:
    row, op = case
    tag = short()
    group = worker.worker_config["group.id"]
    src, sink = f"{tag}-src", f"{tag}-sink"
    names = Names(group, [src], [sink], source_topic=f"{tag}-out", sink_topic=f"{tag}-in",
                  dead_letter_queue=f"{tag}-dlq", connector_offsets=f"{tag}-offsets")
    grant(secured, names, without=case)
    admin_topic(secured, names.sink_topic, ("a", "b"))
    source_file = tmp_path / "in.txt"
    source_file.write_text("one\ntwo\n")
    source = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": names.source_topic,
              "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}
    sink_config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": names.sink_topic}
    if row.name == "{connector offsets}":
        source["offsets.storage.topic"] = names.connector_offsets
    if row.name == "{dead letter queue}":
        sink_config.update({"errors.tolerance": "all", "errors.deadletterqueue.topic.name": names.dead_letter_queue,
                            "errors.deadletterqueue.topic.replication.factor": "1"})
    connector, config = (src, source) if TASKS[row.name] == "source" else (sink, sink_config)
    expected = {"{group.id}-{connector}-": f"{group}-{src}-0", "connect-{connector}": f"connect-{sink}"}.get(
        row.name) or names.expand(row)[0]
    started = time.monotonic()
    try:
        if op == "Delete":  # the sink's group: KIP-875's reset deletes it
            worker.create_connector(connector, config, initial_state="STOPPED")
            with pytest.raises(KafkaAuthorizationError) as raised:
                worker.reset_offsets(connector)
            message = str(raised.value)
        else:
            worker.create_connector(connector, config)
            trace = failed_trace(worker, connector)
            assert trace.startswith("KafkaAuthorizationError: "), trace
            message = trace[len("KafkaAuthorizationError: "):]
    finally:
        worker.delete_connector(connector)
    assert time.monotonic() - started < PROMPT_S
    assert message.startswith(promised(op, row, expected)), message


def test_read_topic_without_read_names_the_acl(secured: SecuredBroker, worker: ConnectRuntime) -> None:
    [(row, op)] = [c for c in CASES if c[0].name == "{read topic}"]
    names = Names(worker.worker_config["group.id"], read_topic=f"{short()}-peek")
    admin_topic(secured, names.read_topic, ("x",))
    grant(secured, names, without=(row, op))
    started = time.monotonic()
    with pytest.raises(KafkaAuthorizationError) as raised:
        worker.read_topic(names.read_topic, "StringConverter", reader="consumer")
    assert time.monotonic() - started < PROMPT_S
    assert str(raised.value).startswith(promised(op, row, names.read_topic)), str(raised.value)


# -- a wrong password ------------------------------------------------------------------------------------------

def test_a_wrong_password_fails_the_start_naming_authentication(secured: SecuredBroker) -> None:
    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as raised:
        ConnectRuntime(secured.listener("SASL_SSL"), f"lp{short()}", worker_config(secured, password="not-it"))
    assert time.monotonic() - started < 30
    message = str(raised.value)
    assert message.startswith("Authentication failed"), message
    assert f"SASL SCRAM-SHA-512 authentication of {PRINCIPAL}" in message and "not-it" not in message


def test_connect_magics_worker_exits_on_a_wrong_password(secured: SecuredBroker, tmp_path: Path) -> None:
    properties = tmp_path / "worker.properties"
    properties.write_text("".join(f"{k}={v}\n" for k, v in worker_config(secured, password="not-it").items()))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "connect_magics.cli", "worker", "--bootstrap-servers",
                           secured.listener("SASL_SSL"), "--group-id", f"lp{short()}", "--rest-port", "0",
                           "--config", str(properties)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert time.monotonic() - started < 30
    assert done.returncode == 2, done.stderr
    assert "error: Authentication failed" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["source", "sink"])
def test_an_acl_revoked_mid_run_fails_the_task_naming_it(secured: SecuredBroker, worker: ConnectRuntime,
                                                         tmp_path: Path, kind: str) -> None:
    """A running task whose ACL is revoked (the source topic's Write, the sink topic's Read) turns FAILED with
    the named error within a bound, never RUNNING while it cannot work."""
    tag = short()
    group = worker.worker_config["group.id"]
    src, sink = f"{tag}-src", f"{tag}-sink"
    names = Names(group, [src], [sink], source_topic=f"{tag}-out", sink_topic=f"{tag}-in")
    grant(secured, names)
    admin_topic(secured, names.sink_topic, ("a", "b"))
    admin_topic(secured, names.source_topic)
    source_file, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("one\ntwo\n")
    if kind == "source":
        connector, topic, operation = src, names.source_topic, "WRITE"
        config = {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    else:
        connector, topic, operation = sink, names.sink_topic, "READ"
        config = {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
                  "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    worker.create_connector(connector, config)
    try:
        if kind == "source":
            wait_until(lambda: secured.admin().list_topics(topic, timeout=10).topics[topic].partitions and
                       _end_offset(secured, topic) >= 2, PROMPT_S, message="the first lines in the topic")
        else:
            wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 2, PROMPT_S,
                       message="the first records in the file")
        secured.revoke(PRINCIPAL, "TOPIC", topic, operation=operation)
        GRANTED.discard(("TOPIC", topic, "LITERAL", operation))
        if kind == "source":
            with source_file.open("a") as f:
                f.write("three\n")
        else:
            producer = Producer({"bootstrap.servers": secured.bootstrap_servers})
            producer.produce(topic, b"c")
            assert producer.flush(30) == 0
        started = time.monotonic()
        trace = failed_trace(worker, connector)
        assert time.monotonic() - started < PROMPT_S
        assert trace.startswith(f"KafkaAuthorizationError: Principal {PRINCIPAL} is not authorized to {operation} "
                                f"topic '{topic}'"), trace
    finally:
        worker.delete_connector(connector)


def _end_offset(broker: SecuredBroker, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"probe-{short()}"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        consumer.close()
