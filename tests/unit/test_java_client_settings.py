"""Kafka's Java client settings that librdkafka names otherwise or does without: renamed, dropped (logged once),
bad values refused naming the Java key; security settings still translated after them."""

import logging

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.java_client_settings import DROPPED, RENAMED, librdkafka_client_settings
from connect_magics.runtime.config.client_settings import client_setting_errors


def test_java_names_become_librdkafka_names_with_librdkafka_values() -> None:
    assert librdkafka_client_settings({
        "fetch.max.wait.ms": "250", "max.request.size": "2097152", "buffer.memory": "1000",
        "receive.buffer.bytes": "-1", "send.buffer.bytes": "131072", "linger.ms": "5",
    }) == {"fetch.wait.max.ms": "250", "message.max.bytes": "2097152", "queue.buffering.max.kbytes": "1",
           "socket.receive.buffer.bytes": "0", "socket.send.buffer.bytes": "131072", "linger.ms": "5"}


def test_librdkafka_s_own_name_given_too_wins() -> None:
    assert librdkafka_client_settings({"message.max.bytes": "1000000", "max.request.size": "2097152"}) == \
        {"message.max.bytes": "1000000"}


def test_java_only_settings_are_dropped_and_warned_of_at_most_once(caplog: pytest.LogCaptureFixture) -> None:
    settings = {"key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
                "interceptor.classes": "io.confluent.monitoring.clients.interceptor.MonitoringProducerInterceptor",
                "acks": "all"}
    with caplog.at_level(logging.WARNING, logger="connect_magics.java_client_settings"):
        assert librdkafka_client_settings(settings) == {"acks": "all"}
        assert librdkafka_client_settings(settings) == {"acks": "all"}
    warned = [r.getMessage() for r in caplog.records]
    assert sum("interceptor.classes" in m for m in warned) <= 1 and sum("key.serializer" in m for m in warned) <= 1


@pytest.mark.parametrize("key, value, reason", [
    ("buffer.memory", "lots", "must be an integer"),
    ("max.request.size", "1.5", "must be an integer"),
    ("send.buffer.bytes", "-2", "must be at least -1"),
])
def test_a_value_that_cannot_be_turned_into_librdkafka_s_is_refused_naming_the_java_key(key, value, reason) -> None:
    with pytest.raises(ConfigException) as e:
        librdkafka_client_settings({key: value})
    assert (e.value.name, e.value.reason) == (key, reason)
    assert client_setting_errors({key: value}, "producer") == [(key, reason)]


def test_security_settings_are_still_translated() -> None:
    out = librdkafka_client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                                      "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                                                          'required username="u" password="p";',
                                      "max.request.size": "2097152"})
    assert out["sasl.username"] == "u" and out["message.max.bytes"] == "2097152"


def test_every_renamed_and_kept_setting_is_one_librdkafka_takes() -> None:
    """What the table gives is accepted by a real librdkafka client (no broker needed)."""
    java = {"fetch.max.wait.ms": "250", "max.request.size": "2097152", "buffer.memory": "33554432",
            "receive.buffer.bytes": "-1", "send.buffer.bytes": "-1", "max.poll.records": "1000"}
    assert set(java) - {"max.poll.records"} == set(RENAMED)
    producer = {k: v for k, v in java.items() if k not in ("fetch.max.wait.ms", "max.poll.records")}
    consumer = {k: v for k, v in java.items() if k not in ("max.request.size", "buffer.memory")}
    assert client_setting_errors({**producer, **dict.fromkeys(DROPPED, "x")}, "producer") == []
    assert client_setting_errors({**consumer, **dict.fromkeys(DROPPED, "x")}, "consumer") == []
