"""The config topic: connector configs, task configs, task commits and target states.

Record keys and JSON values are Apache Kafka Connect's (``KafkaConfigBackingStore``), so either can
read the other's topic. Task configs are applied only when their ``commit-X`` record arrives.
"""

from __future__ import annotations

import enum
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from connect_magics.storage.fence import ProducerFence
from connect_magics.storage.kafka_log import BadRecord, KafkaLog, json_object, text_key

log = logging.getLogger(__name__)


def _not_serializable(o: object) -> object:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


# Built once (json.dumps builds an encoder per call, which is most of its cost for small values).
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_C_COMPACT = (json.encoder.c_make_encoder(None, _not_serializable, json.encoder.encode_basestring, None, ":", ",",
                                          False, False, True)
              if json.encoder.c_make_encoder is not None else None)


def dumps(value: object) -> bytes:
    """Compact JSON as Kafka's internal JsonConverter writes it (no spaces, insertion order)."""
    if _C_COMPACT is not None and not isinstance(value, str):
        return "".join(_C_COMPACT(value, 0)).encode()
    return _COMPACT.encode(value).encode()


class TargetState(str, enum.Enum):
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


def target_state_value(state: TargetState) -> dict[str, str]:
    """KIP-875's backward-compatible record: old readers see PAUSED for STOPPED."""
    return {"state": TargetState.PAUSED.value if state is TargetState.STOPPED else state.value,
            "state.v2": state.value}


@dataclass
class ConfigSnapshot:
    """What the config topic says, applied the way Kafka Connect applies it."""

    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, TargetState] = field(default_factory=dict)
    task_configs: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)


#: What the value of each kind of config record must be (by key prefix), for messages about bad records.
_SHAPES = {"target-state-": '{"state": ..., "state.v2": ...}',
           "connector-": '{"properties": {...}} with string values',
           "task-": '{"properties": {...}} with string values',
           "commit-": '{"tasks": N} with N a whole number >= 0'}


def _properties(data: dict) -> dict[str, str]:
    """The ``properties`` of a connector or task config record; BadRecord unless they are strings."""
    props = data.get("properties")
    if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
        raise BadRecord(f'the value must be {_SHAPES["connector-"]}, not {json.dumps(data)[:200]}')
    return dict(props)


