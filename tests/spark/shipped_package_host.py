"""Runs a FileStreamSource with ``executor="spark"`` on a session whose executors' Python can import
connect_magics only from a zip the session ships (``connect_magics.spark.ship_to_executors``), in a process of
its own (one SparkContext per process). SESSION: ``classic``, built as a platform builds it, or ``connect``, a
Spark Connect session on a local Spark Connect server.

Usage: python shipped_package_host.py SESSION BOOTSTRAP GROUP SOURCE_FILE TOPIC COUNT WORKDIR; returns once ``TOPIC``
holds COUNT records, and prints ``RESULT {json}``: the running task's status, where each executor Python process
imported connect_magics from (``{pid: origin}``), the zips shipped and the session's files (classic only)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from executor_python import ONLY_FROM_A_ZIP, ORIGINS, executor_python, platform_session  # tests/spark
from spark_connect_host import local_connect_session

from connect_magics import ConnectRuntime
from connect_magics.spark import ship_to_executors

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import wait_until  # noqa: E402  (tests/helpers.py)


def main(session: str, bootstrap: str, group: str, source: str, topic: str, count: str, workdir: str) -> int:
    python = executor_python(Path(workdir), ONLY_FROM_A_ZIP)
    if session == "connect":
        os.environ["PYSPARK_PYTHON"] = str(python)  # the local Spark Connect server's executors' Python
        spark = local_connect_session()
    else:
        spark = platform_session(python)
    shipped = ship_to_executors(spark)
    assert ship_to_executors(spark) == shipped  # a second call adds nothing (the session's files below)
    ends = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{group}-ends"})
    with ConnectRuntime(bootstrap, group, spark=spark, executor="spark") as rt:
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": source, "topic": topic,
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        wait_until(lambda: ends.get_watermark_offsets(TopicPartition(topic, 0), timeout=5)[1] >= int(count), 120,
                   message=lambda: f"{count} records in {topic} (task: {rt.connector_status('src')['tasks']})")
        task = rt.connector_status("src")["tasks"][0]
    ends.close()
    origins = dict(line.split(" ", 1) for line in (Path(workdir) / ORIGINS).read_text().splitlines())
    print("RESULT", json.dumps({"task": task, "origins": origins, "shipped": [str(p) for p in shipped],
                                "files": list(spark.sparkContext.listFiles) if session == "classic" else None}),
          flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
