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


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_connector_task_and_worker_metrics(bootstrap: str, unique: str, executor: str) -> None:
    """connector-task-metrics' measured part (batch sizes, commits, pause and running ratios) and
    connect-worker-metrics, from task threads and from task processes alike."""
    topic, sink = f"ctm-{unique}-{executor}", f"ctm-sink-{unique}"
    with ConnectRuntime(bootstrap, f"ctm-{unique}-{executor}", {"offset.flush.interval.ms": "200"},
                        executor=executor) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "300",
                                    "batch.size": "100", "value.converter": STRING, "key.converter": STRING,
                                    "topic.creation.default.partitions": "1",
                                    "topic.creation.default.replication.factor": "1"})
        rt.create_connector(sink, {"connector.class": "VerifyingSink", "topics": topic,
                                   "value.converter": STRING, "key.converter": STRING})

        def group(kind: str, name: str) -> dict:
            return rt.metrics().get(f"{kind},connector={name},task=0", {})
        wait_until(lambda: group("sink-task-metrics", sink).get("sink-record-send-total") == 300, 60,
                   message="300 records put")  # a task process's sink keeps what it received to itself
        wait_until(lambda: group("connector-task-metrics", "gen").get("offset-commit-success-percentage") == 1.0
                   and group("connector-task-metrics", sink).get("offset-commit-success-percentage") == 1.0
                   and group("sink-task-metrics", sink).get("sink-record-active-count") == 0, 30,
                   message=lambda: f"offset commits measured: {group('connector-task-metrics', 'gen')}, "
                   f"{group('connector-task-metrics', sink)}")
        source = group("connector-task-metrics", "gen")
        assert source["batch-size-max"] == 100 and 0 < source["batch-size-avg"] <= 100
        assert source["offset-commit-max-time-ms"] >= source["offset-commit-avg-time-ms"] > 0
        assert source["running-ratio"] == 1.0 and source["pause-ratio"] == 0.0
        assert source["task-class"].endswith("SequenceSourceTask")  # KIP-891's class metrics share the group
        assert group("sink-task-metrics", sink)["sink-record-active-count-max"] >= 1
        worker = rt.metrics()["connect-worker-metrics"]
        assert (worker["connector-count"], worker["task-count"]) == (2, 2)
        assert worker["task-startup-success-total"] == 2 and worker["connector-startup-failure-total"] == 0
        assert rt.metrics()["connect-worker-metrics,connector=gen"]["connector-running-task-count"] == 1

        rt.pause_connector(sink)
        wait_until(lambda: group("connector-task-metrics", sink).get("pause-ratio", 0) > 0, 30,
                   message="the paused sink's pause ratio")
        wait_until(lambda: rt.metrics()[f"connect-worker-metrics,connector={sink}"]["connector-paused-task-count"]
                   == 1, 30, message="a paused task counted")
