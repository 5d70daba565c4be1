"""rt.read_topic on a Spark Connect session (remote("local[2]"), with Spark's Kafka source loaded): both
readers work with DataFrame APIs only. A fresh process, since the test process holds a classic SparkContext."""

from __future__ import annotations

import json
import subprocess
import sys

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

SCRIPT = """
import json, os, sys
from connect_magics import ConnectRuntime
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java
from connect_magics.spark.packages import package_confs
from pyspark.sql import SparkSession

os.environ["JAVA_HOME"] = find_java(prefer=SPARK_JAVA_VERSIONS).home
spark = (SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config(map=package_confs(["kafka"])).getOrCreate())
converter = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"}
with ConnectRuntime(sys.argv[1], group_id="read-topic-connect", spark=spark) as rt:
    out = {}
    for reader in ("consumer", "kafka-source"):
        df = rt.read_topic(sys.argv[2], converter, reader=reader)
        out[reader] = {"session": type(spark).__module__, "schema": df.schema["value"].dataType.simpleString(),
                       "rows": [[r["partition"], r["offset"], r["value"]["n"]]
                                for r in df.orderBy("partition", "offset").collect()]}
spark.stop()
print("RESULT " + json.dumps(out))
"""


def test_read_topic_on_a_spark_connect_session(bootstrap: str, unique: str) -> None:
    topic = f"connect-{unique}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce(topic, json.dumps({"n": i}).encode(), partition=i % 2)
    assert producer.flush(30) == 0
    done = subprocess.run([sys.executable, "-c", SCRIPT, bootstrap, topic], capture_output=True, text=True,
                          timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-3000:]
    result = json.loads(lines[0][len("RESULT "):])
    expected = {"session": "pyspark.sql.connect.session", "schema": "struct<n:bigint>",
                "rows": [[0, 0, 0], [0, 1, 2], [0, 2, 4], [1, 0, 1], [1, 1, 3]]}
    assert result == {"consumer": expected, "kafka-source": expected}
