"""The status topic: connector, task and active-topic statuses (``KafkaStatusBackingStore``).

Writes never block the caller: they update the in-memory view at once and go to Kafka through a
:class:`~connect_magics.runtime.status_retry.StatusSender` that retries with backoff (KIP-1278).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException

from connect_magics.runtime.status_retry import RetryPolicy, StatusSender
from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import KafkaLog

log = logging.getLogger(__name__)

CONNECTOR_PREFIX = "status-connector-"
TASK_PREFIX = "status-task-"
TOPIC_PREFIX = "status-topic-"
TOPIC_SEPARATOR = ":connector-"


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
        self._lock = threading.Lock()
        self._started = False
        # Fail a write after request_timeout_ms so that the retry policy, not the client, decides.
        self.log = KafkaLog(topic, client_config, self._apply,
                            producer_config={"enable.idempotence": False,
                                             "message.timeout.ms": str(request_timeout_ms),
                                             "retries": 0})
        self.sender = StatusSender(self._send, policy or RetryPolicy(), is_retriable=_retriable,
                                   name=f"status-store-retry-{topic}")

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
        k = key.decode()
        data = json.loads(value) if value is not None else None
        with self._lock:
            if data is not None and k.startswith((CONNECTOR_PREFIX, TASK_PREFIX)) and self._started \
                    and data.get("worker_id") == self.worker_id and data.get("generation") == self.generation:
                return  # our own write coming back; the in-memory view is already newer
            if k.startswith(CONNECTOR_PREFIX):
                name = k[len(CONNECTOR_PREFIX):]
                if data is None:
                    self._connectors.pop(name, None)
                else:
                    self._connectors[name] = self._status(data)
            elif k.startswith(TASK_PREFIX):
                parts = k.split("-")
                if len(parts) < 4:
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
                topic = k[len(TOPIC_PREFIX):].split(":", 1)[0]
                if data is None:
                    self._topics.get(connector, {}).pop(topic, None)
                else:
                    self._topics.setdefault(connector, {})[topic] = data["topic"]

    @staticmethod
    def _status(data: dict[str, Any]) -> Status:
        return Status(data["state"], data.get("trace"), data.get("worker_id", ""), int(data.get("generation", 0)),
                      data.get("version"))

    def connector(self, name: str) -> Status | None:
        with self._lock:
            return self._connectors.get(name)

    def tasks(self, name: str) -> dict[int, Status]:
        with self._lock:
            return dict(sorted(self._tasks.get(name, {}).items()))

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def has_topic(self, connector: str, topic: str) -> bool:
        with self._lock:
            return topic in self._topics.get(connector, {})

    # -- writing (never blocks on the broker) ------------------------------------------------
    def put_connector(self, name: str, state: str, trace: str | None = None, version: str | None = None) -> None:
        status = Status(state, trace, self.worker_id, self.generation, version)
        with self._lock:
            self._connectors[name] = status
        self.sender.submit(CONNECTOR_PREFIX + name, dumps(status.to_json()))

    def put_task(self, connector: str, task: int, state: str, trace: str | None = None,
                 version: str | None = None) -> None:
        status = Status(state, trace, self.worker_id, self.generation, version)
        with self._lock:
            self._tasks.setdefault(connector, {})[task] = status
        self.sender.submit(f"{TASK_PREFIX}{connector}-{task}", dumps(status.to_json()))

    def remove_task(self, connector: str, task: int) -> None:
        with self._lock:
            self._tasks.get(connector, {}).pop(task, None)
        self.sender.submit(f"{TASK_PREFIX}{connector}-{task}", None)

    def remove_connector(self, name: str) -> None:
        """DESTROYED: tombstones for every task, then the connector."""
        for task in list(self.tasks(name)):
            self.remove_task(name, task)
        with self._lock:
            self._connectors.pop(name, None)
            self._tasks.pop(name, None)
        self.sender.submit(CONNECTOR_PREFIX + name, None)

    def put_topic(self, connector: str, topic: str, task: int) -> None:
        value = {"name": topic, "connector": connector, "task": task, "discoverTimestamp": int(time.time() * 1000)}
        with self._lock:
            if topic in self._topics.get(connector, {}):
                return
            self._topics.setdefault(connector, {})[topic] = value
        self.sender.submit(f"{TOPIC_PREFIX}{topic}{TOPIC_SEPARATOR}{connector}", dumps({"topic": value}))

    def reset_topics(self, connector: str) -> None:
        with self._lock:
            topics = list(self._topics.pop(connector, {}))
        for topic in topics:
            self.sender.submit(f"{TOPIC_PREFIX}{topic}{TOPIC_SEPARATOR}{connector}", None)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every status write reached Kafka (or was given up)."""
        return self.sender.flush(timeout)
