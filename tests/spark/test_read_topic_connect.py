"""rt.read_topic on Spark Connect sessions (remote("local[2]")), with and without Spark's Kafka source: the
readers use DataFrame APIs only, and "auto" falls back to the consumer where the session has no Kafka source.
Each in a fresh process (read_topic_connect_host.py), since the test process holds a classic SparkContext."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

HOST = Path(__file__).with_name("read_topic_connect_host.py")


@pytest.fixture(scope="module")
def numbers(bootstrap: str) -> str:
    topic = "connect-numbers"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce(topic, json.dumps({"n": i}).encode(), partition=i % 2)
    assert producer.flush(30) == 0
    return topic


@pytest.mark.slow
@pytest.mark.parametrize("packages", [["kafka"], []], ids=["with-kafka-source", "without"])
def test_read_topic_on_a_spark_connect_session(bootstrap: str, numbers: str, packages: list[str]) -> None:
    done = subprocess.run([sys.executable, str(HOST), bootstrap, numbers, *packages], capture_output=True,
                          text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[0][len("RESULT "):])
    read = {"schema": "struct<n:bigint>", "rows": [[0, 0, 0], [0, 1, 2], [0, 2, 4], [1, 0, 1], [1, 1, 3]]}
    assert result["session"] == "pyspark.sql.connect.session"
    assert result["kafka_source"] == bool(packages)
    assert result["auto"] == read and result["consumer"] == read
    if packages:
        assert result["kafka-source"] == read
    else:
        assert result["kafka-source"].startswith("Invalid value 'kafka-source' for reader: the SparkSession has "
                                                 "no Kafka source (spark-sql-kafka)")
