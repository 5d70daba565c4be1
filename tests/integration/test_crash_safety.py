"""No record is lost when the process hosting the runtime is killed (SIGKILL, not close)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRuntime

HOST = Path(__file__).with_name("crash_host.py")
TOTAL = 100_000
JSON_PLAIN = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}


def start_host(bootstrap: str, group: str, name: str, config: dict) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, str(HOST), bootstrap, group, name, json.dumps(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


class TopicReader:
    """Reads a topic from the start, keeping every value seen."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "crash-reader",
                                  "enable.auto.commit": False})
        md = self.consumer.list_topics(topic, timeout=10).topics[topic]
        self.consumer.assign([TopicPartition(topic, p, 0) for p in md.partitions])
        self.values: list[bytes] = []

    def read(self) -> int:
        for m in self.consumer.consume(10_000, timeout=0.2):
            if not m.error():
                self.values.append(m.value())
        return len(self.values)

    def close(self) -> None:
        self.consumer.close()


def test_source_loses_nothing_when_killed(bootstrap: str, unique: str) -> None:
    group, topic = f"crash-src-{unique}", f"crash-src-{unique}"
    create_topic(bootstrap, topic, 3)
    config = {"connector.class": "SequenceSource", "topic": topic, "records": str(TOTAL), "tasks.max": "1",
              **JSON_PLAIN}
    reader = TopicReader(bootstrap, topic)
    host = start_host(bootstrap, group, "seq", config)
    try:
        wait_until(lambda: reader.read() >= TOTAL // 5, 120, message="a fifth of the records written")
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait(30)
    killed_at = reader.read()
    assert killed_at < TOTAL, "the source finished before it was killed; the test proves nothing"
    with ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "200"}) as rt:
        assert rt.connectors() == ["seq"]

        def all_seen() -> bool:
            reader.read()
            return len({json.loads(v)["seq"] for v in reader.values}) >= TOTAL
        wait_until(all_seen, 240, message=lambda: f"every sequence number (have {len(reader.values)})")
    seqs = {json.loads(v)["seq"] for v in reader.values}
    reader.close()
    assert seqs == set(range(TOTAL))


def test_sink_loses_nothing_when_killed(bootstrap: str, unique: str, tmp_path: Path) -> None:
    group, topic, out = f"crash-sink-{unique}", f"crash-sink-{unique}", tmp_path / "out.txt"
    create_topic(bootstrap, topic, 3)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})

    def produce(numbers: range) -> None:
        for i in numbers:
            producer.produce(topic, str(i).encode())
            if i % 10_000 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
    produce(range(TOTAL // 2))  # the rest after the kill: the sink cannot have finished before it
    config = {"connector.class": "FileStreamSink", "file": str(out), "topics": topic,
              "value.converter": "org.apache.kafka.connect.storage.StringConverter"}

    def lines() -> list[str]:
        return out.read_text().splitlines() if out.exists() else []
    host = start_host(bootstrap, group, "file-sink", config)
    try:
        wait_until(lambda: len(lines()) >= TOTAL // 5, 120, message="a fifth of the records in the file")
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait(30)
    assert len(set(lines())) < TOTAL, "the sink finished before it was killed; the test proves nothing"
    produce(range(TOTAL // 2, TOTAL))
    with ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "200"}) as rt:
        assert rt.connectors() == ["file-sink"]
        wait_until(lambda: len(set(lines())) >= TOTAL, 240, message="every record in the file")
    # A killed sink may write some records twice (at least once), and a line torn by the kill, but it
    # never loses a record.
    missing = {str(i) for i in range(TOTAL)} - set(lines())
    assert not missing
