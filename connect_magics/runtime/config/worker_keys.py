"""The worker properties the runtime knows, and its REST listener settings (Kafka Connect 4's names).

:func:`check_worker_keys` runs once when a worker starts (``connect-magics worker``, ``ConnectRuntime``): it
logs the keys nobody reads, in the words of Kafka's ``AbstractConfig.logUnused``, the removed
``rest.host.name`` / ``rest.port`` with their replacement, and refuses unusable ``listeners`` and
``rest.advertised.*`` values before anything touches Kafka. Each message is logged once per process.

>>> unknown_worker_keys({"offset.flush.interval.ms": "1", "producer.acks": "all", "ofset.flush.interval.ms": "1"})
['ofset.flush.interval.ms']
>>> parse_listeners("http://:8083, HTTPS://[::1]:0")
[Listener(scheme='http', host='', port=8083), Listener(scheme='https', host='::1', port=0)]
>>> advertised_host_port({"listeners": "http://10.0.0.7:8083", "rest.advertised.port": "18083"})
'10.0.0.7:18083'
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from connect_magics.api.config import ConfigException

log = logging.getLogger(__name__)

#: Client settings that apply to every client when set at the worker's top level.
CLIENT_KEYS_PREFIXES = ("bootstrap.servers", "security.protocol", "sasl.", "ssl.", "client.dns.lookup",
                        "socket.", "reconnect.backoff", "retry.backoff", "metadata.max.age.ms", "enable.sasl.",
                        "enable.ssl.")

LISTENERS = "listeners"
HTTPS_PREFIX = "listeners.https."
ADVERTISED_HOST = "rest.advertised.host.name"
ADVERTISED_PORT = "rest.advertised.port"
ADVERTISED_LISTENER = "rest.advertised.listener"
#: Kafka Connect 3's REST settings, removed in 4 (KAFKA-12482): still honoured, with a warning.
REST_HOST, REST_PORT = "rest.host.name", "rest.port"
#: Where the REST API listens when nothing says otherwise: Kafka's port, on loopback (Kafka: all interfaces).
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8083
#: Host parts that mean every interface: the worker is then named after this machine.
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})

#: Everything Kafka Connect's DistributedConfig defines (WorkerConfig, RestServerConfig, the client settings it
#: takes for the group member), ``ssl.*`` and ``sasl.*`` aside (they are prefixes below).
KAFKA_WORKER_KEYS = frozenset({
    # WorkerConfig
    "bootstrap.servers", "client.dns.lookup", "key.converter", "value.converter", "header.converter",
    "task.shutdown.graceful.timeout.ms", "offset.flush.interval.ms", "offset.flush.timeout.ms", "plugin.path",
    "plugin.discovery", "metrics.sample.window.ms", "metrics.num.samples", "metrics.recording.level",
    "metric.reporters", "auto.include.jmx.reporter", "config.providers", "connector.client.config.override.policy",
    "topic.creation.enable", "topic.tracking.enable", "topic.tracking.allow.reset",
    # RestServerConfig (the public server's)
    LISTENERS, ADVERTISED_HOST, ADVERTISED_PORT, ADVERTISED_LISTENER, "access.control.allow.origin",
    "access.control.allow.methods", "admin.listeners", "rest.extension.classes", "response.http.headers.config",
    # DistributedConfig
    "group.id", "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms", "exactly.once.source.support",
    "metadata.max.age.ms", "client.id", "send.buffer.bytes", "receive.buffer.bytes", "reconnect.backoff.ms",
    "reconnect.backoff.max.ms", "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
    "retry.backoff.ms", "retry.backoff.max.ms", "request.timeout.ms", "connections.max.idle.ms",
    "security.protocol", "worker.sync.timeout.ms", "worker.unsync.backoff.ms", "offset.storage.topic",
    "offset.storage.partitions", "offset.storage.replication.factor", "config.storage.topic",
    "config.storage.replication.factor", "status.storage.topic", "status.storage.partitions",
    "status.storage.replication.factor", "connect.protocol", "scheduled.rebalance.max.delay.ms",
    "inter.worker.key.ttl.ms", "inter.worker.key.generation.algorithm", "inter.worker.key.size",
    "inter.worker.signature.algorithm", "inter.worker.verification.algorithms", "metadata.recovery.strategy",
    "metadata.recovery.rebootstrap.trigger.ms",
    # Kafka Connect 3's, removed in 4: honoured (see DEPRECATED)
    REST_HOST, REST_PORT,
})
#: Ours (docs/configuration.md).
OUR_WORKER_KEYS = frozenset({
    "task.control.storage.topic", "leader.request.timeout.ms", "status.storage.request.timeout.ms",
    "task.assignment",
})
#: Whole families: the clients' own settings (with Kafka's Java names or librdkafka's; the top-level ones the
#: worker passes to every client), the converters' settings, config providers' (KIP-297), the status write
#: retries (KIP-1278).
KNOWN_PREFIXES = ("producer.", "consumer.", "admin.", "ssl.", "sasl.", "config.providers.", "key.converter.",
                  "value.converter.", "header.converter.", "status.storage.retry.", *CLIENT_KEYS_PREFIXES)
#: The settings of an https listener (after ``listeners.https.``, or ``admin.listeners.https.``): Kafka's list
#: in its Connect docs ("REST API") plus its PEM keys.
HTTPS_KEYS = frozenset({
    "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.key.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type",
    "ssl.truststore.certificates", "ssl.enabled.protocols", "ssl.provider", "ssl.protocol", "ssl.cipher.suites",
    "ssl.keymanager.algorithm", "ssl.secure.random.implementation", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.client.auth", "ssl.engine.factory.class",
})
#: Kafka Connect's REST settings this server does not apply (docs/rest.md, "Listeners").
NOT_APPLIED = ("access.control.allow.origin", "access.control.allow.methods", "admin.listeners",
               "rest.extension.classes", "response.http.headers.config")

_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")  # Kafka's RestServer.LISTENER_PATTERN
_logged: set[str] = set()
_logged_lock = threading.Lock()


@dataclass(frozen=True)
class Listener:
    """One entry of ``listeners``: ``scheme`` http or https, ``host`` ("" for every interface), ``port``
    (0: a free one)."""

    scheme: str
    host: str
    port: int

    @property
    def all_interfaces(self) -> bool:
        return self.host in WILDCARD_HOSTS

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def is_known(key: str) -> bool:
    """Whether the worker (or Kafka Connect's) reads ``key``."""
    if key in KAFKA_WORKER_KEYS or key in OUR_WORKER_KEYS:
        return True
    for prefix in (HTTPS_PREFIX, "admin." + HTTPS_PREFIX):
        if key.startswith(prefix):
            return key[len(prefix):] in HTTPS_KEYS
    return key.startswith(KNOWN_PREFIXES)


def unknown_worker_keys(props: Iterable[str]) -> list[str]:
    """The keys of ``props`` no part of the worker reads, sorted."""
    return sorted(k for k in props if not is_known(k))


def check_worker_keys(props: Mapping[str, object]) -> None:
    """At a worker's start: log the unknown keys, the deprecated REST keys and the Kafka Connect REST settings
    that have no effect here (each message once per process); raise
    :class:`~connect_magics.api.config.ConfigException` for unusable listener settings."""
    keys = [str(k) for k in props]
    unknown = unknown_worker_keys(keys)
    if unknown:
        _log_once(logging.WARNING, f"These configurations '[{', '.join(unknown)}]' were supplied but are not used yet.")
    deprecated = [k for k in (REST_HOST, REST_PORT) if k in props]
    if deprecated:
        _log_once(logging.WARNING, deprecation_message({k: str(v) for k, v in props.items()}))
    ignored = [k for k in keys if k in NOT_APPLIED or k.startswith("admin." + HTTPS_PREFIX)]
    if ignored:
        _log_once(logging.WARNING, f"These Kafka Connect configurations '[{', '.join(sorted(ignored))}]' have no "
                                   "effect on connect-magics' REST server (docs/rest.md, 'Listeners').")
    strings = {k: str(v) for k, v in props.items()}
    advertised_host_port(strings)  # validates listeners and rest.advertised.*


def deprecation_message(props: Mapping[str, str]) -> str:
    """The warning for ``rest.host.name`` / ``rest.port``, naming what replaces them."""
    keys = [k for k in (REST_HOST, REST_PORT) if k in props]
    given, plural = " and ".join(keys), len(keys) > 1
    if props.get(LISTENERS, "").strip():
        return (f"{given} {'were' if plural else 'was'} removed in Kafka Connect 4 and {'are' if plural else 'is'} "
                f"ignored because {LISTENERS} is set: remove {'them' if plural else 'it'}")
    return (f"{given} {'were' if plural else 'was'} removed in Kafka Connect 4 (still honoured here, deprecated): "
            f"use {LISTENERS}={_deprecated_listener(props)}")


def parse_listeners(value: str | Sequence[str], key: str = LISTENERS) -> list[Listener]:
    """Kafka Connect's ``listeners``: comma-separated ``http://host:port`` / ``https://host:port``."""
    items = [s.strip() for s in value.split(",")] if isinstance(value, str) else [str(s).strip() for s in value]
    shown = value if isinstance(value, str) else ",".join(str(s) for s in value)
    if not any(items):
        raise ConfigException(key, shown, "at least one URL is expected, ex: http://localhost:8080,"
                                          "https://localhost:8443")
    out: list[Listener] = []
    for item in items:
        if not item:
            raise ConfigException(key, shown, "Empty URL found when parsing listeners list.")
        match = _LISTENER.match(item)
        if match is None:
            raise ConfigException(key, shown, f"Listener {item} doesn't have the right format "
                                              "(protocol://hostname:port).")
        scheme = match.group(1).lower()
        if scheme not in ("http", "https"):
            raise ConfigException(key, shown, f"Listener {item}: the protocol must be either \"http\" or \"https\".")
        port = int(match.group(3))
        if not 0 <= port <= 65535:
            raise ConfigException(key, shown, f"Listener {item}: the port must be between 0 and 65535 (0: a free one).")
        out.append(Listener(scheme, match.group(2), port))
    return out


def rest_listeners(props: Mapping[str, str]) -> list[Listener]:
    """The worker's REST listeners: ``listeners``; else the deprecated ``rest.host.name`` / ``rest.port``;
    else ``http://127.0.0.1:8083``."""
    if props.get(LISTENERS, "").strip():
        return parse_listeners(props[LISTENERS])
    if REST_HOST in props or REST_PORT in props:
        return [_deprecated_listener(props)]
    return [Listener("http", DEFAULT_HOST, DEFAULT_PORT)]


def _deprecated_listener(props: Mapping[str, str]) -> Listener:
    port = _int(props, REST_PORT, DEFAULT_PORT)
    if not 0 <= port <= 65535:
        raise ConfigException(REST_PORT, props[REST_PORT], "the port must be between 0 and 65535 (0: a free one)")
    return Listener("http", props.get(REST_HOST, "").strip() or DEFAULT_HOST, port)


def advertised_listener(listeners: Sequence[Listener], props: Mapping[str, str]) -> Listener:
    """The listener whose scheme and port name this worker, as Kafka's ``RestServer.advertisedUrl``:
    ``rest.advertised.listener``'s scheme, else http if a listener has it, else https."""
    wanted = props.get(ADVERTISED_LISTENER, "").strip().lower()
    if wanted and wanted not in ("http", "https"):
        raise ConfigException(ADVERTISED_LISTENER, props[ADVERTISED_LISTENER], "must be http or https")
    if not wanted:
        wanted = "http" if any(listener.scheme == "http" for listener in listeners) else "https"
    return next((listener for listener in listeners if listener.scheme == wanted), listeners[0])


def advertised_url(props: Mapping[str, str], listeners: Sequence[Listener] | None = None) -> str:
    """The URL that names this worker: ``scheme://host:port`` of :func:`advertised_host_port`."""
    listeners = rest_listeners(props) if listeners is None else listeners
    scheme = props.get(ADVERTISED_LISTENER, "").strip().lower() or advertised_listener(listeners, props).scheme
    host, _, port = advertised_host_port(props, listeners).rpartition(":")
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def advertised_host_port(props: Mapping[str, str], listeners: Sequence[Listener] | None = None,
                         machine: str | None = None) -> str:
    """How statuses name this worker (Kafka Connect's ``worker_id``): ``rest.advertised.host.name``, else the
    advertised listener's host if one is configured and is not every interface, else this machine's name;
    ``rest.advertised.port``, else that listener's port. ``listeners``: as bound (default: as configured);
    ``machine``: this machine's name (default: ``socket.gethostname()``)."""
    listeners = rest_listeners(props) if listeners is None else listeners
    chosen = advertised_listener(listeners, props)
    host = props.get(ADVERTISED_HOST, "").strip()
    if not host:
        configured = props.get(LISTENERS, "").strip() or props.get(REST_HOST, "").strip()
        host = chosen.host if configured and not chosen.all_interfaces else (machine or socket.gethostname())
    port = _int(props, ADVERTISED_PORT, chosen.port) if props.get(ADVERTISED_PORT, "").strip() else chosen.port
    return f"{host}:{port}"


def _int(props: Mapping[str, str], key: str, default: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise ConfigException(key, value, "Not a number of type INT") from None


def _log_once(level: int, message: str) -> None:
    with _logged_lock:
        if message in _logged:
            return
        _logged.add(message)
    log.log(level, message)


__all__ = ["Listener", "advertised_host_port", "advertised_listener", "advertised_url", "check_worker_keys",
           "is_known", "parse_listeners", "rest_listeners", "unknown_worker_keys"]
