"""Kafka's Java client settings that librdkafka names otherwise or does without, as a worker.properties or a
connector's ``*.override.*`` written for Kafka Connect has them.

The runtime's clients are librdkafka clients. Most Java client settings have the same name there
(``linger.ms``, ``batch.size``, ``fetch.min.bytes``, ``session.timeout.ms``, ``max.poll.records`` ...); the
others are turned into librdkafka's (``RENAMED``) or, for Java-only machinery with no bearing on the data
(serializers, which Kafka Connect overrides too; interceptors and metric reporters, which are Java classes;
the Java client's own timeouts), dropped with a warning logged once (``DROPPED``). Security settings are
translated by :func:`connect_magics.security.librdkafka_settings`, which :func:`librdkafka_client_settings`
applies after these. docs/configuration.md, "Java client settings", has the table.

>>> librdkafka_client_settings({"max.request.size": "2097152", "buffer.memory": "33554432",
...                             "fetch.max.wait.ms": "200", "linger.ms": "5"})
{'message.max.bytes': '2097152', 'queue.buffering.max.kbytes': '32768', 'fetch.wait.max.ms': '200', 'linger.ms': '5'}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from connect_magics.api.config import ConfigException
from connect_magics.security import librdkafka_settings

__all__ = ["DROPPED", "RENAMED", "java_name", "librdkafka_client_settings"]

log = logging.getLogger(__name__)


def _int_from_minus_one(key: str, value: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigException(key, value, "must be an integer") from None
    if number < -1:
        raise ConfigException(key, value, "must be at least -1")
    return number


def _same(key: str, value: str) -> str:
    _int_from_minus_one(key, value)
    return value


def _socket_buffer(key: str, value: str) -> str:
    """Java's -1 (the operating system's size) is librdkafka's 0."""
    return str(max(0, _int_from_minus_one(key, value)))


def _kilobytes(key: str, value: str) -> str:
    return str(max(1, -(-_int_from_minus_one(key, value) // 1024)))


#: Java name -> (librdkafka name, the value turned into librdkafka's).
RENAMED: dict[str, tuple[str, Callable[[str, str], str]]] = {
    "fetch.max.wait.ms": ("fetch.wait.max.ms", _same),
    "max.request.size": ("message.max.bytes", _same),
    "buffer.memory": ("queue.buffering.max.kbytes", _kilobytes),
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", _socket_buffer),
    "send.buffer.bytes": ("socket.send.buffer.bytes", _socket_buffer),
}
#: Java-only settings with no bearing on the records: dropped (logged once), as why.
DROPPED = {
    "key.serializer": "the runtime's converters serialize (Kafka Connect overrides it too)",
    "value.serializer": "the runtime's converters serialize (Kafka Connect overrides it too)",
    "key.deserializer": "the runtime's converters deserialize (Kafka Connect overrides it too)",
    "value.deserializer": "the runtime's converters deserialize (Kafka Connect overrides it too)",
    "interceptor.classes": "librdkafka clients cannot run Java interceptors",
    "metric.reporters": "librdkafka clients cannot run Java metric reporters",
    "metrics.num.samples": "a Java client metrics setting",
    "metrics.sample.window.ms": "a Java client metrics setting",
    "metrics.recording.level": "a Java client metrics setting",
    "auto.include.jmx.reporter": "a Java client metrics setting",
    "max.block.ms": "librdkafka's produce() never blocks; a full queue is retried by the runtime",
    "default.api.timeout.ms": "the runtime sets each call's timeout",
    "metadata.max.idle.ms": "librdkafka keeps the metadata of the topics in use",
    "exclude.internal.topics": "sink tasks subscribe to their own topics only",
}
_warned: set[str] = set()


def librdkafka_client_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """``settings`` as librdkafka takes them: the Java names of ``RENAMED`` renamed, those of ``DROPPED``
    left out, then the security settings translated. Raises :class:`ConfigException` naming the Java key for
    a value that cannot be turned into librdkafka's."""
    out: dict[str, str] = {}
    for key, value in settings.items():
        if key in RENAMED:
            name, convert = RENAMED[key]
            if name not in settings:  # librdkafka's own name, if given too, wins
                out[name] = convert(key, value)
        elif key in DROPPED:
            if key not in _warned:
                _warned.add(key)
                log.warning("Ignoring the client setting %s: %s (docs/configuration.md, 'Java client settings')",
                            key, DROPPED[key])
        else:
            out[key] = value
    return librdkafka_settings(out)


def java_name(name: str, settings: Mapping[str, str]) -> str:
    """The key of ``settings`` that librdkafka's setting ``name`` came from: its Java name if it was renamed.

    >>> java_name("message.max.bytes", {"max.request.size": "10"}), java_name("linger.ms", {"linger.ms": "5"})
    ('max.request.size', 'linger.ms')
    """
    for java, (renamed, _) in RENAMED.items():
        if renamed == name and java in settings and name not in settings:
            return java
    return name
