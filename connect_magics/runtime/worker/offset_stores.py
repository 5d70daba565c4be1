"""The offsets stores of a source connector: the worker's, and the connector's own when it has one
(``offsets.storage.topic``, or the worker's topic name on the connector's own Kafka cluster), as Kafka's
``ConnectorOffsetBackingStore`` decides."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from connect_magics.runtime.config.connector_config import client_overrides
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.config.worker_keys import CLIENT_KEYS_PREFIXES
from connect_magics.storage.authorization import KafkaAuthorizationError, check_topic_operations, principal
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.kafka_log import ensure_topic
from connect_magics.storage.offset_store import OffsetStore

OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"
REQUEST_TIMEOUT_S = 30.0
"""How long one request may wait for Kafka (reading an offsets topic to its end, a write, an admin call)."""

_cluster_ids: dict[tuple, str | None] = {}
_cluster_ids_lock = threading.Lock()


def _cluster_id(client: Mapping[str, str]) -> str | None:
    key = tuple(sorted(client.items()))
    with _cluster_ids_lock:
        if key in _cluster_ids:
            return _cluster_ids[key]
    try:
        cid = AdminClient({**client, "logger": client_logger("admin")}).list_topics(timeout=10).cluster_id
    except Exception:  # noqa: BLE001 - unreachable: treat as another cluster; starting the store will tell
        return None
    with _cluster_ids_lock:
        _cluster_ids[key] = cid
    return cid


def connector_store_spec(config: Mapping[str, str], wc: WorkerConfig) -> tuple[str, dict[str, str]] | None:
    """``(topic, client config)`` of a source connector's own offsets store, None if it uses only the worker's.

    It has one when it sets ``offsets.storage.topic``, or when its producer (else admin) overrides point at
    another Kafka cluster than the worker's; the topic is then ``offsets.storage.topic``, else the worker's
    ``offset.storage.topic``, on the connector's cluster. The worker's own topic on the worker's cluster is
    no separate store (Kafka's ``ConnectorOffsetBackingStore`` rules).

    >>> wc = WorkerConfig("a:9092", "g")
    >>> connector_store_spec({"offsets.storage.topic": "mine"}, wc)[0]
    'mine'
    >>> connector_store_spec({}, wc) is None
    True
    """
    policy = wc["connector.client.config.override.policy"]
    client = wc.client_config()
    for kind in ("admin", "producer"):  # the producer writes the offsets, so its cluster wins
        overrides = client_overrides(config, kind, policy)
        client.update({k: v for k, v in overrides.items() if k.startswith(CLIENT_KEYS_PREFIXES)})
    worker = wc.client_config()
    same_cluster = client.get("bootstrap.servers") == worker.get("bootstrap.servers") or (
        (cid := _cluster_id(client)) is not None and cid == _cluster_id(worker))
    topic = (config.get(OFFSETS_TOPIC_CONFIG) or "").strip() or wc["offset.storage.topic"]
    if same_cluster and topic == wc["offset.storage.topic"]:
        return None
    return topic, client


def start_connector_store(spec: tuple[str, dict[str, str]], wc: WorkerConfig) -> OffsetStore:
    """Create the topic of a connector's own offsets store if needed (compacted, with the worker's
    ``offset.storage.*`` settings) and start reading it."""
    topic, client = spec
    admin = AdminClient({**client, "logger": client_logger("admin")})
    ensure_topic(admin, topic, wc.int("offset.storage.partitions"), wc.int("offset.storage.replication.factor"),
                 {"cleanup.policy": "compact"}, timeout=REQUEST_TIMEOUT_S, client_config=client)
    # Offsets are written in the tasks' transactions, where a missing WRITE would only abort them: ask first.
    missing = check_topic_operations(admin, client, {topic: ("READ", "WRITE")}, REQUEST_TIMEOUT_S)
    if missing:
        raise KafkaAuthorizationError(principal(client), missing, f"the connector's own offsets topic {topic}")
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while True:  # a topic just created may not have a (ready) leader for every partition yet
        store = OffsetStore(topic, client)
        try:
            store.start(max(1.0, deadline - time.monotonic()))
            return store
        except KafkaException as e:
            store.stop()
            if e.args[0].code() not in _NOT_READY or time.monotonic() > deadline:
                raise
        except Exception:
            store.stop()
            raise
        time.sleep(0.2)


_NOT_READY = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
              KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC)
