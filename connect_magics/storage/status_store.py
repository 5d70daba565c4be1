"""The status topic: connector, task and active-topic statuses (``KafkaStatusBackingStore``).

Writes never block the caller: they update the in-memory view at once and go to Kafka through a
:class:`~connect_magics.storage.status_retry.StatusSender` that retries with backoff (KIP-1278).
Reads never touch the broker. Once this store has written a key, its in-memory value is the newest
one and records of that key read back from the topic are ours (one runtime per group id), so they
are not applied again, except connector and task statuses written by another worker or generation,
which follow Kafka Connect's rules (see docs/status-and-topics.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException

from connect_magics.security.redaction import redact
from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import BadRecord, KafkaLog, json_object, text_key
from connect_magics.storage.status_retry import METRICS_GROUP, RetryPolicy, StatusSender

log = logging.getLogger(__name__)

CONNECTOR_PREFIX = "status-connector-"
TASK_PREFIX = "status-task-"
TOPIC_PREFIX = "status-topic-"
TOPIC_SEPARATOR = ":connector-"
#: Kafka Connect's ``AbstractStatus.State`` names.
STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "DESTROYED", "RESTARTING", "STOPPED")
#: States written with Kafka Connect's ``putSafe``: not over a newer generation of another worker.
SAFE_STATES = ("FAILED", "UNASSIGNED")
#: Our own key (not Kafka Connect's) for the topics a connector created (KIP-158), see docs/topic-creation.md.
CREATED_TOPIC_PREFIX = "connect-magics-created-topic-"


@dataclass(frozen=True)
class Status:
    state: str
    trace: str | None
    worker_id: str
    generation: int
    version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "trace": self.trace, "worker_id": self.worker_id,
                "generation": self.generation, "version": self.version}


def can_write_safely(old: Status | None, new: Status) -> bool:
    """Kafka Connect's ``CacheEntry.canWriteSafely``: no status yet, the same worker, or a generation
    not older than the one it would replace.

    >>> can_write_safely(Status("RUNNING", None, "w2", 5), Status("FAILED", "boom", "w1", 4))
    False
    """
    return old is None or old.worker_id == new.worker_id or old.generation <= new.generation


def topic_status_key(topic: str, connector: str) -> str:
    """``status-topic-{topic}:connector-{connector}`` (KIP-558).

    >>> topic_status_key("orders", "sink")
    'status-topic-orders:connector-sink'
    """
    return f"{TOPIC_PREFIX}{topic}{TOPIC_SEPARATOR}{connector}"


def _retriable(e: BaseException) -> bool:
    if isinstance(e, KafkaException) and e.args:
        err = e.args[0]
        return bool(getattr(err, "retriable", lambda: True)()) or err.code() < 0
    return True


class StatusStore:
    """Statuses of connectors, tasks and the topics each connector used, in memory and in Kafka."""

    def __init__(self, topic: str, client_config: dict[str, str], worker_id: str,
                 policy: RetryPolicy | None = None, request_timeout_ms: int = 1500) -> None:
        self.worker_id = worker_id
        self.generation = 0
        self._connectors: dict[str, Status] = {}
        self._tasks: dict[str, dict[int, Status]] = {}
        self._topics: dict[str, dict[str, dict[str, Any]]] = {}
        self._created: dict[str, dict[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()  # the in-memory view; held briefly, never while calling the sender
        self._order = threading.Lock()  # writers, one at a time (see _writing)
        self._pending: list[tuple[str, bytes | None]] = []
        self._started = False
        self._written: set[str] = set()  # keys this store wrote: their in-memory value is the newest
        # Fail a write after request_timeout_ms so that the retry policy, not the client, decides;
        # murmur2 puts every key in the partition a Java worker would use.
        self.log = KafkaLog(topic, client_config, self._apply,
                            producer_config={"enable.idempotence": False,
                                             "message.timeout.ms": str(request_timeout_ms),
                                             "retries": 0, "partitioner": "murmur2_random"})
        self.sender = StatusSender(self._send, policy or RetryPolicy(), is_retriable=_retriable,
                                   name=f"status-store-retry-{topic}", on_failure=self._given_up)

    def _send(self, key: str, value: bytes | None, on_done) -> None:
        self.log.send(key, value, callback=on_done)

    def start(self, timeout: float = 30.0) -> None:
        self.log.start(timeout)
        with self._lock:
            gens = [s.generation for s in self._connectors.values()]
            gens += [s.generation for t in self._tasks.values() for s in t.values()]
            self.generation = max(gens, default=-1) + 1
            self._started = True

    def stop(self, timeout: float = 10.0) -> None:
        self.sender.close(timeout)
        self.log.stop()

    # -- reading -----------------------------------------------------------------------------
    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        if key is None:
            return
        k = text_key(key)
        data = json_object(value, "a JSON object")
        with self._lock:
            if k in self._written and not self._foreign(k, data):
                return  # our own write coming back; the in-memory view is already as new or newer
            if k.startswith(CONNECTOR_PREFIX):
                name = k[len(CONNECTOR_PREFIX):]
                if data is None:
                    self._connectors.pop(name, None)
                else:
                    self._connectors[name] = self._status(data)
            elif k.startswith(TASK_PREFIX):
                parts = k.split("-")
                if len(parts) < 4 or not parts[-1].isdigit():
                    log.warning("Ignoring status record with invalid key %s", k)
                    return
                name, task = "-".join(parts[2:-1]), int(parts[-1])
                tasks = self._tasks.setdefault(name, {})
                if data is None:
                    tasks.pop(task, None)
                    return
                new, old = self._status(data), tasks.get(task)
                if new.state == "UNASSIGNED" and old is not None and old.state == "RUNNING" \
                        and old.generation >= new.generation:
                    return
                tasks[task] = new
            elif k.startswith(TOPIC_PREFIX):
                topic, _, connector = k[len(TOPIC_PREFIX):].partition(TOPIC_SEPARATOR)
                if not topic or not connector:
                    log.warning("Ignoring topic status record with invalid key %s", k)
                elif data is None:
                    self._topics.get(connector, {}).pop(topic, None)
                elif not isinstance(data.get("topic"), dict):
                    log.warning("Failed to parse topic status with key %s", k)
                else:
                    self._topics.setdefault(connector, {})[topic] = data["topic"]
            elif k.startswith(CREATED_TOPIC_PREFIX):
                topic, _, connector = k[len(CREATED_TOPIC_PREFIX):].partition(TOPIC_SEPARATOR)
                if data is None:
                    self._created.get(connector, {}).pop(topic, None)
                elif not topic or not connector or not isinstance(data.get("createdTopic"), dict):
                    raise BadRecord('the value must be {"createdTopic": {...}} under a key naming a topic and a '
                                    "connector")
                else:
                    self._created.setdefault(connector, {})[topic] = data["createdTopic"]

    def _foreign(self, key: str, data: dict[str, Any] | None) -> bool:
        """A connector or task status that another worker, or another generation, wrote."""
        return data is not None and key.startswith((CONNECTOR_PREFIX, TASK_PREFIX)) \
            and (data.get("worker_id"), data.get("generation")) != (self.worker_id, self.generation)

    @staticmethod
    def _status(data: dict[str, Any]) -> Status:
        """A connector or task status record's value; BadRecord unless it has Kafka Connect's fields and types."""
        state, generation = data.get("state"), data.get("generation", 0)
        if state not in STATES:
            raise BadRecord(f"invalid state {json.dumps(state)}: must be one of {', '.join(STATES)}")
        if type(generation) is not int:
            raise BadRecord(f"invalid generation {json.dumps(generation)}: must be a whole number")
        for field in ("trace", "worker_id", "version"):
            if not isinstance(data.get(field), (str, type(None))):
                raise BadRecord(f"invalid {field} {json.dumps(data[field])}: must be a string or null")
        return Status(state, data.get("trace"), data.get("worker_id") or "", generation, data.get("version"))

    def connector(self, name: str) -> Status | None:
        with self._lock:
            return self._connectors.get(name)

    def tasks(self, name: str) -> dict[int, Status]:
        with self._lock:
            return dict(sorted(self._tasks.get(name, {}).items()))

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def created_topics(self, connector: str) -> dict[str, dict[str, Any]]:
        """The topics ``connector``'s tasks created (KIP-158), topic → what it was created with."""
        with self._lock:
            return {t: dict(v) for t, v in sorted(self._created.get(connector, {}).items())}

    def has_topic(self, connector: str, topic: str) -> bool:
        with self._lock:
            return topic in self._topics.get(connector, {})

    # -- writing (never blocks on the broker) ------------------------------------------------
    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the view's lock for a change; the records the change made (:meth:`_submit`) go to the sender
        once that lock is released, so that readers never wait for the sender. Writers take turns, so that
        the order of the records of one key is the order of the changes to the view."""
        with self._order:
            try:
                with self._lock:
                    yield
            finally:  # _pending is only used by writers, one at a time
                records, self._pending = self._pending, []
                for key, value in records:
                    self.sender.submit(key, value)

    def _submit(self, key: str, value: bytes | None) -> None:
        """Note a record to write; call inside :meth:`_writing`, right after changing the view."""
        self._written.add(key)
        self._pending.append((key, value))

    def put_connector(self, name: str, state: str, trace: str | None = None, version: str | None = None) -> None:
        """Set a connector's status (FAILED and UNASSIGNED only if :func:`can_write_safely`)."""
        status = Status(state, redact(trace) if trace else trace, self.worker_id, self.generation, version)
        with self._writing():
            if state in SAFE_STATES and not can_write_safely(self._connectors.get(name), status):
                log.debug("Not overwriting the newer status of connector %s with %s", name, state)
                return
            self._connectors[name] = status
            self._submit(CONNECTOR_PREFIX + name, dumps(status.to_json()))

    def put_task(self, connector: str, task: int, state: str, trace: str | None = None,
                 version: str | None = None, hosted: bool = False) -> None:
        """Set a task's status (FAILED and UNASSIGNED only if :func:`can_write_safely`). ``hosted``: the worker
        writes it for an instance it hosts in another process (whose status store started later, with a
        newer generation), which ended without saying so: written over that instance's own status."""
        status = Status(state, redact(trace) if trace else trace, self.worker_id, self.generation, version)
        with self._writing():
            tasks = self._tasks.setdefault(connector, {})
            if state in SAFE_STATES and not hosted and not can_write_safely(tasks.get(task), status):
                log.debug("Not overwriting the newer status of task %s-%s with %s", connector, task, state)
                return
            tasks[task] = status
            self._submit(f"{TASK_PREFIX}{connector}-{task}", dumps(status.to_json()))

    def remove_task(self, connector: str, task: int) -> None:
        with self._writing():
            self._tasks.get(connector, {}).pop(task, None)
            self._submit(f"{TASK_PREFIX}{connector}-{task}", None)

    def remove_connector(self, name: str) -> None:
        """DESTROYED: tombstones for every task, then the connector."""
        for task in list(self.tasks(name)):
            self.remove_task(name, task)
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)
            created = list(self._created.pop(name, {}))
        for topic in created:
            self.sender.submit(f"{CREATED_TOPIC_PREFIX}{topic}{TOPIC_SEPARATOR}{name}", None)
        with self._writing():
            self._submit(CONNECTOR_PREFIX + name, None)

    def put_topic(self, connector: str, topic: str, task: int) -> None:
        """KIP-558: record that ``connector`` used ``topic``; only the first use writes a record.

        >>> store.put_topic("sink", "orders", 0); store.topics("sink")  # doctest: +SKIP
        ['orders']
        """
        known = self._topics.get(connector)
        if known is not None and topic in known:  # the hot path, per record: no lock for a read
            return
        with self._writing():
            topics = self._topics.get(connector)
            if topics is not None and topic in topics:
                return
            value = {"name": topic, "connector": connector, "task": task,
                     "discoverTimestamp": int(time.time() * 1000)}
            self._topics.setdefault(connector, {})[topic] = value
            self._submit(topic_status_key(topic, connector), dumps({"topic": value}))

    def put_created_topic(self, connector: str, topic: str, details: dict[str, Any]) -> None:
        """Record that a task of ``connector`` created ``topic`` (``details``: task, group, settings)."""
        value = {"name": topic, "connector": connector, **details,
                 "createdTimestamp": int(time.time() * 1000)}
        with self._lock:
            self._created.setdefault(connector, {})[topic] = value
        self.sender.submit(f"{CREATED_TOPIC_PREFIX}{topic}{TOPIC_SEPARATOR}{connector}",
                           dumps({"createdTopic": value}))

    def reset_topics(self, connector: str, topics: Iterable[str] | None = None) -> list[str]:
        """KIP-558: forget the topics ``connector`` used (all, or only ``topics``), writing a tombstone
        for each; returns the topics forgotten. Example: ``store.reset_topics("sink", ["old"])``."""
        with self._writing():
            known = self._topics.get(connector, {})
            gone = sorted(known if topics is None else set(topics) & set(known))
            for topic in gone:
                del known[topic]
                self._submit(topic_status_key(topic, connector), None)
            if not known:
                self._topics.pop(connector, None)
            return gone

    def _given_up(self, key: str, value: bytes | None) -> None:
        """A topic record that never reached Kafka is forgotten, so that the next use records it again."""
        if value is None or not key.startswith(TOPIC_PREFIX):
            return
        topic, _, connector = key[len(TOPIC_PREFIX):].partition(TOPIC_SEPARATOR)
        with self._lock:
            topics = self._topics.get(connector, {})
            if topic in topics and dumps({"topic": topics[topic]}) == value:
                del topics[topic]

    def metrics(self) -> dict[str, dict[str, int]]:
        """KIP-1278's counters: ``{"status-backing-store-metrics": {"status-update-retry-total": 0, ...}}``."""
        return {METRICS_GROUP: self.sender.metrics()}

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every status write reached Kafka (or was given up)."""
        return self.sender.flush(timeout)
