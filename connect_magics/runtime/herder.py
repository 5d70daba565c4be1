"""The herder: connector lifecycle, target states, task configs, restarts and statuses.

It keeps the config topic as the source of truth: every change is written there first and then
applied to the running connectors and tasks, so that a new runtime on the same topics restores
exactly what this one ran. Only the group's leader has a started herder (runtime/group/).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_magics.api.config import ConfigException
from connect_magics.api.connector import Connector, ConnectorContext, SourceConnectorContext
from connect_magics.errors import (
    BadRequestError,
    ConflictError,
    ConnectRestError,
    NotFoundError,
    error_for_status,
)
from connect_magics.runtime.config.connector_config import (
    CONNECTOR_CLASS,
    CONNECTOR_VERSION,
    config_errors,
    connector_type,
    invalid_config_message,
    validate_connector_config,
)
from connect_magics.runtime.config.exactly_once import exactly_once_enabled
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.executors.base import Executor, TaskHandle
from connect_magics.runtime.metrics import group_name
from connect_magics.runtime.plugins.metrics import TaskPlugins, connector_group, task_groups
from connect_magics.runtime.plugins.registry import (
    PluginDesc,
    PluginNotFoundError,
    Plugins,
    kafka_class_name,
    python_name,
)
from connect_magics.runtime.topics.creation import check_connector_config
from connect_magics.runtime.topics.tracking import drop_unconsumed_topics
from connect_magics.runtime.worker.capacity import (
    check_connector_fits,
    check_connectors_fit,
    clients_per_task,
    reserve_task_clients,
)
from connect_magics.runtime.worker.fencing import TaskFence
from connect_magics.runtime.worker.offset_stores import connector_store_spec, start_connector_store
from connect_magics.runtime.worker.source_runner import StoreOffsetReader
from connect_magics.runtime.worker.task_factory import TaskSpec, build_runner, connector_desc
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.runtime.worker.task_metrics import CONNECTOR_TASK_METRICS, StartupCounts
from connect_magics.runtime.worker.task_runner import TaskServices
from connect_magics.storage.authorization import first_line_trace
from connect_magics.storage.client_limit import ClientLimitError
from connect_magics.storage.config_store import ConfigStore, TargetState
from connect_magics.storage.offset_store import OffsetStore
from connect_magics.storage.status_store import StatusStore

log = logging.getLogger(__name__)

NOT_A_CONFIG = "Connector config must be a JSON object of string keys and values"
INITIAL_STATES = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}


class Placement(Protocol):
    """Where the group runs each task (runtime/group/assignor.py's TaskAssignor)."""

    me: str

    def place(self, key: tuple[str, int]) -> bool: ...
    def owner(self, key: tuple[str, int]) -> str | None: ...
    def restart_remote(self, key: tuple[str, int]) -> None: ...
    def share(self) -> float: ...


class _Context(SourceConnectorContext):
    def __init__(self, herder: Herder, name: str) -> None:
        self._herder, self._name = herder, name

    def request_task_reconfiguration(self) -> None:
        self._herder.request_reconfiguration(self._name)

    def raise_error(self, error: BaseException) -> None:
        self._herder.fail_connector(self._name, error)

    def offset_storage_reader(self):
        return StoreOffsetReader(self._name, self._herder.offset_stores_for(self._name))


@dataclass
class RunningConnector:
    name: str
    desc: PluginDesc
    instance: Connector | None
    tasks: dict[int, TaskHandle] = field(default_factory=dict)
    task_plugins: dict[int, TaskPlugins] = field(default_factory=dict)  # KIP-891: what each task runs


def trace_of(e: BaseException) -> str:
    """A status trace; a missing ACL's message comes first (storage/authorization.py)."""
    return first_line_trace(e, lambda err: "".join(traceback.format_exception(err)))


class Herder:
    """Applies the Python API's requests to the config topic and the running connectors."""

    def __init__(self, worker_config: WorkerConfig, plugins: Plugins, config_store: ConfigStore,
                 offset_store: OffsetStore, status: StatusStore, executor: Executor) -> None:
        self.wc = worker_config
        self.plugins = plugins
        self.configs = config_store
        self.offsets = offset_store
        self.status = status
        self.executor = executor
        self.services = TaskServices(plugins, worker_config, status, control=executor.control)
        executor.report_status = self._report_ended
        self._running: dict[str, RunningConnector] = {}
        self._lock = threading.RLock()
        self._background = ThreadPoolExecutor(1, thread_name_prefix="herder")
        self._connector_offset_stores: dict[str, OffsetStore] = {}
        self._started_tasks: dict[str, set[int]] = {}  # task indexes ever started here, for fence_zombies
        self.startups = StartupCounts()  # connect-worker-metrics' startup counters
        #: Where tasks run when the group spreads them (runtime/group/assignor.py); None: all here.
        self.placement: Placement | None = None
        #: Whether a task instance runs here for another member's assignment (runtime/group/task_worker.py).
        self.hosts_task: Callable[[TaskId], bool] = lambda task_id: False
        #: The task instances that run here for another member's assignment, for the metrics.
        self.hosted_handles: Callable[[], dict[tuple[str, int], TaskHandle]] = dict
        self._adopted: dict[str, dict[int, TaskHandle]] = {}  # handed over when this runtime took the lead

    # -- start / stop --------------------------------------------------------------------------
    def start(self, adopted: Mapping[tuple[str, int], TaskHandle] | None = None) -> None:
        """Restore every connector from the config topic in its target state. ``adopted``: task instances already
        running in this process (this runtime ran them as a follower): kept if their configs hold."""
        with self._lock:
            for (name, index), handle in (adopted or {}).items():
                self._adopted.setdefault(name, {})[index] = handle
            try:
                self._start_connectors(self.configs.connectors())
            finally:
                leftover = [h for handles in self._adopted.values() for h in handles.values()]
                self._adopted.clear()
                self._stop_runners(leftover)

    def stop_all(self) -> None:
        """Stop every connector and task here (committing what they can), writing nothing to the config
        topic: the group's next leader starts them again."""
        with self._lock:
            self._stop_connectors(list(self._running))  # every task asked to stop first, then each awaited

    def close(self, timeout: float | None = None) -> None:
        self.stop_all()
        self._background.shutdown(wait=True)
        for store in self._connector_offset_stores.values():
            store.stop()

    # -- lookups ----------------------------------------------------------------------------------
    def _config(self, name: str, message: str) -> dict[str, str]:
        cfg = self.configs.connector_config(name)
        if cfg is None:
            raise NotFoundError(message.format(c=name))
        return cfg

    def connectors(self) -> list[str]:
        return self.configs.connectors()

    def connector_config(self, name: str) -> dict[str, str]:
        return self._config(name, "Connector {c} not found")

    def _type(self, config: dict[str, str]) -> str:
        try:
            return connector_type(self.plugins.find(config.get(CONNECTOR_CLASS, ""), ("source", "sink")))
        except PluginNotFoundError:
            return "unknown"

    def _connector_desc(self, config: dict[str, str]) -> PluginDesc:
        """KIP-891: the connector plugin in the version ``connector.plugin.version`` selects (newest if unset).
        Raises PluginNotFoundError, VersionedPluginLoadingError or InvalidVersionSpecificationError."""
        return connector_desc(self.services, config)

    def connector_info(self, name: str) -> dict[str, Any]:
        cfg = self._config(name, "Connector {c} not found")
        tasks = self.configs.task_configs(name)
        return {"name": name, "config": cfg, "tasks": [{"connector": name, "task": i} for i in range(len(tasks))],
                "type": self._type(cfg)}

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        self._config(name, "Connector {c} not found")
        return [{"id": {"connector": name, "task": i}, "config": c}
                for i, c in enumerate(self.configs.task_configs(name))]

    # -- status -------------------------------------------------------------------------------------
    @staticmethod
    def _state_json(status: Any, **extra: Any) -> dict[str, Any]:
        out = {**extra, "state": status.state, "worker_id": status.worker_id}
        if status.trace:
            out["trace"] = status.trace
        if status.version and status.version != "undefined":
            out["version"] = status.version
        return out

    def connector_status(self, name: str) -> dict[str, Any]:
        cfg = self.configs.connector_config(name)
        status = self.status.connector(name)
        if cfg is None or status is None:
            raise NotFoundError(f"No status found for connector {name}")
        tasks = [self._state_json(s, id=i) for i, s in self.status.tasks(name).items()]
        return {"name": name, "connector": self._state_json(status), "tasks": tasks, "type": self._type(cfg)}

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        status = self.status.tasks(name).get(task)
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return self._state_json(status, id=task)

    # -- create / update / delete ---------------------------------------------------------------
    def validate(self, config: dict[str, str]) -> dict[str, Any]:
        if not config.get(CONNECTOR_CLASS):
            raise BadRequestError(f"Connector config {_java_map(config)} contains no connector type")
        resolved, problems = dict(config), {}
        if self.wc.config_transformer is not None:  # validated resolved, as Kafka; answered as written
            for key, value in config.items():
                try:
                    resolved.update(self.wc.config_transformer.transform({key: value}))
                except ConfigException as e:
                    problems[key] = str(e)
        infos = validate_connector_config(resolved, self.plugins, self.wc["connector.client.config.override.policy"],
                                          self.wc.bool("topic.creation.enable"), self.wc)
        if resolved == config and not problems:
            return infos
        for entry in infos["configs"]:
            value = entry["value"]
            if value is not None and value["name"] in config and resolved[value["name"]] != config[value["name"]]:
                value["value"] = config[value["name"]]
            if value is not None and value["name"] in problems:
                value["errors"].append(problems.pop(value["name"]))
                infos["error_count"] += 1
        for key, problem in problems.items():  # keys without a definition
            infos["configs"].insert(0, {"definition": None, "value": {"name": key, "value": config[key],
                                        "recommended_values": [], "errors": [problem], "visible": True}})
            infos["error_count"] += 1
        return infos

    def _validated(self, name: str, config: dict[str, Any]) -> dict[str, str]:
        if not isinstance(config, dict):
            raise BadRequestError(NOT_A_CONFIG)
        config = {str(k): _setting(str(k), v) for k, v in config.items()}
        if not name or not name.strip():  # Kafka Connect's ConfigDef.NonEmptyString on ``name``
            raise BadRequestError(invalid_config_message(
                [f"Invalid value {name or ''} for configuration name: String may not be empty"]))
        self._check_connector_class(config.get(CONNECTOR_CLASS))
        if "name" in config and config["name"] != name:
            raise BadRequestError(f"Connector name configuration ({config['name']}) doesn't match connector name "
                                  f"in the URL ({name})")
        config["name"] = name
        infos = self.validate(config)
        if infos["error_count"]:
            raise BadRequestError(invalid_config_message(config_errors(infos)))
        return config

    def _check_fits(self, name: str, config: dict[str, str]) -> None:
        """Refuse a new connector whose ``tasks.max`` tasks this process cannot hold (their Kafka clients), with
        the limit and the ways past it (runtime/worker/capacity.py). In a group that spreads tasks, this process
        holds its share of them."""
        need = self._clients_needed(name, config)
        try:
            if need is not None:
                name, tasks, per_task = need
                check_connector_fits(name, math.ceil(tasks * self._share()), per_task)
        except ClientLimitError as e:
            raise BadRequestError(str(e)) from e

    def _check_all_fit(self, configs: dict[str, dict[str, str]]) -> None:
        """:meth:`_check_fits` for connectors created together: all their tasks must fit."""
        share = self._share()
        needs = [(n, tasks * share, per_task) for name, config in configs.items()
                 if (need := self._clients_needed(name, config)) for n, tasks, per_task in [need]]
        try:
            check_connectors_fit(needs)
        except ClientLimitError as e:
            raise BadRequestError(str(e)) from e

    def _share(self) -> float:
        """The part of new tasks this process will run: all of them, or its share when the group spreads them."""
        return self.placement.share() if self.placement is not None else 1.0

    def _clients_needed(self, name: str, config: dict[str, str]) -> tuple[str, int, int] | None:
        """(name, tasks, clients per task) of a new connector whose tasks build clients in this process."""
        if not self.executor.clients_in_process:
            return None
        try:
            tasks = max(1, int(config.get("tasks.max", "1")))
        except ValueError:
            return None
        return name, tasks, clients_per_task(self._type(config), config, self.wc, self.executor.fences_tasks)

    def _check_connector_class(self, class_name: str | None) -> None:
        """Kafka Connect refuses a connector class that is not installed before validating anything else."""
        if not class_name:
            return
        try:
            self.plugins.candidates(class_name, ("source", "sink"))
        except PluginNotFoundError:
            installed = ", ".join(_java_plugin_desc(d) for d in self.plugins.installed(("source", "sink")))
            raise BadRequestError(f"Failed to find any class that implements Connector and which name matches "
                                  f"{class_name}, available connectors are: {installed}") from None

    def create_connector(self, name: str, config: dict[str, Any], initial_state: str | None = None) -> dict:
        target = _initial_target(initial_state)
        with self._lock:
            if self.configs.connector_config(name) is not None:
                raise ConflictError(f"Connector {name} already exists")
            config = self._validated(name, config)
            if target is not TargetState.STOPPED:
                self._check_fits(name, config)
            self._create({name: config}, target)
            return self.connector_info(name)

    def create_connectors(self, configs: Any, initial_state: str | None = None) -> list[dict]:
        """Create many connectors at once, all or none: every config is validated first (the first refusal raises,
        naming the connector, and nothing is written), then the connectors start and every connector config and
        task config goes to the config topic in one write (:meth:`_create`). ``configs``: ``{name: config}``, or
        a list of REST create bodies (``{"name", "config"}``) or of configs with a ``name``. Returns each
        connector's info, in order."""
        target = _initial_target(initial_state)
        with self._lock:
            validated: dict[str, dict[str, str]] = {}
            for name, config in _bulk_entries(configs):
                if name in validated:
                    raise BadRequestError(f"Connector {name} is given more than once")
                if self.configs.connector_config(name) is not None:
                    raise ConflictError(f"Connector {name} already exists")
                try:
                    validated[name] = self._validated(name, config)
                except ConnectRestError as e:
                    raise error_for_status(e.status, f"Connector {name}: {e.message}") from None
            self._check_all_fit(validated)
            if validated:
                self._create(validated, target)
            return [self.connector_info(name) for name in validated]

    def _create(self, configs: dict[str, dict[str, str]], target: TargetState | None) -> None:
        """Start new connectors, write their configs and first task configs in one write of the config topic (one
        transaction of the leader), then start their tasks. Kafka Connect writes a new connector's config, starts
        the connector once it read the config back, and writes its task configs in a second write: the same
        records in the same order, with one round trip to the broker less. A failed write stops what started."""
        begun = {name: self._begin_connector(name, new=(config, target or TargetState.STARTED))
                 for name, config in configs.items()}
        tasks = {name: started[1] for name, started in begun.items() if started is not None and started[1] is not None}
        try:
            self.configs.put_connector_configs(configs, target, tasks)
        except BaseException:
            for name in configs:
                self._stop_connector(name)
                self.status.remove_connector(name)
            raise
        for name, task_configs in tasks.items():
            self._drop_task_statuses(name, len(task_configs))
        for started in begun.values():
            if started is not None:
                self._start_tasks(started[0])

    def update_connector(self, name: str, config: dict[str, Any]) -> dict:
        """PUT semantics: create the connector, or replace its config and restart it."""
        with self._lock:
            config = self._validated(name, config)
            if self.configs.connector_config(name) is None:
                self._check_fits(name, config)
                self._create({name: config}, None)
                return {**self.connector_info(name), "created": True}
            self._stop_connector(name)
            self.configs.put_connector_config(name, config)
            if self.wc.bool("topic.tracking.enable") and self._type(config) == "sink":
                drop_unconsumed_topics(self.status, name, config)  # KIP-558, with its tasks stopped
            self._start_connector(name)
            return {**self.connector_info(name), "created": False}

    def patch_connector_config(self, name: str, partial: dict[str, Any]) -> dict:
        with self._lock:
            config = self._config(name, "Connector {c} not found")
            if not isinstance(partial, dict):
                raise BadRequestError(NOT_A_CONFIG)
            for k, v in partial.items():
                if v is None:
                    config.pop(k, None)
                else:
                    config[k] = _setting(k, v)
            info = self.update_connector(name, config)
            info.pop("created", None)
            return info

    def delete_connector(self, name: str) -> None:
        with self._lock:
            self._config(name, "Connector {c} not found")
            self._stop_connector(name)
            self.configs.remove_connector(name)
            self.status.remove_connector(name)
            if self.wc.bool("topic.tracking.enable"):
                self.status.reset_topics(name)
            store = self._connector_offset_stores.pop(name, None)
            if store is not None:
                store.stop()

    def delete_connectors(self, selection: str | Iterable[str]) -> list[str]:
        """Delete the selected connectors (see :meth:`select`): their tasks stop together, and the tombstones of
        all of them are one write of the config topic. Returns their names."""
        with self._lock:
            names = self.select(selection)
            self._stop_connectors(names)
            if names:
                self.configs.remove_connectors(names)
            for name in names:
                self.status.remove_connector(name)
                if self.wc.bool("topic.tracking.enable"):
                    self.status.reset_topics(name)
                store = self._connector_offset_stores.pop(name, None)
                if store is not None:
                    store.stop()
            return names

    # -- many connectors at once ----------------------------------------------------------------------
    def select(self, selection: str | Iterable[str]) -> list[str]:
        """The connectors a bulk operation applies to, sorted: a ``str`` is a Python regular expression that
        must match the whole name (``".*"``: every connector; none matching is no error); any other iterable
        lists names, each of which must exist (404 naming the unknown ones, and nothing is done)."""
        known = self.configs.connectors()
        if isinstance(selection, (str, re.Pattern)):
            try:
                pattern = re.compile(selection)
            except re.error as e:
                raise BadRequestError(f"Invalid connector name pattern {selection!r}: {e}") from None
            return [name for name in known if pattern.fullmatch(name)]
        if isinstance(selection, (bytes, Mapping)) or not isinstance(selection, Iterable):
            raise BadRequestError("Connectors must be selected by a list of names or a regular expression (a "
                                  f"string), not {type(selection).__name__}")
        names = list(dict.fromkeys(selection))
        if not all(isinstance(name, str) for name in names):
            raise BadRequestError("Connector names must be strings")
        present = set(known)
        missing = [name for name in names if name not in present]
        if missing:
            raise NotFoundError(f"Unknown connector{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return sorted(names)

    def pause_connectors(self, selection: str | Iterable[str]) -> list[str]:
        """:meth:`pause_connector` of every selected connector; their target states are one write."""
        with self._lock:
            names = self.select(selection)
            stopped = [name for name in names if self.configs.target_state(name) is TargetState.STOPPED]
            self.configs.put_target_states(dict.fromkeys(names, TargetState.PAUSED))
            for name in names:
                running = self._running.get(name)
                if name not in stopped and running is not None and running.instance is not None:
                    self.status.put_connector(name, "PAUSED", version=running.desc.version)
                    for handle in running.tasks.values():
                        handle.transition_to(TargetState.PAUSED)
            self._stop_connectors(stopped)
            self._start_connectors(stopped)
            return names

    def resume_connectors(self, selection: str | Iterable[str]) -> list[str]:
        """:meth:`resume_connector` of every selected connector; their target states are one write, and the
        task configs of those that start again another."""
        with self._lock:
            names = self.select(selection)
            stopped = [name for name in names if self.configs.target_state(name) is TargetState.STOPPED]
            self.configs.put_target_states(dict.fromkeys(names, TargetState.STARTED))
            self._stop_connectors(stopped)
            starting = set(stopped)
            for name in names:
                running = self._running.get(name)
                if name in starting:
                    continue
                if running is None or running.instance is None:
                    starting.add(name)
                    continue
                self.status.put_connector(name, "RUNNING", version=running.desc.version)
                for handle in running.tasks.values():
                    handle.transition_to(TargetState.STARTED)
            self._start_connectors(sorted(starting))
            return names

    def stop_connectors(self, selection: str | Iterable[str]) -> list[str]:
        """:meth:`stop_connector` of every selected connector: their tasks stop together, and their empty task
        sets and STOPPED target states are one write."""
        with self._lock:
            names = self.select(selection)
            self._stop_connectors(names)
            if names:
                self.configs.stop_connectors(names, target_state=True)
            for name in names:
                self._drop_task_statuses(name, 0)
                self.status.put_connector(name, "STOPPED", version=self._version_of(name))
            return names

    def restart_connectors(self, selection: str | Iterable[str], include_tasks: bool = False,
                           only_failed: bool = False) -> dict[str, dict[str, Any] | None]:
        """:meth:`restart_connector` of every selected connector (their restart requests are one write):
        ``{name: None or its restart plan}``."""
        with self._lock:
            return self._restart_connectors(self.select(selection), include_tasks, only_failed)

    def _stop_connectors(self, names: Iterable[str]) -> None:
        """:meth:`_stop_connector` of many connectors, their tasks asked to stop all at once."""
        stopping = [running for name in names if (running := self._running.pop(name, None)) is not None]
        self._stop_runners([handle for running in stopping for handle in running.tasks.values()])
        for running in stopping:
            self._stop_connector_instance(running)

    # -- target states ------------------------------------------------------------------------------
    def pause_connector(self, name: str) -> None:
        with self._lock:
            self._config(name, "Unknown connector {c}")
            if self.configs.target_state(name) is TargetState.STOPPED:
                self._ensure_connector_started_for(name, TargetState.PAUSED)
                return
            self.configs.put_target_state(name, TargetState.PAUSED)
            running = self._running.get(name)
            if running is not None and running.instance is not None:
                self.status.put_connector(name, "PAUSED", version=running.desc.version)
                for handle in running.tasks.values():
                    handle.transition_to(TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        with self._lock:
            self._config(name, "Unknown connector {c}")
            previous = self.configs.target_state(name)
            if previous is TargetState.STOPPED:
                self._ensure_connector_started_for(name, TargetState.STARTED)
                return
            self.configs.put_target_state(name, TargetState.STARTED)
            running = self._running.get(name)
            if running is None or running.instance is None:
                self._start_connector(name)
                return
            self.status.put_connector(name, "RUNNING", version=running.desc.version)
            for handle in running.tasks.values():
                handle.transition_to(TargetState.STARTED)

    def _ensure_connector_started_for(self, name: str, state: TargetState) -> None:
        self.configs.put_target_state(name, state)
        self._stop_connector(name)
        self._start_connector(name)

    def stop_connector(self, name: str) -> None:
        """KIP-875: stop the connector and its tasks and commit an empty set of task configs (idempotent)."""
        with self._lock:
            self._config(name, "Unknown connector {c}")
            self._stop_connector(name)
            self.configs.clear_task_configs(name)
            self.configs.put_target_state(name, TargetState.STOPPED)
            self._drop_task_statuses(name, 0)
            self.status.put_connector(name, "STOPPED", version=self._version_of(name))

    def _version_of(self, name: str) -> str | None:
        try:
            return self._connector_desc(self.configs.connector_config(name)).version
        except (PluginNotFoundError, KeyError, TypeError, ValueError):
            return None

    # -- restart --------------------------------------------------------------------------------
    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False
                          ) -> dict[str, Any] | None:
        """Kafka Connect's restart: connector-only (returns None, REST 204) or a plan (REST 202)."""
        with self._lock:
            self._config(name, "Unknown connector: {c}")
            return self._restart_connectors([name], include_tasks, only_failed)[name]

    def _restart_connectors(self, names: list[str], include_tasks: bool, only_failed: bool
                            ) -> dict[str, dict[str, Any] | None]:
        statuses = {}
        for name in names:  # every one checked before any restarts
            statuses[name] = self.status.connector(name)
            if statuses[name] is None:
                raise NotFoundError(f"Status for connector {name} not found")
        if not only_failed and not include_tasks:
            for name in names:
                self._restart(name, True, set())
            return dict.fromkeys(names)
        self.configs.put_restart_requests(names, include_tasks, only_failed)
        plans: dict[str, dict[str, Any] | None] = {}
        for name, status in statuses.items():
            restart_connector = not only_failed or status.state == "FAILED"
            tasks = {i: s for i, s in self.status.tasks(name).items()
                     if include_tasks and (not only_failed or s.state == "FAILED")}
            plan = self.connector_status(name)
            if restart_connector:
                plan["connector"]["state"] = "RESTARTING"
                self.status.put_connector(name, "RESTARTING", version=status.version)
            for t in plan["tasks"]:
                if t["id"] in tasks:
                    t["state"] = "RESTARTING"
                    self.status.put_task(name, t["id"], "RESTARTING", version=tasks[t["id"]].version)
            self._restart(name, restart_connector, set(tasks))
            plans[name] = plan
        return plans

    def _restart(self, name: str, restart_connector: bool, tasks: set[int]) -> None:
        """Restart the connector instance (if asked) and the given tasks; other tasks keep running."""
        running = self._running.get(name)
        if running is None:
            self._start_connector(name)
            return
        self._stop_runners([running.tasks.pop(i) for i in sorted(tasks) if i in running.tasks])
        if self.placement is not None:  # tasks another member runs: it restarts them
            for i in sorted(tasks):
                if self.placement.owner((name, i)) not in (None, self.placement.me):
                    self.placement.restart_remote((name, i))
        if restart_connector:
            self._stop_connector_instance(running)
            del self._running[name]
            self._start_connector(name, keep_tasks=running.tasks)
        else:
            configs = self.configs.task_configs(name)
            for i in sorted(tasks):
                if i < len(configs):
                    self._start_task(running, i, configs[i])

    def restart_task(self, name: str, task: int) -> None:
        with self._lock:
            self._config(name, "Unknown connector: {c}")
            if task not in range(len(self.configs.task_configs(name))):
                raise NotFoundError(f"Unknown task: {name}-{task}")
            self._restart(name, False, {task})


    # -- connector and task lifecycles ------------------------------------------------------------
    def _start_connector(self, name: str, keep_tasks: dict | None = None) -> None:
        """Start the connector per its target state, and every task not among ``keep_tasks`` (tasks
        left running by a restart); all tasks restart if the task configs changed."""
        self._start_connectors([name], keep_tasks)

    def _start_connectors(self, names: Iterable[str], keep_tasks: dict | None = None) -> None:
        """:meth:`_start_connector` of each connector (``keep_tasks``: of a single one), with every new set of
        task configs written in one write of the config topic, before any of their tasks starts."""
        begun = [started for name in names if (started := self._begin_connector(name, keep_tasks)) is not None]
        changed = {running.name: configs for running, configs in begun if configs is not None}
        if changed:
            self._put_task_configs(changed)
        for running, _ in begun:
            self._start_tasks(running)

    def _start_tasks(self, running: RunningConnector) -> None:
        """Start each task of the stored task configs that is not running."""
        for i, task_config in enumerate(self.configs.task_configs(running.name)):
            if i not in running.tasks:
                self._start_task(running, i, task_config)

    def _begin_connector(self, name: str, keep_tasks: dict | None = None,
                         new: tuple[dict[str, str], TargetState] | None = None
                         ) -> tuple[RunningConnector, list[dict[str, str]] | None] | None:
        """Start the connector instance per its target state: None if no task is to start, else the running
        connector and its new task configs (None if the stored ones hold; its tasks are stopped if not).
        ``new``: the config and target state of a connector being created, not in the config topic yet."""
        config, target = new or (self.configs.connector_config(name),
                                 self.configs.target_state(name) or TargetState.STARTED)
        if config is None:
            return None
        try:
            desc = self._connector_desc(config)
        except (PluginNotFoundError, ValueError) as e:  # not installed, no version in range, bad range
            log.error("Connector %s cannot start: %s", name, e)
            self.status.put_connector(name, "FAILED", trace_of(e))
            # its tasks cannot start either (Kafka's tasks fail loading the same plugin): say so
            for index in range(len(self.configs.task_configs(name))):
                if index not in (keep_tasks or {}):
                    self.status.put_task(name, index, "FAILED", trace_of(e))
            return None
        if target is TargetState.STOPPED:
            self._running[name] = RunningConnector(name, desc, None)
            self._drop_task_statuses(name, 0)
            self.status.put_connector(name, "STOPPED", version=desc.version)
            return None
        running = RunningConnector(name, desc, None, dict(keep_tasks or self._adopted.pop(name, {})))
        self._running[name] = running
        raw = config
        try:
            config = self._resolve(config)  # config providers: at every start, so a restart picks up new values
            # KIP-158: invalid topic creation settings fail the connector and its tasks, with the
            # ConfigException as trace (Kafka builds a SourceConnectorConfig for each of them).
            check_connector_config(name, desc.type, config, self.wc.bool("topic.creation.enable"))
        except ConfigException as e:
            log.error("Connector %s failed to start", name, exc_info=True)
            self.status.put_connector(name, "FAILED", trace_of(e), desc.version)
            for task in range(len(self.configs.task_configs(name))):
                if task not in running.tasks:
                    self.status.put_task(name, task, "FAILED", trace_of(e))
            return None
        if target is TargetState.PAUSED and not self.configs.task_configs(name):
            # As Kafka Connect: only a started connector generates task configs, so a connector paused
            # with none (created PAUSED, or paused while STOPPED) has no tasks until it is resumed.
            self.status.put_connector(name, "PAUSED", version=desc.version)
            return None
        try:
            instance = desc.cls()
            instance.initialize(_Context(self, name))
            instance.start({k: v for k, v in config.items() if k != CONNECTOR_VERSION})  # KIP-891: removed
            running.instance = instance
            self.startups.connector(ok=True)
        except Exception as e:  # noqa: BLE001
            log.error("Connector %s failed to start", name, exc_info=True)
            self.startups.connector(ok=False)
            self.status.put_connector(name, "FAILED", trace_of(e), desc.version)
            return None
        self.status.put_connector(name, "PAUSED" if target is TargetState.PAUSED else "RUNNING",
                                  version=desc.version)
        try:
            task_configs = self._generate_task_configs(running, config, raw)
        except Exception as e:  # noqa: BLE001
            log.error("Connector %s failed to generate task configs", name, exc_info=True)
            self.status.put_connector(name, "FAILED", trace_of(e), desc.version)
            return None
        stored = self.configs.task_configs(name)
        if task_configs == stored and name not in self.configs.snapshot.inconsistent:
            return running, None
        if running.tasks:
            self._stop_runners(list(running.tasks.values()))
            running.tasks.clear()
        return running, task_configs

    def _resolve(self, config: dict[str, str]) -> dict[str, str]:
        """The connector config with config providers' placeholders resolved (raises ConfigException naming the
        key and the placeholder)."""
        transformer = self.wc.config_transformer
        return config if transformer is None else transformer.transform(config)

    def _generate_task_configs(self, running: RunningConnector, config: dict[str, str],
                               raw: dict[str, str]) -> list[dict[str, str]]:
        """The connector's task configs (generated from the resolved ``config``), with the placeholders of the
        ``raw`` config back: no resolved secret reaches the config topic (Kafka's ``reverseTransform``)."""
        max_tasks = int(config.get("tasks.max", "1"))
        instance = running.instance
        task_class = instance.task_class()
        configs = instance.task_configs(max_tasks)
        if len(configs) > max_tasks:
            raise ConnectRestError(f"The connector {running.name} has generated {len(configs)} tasks, which is "
                                   f"greater than {max_tasks}, the maximum number of tasks it is configured to "
                                   "create. ")
        # Kafka's own class name for built-in tasks, so that Kafka Connect can run these configs (and back)
        generated = [{**{k: _str(v) for k, v in c.items()}, "task.class": kafka_class_name(task_class)}
                     for c in configs]
        transformer = self.wc.config_transformer
        return generated if transformer is None else [transformer.restore(raw, c, config) for c in generated]

    def _drop_task_statuses(self, name: str, keep: int) -> None:
        for task_id in self.status.tasks(name):
            if task_id >= keep:
                self.status.remove_task(name, task_id)

    def _start_task(self, running: RunningConnector, index: int, task_config: dict[str, str]) -> None:
        name = running.name
        if self.placement is not None and not self.placement.place((name, index)):
            return  # another member of the group runs it
        task_class = running.instance.task_class() if running.instance is not None else None
        launched = self._launch(name, index, running.desc.type, self.configs.connector_config(name), task_config,
                                self.configs.target_state(name) or TargetState.STARTED, task_class)
        if launched is not None:
            running.tasks[index], running.task_plugins[index] = launched
            self._started_tasks.setdefault(name, set()).add(index)

    def _launch(self, name: str, index: int, ctype: str, config: dict[str, str], task_config: dict[str, str],
                state: TargetState, task_class: type | None) -> tuple[TaskHandle, TaskPlugins] | None:
        """Build task ``index`` of ``name`` and start it on the executor; None (its status FAILED) if it cannot."""
        task_id = TaskId(name, index)
        clients = None
        if self.executor.clients_in_process:  # fail it before it builds anything if the process cannot hold it
            try:
                clients = reserve_task_clients(f"Task {task_id}", clients_per_task(
                    ctype, config, self.wc, self.executor.fences_tasks))
            except ClientLimitError as e:
                log.error("%s", e)
                self.status.put_task(name, index, "FAILED", trace_of(e))
                return None
        spec = TaskSpec(task_id, config, task_config, state, ctype,
                        self.executor.reserve_generation(task_id, state), fenced=self.executor.fences_tasks)
        try:
            runner, task_plugins = build_runner(
                spec, self.services, self.offset_stores_for(name) if ctype == "source" else None, task_class,
                clients=clients)
        except Exception as e:  # noqa: BLE001
            if clients is not None:
                clients.release()
            log.error("Failed to start task %s", spec.task_id, exc_info=True)
            self.startups.task(ok=False)
            self.status.put_task(name, index, "FAILED", trace_of(e))
            return None
        try:
            handle = self.executor.start(spec, runner)
        except BaseException:
            if clients is not None:
                clients.release()
            self.startups.task(ok=False)
            raise
        self.startups.task(ok=True)
        return handle, task_plugins

    # -- tasks of a group that spreads them (runtime/group/) ------------------------------------------
    def desired_tasks(self) -> set[tuple[str, int]]:
        """Every task the config topic asks to run: (connector, index) of each connector not STOPPED."""
        return {(name, index) for name, count in self.configs.running_task_counts().items() for index in range(count)}

    def start_assigned(self, name: str, index: int) -> None:
        """Start a task the group's assignment gave the leader (if its connector runs here and it does not yet)."""
        with self._lock:
            running = self._running.get(name)
            configs = self.configs.task_configs(name)
            if running is None or running.instance is None or index in running.tasks or index >= len(configs):
                return
            self._start_task(running, index, configs[index])

    def stop_assigned(self, tasks: Iterable[tuple[str, int]]) -> None:
        """Stop tasks the assignment took from the leader (committing their offsets), all at once."""
        with self._lock:  # not a task placed here again meanwhile (a resume, a restart of its connector)
            placement = self.placement
            handles = [h for name, index in sorted(tasks) if (running := self._running.get(name)) is not None
                       and (placement is None or placement.owner((name, index)) != placement.me)
                       and (h := running.tasks.pop(index, None)) is not None]
            self._stop_runners(handles)

    def start_hosted(self, name: str, index: int, config: dict[str, str], task_config: dict[str, str],
                     state: TargetState) -> TaskHandle | None:
        """Start a task another member's assignment gave this runtime (no connector instance runs here)."""
        try:
            ctype = self._connector_desc(config).type
        except Exception as e:  # noqa: BLE001 - not installed here, no version in range: as Kafka, the task fails
            log.error("Task %s-%s cannot start: %s", name, index, e)
            self.status.put_task(name, index, "FAILED", trace_of(e))
            return None
        launched = self._launch(name, index, ctype, config, task_config, state, None)
        return launched[0] if launched is not None else None

    def _report_ended(self, task_id: TaskId, state: str, trace: str | None) -> None:
        """An executor saw an instance end by itself: write the status that fits, unless the task is no longer
        meant to run here (stopped, reconfigured, deleted)."""
        running = self._running.get(task_id.connector)
        if (running is not None and task_id.task in running.tasks) or self.hosts_task(task_id):
            self.status.put_task(task_id.connector, task_id.task, state, trace, hosted=True)

    def fence_zombies(self, name: str) -> None:
        """With a fencing executor, make sure no earlier instance of the connector's tasks (one still
        stopping, a Spark retry) can commit again: claim each task's fence, as Kafka Connect fences zombie
        tasks before it alters offsets under KIP-618."""
        if not self.executor.fences_tasks:
            return
        self._claim_fences(name, self._started_tasks.get(name, set()) | self.executor.known_tasks(name))

    def _claim_fences(self, name: str, indexes: Iterable[int]) -> None:
        control = self.executor.control
        for index in sorted(indexes):
            if control is not None:  # a generation of no instance: every earlier one knows it was succeeded
                control.put_control(name, index, control.next_generation(name, index), "STOPPED")
            fence = TaskFence(self.wc["group.id"], TaskId(name, index), self.wc.client_config())
            fence.claim()
            fence.close()

    def _put_task_configs(self, configs: dict[str, list[dict[str, str]]]) -> None:
        """Write a new generation of task configs of each connector (its tasks stopped), in one write. KIP-618:
        tasks of the old generation that the new one does not have are fenced first (the others are fenced by
        their successors' start)."""
        for name, tasks in configs.items():
            old = len(self.configs.task_configs(name))
            if old > len(tasks) and exactly_once_enabled(self.wc) and self._type(self.configs.connector_config(name)
                                                                                 or {}) == "source":
                self._claim_fences(name, range(len(tasks), old))
        self.configs.put_many_task_configs(configs)
        for name, tasks in configs.items():
            self._drop_task_statuses(name, len(tasks))

    def offset_stores_for(self, name: str) -> list[OffsetStore]:
        """The worker's offsets store, then the connector's own (``offsets.storage.topic``) if it has one."""
        stores = [self.offsets]
        store = self.connector_offset_store(name)
        if store is not None:
            stores.append(store)
        return stores

    # -- offsets (KIP-875) ----------------------------------------------------------------------------
    @property
    def lock(self) -> threading.RLock:
        """Held while offsets are altered or reset, so that no lifecycle change interleaves."""
        return self._lock

    def connector_offset_store(self, name: str) -> OffsetStore | None:
        """The connector's own offsets store (see :func:`~connect_magics.runtime.worker.offset_stores.connector_store_spec`),
        started on first use and replaced when its config changed; None if it uses only the worker's."""
        with self._lock:
            config = self.configs.connector_config(name)
            spec = connector_store_spec(config, self.wc) if config is not None else None
            store = self._connector_offset_stores.get(name)
            if store is not None and (spec is None or (store.topic, store.client_config) != spec):
                self._connector_offset_stores.pop(name).stop()
                store = None
            if spec is not None and store is None:
                store = start_connector_store(spec, self.wc)
                self._connector_offset_stores[name] = store
            return store

    def stop_handles(self, handles: list[TaskHandle]) -> None:
        """Ask these task instances to stop together and wait for each (up to the graceful timeout)."""
        self._stop_runners(handles)

    def _stop_runners(self, handles: list[TaskHandle]) -> None:
        """Stop ``handles`` together; ``task.shutdown.graceful.timeout.ms`` bounds the whole stop, not each task's
        (Kafka's ``Worker.awaitStopTasks``): tasks still running at its end are left (threads) or cancelled."""
        deadline = time.monotonic() + self.wc.int("task.shutdown.graceful.timeout.ms") / 1000
        for handle in handles:
            handle.stop()
        for handle in handles:
            if not handle.join(max(0.0, deadline - time.monotonic())):
                log.warning("Graceful stop of task %s failed; it keeps running in the background", handle.id)

    def _stop_connector_instance(self, running: RunningConnector) -> None:
        if running.instance is not None:
            try:
                running.instance.stop()
            except Exception:  # noqa: BLE001
                log.warning("Connector %s raised while stopping", running.name, exc_info=True)
            running.instance = None

    def _stop_connector(self, name: str) -> None:
        running = self._running.pop(name, None)
        if running is None:
            return
        self._stop_runners(list(running.tasks.values()))
        self._stop_connector_instance(running)

    def request_reconfiguration(self, name: str) -> None:
        """Regenerate task configs in the background; restart the tasks if they changed."""
        def reconfigure() -> None:
            with self._lock:
                running = self._running.get(name)
                config = self.configs.connector_config(name)
                if running is None or running.instance is None or config is None:
                    return
                try:
                    new = self._generate_task_configs(running, self._resolve(config), config)
                except Exception as e:  # noqa: BLE001
                    self.status.put_connector(name, "FAILED", trace_of(e), running.desc.version)
                    return
                if new != self.configs.task_configs(name):
                    self._stop_runners(list(running.tasks.values()))
                    running.tasks.clear()
                    self._put_task_configs({name: new})
                    for i, c in enumerate(new):
                        self._start_task(running, i, c)
        self._background.submit(reconfigure)

    def fail_connector(self, name: str, error: BaseException) -> None:
        running = self._running.get(name)
        self.status.put_connector(name, "FAILED", trace_of(error), running.desc.version if running else None)

    def task_handle(self, name: str, task: int) -> TaskHandle | None:
        running = self._running.get(name)
        return running.tasks.get(task) if running else None

    def plugin_metrics(self) -> dict[str, dict[str, Any]]:
        """KIP-891's class and version metrics of every connector and task of this worker (from memory)."""
        groups: dict[str, dict[str, Any]] = {}
        for name, running in list(self._running.items()):
            status = self.status.connector(name)
            groups.update(connector_group(name, running.desc, status.state if status else None))
            for index in sorted(running.tasks):
                task_plugins = running.task_plugins.get(index)
                if task_plugins is not None:
                    groups.update(task_groups(name, index, task_plugins))
        return groups

    def _handles(self) -> list[tuple[str, int, TaskHandle]]:
        """Every task instance running here: the herder's and those hosted for the group's assignment."""
        out = [(name, index, handle) for name, running in list(self._running.items())
               for index, handle in sorted(running.tasks.items())]
        return out + [(name, index, handle) for (name, index), handle in sorted(self.hosted_handles().items())]

    def error_metrics(self) -> dict[str, dict[str, Any]]:
        """Kafka Connect's ``task-error-metrics`` of every running task (KIP-298 counters)."""
        return {group_name("task-error-metrics", connector=name, task=index): handle.error_metrics()
                for name, index, handle in self._handles()}

    def task_metrics(self) -> dict[str, dict[str, Any]]:
        """Kafka Connect's ``source-task-metrics`` / ``sink-task-metrics`` of every running task, and the measured
        part of its ``connector-task-metrics`` (batch sizes, commit times, running and paused ratios)."""
        groups: dict[str, dict[str, Any]] = {}
        for name, index, handle in self._handles():
            metrics = handle.metrics()
            groups[group_name(handle.metrics_group, connector=name, task=index)] = {
                k: v for k, v in metrics.items() if k not in CONNECTOR_TASK_METRICS}
            groups[group_name("connector-task-metrics", connector=name, task=index)] = {
                k: v for k, v in metrics.items() if k in CONNECTOR_TASK_METRICS}
        return groups

    def worker_metrics(self) -> dict[str, dict[str, Any]]:
        """Kafka Connect's ``connect-worker-metrics``: the connectors and tasks running here, their tasks by
        state, and the startups of both."""
        tasks: dict[str, list[int]] = {}
        for name, index, _ in self._handles():
            tasks.setdefault(name, []).append(index)
        groups = {"connect-worker-metrics": {"connector-count": len(self._running),
                                             "task-count": sum(map(len, tasks.values())),
                                             **self.startups.metrics()}}
        for name, indexes in tasks.items():
            statuses = self.status.tasks(name)
            states = [statuses[i].state if i in statuses else "UNASSIGNED" for i in indexes]
            groups[group_name("connect-worker-metrics", connector=name)] = {
                f"connector-{state.lower()}-task-count": states.count(state)
                for state in ("RUNNING", "PAUSED", "FAILED", "UNASSIGNED", "RESTARTING")} | {
                "connector-destroyed-task-count": 0, "connector-total-task-count": len(states)}
        return groups

    def all_errors(self, config: dict[str, str]) -> list[str]:
        return config_errors(self.validate(config))


def _initial_target(initial_state: str | None) -> TargetState | None:
    """KIP-980's ``initial_state`` as a target state (None: the default, STARTED)."""
    if initial_state is None:
        return None
    target = INITIAL_STATES.get(str(initial_state).upper())
    if target is None:
        raise BadRequestError(f"Invalid initial state {initial_state}: must be one of RUNNING, PAUSED, STOPPED")
    return target


def _bulk_entries(configs: Any) -> list[tuple[str, Any]]:
    """``(name, config)`` of each connector of a bulk create: from ``{name: config}``, or a list of REST create
    bodies ``{"name": ..., "config": {...}}`` or of configs with their ``name``. 400 naming what is wrong."""
    if isinstance(configs, Mapping):
        entries = list(configs.items())
    elif isinstance(configs, (list, tuple)):
        entries = []
        for i, item in enumerate(configs):
            if not isinstance(item, Mapping):
                raise BadRequestError(f"Connector {i} of the list: {NOT_A_CONFIG}, not {type(item).__name__}")
            if set(item) <= {"name", "config"} and isinstance(item.get("config"), Mapping):
                entries.append((item.get("name"), dict(item["config"])))
            else:
                entries.append((item.get("name"), dict(item)))
            if entries[-1][0] is None:
                raise BadRequestError(f"Connector {i} of the list has no name: give each a 'name'")
    else:
        raise BadRequestError("Connectors to create must be a mapping of names to configs or a list of configs, "
                              f"not {type(configs).__name__}")
    for name, config in entries:
        if not isinstance(name, str):
            raise BadRequestError(f"Invalid connector name {name!r}: must be a string")
        if not isinstance(config, Mapping):
            raise BadRequestError(f"Connector {name}: {NOT_A_CONFIG}")
    return [(name, dict(config)) for name, config in entries]


def _str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_str(v) for v in value)
    return str(value)


def _setting(key: str, value: Any) -> str:
    """A connector setting as the string it is stored as; 400 naming ``key`` for a value that is none of a
    string, number, boolean or list of those (Kafka Connect's REST layer cannot read one either)."""
    scalars = (str, int, float, bool)
    if isinstance(value, scalars) or (isinstance(value, (list, tuple)) and all(isinstance(v, scalars)
                                                                               for v in value)):
        return _str(value)
    kind = "null" if value is None else "an object" if isinstance(value, dict) else type(value).__name__
    raise BadRequestError(f"Invalid value {value!r} for configuration {key}: connector settings must be strings, "
                          f"numbers, booleans or lists of those, not {kind}")


def _java_plugin_desc(desc: PluginDesc) -> str:
    """A plugin as Kafka's ``PluginDesc.toString()`` shows it in error messages."""
    return (f"PluginDesc{{klass=class {python_name(desc.cls)}, name='{desc.class_name}', version='{desc.version}', "
            f"encodedVersion={desc.version}, type={desc.type}, typeName='{desc.type}', location='{desc.location}'}}")


def _java_map(config: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"


__all__ = ["Herder", "ConnectorContext"]
