"""Worker configuration, with Apache Kafka Connect's property names and defaults.

>>> wc = WorkerConfig("127.0.0.1:9092", "nb", {"offset.flush.interval.ms": "1000"})
>>> wc.int("offset.flush.interval.ms"), wc["config.storage.topic"]
(1000, 'nb-configs')

Deviations (see docs/deviations.md): the three topic names default to ``{group.id}-configs``,
``-offsets`` and ``-status`` (Kafka requires them), and their replication factors default to -1
(the broker's default) rather than 3, so that a single-broker cluster works out of the box.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping

from connect_magics.api.config import ConfigException
from connect_magics.java_client_settings import librdkafka_client_settings
from connect_magics.runtime.config.client_settings import bootstrap_servers_error, client_setting_errors
from connect_magics.runtime.config.config_transformer import PROVIDERS, ConfigTransformer
from connect_magics.runtime.config.exactly_once import check_worker_setting
from connect_magics.runtime.config.worker_keys import CLIENT_KEYS_PREFIXES, advertised_host_port
from connect_magics.runtime.topics.creation import (
    PARTITIONS_MESSAGE,
    REPLICATION_FACTOR_MESSAGE,
    topic_name_error,
)
from connect_magics.security.client_settings import java_settings
from connect_magics.storage.status_retry import RetryPolicy

DEFAULTS: dict[str, str] = {
    "offset.storage.partitions": "25",
    "offset.storage.replication.factor": "-1",
    "config.storage.replication.factor": "-1",
    "status.storage.partitions": "5",
    "status.storage.replication.factor": "-1",
    "offset.flush.interval.ms": "60000",
    "offset.flush.timeout.ms": "5000",
    "task.shutdown.graceful.timeout.ms": "5000",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "topic.creation.enable": "true",
    "topic.tracking.enable": "true",
    "topic.tracking.allow.reset": "true",
    "connector.client.config.override.policy": "All",
    "exactly.once.source.support": "disabled",
    "status.storage.request.timeout.ms": "1500",
    # the group (runtime/group/): Kafka Connect's defaults, and ours for forwarded writes
    "session.timeout.ms": "10000",
    "heartbeat.interval.ms": "3000",
    "rebalance.timeout.ms": "60000",
    "leader.request.timeout.ms": "30000",
    "scheduled.rebalance.max.delay.ms": "300000",  # Kafka Connect's: how long a gone member's tasks wait for it
    "task.assignment": "spread",  # ours: "spread" over the group's members, or "leader" (it runs them all)
}

#: The internal topics' names (the task control topic's only with the Spark executor).
TOPIC_KEYS = ("config.storage.topic", "offset.storage.topic", "status.storage.topic", "task.control.storage.topic")
#: Worker properties that are not passed on to Kafka clients.
_WORKER_ONLY_PREFIXES = ("offset.", "config.", "status.", "key.converter", "value.converter", "header.converter",
                         "topic.", "task.", "connector.", "plugin.", "rest.", "listeners", "group.id",
                         "producer.", "consumer.", "admin.", "internal.", "worker.", "scheduled.",
                         "heartbeat.", "session.", "rebalance.", "exactly.once", "inter.worker.", "leader.",
                         "config.providers")


class WorkerConfig(Mapping[str, str]):
    """The worker's properties (strings, as in a ``.properties`` file) with Kafka Connect's defaults."""

    def __init__(self, bootstrap_servers: str, group_id: str, props: Mapping[str, object] | None = None) -> None:
        merged = dict(DEFAULTS)
        merged.update({"config.storage.topic": f"{group_id}-configs", "offset.storage.topic": f"{group_id}-offsets",
                       "status.storage.topic": f"{group_id}-status",
                       "task.control.storage.topic": f"{group_id}-task-control"})
        #: The properties as given (placeholders unresolved): what travels to task processes, which resolve them.
        self.originals = {k: _to_str(v) for k, v in (props or {}).items()}
        merged.update(self.originals)
        merged["bootstrap.servers"] = bootstrap_servers
        merged["group.id"] = group_id
        #: ``config.providers`` (KIP-297): resolves the worker's placeholders now, connectors' when they start.
        self.config_transformer = ConfigTransformer.from_worker_props(merged)
        if self.config_transformer is not None:
            merged = self.config_transformer.transform(merged, skip=(PROVIDERS,))
        self._props = merged
        self._check_cluster_settings()
        for key in ("offset.flush.interval.ms", "offset.flush.timeout.ms", "task.shutdown.graceful.timeout.ms",
                    "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms",
                    "leader.request.timeout.ms", "scheduled.rebalance.max.delay.ms"):
            self.int(key)
        if self._props["task.assignment"] not in ("spread", "leader"):
            raise ConfigException("task.assignment", self._props["task.assignment"], "Must be one of spread, leader")
        for key in ("topic.creation.enable", "topic.tracking.enable", "topic.tracking.allow.reset"):
            self.bool(key)
        policy = self["connector.client.config.override.policy"]
        if policy not in ("None", "Principal", "All"):
            raise ConfigException("connector.client.config.override.policy", policy,
                                  "Must be one of None, Principal, All")
        check_worker_setting(self._props)  # KIP-618's exactly.once.source.support
        self.retry_policy = RetryPolicy.from_worker_config(self._props)
        timeout = self.int("status.storage.request.timeout.ms")  # ours: see docs/status-and-topics.md
        if not 10 <= timeout <= 2**31 - 1:
            raise ConfigException("status.storage.request.timeout.ms", timeout,
                                  "Value must be at least 10 and no more than 2147483647")

    def _check_cluster_settings(self) -> None:
        """Everything the runtime's first calls to Kafka depend on, checked before any of them (so that a
        bad value creates no topic): the cluster and group, the internal topics and the client settings."""
        servers = self._props["bootstrap.servers"]
        if (problem := bootstrap_servers_error(servers)) is not None:
            raise ConfigException("bootstrap.servers", servers, problem)
        if not self._props["group.id"].strip():
            raise ConfigException("group.id", self._props["group.id"], "String may not be empty")
        seen: dict[str, str] = {}
        for key in TOPIC_KEYS:
            name = self._props.get(key)
            if name is None:
                continue
            if (problem := topic_name_error(name)) is not None:
                raise ConfigException(key, name, problem)
            if name in seen:
                raise ConfigException(key, name, f"the same topic as {seen[name]}; each internal topic needs its own")
            seen[name] = key
        for key in ("offset.storage.partitions", "status.storage.partitions"):  # Kafka's DistributedConfig
            if (value := self.int(key)) != -1 and value < 1:
                raise ConfigException(key, value, PARTITIONS_MESSAGE)
        for key in ("config.storage.replication.factor", "offset.storage.replication.factor",
                    "status.storage.replication.factor"):
            if (value := self.int(key)) != -1 and value < 1:
                raise ConfigException(key, value, REPLICATION_FACTOR_MESSAGE)
        for kind in ("producer", "consumer", "admin"):
            for setting, reason in client_setting_errors(self.client_config(kind), kind):
                key = f"{kind}.{setting}" if f"{kind}.{setting}" in self._props else setting
                raise ConfigException(key, self._props.get(key), reason)

    def __getitem__(self, key: str) -> str:
        return self._props[key]

    def __iter__(self):
        return iter(self._props)

    def __len__(self) -> int:
        return len(self._props)

    def int(self, key: str) -> int:
        value = self._props[key]
        try:
            return int(value)
        except ValueError:
            raise ConfigException(key, value, "Not a number of type INT") from None

    def bool(self, key: str) -> bool:
        value = self._props[key].strip().lower()
        if value not in ("true", "false"):
            raise ConfigException(key, self._props[key], "Expected value to be either true or false")
        return value == "true"

    def client_config(self, kind: str | None = None) -> dict[str, str]:
        """Settings for a Kafka client: shared client keys plus ``producer.``/``consumer.``/``admin.`` ones."""
        out = {k: v for k, v in self._props.items() if k.startswith(CLIENT_KEYS_PREFIXES)}
        if kind:
            prefix = f"{kind}."
            out.update({k[len(prefix):]: v for k, v in self._props.items() if k.startswith(prefix)})
        try:
            return librdkafka_client_settings(out)
        except ConfigException as e:  # name the key as the worker's properties have it
            key = f"{kind}.{e.name}" if kind and f"{kind}.{e.name}" in self._props else e.name
            raise ConfigException(key, "[hidden]" if e.value == "[hidden]" else self._props.get(key, e.value),
                                  e.reason) from None

    def java_client_config(self, kind: str) -> dict[str, str]:
        """The security settings of a ``kind`` client as Kafka's Java clients take them (Spark's Kafka source):
        the worker's own names, config providers resolved, librdkafka's SASL and CA settings turned back."""
        out = {k: v for k, v in self._props.items() if k.startswith(CLIENT_KEYS_PREFIXES)}
        prefix = f"{kind}."
        out.update({k[len(prefix):]: v for k, v in self._props.items() if k.startswith(prefix)})
        return java_settings(out)

    @property
    def worker_id(self) -> str:
        """How statuses name this worker: its advertised REST host and port, as Kafka Connect's ``worker_id``
        (``rest.advertised.host.name`` / ``.port`` / ``.listener``, else the listener's; see docs/rest.md)."""
        return advertised_host_port(self._props, machine=socket.gethostname())


def _to_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
