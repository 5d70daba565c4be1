"""source-task-metrics and sink-task-metrics in rt.metrics() after a real pipeline."""

from __future__ import annotations

import pytest
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.connectors import verifying

pytestmark = pytest.mark.broker

STRING = "org.apache.kafka.connect.storage.StringConverter"


def test_task_metrics_count_every_record_of_a_pipeline(bootstrap: str, unique: str) -> None:
    topic, sink = f"metrics-{unique}", f"metrics-sink-{unique}"
    with ConnectRuntime(bootstrap, f"metrics-{unique}", {"offset.flush.interval.ms": "200"}) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "500",
                                    "value.converter": STRING, "key.converter": STRING,
                                    "topic.creation.default.partitions": "2",
                                    "topic.creation.default.replication.factor": "1"})
        rt.create_connector(sink, {"connector.class": "VerifyingSink", "topics": topic,
                                   "value.converter": STRING, "key.converter": STRING})
        wait_until(lambda: len(verifying.received(sink)) >= 500, 60, message="500 records in the sink")

        def sink_metrics() -> dict:
            return rt.metrics().get(f"sink-task-metrics,connector={sink},task=0", {})
        wait_until(lambda: sink_metrics().get("offset-commit-completion-total", 0) >= 1, 30,
                   message="an offset commit counted")
        source = rt.metrics()["source-task-metrics,connector=gen,task=0"]
        assert source["source-record-poll-total"] == 500 == source["source-record-write-total"]
        assert source["source-record-write-rate"] > 0 and source["poll-batch-max-time-ms"] >= 0
        wait_until(lambda: rt.metrics()["source-task-metrics,connector=gen,task=0"]["source-record-active-count"] == 0,
                   30, message="every record acknowledged")
        metrics = sink_metrics()
        assert metrics["sink-record-read-total"] == 500 == metrics["sink-record-send-total"]
        assert metrics["sink-record-read-rate"] > 0 and metrics["partition-count"] == 2
        assert metrics["put-batch-max-time-ms"] >= metrics["put-batch-avg-time-ms"] >= 0
        rt.delete_connector(sink)
        wait_until(lambda: not any(g.startswith(f"sink-task-metrics,connector={sink},") for g in rt.metrics()), 30,
                   message="the deleted connector's metrics gone")