class ConfigStore:
    """Reads and writes the config topic; ``on_change(kind, connector)`` fires for applied updates."""

    def __init__(self, topic: str, client_config: dict[str, str],
                 on_change: Callable[[str, str], None] | None = None, fence: ProducerFence | None = None) -> None:
        self.snapshot = ConfigSnapshot()
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        # Target-state writes sent but not yet read back, per connector: the local view is newer.
        self._unread_target_writes: dict[str, int] = {}
        self._lock = threading.RLock()
        self._on_change = on_change or (lambda kind, name: None)
        self.log = KafkaLog(topic, client_config, self._apply, fence=fence)  # fence: the group leader's

    def start(self, timeout: float = 30.0) -> None:
        self.log.start(timeout)

    def stop(self) -> None:
        self.log.stop()

    # -- reading ---------------------------------------------------------------------------
    def _apply(self, key: bytes | None, value: bytes | None, _partition: int, _offset: int) -> None:
        if key is None:
            log.warning("Discarding config update record with no key")
            return
        k = text_key(key)
        data = json_object(value, next((shape for prefix, shape in _SHAPES.items() if k.startswith(prefix)),
                                       "a JSON object"))
        with self._lock:
            s = self.snapshot
            if k.startswith("target-state-"):
                name = k[len("target-state-"):]
                unread = self._unread_target_writes.get(name, 0)
                if unread:
                    self._unread_target_writes[name] = unread - 1
                    if unread > 1:
                        return  # an older write of ours; the newest is already in the local view
                if data is None:
                    s.target_states.pop(name, None)
                    if name in s.connector_configs:
                        s.target_states[name] = TargetState.STARTED
                else:
                    raw = data.get("state.v2")
                    if not isinstance(raw, str):
                        raw = data.get("state")
                    try:
                        s.target_states[name] = TargetState(raw)
                    except ValueError:
                        log.warning("Invalid target state %r for connector %s", raw, name)
                        return
                if name in s.connector_configs:
                    self._on_change("target-state", name)
            elif k.startswith("connector-"):
                name = k[len("connector-"):]
                if data is None:
                    for d in (s.connector_configs, s.target_states, s.task_configs, self._deferred):
                        d.pop(name, None)
                    s.inconsistent.discard(name)
                    self._on_change("removed", name)
                else:
                    s.connector_configs[name] = _properties(data)
                    s.target_states.setdefault(name, TargetState.STARTED)
                    self._on_change("connector", name)
            elif k.startswith("task-"):
                if data is None:
                    log.warning("Ignoring unexpectedly null task config %s", k)
                    return
                name, _, num = k[len("task-"):].rpartition("-")
                if not name or not num.isdigit():
                    raise BadRecord("a task config key must be task-{connector}-{task number}")
                self._deferred.setdefault(name, {})[int(num)] = _properties(data)
            elif k.startswith("commit-"):
                name = k[len("commit-"):]
                if data is None:
                    raise BadRecord(f'the value must be {_SHAPES["commit-"]}, not null')
                if name not in s.connector_configs:  # a deleted connector's (as Kafka Connect, ignored)
                    return
                count = data.get("tasks")
                if type(count) is not int or count < 0:
                    raise BadRecord(f'the value must be {_SHAPES["commit-"]}, not "tasks": {json.dumps(count)}')
                deferred = self._deferred.pop(name, {})
                if any(i not in deferred for i in range(count)):
                    s.inconsistent.add(name)
                    log.warning("Task configs of connector %s are inconsistent; not applying them", name)
                    return
                s.inconsistent.discard(name)
                s.task_configs[name] = [deferred[i] for i in range(count)]
                self._on_change("tasks", name)
            elif k.startswith(("restart-connector-", "tasks-fencing-", "logger-cluster-")) or k == "session-key":
                return
            else:
                log.warning("Discarding config update record with invalid key: %s", k)

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    def connector_config(self, name: str) -> dict[str, str] | None:
        with self._lock:
            cfg = self.snapshot.connector_configs.get(name)
            return dict(cfg) if cfg is not None else None

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self.snapshot.connector_configs)

    def target_state(self, name: str) -> TargetState | None:
        with self._lock:
            return self.snapshot.target_states.get(name)

    def task_configs(self, name: str) -> list[dict[str, str]]:
        with self._lock:
            return [dict(c) for c in self.snapshot.task_configs.get(name, [])]

    # -- writing ---------------------------------------------------------------------------
    def put_connector_config(self, name: str, config: dict[str, str],
                             target_state: TargetState | None = None) -> None:
        records = []
        if target_state is not None:
            records.append((f"target-state-{name}", dumps(target_state_value(target_state))))
        records.append((f"connector-{name}", dumps({"properties": config})))
        self.log.write(records)
        self.read_to_end()

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        if configs and self.target_state(name) is TargetState.STOPPED:
            raise ValueError(f"Cannot submit non-empty set of task configs for stopped connector {name}")
        self.read_to_end()
        # The task records and their commit record in one write (one transaction when the log is fenced):
        # one producer keeps their order in the topic's single partition, as Kafka Connect sends them.
        records = [(f"task-{name}-{i}", dumps({"properties": c})) for i, c in enumerate(configs)]
        self.log.write([*records, (f"commit-{name}", dumps({"tasks": len(configs)}))])
        self.read_to_end()

    def clear_task_configs(self, name: str) -> None:
        """KIP-875's empty task set (``commit-X {"tasks":0}``), applied locally at once and sent without
        waiting, so that stopping a connector never blocks on the broker."""
        with self._lock:
            if name in self.snapshot.connector_configs:
                self.snapshot.task_configs[name] = []

        def sent(error: BaseException | None) -> None:
            if error is not None:
                log.error("Writing the empty task set of connector %s failed: %s", name, error)
        self.log.send(f"commit-{name}", dumps({"tasks": 0}), callback=sent)

    def put_target_state(self, name: str, state: TargetState) -> None:
        """Change the target state at once locally and send it without waiting for the broker (as
        Kafka Connect does), so that pause and resume never block a notebook during an outage."""
        with self._lock:
            if name in self.snapshot.connector_configs:
                self.snapshot.target_states[name] = state
            self._unread_target_writes[name] = self._unread_target_writes.get(name, 0) + 1

        def sent(error: BaseException | None) -> None:
            if error is not None:
                log.error("Writing target state %s of connector %s failed: %s", state.value, name, error)
                with self._lock:
                    self._unread_target_writes[name] = max(0, self._unread_target_writes.get(name, 1) - 1)
        self.log.send(f"target-state-{name}", dumps(target_state_value(state)), callback=sent)

    def remove_connector(self, name: str) -> None:
        self.log.write([(f"connector-{name}", None), (f"target-state-{name}", None)])
        self.read_to_end()

    def put_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        self.log.write([(f"restart-connector-{name}",
                         dumps({"include-tasks": include_tasks, "only-failed": only_failed}))])
