"""Checking Kafka client settings before any client is built: the worker's client settings and a
connector's ``producer.override.*``, ``consumer.override.*`` and ``admin.override.*``.

Clients are librdkafka ones, so a setting librdkafka does not know or whose value it refuses would
only fail later, when a task or the runtime builds its client, with an error that names neither the
setting nor the cause (``bootstrap.servers=""`` even lets a task start and fail with "Failed to get
metadata: Local: Broker transport failure"). These checks answer at validation time instead, each as
``(setting, reason)``.

>>> client_setting_errors({"bootstrap.servers": "", "linger.ms": "abc"}, "producer")
[('bootstrap.servers', 'must list at least one broker as host:port'), ('linger.ms', \
'Invalid value for configuration property "queue.buffering.max.ms"')]
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from connect_magics.api.config import ConfigException
from connect_magics.java_client_settings import java_name, librdkafka_client_settings
from connect_magics.storage.client_logs import client_logger

#: Settings left to the client itself: checking them builds TLS contexts, runs ``kinit`` or fetches
#: OAuth tokens, which a validation must not do.
_UNPROBED_PREFIXES = ("bootstrap.servers", "security.protocol", "sasl.", "ssl.", "group.id")
_SERVER = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[^\s:/\[\],]+)(?::(?P<port>[0-9]+))?")
_CLIENTS = {"producer": Producer, "consumer": Consumer, "admin": AdminClient}
#: The probe clients' own logs (such as "a producer property ignored by a consumer") are not the user's concern.
_PROBE_LOGGER = client_logger("settings-check")
_PROBE_LOGGER.setLevel(logging.ERROR)


def bootstrap_servers_error(value: str) -> str | None:
    """Why ``value`` is not a usable ``bootstrap.servers`` list, or None.

    >>> bootstrap_servers_error("127.0.0.1:9092,[::1]:9093") is None
    True
    >>> bootstrap_servers_error("a:9092,,b:9092")
    'entry 2 of "a:9092,,b:9092" is empty'
    """
    if not value.strip():
        return "must list at least one broker as host:port"
    for index, entry in enumerate(value.split(","), start=1):
        entry = entry.strip()
        if not entry:
            return f'entry {index} of "{value}" is empty'
        match = _SERVER.fullmatch(entry)
        if match is None:
            return f'"{entry}" is not a broker address of the form host:port'
        port = match.group("port")
        if port is not None and not 0 < int(port) < 65536:
            return f'the port of "{entry}" must be between 1 and 65535'
    return None


def client_setting_errors(settings: Mapping[str, str], kind: str) -> list[tuple[str, str]]:
    """``(setting, reason)`` for every setting of a ``kind`` (``producer``, ``consumer`` or ``admin``) client
    that cannot work: an unusable ``bootstrap.servers`` or ``group.id``, then the first setting
    librdkafka refuses (an unknown name, such as a Java client setting librdkafka does not have, or a
    value of the wrong type or out of range). Builds a client with no broker to connect to, so nothing
    goes over the network."""
    errors: list[tuple[str, str]] = []
    given = settings
    try:
        settings = librdkafka_client_settings(settings)
    except ConfigException as e:
        return [(e.name, e.reason or str(e))]
    servers = settings.get("bootstrap.servers")
    if servers is not None and (problem := bootstrap_servers_error(servers)):
        errors.append(("bootstrap.servers", problem))
    group = settings.get("group.id")
    if kind == "consumer" and group is not None and not group.strip():
        errors.append(("group.id", "may not be empty"))
    probe = {k: v for k, v in settings.items() if not k.startswith(_UNPROBED_PREFIXES)}
    if not probe:
        return errors
    conf: dict[str, object] = {**probe, "logger": _PROBE_LOGGER}
    if kind == "consumer":
        conf["group.id"] = "connect-magics-settings-check"
    try:
        client = _CLIENTS[kind](conf)
    except (KafkaException, ValueError, TypeError) as e:
        reason = (e.args[0].str() if isinstance(e, KafkaException) else str(e)).strip()
        if reason.startswith("No such configuration property"):
            reason += " (the runtime's Kafka clients are librdkafka clients, whose settings differ from the Java clients')"
        name = _named_setting(reason, probe, kind)
        java = java_name(name, given)
        if java != name:
            name, reason = java, f"{reason} ({java} is librdkafka's {name})"
        errors.append((name, reason))
    else:
        if kind == "consumer":
            client.close()
    return errors


def _named_setting(reason: str, probe: Mapping[str, str], kind: str) -> str:
    """The setting a librdkafka error is about: the one it quotes, else (for an alias such as ``linger.ms``,
    quoted as ``queue.buffering.max.ms``) the first one librdkafka refuses when given alone."""
    for key in probe:
        if f'"{key}"' in reason:
            return key
    if len(probe) == 1:
        return next(iter(probe))
    for key, value in probe.items():
        if client_setting_errors({key: value}, kind):
            return key
    return next(iter(probe))


__all__ = ["bootstrap_servers_error", "client_setting_errors"]
