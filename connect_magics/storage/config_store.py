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


def _task_records(configs: dict[str, list[dict[str, str]]]) -> list[tuple[str, bytes]]:
    """Each connector's task config records followed by its commit record: written in one write (one transaction
    when the log is fenced), one producer keeps their order in the topic's single partition, as Kafka Connect
    sends them."""
    records = []
    for name, tasks in configs.items():
        records += [(f"task-{name}-{i}", dumps({"properties": c})) for i, c in enumerate(tasks)]
        records.append((f"commit-{name}", dumps({"tasks": len(tasks)})))
    return records


class ConfigStore:
    """Reads and writes the config topic; ``on_change(kind, connector)`` fires for applied updates."""

    def __init__(self, topic: str, client_config: dict[str, str],
                 on_change: Callable[[str, str], None] | None = None, fence: ProducerFence | None = None) -> None:
        self.snapshot = ConfigSnapshot()
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        # Target-state writes sent but not yet read back, per connector: the local view is newer.
        self._unread_target_writes: dict[str, int] = {}
        self._lock = threading.RLock()
        self.changes = 0  # changes applied so far (read or local): a reader that saw the same count has nothing new
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
            self.changes += 1
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

    def running_task_counts(self) -> dict[str, int]:
        """How many tasks each connector that is not STOPPED has, without copying a config (the group's leader
        asks at every change, over thousands of tasks)."""
        with self._lock:
            s = self.snapshot
            return {name: len(tasks) for name, tasks in s.task_configs.items()
                    if name in s.connector_configs and s.target_states.get(name) is not TargetState.STOPPED}

    # -- writing ---------------------------------------------------------------------------
    # Each write below is one write of the log: one transaction of the leader's fence, so that a bulk change of
    # many connectors costs one round trip to the broker, and is applied by every reader all at once or not at all.
    # A write is read back up to its own records (the topic has one partition: everything before them too),
    # without asking the broker for the topic's end as Kafka Connect's readToEnd does (half a create's wait for
    # the group's leader at 1,000 connectors).

    def put_connector_config(self, name: str, config: dict[str, str],
                             target_state: TargetState | None = None) -> None:
        self.put_connector_configs({name: config}, target_state)

    def put_connector_configs(self, configs: dict[str, dict[str, str]], target_state: TargetState | None = None,
                              tasks: dict[str, list[dict[str, str]]] | None = None) -> None:
        """Write connector configs (each after its target state, if given, as Kafka Connect's
        ``putConnectorConfig``), then ``tasks``, connectors' first task configs, in one write, and read them back."""
        records = []
        for name, config in configs.items():
            if target_state is not None:
                records.append((f"target-state-{name}", dumps(target_state_value(target_state))))
            records.append((f"connector-{name}", dumps({"properties": config})))
        self.log.write(records + _task_records(tasks or {}))
        self.log.read_own_writes()

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        self.put_many_task_configs({name: configs})

    def put_many_task_configs(self, configs: dict[str, list[dict[str, str]]]) -> None:
        """Write new task configs of connectors, each connector's tasks followed by its commit record, in one
        write, and read them back."""
        for name, tasks in configs.items():
            if tasks and self.target_state(name) is TargetState.STOPPED:
                raise ValueError(f"Cannot submit non-empty set of task configs for stopped connector {name}")
        self.read_to_end()
        self.log.write(_task_records(configs))
        self.log.read_own_writes()

    def clear_task_configs(self, name: str) -> None:
        """KIP-875's empty task set (``commit-X {"tasks":0}``), applied locally at once and sent without
        waiting, so that stopping a connector never blocks on the broker."""
        self.stop_connectors([name])

    def stop_connectors(self, names: list[str], target_state: bool = False) -> None:
        """KIP-875's stop of each connector: its empty task set (``commit-X {"tasks":0}``), then with
        ``target_state`` its STOPPED target state, all applied locally at once and sent in one write without
        waiting, so that stopping never blocks on the broker."""
        with self._lock:
            self.changes += 1
            for name in names:
                if name in self.snapshot.connector_configs:
                    self.snapshot.task_configs[name] = []
        records = [(f"commit-{name}", dumps({"tasks": 0})) for name in names]
        if target_state:
            records += self._local_target_states(dict.fromkeys(names, TargetState.STOPPED))

        def sent(error: BaseException | None) -> None:
            if error is not None:
                log.error("Writing the empty task set of connectors %s failed: %s", ", ".join(names), error)
                if target_state:
                    self._unsent_target_states(names)
        self.log.send_all(records, sent)

    def put_target_state(self, name: str, state: TargetState) -> None:
        """Change the target state at once locally and send it without waiting for the broker (as
        Kafka Connect does), so that pause and resume never block a notebook during an outage."""
        self.put_target_states({name: state})

    def put_target_states(self, states: dict[str, TargetState]) -> None:
        """:meth:`put_target_state` of many connectors, sent in one write."""
        records = self._local_target_states(states)

        def sent(error: BaseException | None) -> None:
            if error is not None:
                log.error("Writing target states %s failed: %s",
                          ", ".join(f"{s.value} of connector {n}" for n, s in states.items()), error)
                self._unsent_target_states(list(states))
        self.log.send_all(records, sent)

    def _local_target_states(self, states: dict[str, TargetState]) -> list[tuple[str, bytes]]:
        """Apply target states to the local view (newer than the topic until they are read back); their records."""
        with self._lock:
            self.changes += 1
            for name, state in states.items():
                if name in self.snapshot.connector_configs:
                    self.snapshot.target_states[name] = state
                self._unread_target_writes[name] = self._unread_target_writes.get(name, 0) + 1
        return [(f"target-state-{name}", dumps(target_state_value(state))) for name, state in states.items()]

    def _unsent_target_states(self, names: list[str]) -> None:
        with self._lock:
            for name in names:
                self._unread_target_writes[name] = max(0, self._unread_target_writes.get(name, 1) - 1)

    def remove_connector(self, name: str) -> None:
        self.remove_connectors([name])

    def remove_connectors(self, names: list[str]) -> None:
        """Kafka Connect's two tombstones (``connector-X``, ``target-state-X``) of each connector, in one write,
        read back."""
        self.log.write([record for name in names
                        for record in ((f"connector-{name}", None), (f"target-state-{name}", None))])
        self.read_to_end()

    def put_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        self.put_restart_requests([name], include_tasks, only_failed)

    def put_restart_requests(self, names: list[str], include_tasks: bool, only_failed: bool) -> None:
        if names:
            value = dumps({"include-tasks": include_tasks, "only-failed": only_failed})
            self.log.write([(f"restart-connector-{name}", value) for name in names])
