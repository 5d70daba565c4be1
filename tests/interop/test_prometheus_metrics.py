"""``GET /metrics`` beside Prometheus' JMX exporter on a real Kafka Connect worker: the same FileStream source
and sink on both workers, both scrapes parsed with prometheus_client's parser, and the metric names and labels
of each task compared, so that a dashboard built on a Java cluster's scrape reads ours unchanged."""

from __future__ import annotations

import urllib.request
import uuid
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import RestClient, wait_until
from prometheus_client.parser import text_string_to_metric_families

from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.rest import RestServer

#: The groups of a connector's tasks and of the worker's per-connector counts.
TASK_GROUPS = ("kafka_connect_connector_task_metrics_", "kafka_connect_source_task_metrics_",
               "kafka_connect_sink_task_metrics_", "kafka_connect_task_error_metrics_",
               "kafka_connect_connect_worker_metrics_connector_")


def scrape(url: str) -> tuple[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    """The scrape's content type and its samples: (name, labels) -> value."""
    with urllib.request.urlopen(url, timeout=30) as response:
        content_type, text = response.headers["Content-Type"], response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return content_type, samples


def connector_metrics(samples: dict, connector: str) -> dict[tuple[str, tuple[str, ...]], float]:
    """The samples of ``connector``'s tasks and worker counts: (name, label names) -> value."""
    return {(name, tuple(k for k, _ in labels)): value for (name, labels), value in samples.items()
            if name.startswith(TASK_GROUPS) and dict(labels).get("connector") == connector}


def pipeline(client: RestClient, bootstrap: str, prefix: str, tmp: Path) -> tuple[str, str, Path]:
    """A FileStreamSource of 5 lines into a new topic and a FileStreamSink out of it; returns their names and
    the sink's file."""
    src_file, out = tmp / f"{prefix}-in.txt", tmp / f"{prefix}-out.txt"
    src_file.write_text("".join(f"line {i}\n" for i in range(5)))
    topic, source, sink = f"{prefix}-lines", f"{prefix}-src", f"{prefix}-snk"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    for name, config in [(source, {"connector.class": "FileStreamSource", "file": str(src_file), "topic": topic}),
                         (sink, {"connector.class": "FileStreamSink", "file": str(out), "topics": topic})]:
        status, body, _ = client("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    return source, sink, out


def test_metrics_are_named_as_the_jmx_exporter_names_kafka_connects(java_connect: JavaConnectWorker,
                                                                   magics_worker: RestServer, bootstrap: str,
                                                                   tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:6]
    java, ours = RestClient(java_connect.url), RestClient(magics_worker.url)
    sides = {"java": (java, java_connect.metrics_url, pipeline(java, bootstrap, f"java-{unique}", tmp_path)),
             "ours": (ours, magics_worker.url + "/metrics", pipeline(ours, bootstrap, f"ours-{unique}", tmp_path))}
    for _, _, (_, _, out) in sides.values():
        wait_until(lambda out=out: out.exists() and len(out.read_text().splitlines()) == 5, 60,
                   message=f"5 lines through {out.name}")

    def names(side: str, connector: str) -> set[tuple[str, tuple[str, ...]]]:
        _, url, _ = sides[side]
        return set(connector_metrics(scrape(url)[1], connector))

    for index, kind in enumerate(("source", "sink")):
        java_name, our_name = sides["java"][2][index], sides["ours"][2][index]
        # a task's metrics appear with its first records: wait until both scrapes name the same series
        wait_until(lambda j=java_name, o=our_name: names("java", j) and names("java", j) == names("ours", o), 60,
                   message=lambda j=java_name, o=our_name, k=kind: f"the {k} task's metrics named alike: only Java's "
                   f"{sorted(names('java', j) - names('ours', o))}, only ours {sorted(names('ours', o) - names('java', j))}")
        ours_now = connector_metrics(scrape(sides["ours"][1])[1], our_name)
        records = "kafka_connect_source_task_metrics_source_record_write" if kind == "source" else \
            "kafka_connect_sink_task_metrics_sink_record_send"
        assert ours_now[(records, ("connector", "task"))] == 5.0

    content_type, samples = scrape(sides["ours"][1])
    assert content_type.startswith("text/plain; version=")  # Prometheus' text format
    assert samples[("kafka_connect_connect_worker_metrics_connector_running_task_count",
                    (("connector", sides["ours"][2][0]),))] == 1.0
    for client, _, (source, sink, _) in sides.values():
        for name in (source, sink):
            assert client("DELETE", f"/connectors/{name}")[0] == 204


@pytest.mark.parametrize("path", ["/metrics", "/metrics/"])
def test_metrics_need_the_same_authentication_as_the_rest_api(path: str, bootstrap: str) -> None:
    from connect_magics import ConnectRuntime
    from connect_magics.local.broker import HOST, free_port
    from connect_magics.rest.auth import RestAuth

    with ConnectRuntime(bootstrap, f"metrics-auth-{uuid.uuid4().hex[:6]}") as rt, \
            RestServer(rt, HOST, free_port(), auth=RestAuth(users={"admin": "s3cret"})) as server:
        status, _, _ = RestClient(server.url)("GET", path)
        assert status == 401
