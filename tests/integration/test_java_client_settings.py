"""Java client settings copied from a Kafka Connect deployment run unchanged: a worker's ``consumer.*`` /
``producer.*`` and a connector's ``*.override.*`` with Java names (renamed or dropped for librdkafka), and
``max.poll.records`` bounds a sink task's put() batches as in Kafka Connect."""

from __future__ import annotations

import pytest
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.connectors import verifying

pytestmark = pytest.mark.broker

STRING = "org.apache.kafka.connect.storage.StringConverter"
WORKER = {"offset.flush.interval.ms": "200", "producer.max.request.size": "2097152",
          "producer.buffer.memory": "33554432", "producer.key.serializer":
          "org.apache.kafka.common.serialization.ByteArraySerializer", "consumer.fetch.max.wait.ms": "100",
          "consumer.max.poll.records": "50"}


def test_java_client_settings_run_and_max_poll_records_bounds_each_put(bootstrap: str, unique: str) -> None:
    topic = f"java-{unique}"
    with ConnectRuntime(bootstrap, f"java-{unique}", WORKER) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "600",
                                    "batch.size": "300", "value.converter": STRING, "key.converter": STRING,
                                    "topic.creation.default.partitions": "1",
                                    "topic.creation.default.replication.factor": "1",
                                    "producer.override.max.request.size": "1048576",
                                    "producer.override.interceptor.classes":
                                        "io.confluent.monitoring.clients.interceptor.MonitoringProducerInterceptor"})
        sinks = {"worker": "50", "override": "7"}
        for name, most in sinks.items():
            overrides = {} if name == "worker" else {"consumer.override.max.poll.records": most,
                                                     "consumer.override.receive.buffer.bytes": "-1",
                                                     "consumer.override.value.deserializer": "x"}
            rt.create_connector(f"sink-{name}-{unique}", {"connector.class": "VerifyingSink", "topics": topic,
                                                          "value.converter": STRING, "key.converter": STRING,
                                                          **overrides})
        for name, most in sinks.items():
            sink = f"sink-{name}-{unique}"
            wait_until(lambda s=sink: len(verifying.received(s)) >= 600, 60, message=f"600 records in {sink}")
            assert sorted(r.kafka_offset for r in verifying.received(sink)) == list(range(600))  # each once
            batches = rt.metrics()[f"connector-task-metrics,connector={sink},task=0"]
            assert 0 < batches["batch-size-max"] <= int(most), (name, batches)


def test_a_java_setting_with_a_value_librdkafka_cannot_take_is_refused_naming_it(bootstrap: str, unique: str) -> None:
    with ConnectRuntime(bootstrap, f"javabad-{unique}") as rt:
        with pytest.raises(Exception, match=r"producer\.override\.buffer\.memory.*must be an integer"):
            rt.create_connector("bad", {"connector.class": "SequenceSource", "topic": f"jb-{unique}",
                                        "producer.override.buffer.memory": "lots"})
        assert rt.connectors() == []
