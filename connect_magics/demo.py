"""``connect-magics demo``: a whole pipeline on the embedded broker and a local SparkSession.

A FileStreamSource reads a generated file into a topic (created by a KIP-158 rule), a
FileStreamSink writes the topic back to a file, and the demo prints the connectors' statuses,
their offsets, and the topic read into a Spark DataFrame.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from pathlib import Path

from connect_magics.local import EmbeddedBroker
from connect_magics.runtime.runtime import ConnectRuntime

STRING = "org.apache.kafka.connect.storage.StringConverter"


def _say(text: str) -> None:
    print(text, flush=True)


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"Timed out waiting for {what}")
        time.sleep(0.1)


def run_demo(bootstrap_servers: str | None = None, records: int = 1000) -> int:
    """Run the demo; returns a process exit code."""
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("connect_magics.kafka").setLevel(logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="connect-magics-demo-"))
    broker = None
    if bootstrap_servers is None:
        _say("Starting the embedded Apache Kafka broker ...")
        broker = EmbeddedBroker(work / "broker").start()
        bootstrap_servers = broker.bootstrap_servers
    _say(f"bootstrap.servers={bootstrap_servers}")
    try:
        source_file, sink_file = work / "input.txt", work / "output.txt"
        source_file.write_text("".join(f"order {i},{i * 7 % 100}.00 EUR\n" for i in range(records)))
        topic = "demo-orders"
        with ConnectRuntime(bootstrap_servers, "demo", {"offset.flush.interval.ms": "500"}) as rt:
            for name in rt.connectors():
                rt.delete_connector(name)
            rt.create_connector("orders-in", {
                "connector.class": "FileStreamSource", "file": str(source_file), "topic": topic,
                "value.converter": STRING,
                "topic.creation.default.partitions": "3", "topic.creation.default.replication.factor": "1",
                "topic.creation.default.cleanup.policy": "delete"})
            rt.create_connector("orders-out", {"connector.class": "FileStreamSink", "file": str(sink_file),
                                               "topics": topic, "value.converter": STRING})
            _say(f"Copying {records} lines: {source_file} -> topic {topic} -> {sink_file}")
            _wait(lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) >= records, 120,
                  "the sink file")
            _wait(lambda: rt.offset_store.offsets("orders-in"), 30, "the source offsets")
            _say(f"The sink wrote {len(sink_file.read_text().splitlines())} lines.\n")
            for name in ("orders-in", "orders-out"):
                _say(f"Status of {name}:\n{json.dumps(rt.connector_status(name), indent=2)}\n")
            offsets = [{"partition": p, "offset": o} for p, o in rt.offset_store.offsets("orders-in")]
            _say(f"Offsets of orders-in:\n{json.dumps({'offsets': offsets}, indent=2)}\n")
            _say("Reading the topic into a Spark DataFrame (rt.read_topic) ...")
            from connect_magics.spark.session import local_spark_session

            spark = local_spark_session("connect_magics demo")
            df = rt.read_topic(topic, STRING, spark=spark)
            df.groupBy("partition").count().orderBy("partition").show()
            df.select("partition", "offset", "value").orderBy("partition", "offset").show(5, truncate=False)
            spark.stop()
        _say("Demo finished.")
        return 0
    finally:
        if broker is not None:
            broker.stop()
