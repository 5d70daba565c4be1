"""The task control topic: how tasks running in other processes (Spark executors) learn what the herder
wants, and how the herder learns their metrics.

Kafka Connect workers learn target states and task configs from the config topic; a task instance on a
Spark executor also needs to know when *it* must stop (a restart, a reconfiguration, a newer instance).
One compacted, single-partition topic (``task.control.storage.topic``, default ``{group.id}-task-control``)
holds, per task, the current instance's generation and target state, and the metrics the instance
publishes. Keys and values:

- ``task-{connector}-{task}`` → ``{"generation": 3, "state": "STARTED" | "PAUSED" | "STOPPED"}``
- ``metrics-{connector}-{task}`` → ``{"generation": 3, "worker_id": ..., "pid": ..., "task": {...},
  "errors": {...}}``

>>> store = TaskControlStore("nb-task-control", {"bootstrap.servers": "127.0.0.1:9092"})  # doctest: +SKIP
>>> store.start(); store.put_control("lines", 0, 1, "STARTED")                              # doctest: +SKIP
>>> store.control("lines", 0)                                                               # doctest: +SKIP
{'generation': 1, 'state': 'STARTED'}
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import BadRecord, KafkaLog, json_object, text_key

CONTROL_PREFIX = "task-"
METRICS_PREFIX = "metrics-"
STATES = ("STARTED", "PAUSED", "STOPPED")
#: Keys of the group's forwarded requests and answers (runtime/group/forwarding.py) and its task assignment
#: (storage/assignment_store.py), which share this topic.
SHARED_PREFIXES = ("request-", "answer-", "assignment", "member-")

#: Called with (connector, task, value) for every control record read, newest last.
ControlListener = Callable[[str, int, dict[str, Any]], None]


def task_key(prefix: str, connector: str, task: int) -> str:
    """``{prefix}{connector}-{task}``.

    >>> task_key(CONTROL_PREFIX, "my-sink", 2)
    'task-my-sink-2'
    """
    return f"{prefix}{connector}-{task}"


def parse_task_key(key: str) -> tuple[str, str, int] | None:
    """``(prefix, connector, task)`` of a key, None if it is not one of this topic's keys.

    >>> parse_task_key("metrics-my-sink-2")
    ('metrics-', 'my-sink', 2)
    """
    for prefix in (CONTROL_PREFIX, METRICS_PREFIX):
        if key.startswith(prefix):
            connector, _, task = key[len(prefix):].rpartition("-")
            if connector and task.isdigit():
                return prefix, connector, int(task)
    return None


class TaskControlStore:
    """Per task: the current instance's generation and target state, and its last published metrics."""

    def __init__(self, topic: str, client_config: dict[str, str], listener: ControlListener | None = None) -> None:
        self.topic = topic
        self._listener = listener
        self._lock = threading.Lock()
        self._values: dict[tuple[str, str, int], dict[str, Any]] = {}
        self._reserved: set[tuple[str, int, int]] = set()  # generations taken here and not written yet
        self.log = KafkaLog(topic, client_config, self._apply)

    def start(self, timeout: float = 30.0) -> TaskControlStore:
        self.log.start(timeout)
        return self

    def stop(self) -> None:
        self.log.stop()

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        text = text_key(key) if key else ""
        parsed = parse_task_key(text)
        if parsed is None:
            if text.startswith(SHARED_PREFIXES):
                return
            raise BadRecord("the key is neither task-{connector}-{task} nor metrics-{connector}-{task}")
        data = json_object(value, "a JSON object")
        if data is not None and parsed[0] == CONTROL_PREFIX and (
                type(data.get("generation")) is not int or data.get("state") not in STATES):
            raise BadRecord(f'the value must be {{"generation": N, "state": {"|".join(STATES)}}}, not '
                            f"{json.dumps(data)[:200]}")
        with self._lock:
            if data is None:
                self._values.pop(parsed, None)
            elif parsed[0] == CONTROL_PREFIX and _generation(self._values.get(parsed)) > data["generation"]:
                return  # a generation taken here meanwhile: generations only grow
            else:
                self._values[parsed] = data
        if parsed[0] == CONTROL_PREFIX and data is not None and self._listener is not None:
            self._listener(parsed[1], parsed[2], data)

    def control(self, connector: str, task: int) -> dict[str, Any] | None:
        with self._lock:
            return self._values.get((CONTROL_PREFIX, connector, task))

    def metrics(self, connector: str, task: int) -> dict[str, Any] | None:
        with self._lock:
            return self._values.get((METRICS_PREFIX, connector, task))

    def tasks(self, connector: str) -> set[int]:
        """The tasks of ``connector`` that have a control record."""
        with self._lock:
            return {t for (prefix, c, t) in self._values if prefix == CONTROL_PREFIX and c == connector}

    def next_generation(self, connector: str, task: int) -> int:
        """One more than the newest generation of the task seen in the topic (1 for a task never started)."""
        return _generation(self.control(connector, task)) + 1

    def reserve_generation(self, connector: str, task: int, state: str = "STARTED") -> int:
        """Take the task's next generation here at once, without waiting for the broker; the instance
        writes it with :meth:`put_control` (see :meth:`reserved`) before it claims its fence."""
        key = (CONTROL_PREFIX, connector, task)
        with self._lock:
            generation = _generation(self._values.get(key)) + 1
            self._values[key] = {"generation": generation, "state": state}
            self._reserved.add((connector, task, generation))
        return generation

    def reserved(self, connector: str, task: int, generation: int) -> bool:
        """True if ``generation`` was taken with :meth:`reserve_generation` and is not in the topic yet."""
        with self._lock:
            return (connector, task, generation) in self._reserved

    def newest_generation(self, connector: str, task: int, timeout: float) -> int:
        """The task's newest generation in the topic, read to its end first (raises if the broker cannot be
        reached within ``timeout``); 0 if it has none."""
        self.read_to_end(timeout)
        return _generation(self.control(connector, task))

    def put_control(self, connector: str, task: int, generation: int, state: str, timeout: float = 30.0) -> None:
        """Write the task's control record and wait until it is in the topic (raises on failure)."""
        if state not in STATES:
            raise ValueError(f"Invalid value {state} for state: must be one of {', '.join(STATES)}")
        value = {"generation": generation, "state": state}
        self.log.write([(task_key(CONTROL_PREFIX, connector, task), dumps(value))], timeout)
        key = (CONTROL_PREFIX, connector, task)
        with self._lock:
            self._reserved.discard((connector, task, generation))
            if _generation(self._values.get(key)) <= generation:
                self._values[key] = value

    def put_metrics(self, connector: str, task: int, value: dict[str, Any]) -> None:
        """Publish an instance's metrics (asynchronously; the newest wins)."""
        self.log.send(task_key(METRICS_PREFIX, connector, task), dumps(value))


def _generation(control: dict[str, Any] | None) -> int:
    return control["generation"] if control else 0
