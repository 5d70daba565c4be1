"""The embedded broker against itself: admin, produce/consume, groups, restart, two clusters, errors."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType
from helpers import wait_until

import connect_magics.local.broker as broker_module
from connect_magics.local import (
    BrokerError,
    EmbeddedBroker,
    JavaNotFoundError,
    KafkaDownloadError,
    find_java,
    kafka_classpath,
)
from connect_magics.storage.group_offsets import list_group_offsets

pytestmark = pytest.mark.broker


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for v in values:
        p.produce(topic, v, key=v)
    assert p.flush(30) == 0


def consume_all(bootstrap: str, topic: str, count: int, group: str | None = None) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group or f"read-{topic}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got: list[bytes] = []
    try:
        def more() -> bool:
            for m in c.consume(500, timeout=0.5):
                assert m.error() is None, m.error()
                got.append(m.value())
            return len(got) >= count
        wait_until(more, 60, message=lambda: f"{count} records from {topic}, got {len(got)}")
        if group:
            c.commit(asynchronous=False)
    finally:
        c.close()
    return got


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(30)


def test_topic_with_configs_reads_back(bootstrap: str, unique: str) -> None:
    topic = f"cfg-{unique}"
    create_topic(bootstrap, topic, 3, {"cleanup.policy": "compact", "retention.ms": "12345",
                                       "min.insync.replicas": "1"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ResourceType.TOPIC, topic)
    configs = admin.describe_configs([res])[res].result(30)
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].value == "12345"
    assert configs["min.insync.replicas"].value == "1"
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 3


def test_produce_and_consume(bootstrap: str, unique: str) -> None:
    topic = f"pc-{unique}"
    create_topic(bootstrap, topic, 2)
    values = [f"v{i}".encode() for i in range(500)]
    produce(bootstrap, topic, values)
    assert sorted(consume_all(bootstrap, topic, 500)) == sorted(values)


def test_consumer_group_offsets_commit_alter_list_delete(bootstrap: str, unique: str) -> None:
    topic, group = f"grp-{unique}", f"g-{unique}"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, [str(i).encode() for i in range(20)])
    consume_all(bootstrap, topic, 20, group=group)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def listed() -> dict[int, int]:
        # Not AdminClient.list_consumer_group_offsets: it can crash librdkafka (see storage/group_offsets.py).
        return {p: o for (_t, p), o in list_group_offsets({"bootstrap.servers": bootstrap}, group).items()}

    assert sum(listed().values()) == 20
    altered = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1), TopicPartition(topic, 1, 2)])
    admin.alter_consumer_group_offsets([altered])[group].result(30)
    assert listed() == {0: 1, 1: 2}
    admin.delete_consumer_groups([group])[group].result(30)
    assert listed() == {}


def test_restart_on_same_data_dir_keeps_data(tmp_path, unique: str) -> None:
    b = EmbeddedBroker(tmp_path / "data")
    try:
        b.start()
        port = b.port
        topic = f"keep-{unique}"
        create_topic(b.bootstrap_servers, topic)
        produce(b.bootstrap_servers, topic, [b"a", b"b", b"c"])
        b.stop()
        assert not b.is_running()
        b2 = EmbeddedBroker(tmp_path / "data")  # a new handle finds the same port and data
        assert b2.port == port
        b2.start()
        assert sorted(consume_all(b2.bootstrap_servers, topic, 3)) == [b"a", b"b", b"c"]
        b2.stop()
    finally:
        b.stop()


def test_a_restart_refuses_a_data_directory_that_vanished(tmp_path) -> None:
    """A broker whose data directory was removed while it was stopped does not come back as a new, empty cluster
    (a fault matrix run lost its topic that way when a clean-up removed its directory during the outage)."""
    b = EmbeddedBroker(tmp_path / "data")
    try:
        b.start()
        b.stop()
        shutil.rmtree(tmp_path / "data")
        with pytest.raises(BrokerError, match="vanished or was emptied"):
            b.start()
        assert not b.is_running()
        assert not (tmp_path / "data" / "kafka-logs").exists()
    finally:
        b.stop()


def test_a_temporary_data_directory_goes_when_the_process_exits() -> None:
    """A broker given no data directory gets a temporary one; at exit the broker stops and it is removed
    (a bench's million-record topics would otherwise stay in /tmp)."""
    code = ("from connect_magics.local import EmbeddedBroker\n"
            "b = EmbeddedBroker().start()\n"
            "print(b.data_dir, flush=True)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, check=True)
    data_dir = Path(out.stdout.strip().splitlines()[-1])
    assert data_dir.name.startswith("connect-magics-broker-")
    assert not data_dir.exists()


def test_two_brokers_at_once(broker: EmbeddedBroker, second_broker: EmbeddedBroker, unique: str) -> None:
    assert broker.bootstrap_servers != second_broker.bootstrap_servers
    topic = f"two-{unique}"
    create_topic(second_broker.bootstrap_servers, topic)
    produce(second_broker.bootstrap_servers, topic, [b"x"])
    assert consume_all(second_broker.bootstrap_servers, topic, 1) == [b"x"]
    assert topic not in AdminClient({"bootstrap.servers": broker.bootstrap_servers}).list_topics(
        timeout=10).topics


def test_error_port_taken(tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(BrokerError, match=f"Port {port} on 127.0.0.1 .* already in use"):
            EmbeddedBroker(tmp_path, port=port).start()


def listening_on(port: int) -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


@pytest.mark.parametrize("taken", ["before the check", "between the check and the bind"])
def test_a_first_start_whose_picked_ports_were_taken_picks_others(tmp_path, monkeypatch, taken) -> None:
    # Ports picked by free_port() are free only when asked: under pytest-xdist another worker's broker took one
    # before the JVM bound it ("BindException: Address already in use"), and the test errored.
    b = EmbeddedBroker(tmp_path)
    picked = (b.port, b.controller_port)
    if taken != "before the check":
        monkeypatch.setattr(broker_module, "port_in_use", lambda port: False)
    with listening_on(b.controller_port):
        b.start()
    try:
        assert b.controller_port != picked[1] and b.is_running()
        produce(b.bootstrap_servers, "after-the-new-ports", [b"x"])
        assert consume_all(b.bootstrap_servers, "after-the-new-ports", 1) == [b"x"]
    finally:
        b.stop()
    # A restart keeps its ports: clients know the broker by them.
    with listening_on(b.controller_port), pytest.raises(BrokerError, match="already in use"):
        monkeypatch.undo()
        b.start()


def test_error_broker_dies_during_start(tmp_path) -> None:
    b = EmbeddedBroker(tmp_path)
    # A data directory that claims to belong to another node: formatting is skipped, the broker refuses it.
    (tmp_path / "kafka-logs").mkdir()
    (tmp_path / "kafka-logs" / "meta.properties").write_text("version=1\nnode.id=7\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n")
    with pytest.raises(BrokerError, match=r"(?s)exited with code .* while starting.*Tail of its log"):
        b.start()
    assert not b.is_running()


def _fake_java(tmp_path, version_text: str) -> str:
    path = tmp_path / "java"
    path.write_text(f"#!/bin/sh\necho '{version_text}' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_error_java_too_old(tmp_path) -> None:
    old = _fake_java(tmp_path, 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(JavaNotFoundError, match=r"Java 17 or newer is needed, but .* is Java 11"):
        find_java(old)
    with pytest.raises(JavaNotFoundError, match="Java 17 or newer is needed"):
        EmbeddedBroker(tmp_path / "d", java=old).start()


def test_error_no_java(tmp_path) -> None:
    with pytest.raises(JavaNotFoundError, match="does not exist"):
        find_java(str(tmp_path / "no-such-java"))
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "JAVA_HOME": str(tmp_path / "nothing")}
    code = ("import connect_magics.local.java as j; j._candidates = lambda: []\n"
            "try:\n    j.find_java()\nexcept j.JavaNotFoundError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "No Java found" in out.stdout and "install a JDK 17 or 21" in out.stdout


def test_error_download_failed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    with pytest.raises(KafkaDownloadError, match=r"Failed to download org.apache.kafka:kafka_2.13:0.0.0-nope "
                                                 r"from Maven Central"):
        kafka_classpath("0.0.0-nope", progress=lambda line: None)
    assert not (tmp_path / "kafka-0.0.0-nope" / "lib" / ".complete").exists()


def test_kafka_home_is_used(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(KafkaDownloadError, match="has no libs/ folder"):
        kafka_classpath()
    (tmp_path / "libs").mkdir()
    assert kafka_classpath() == os.path.join(str(tmp_path), "libs", "*")


def test_cli_start_status_stop(tmp_path) -> None:
    cli = [sys.executable, "-m", "connect_magics.cli", "broker"]
    data = ["--data-dir", str(tmp_path)]
    try:
        out = subprocess.run([*cli, "start", *data], capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr
        line = out.stdout.strip().splitlines()[0]
        assert line.startswith("bootstrap.servers=127.0.0.1:")
        status = subprocess.run([*cli, "status", *data], capture_output=True, text=True, timeout=60)
        assert status.returncode == 0 and status.stdout.startswith("running")
        bootstrap = line.split("=", 1)[1]
        assert AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).brokers
    finally:
        stop = subprocess.run([*cli, "stop", *data], capture_output=True, text=True, timeout=120)
    assert stop.stdout.strip() == "stopped"
    status = subprocess.run([*cli, "status", *data], capture_output=True, text=True, timeout=60)
    assert status.returncode == 1 and status.stdout.startswith("not running")
