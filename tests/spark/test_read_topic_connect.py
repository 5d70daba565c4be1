"""rt.read_topic on Spark Connect sessions (remote("local[2]")), with and without Spark's Kafka source: the
readers use DataFrame APIs only, and "auto" falls back to the consumer where the session has no Kafka source.
Each in a fresh process, since the test process holds a classic SparkContext."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

SCRIPT = """
import json, os, sys
from connect_magics import ConnectRuntime
from connect_magics.errors import BadRequestError
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java
from connect_magics.spark.packages import package_confs
from connect_magics.spark.topic_frame import has_kafka_source
from pyspark.sql import SparkSession

os.environ["JAVA_HOME"] = find_java(prefer=SPARK_JAVA_VERSIONS).home
spark = (SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config(map=package_confs(sys.argv[3:])).getOrCreate())
converter = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"}
out = {"session": type(spark).__module__, "kafka_source": has_kafka_source(spark)}
with ConnectRuntime(sys.argv[1], group_id="read-topic-connect", spark=spark) as rt:
    for reader in ("auto", "consumer", "kafka-source"):
        try:
            df = rt.read_topic(sys.argv[2], converter, reader=reader)
        except BadRequestError as e:
            out[reader] = str(e)
            continue
        out[reader] = {"schema": df.schema["value"].dataType.simpleString(),
                       "rows": [[r["partition"], r["offset"], r["value"]["n"]]
                                for r in df.orderBy("partition", "offset").collect()]}
spark.stop()
print("RESULT " + json.dumps(out))
"""


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


@pytest.mark.parametrize("packages", [["kafka"], []], ids=["with-kafka-source", "without"])
def test_read_topic_on_a_spark_connect_session(bootstrap: str, numbers: str, packages: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, bootstrap, numbers, *packages], capture_output=True,
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
