"""``ConnectRuntime``: the Python API of connect_magics, REST-shaped so that every surface is a thin map.

>>> from connect_magics import ConnectRuntime
>>> rt = ConnectRuntime(bootstrap_servers="127.0.0.1:9092", group_id="nb")  # doctest: +SKIP
>>> rt.create_connector("lines", {"connector.class": "FileStreamSource",
...                               "file": "/tmp/in.txt", "topic": "lines"})  # doctest: +SKIP
{'name': 'lines', 'config': {...}, 'tasks': [{'connector': 'lines', 'task': 0}], 'type': 'source'}
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from connect_magics.errors import BadRequestError, ConflictError
from connect_magics.runtime.config.connector_config import check_worker_converters
from connect_magics.runtime.config.worker_config import TOPIC_KEYS, WorkerConfig
from connect_magics.runtime.config.worker_keys import check_worker_keys
from connect_magics.runtime.executors import EXECUTORS
from connect_magics.runtime.executors.base import Executor
from connect_magics.runtime.executors.threads import ThreadExecutor
from connect_magics.runtime.group.assignor import TaskAssignor
from connect_magics.runtime.group.forwarding import RequestChannel
from connect_magics.runtime.group.membership import GroupMembership, Role, membership_group
from connect_magics.runtime.group.task_worker import TaskWorker
from connect_magics.runtime.herder import Herder
from connect_magics.runtime.metrics import MetricsRegistry
from connect_magics.runtime.plugins.registry import Plugins
from connect_magics.runtime.stopped import stopped_for
from connect_magics.storage.assignment_store import AssignmentStore
from connect_magics.storage.authorization import (
    KafkaAuthorizationError,
    check_connection,
    check_group_operations,
    check_topic_operations,
    principal,
)
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.config_store import ConfigStore
from connect_magics.storage.fence import FencedError, ProducerFence
from connect_magics.storage.kafka_log import ensure_topics
from connect_magics.storage.offset_queries import query_consumer
from connect_magics.storage.offset_store import OffsetStore
from connect_magics.storage.status_store import StatusStore
from connect_magics.storage.task_control import TaskControlStore

log = logging.getLogger(__name__)

COMPACT = {"cleanup.policy": "compact"}

F = TypeVar("F", bound=Callable[..., Any])
#: The writes of the Python API: applied by the group's leader, forwarded to it by followers.
LEADER_METHODS: set[str] = set()


def on_leader(method: F) -> F:
    """Mark a write of the API: the leader applies it, a follower forwards it (runtime/group/forwarding.py)."""
    LEADER_METHODS.add(method.__name__)

    @functools.wraps(method)
    def call(self: ConnectRuntime, *args: Any, **kwargs: Any) -> Any:
        return self._on_leader(method.__name__, args, kwargs)
    return call  # type: ignore[return-value]


def leader_transactional_id(group_id: str) -> str:
    """The transactional id the leader writes the config topic with, as Kafka Connect's leader.

    >>> leader_transactional_id("nb")
    'connect-cluster-nb'
    """
    return f"connect-cluster-{group_id}"


class ConnectRuntime:
    """A Kafka Connect worker inside this Python process, with all of its state in Kafka.

    ``worker_config`` takes Kafka Connect's worker property names. ``executor`` is ``"threads"``
    (tasks on driver threads, the default), ``"processes"`` (each task in a process of its own, for
    tasks that need more than one core's worth of Python), ``"spark"`` (each task a Spark job on the
    executors of ``spark``, by default the active SparkSession, else a local one; see docs/spark.md) or an
    :class:`~connect_magics.runtime.executors.base.Executor`.
    Runtimes with one ``group_id`` form a group (in any number of processes): the broker's group
    coordinator makes one the leader, which runs every connector and task and applies every write; the
    others forward writes to it and take over when it leaves (docs/design.md, "One group").
    Errors raise :class:`~connect_magics.errors.ConnectRestError` with the HTTP status Kafka Connect
    would answer. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, bootstrap_servers: str, group_id: str = "connect-magics",
                 worker_config: Mapping[str, Any] | None = None, spark: Any = None,
                 executor: str | Executor = "threads", plugins: Plugins | None = None) -> None:
        self.worker_config = WorkerConfig(bootstrap_servers, group_id, worker_config)
        check_worker_keys(self.worker_config)
        self.closed = False  # True once close() ran (widgets refreshing in the background stop then)
        #: The URL of a local Schema Registry started beside this runtime (``%connect start --schema-registry``)
        #: for converters' ``schema.registry.url``; None otherwise.
        self.schema_registry_url: str | None = None
        self.spark = spark
        self.plugins = plugins or Plugins(plugin_path=self.worker_config.get("plugin.path"))
        check_worker_converters(self.worker_config, self.plugins)
        if not isinstance(executor, Executor) and executor not in EXECUTORS:  # before any topic
            raise ValueError(f"Invalid value {executor} for executor: must be one of {', '.join(EXECUTORS)} "
                             "or an Executor")
        wc = self.worker_config
        client, admin_config = wc.client_config(), wc.client_config("admin")
        check_connection(admin_config, logger=client_logger("admin"))  # a refused login fails now, not in 30 s
        self.admin = AdminClient({**admin_config, "logger": client_logger("admin")})
        internal: dict[str, tuple[int, int, dict[str, str]]] = {}
        for topic, partitions, rf in (
                ("config.storage.topic", 1, "config.storage.replication.factor"),
                ("offset.storage.topic", wc.int("offset.storage.partitions"), "offset.storage.replication.factor"),
                ("status.storage.topic", wc.int("status.storage.partitions"), "status.storage.replication.factor"),
                ("task.control.storage.topic", 1, "config.storage.replication.factor")):
            internal.setdefault(wc[topic], (partitions, wc.int(rf), COMPACT))  # a name given twice: the first wins
        created = ensure_topics(self.admin, internal, client_config=admin_config)  # missing ones in one request
        if created[wc["config.storage.topic"]] != 1:
            raise ValueError(f"Topic '{wc['config.storage.topic']}' supplied via the 'config.storage.topic' property "
                             "is required to have a single partition in order to guarantee consistency of connector "
                             f"configurations, but found {created[wc['config.storage.topic']]} partitions.")
        self._check_access(admin_config)  # every missing ACL of the worker at once, before anything reads or writes
        self.executor = executor if isinstance(executor, Executor) else self._executor(executor)
        self.leader_fence = ProducerFence(leader_transactional_id(group_id), client,
                                          what=f"The leader of group {group_id}")
        self.config_store = ConfigStore(wc["config.storage.topic"], client, fence=self.leader_fence,
                                        on_change=lambda _kind, _name: self._configs_changed())
        self.offset_store = OffsetStore(wc["offset.storage.topic"], client)
        self.status_store = StatusStore(wc["status.storage.topic"], client, wc.worker_id, wc.retry_policy,
                                        wc.int("status.storage.request.timeout.ms"))
        self.metrics_registry = MetricsRegistry()  # other parts add their groups: see runtime/metrics.py
        self.metrics_registry.register("status-store", self.status_store.metrics)
        self.membership = GroupMembership(wc, wc["config.storage.topic"], self._take_role)
        self.requests = RequestChannel(wc["task.control.storage.topic"], client, self.membership.member_name)
        self._stores = [self.config_store, self.offset_store, self.status_store, self.requests]
        #: Whether the group spreads tasks over its members (``task.assignment=spread``, tasks on threads), else
        #: the leader runs them all (docs/design.md, "One group").
        self.spreads_tasks = wc["task.assignment"] == "spread" and isinstance(self.executor, ThreadExecutor) \
            and self.executor.fences_tasks  # a moved task is safe only if its old instance can be fenced
        self.assignor: TaskAssignor | None = None
        self.task_worker: TaskWorker | None = None
        if self.spreads_tasks:
            self.assignments = AssignmentStore(wc["task.control.storage.topic"], client, self._group_changed)
            self._stores.append(self.assignments)
        for store in self._stores:
            store.start()
        self.herder = Herder(wc, self.plugins, self.config_store, self.offset_store, self.status_store,
                             self.executor)
        if self.spreads_tasks:
            self.task_worker = TaskWorker(self.herder, self.config_store, self.assignments,
                                          self.membership.member_name, wc.worker_id,
                                          wc.int("heartbeat.interval.ms") / 1000).start()
        self.metrics_registry.register("plugin-versions", self.herder.plugin_metrics)  # KIP-891
        self.metrics_registry.register("task-errors", self.herder.error_metrics)  # KIP-298
        self.metrics_registry.register("tasks", self.herder.task_metrics)
        self.metrics_registry.register("worker", self.herder.worker_metrics)
        self._rewinds: dict[str, list[Any]] = {}  # per connector, the rewinds that undo_rewind can take back
        self._leading = False
        self.membership.start()
        # Bounded: a predecessor that died holds the leadership until its session times out.
        self.membership.wait_for_role(wc.int("session.timeout.ms") / 1000 + 5)
        if self.membership.error is not None:  # a missing ACL of the group or the leader's transactional id
            self.close()
            raise self.membership.error

    def _check_access(self, admin_config: Mapping[str, Any]) -> None:
        """Raise a :class:`~connect_magics.storage.authorization.KafkaAuthorizationError` naming every ACL the
        worker's principal lacks on its internal topics and its group (docs/security.md); the transactional ids
        are checked when they are claimed."""
        wc = self.worker_config
        # A client of its own, dropped after: an admin client that asked a group coordinator can answer a late
        # response after its request ended, and librdkafka then aborts the process (issue 4605: a test process
        # died as its broker came back from an outage, seconds after this check on the runtime's lasting client).
        admin = AdminClient({**admin_config, "logger": client_logger("admin")})
        missing = check_topic_operations(admin, admin_config, {wc[key]: ("READ", "WRITE") for key in TOPIC_KEYS})
        missing += check_group_operations(admin, {membership_group(wc["group.id"]): ("READ",)})
        if missing:
            raise KafkaAuthorizationError(principal(wc.client_config()), missing,
                                          f"the worker of group {wc['group.id']} needs them to start")

    # -- the group ------------------------------------------------------------------------------------
    @property
    def role(self) -> str:
        """``"leader"``, ``"follower"`` or ``"joining"`` (the coordinator has not assigned this runtime yet)."""
        return self.membership.role.value

    def group_members(self) -> list[dict[str, Any]]:
        """The group's runtimes as the broker's coordinator describes them: ``name``, ``host``, ``leader``.

        >>> [m["name"] for m in rt.group_members() if m["leader"]]  # doctest: +SKIP
        ['myhost:8083/4242']
        """
        return self.membership.members()

    def _configs_changed(self) -> None:
        """A config record was read: this member's tasks may have to follow (the leader's herder places new
        tasks itself)."""
        task_worker = self.__dict__.get("task_worker")
        if task_worker is not None:
            task_worker.wake()

    def _group_changed(self) -> None:
        """An assignment or a member's report was read."""
        for part in (self.__dict__.get("task_worker"), self.__dict__.get("assignor")):
            if part is not None:
                part.wake()

    def _take_role(self, role: Role) -> None:
        """Take up the duties of ``role`` (on the membership's thread)."""
        if role is Role.LEADER and not self._leading:
            self.leader_fence.claim()  # an earlier leader can no longer write the config topic
            for store in (self.config_store, self.offset_store):
                store.read_to_end()
            self._leading = True
            adopted = None
            if self.task_worker is not None:  # what it ran as a follower goes on under the herder
                adopted = self.task_worker.hand_over()
                self.assignor = TaskAssignor(self.assignments, self.herder, self.membership.member_name,
                                             self.worker_config)
                self.assignor.start()
                self.herder.placement = self.assignor
            self.herder.start(adopted)  # every task claims its own fence as it starts
            self.requests.serve(self._apply_forwarded)
        elif role is not Role.LEADER and self._leading:
            self._leading = False
            self.requests.stop_serving()
            if self.assignor is not None:
                self.assignor.stop()
                self.assignor = None
            self.herder.stop_all()
            self.herder.placement = None
            self.leader_fence.close()
        if role is Role.FOLLOWER and self.task_worker is not None and not self.closed:
            self.task_worker.activate()

    def _on_leader(self, method: str, args: tuple, kwargs: dict) -> Any:
        timeout = self.worker_config.int("leader.request.timeout.ms") / 1000
        deadline = time.monotonic() + timeout
        self.membership.wait_for_role(timeout)
        if self.membership.error is not None:
            raise self.membership.error
        if self._leading:
            try:
                return getattr(type(self), method).__wrapped__(self, *args, **kwargs)
            except FencedError as e:
                self.membership.step_down()
                raise ConflictError(f"This runtime is no longer the leader of group {self.worker_config['group.id']}"
                                    f" (another runtime took over): {e}") from e
        try:
            return self.requests.forward(method, _json_args(args), _json_args(kwargs),
                                         max(1.0, deadline - time.monotonic()), self.membership.leader)
        except TypeError as e:
            raise BadRequestError(f"Cannot forward {method} to the group's leader: {e}") from None

    def _apply_forwarded(self, method: str, args: list, kwargs: dict) -> Any:
        if method not in LEADER_METHODS:
            raise BadRequestError(f"Unknown forwarded request {method!r}")
        if not self._leading:
            raise ConflictError(f"This runtime stopped leading group {self.worker_config['group.id']} before it "
                                "could apply the request; retry it")
        return self._on_leader(method, tuple(args), kwargs)

    def _executor(self, name: str) -> Executor:
        if name == "threads":  # a runtime that lost its group must not commit
            wc = self.worker_config
            return ThreadExecutor(fence_tasks=True, control=TaskControlStore(wc["task.control.storage.topic"],
                                                                             wc.client_config()).start())
        if name == "processes":
            from connect_magics.runtime.executors.processes import ProcessExecutor

            return ProcessExecutor(self.worker_config, self.plugins)
        from connect_magics.spark import require_pyspark

        require_pyspark("The spark executor")
        from connect_magics.spark.executor import SparkExecutor
        from connect_magics.spark.session import spark_session

        self.spark = spark_session(self.spark)
        return SparkExecutor(self.spark, self.worker_config, self.plugins)

    # -- connectors ---------------------------------------------------------------------------------
    @on_leader
    def create_connector(self, name: str, config: Mapping[str, Any], initial_state: str | None = None) -> dict:
        """Create and start a connector; returns ``{"name", "config", "tasks", "type"}``."""
        return self.herder.create_connector(name, _as_dict(config), initial_state)

    @on_leader
    def create_connectors(self, configs: Mapping[str, Mapping[str, Any]] | list[Mapping[str, Any]],
                          initial_state: str | None = None) -> list[dict]:
        """Create and start many connectors in one call, all or none; returns each one's
        ``{"name", "config", "tasks", "type"}``, in order.

        ``configs`` maps names to configs, or lists REST create bodies (``{"name": ..., "config": {...}}``) or
        configs with a ``name``. Every config is validated before anything is written: a bad one refuses the
        whole call with a 400 naming the connector and the setting, an existing name a 409, and nothing is
        created. Then the connectors start, and all their configs and task configs are one transaction of the
        config topic: the cost does not grow by a broker round trip per connector.
        ``initial_state``: ``"RUNNING"`` (default), ``"PAUSED"`` or ``"STOPPED"``, for all of them.

        >>> rt.create_connectors({f"lines-{i}": {"connector.class": "FileStreamSource", "file": f"/data/{i}.txt",
        ...                                      "topic": "lines"} for i in range(100)})  # doctest: +SKIP
        [{'name': 'lines-0', 'config': {...}, 'tasks': [{'connector': 'lines-0', 'task': 0}], 'type': 'source'}, ...]
        """
        return self.herder.create_connectors(configs, initial_state)

    def connectors(self) -> list[str]:
        return self.herder.connectors()

    def connector_info(self, name: str) -> dict:
        return self.herder.connector_info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        return self.herder.connector_config(name)

    def task_configs(self, name: str) -> list[dict]:
        return self.herder.task_configs(name)

    @on_leader
    def update_connector(self, name: str, config: Mapping[str, Any]) -> dict:
        """Create or replace the config (PUT); the result has ``created`` True if it was new."""
        return self.herder.update_connector(name, _as_dict(config))

    @on_leader
    def patch_connector_config(self, name: str, partial: Mapping[str, Any]) -> dict:
        """Change some keys (a None value removes a key) and restart the connector."""
        return self.herder.patch_connector_config(name, _as_dict(partial))

    @on_leader
    def delete_connector(self, name: str) -> None:
        self.herder.delete_connector(name)

    def password_keys(self, config: Mapping[str, str]) -> set[str]:
        """The keys of a connector config whose values are passwords (type PASSWORD), for masking."""
        from connect_magics.runtime.config.connector_config import password_keys

        return password_keys(self.plugins, config)

    def validate_connector_config(self, config: Mapping[str, Any]) -> dict:
        """Kafka Connect's ConfigInfos for this config: ``{"name", "error_count", "groups", "configs"}``."""
        return self.herder.validate({str(k): None if v is None else str(v) for k, v in config.items()})

    # -- state ------------------------------------------------------------------------------------------
    def connector_status(self, name: str) -> dict:
        return self.herder.connector_status(name)

    def task_status(self, name: str, task_id: int) -> dict:
        return self.herder.task_status(name, task_id)

    @on_leader
    def pause_connector(self, name: str) -> None:
        self.herder.pause_connector(name)

    @on_leader
    def resume_connector(self, name: str) -> None:
        self.herder.resume_connector(name)

    @on_leader
    def stop_connector(self, name: str) -> None:
        self.herder.stop_connector(name)

    @on_leader
    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False) -> dict | None:
        """None for a connector-only restart (REST 204), else the restart plan (REST 202)."""
        return self.herder.restart_connector(name, include_tasks, only_failed)

    @on_leader
    def restart_task(self, name: str, task_id: int) -> None:
        self.herder.restart_task(name, task_id)

    # -- many connectors at once ----------------------------------------------------------------------
    # ``connectors``: a list of names (each must exist: 404 naming the unknown ones, and nothing is done), or a
    # string, a Python regular expression matching whole names (".*": every connector). Each returns the names
    # it applied to, sorted; the config-topic records of all of them are one transaction.

    @on_leader
    def pause_connectors(self, connectors: str | list[str]) -> list[str]:
        """Pause every selected connector.

        >>> rt.pause_connectors("orders-.*")  # doctest: +SKIP
        ['orders-eu', 'orders-us']
        """
        return self.herder.pause_connectors(connectors)

    @on_leader
    def resume_connectors(self, connectors: str | list[str]) -> list[str]:
        """Resume every selected connector (paused or stopped).

        >>> rt.resume_connectors(["orders-eu", "orders-us"])  # doctest: +SKIP
        ['orders-eu', 'orders-us']
        """
        return self.herder.resume_connectors(connectors)

    @on_leader
    def stop_connectors(self, connectors: str | list[str]) -> list[str]:
        """Stop every selected connector (KIP-875's STOPPED: no tasks, offsets can be altered).

        >>> rt.stop_connectors(".*")  # doctest: +SKIP
        ['lines', 'orders-eu', 'orders-us']
        """
        return self.herder.stop_connectors(connectors)

    @on_leader
    def delete_connectors(self, connectors: str | list[str]) -> list[str]:
        """Delete every selected connector.

        >>> rt.delete_connectors("tmp-.*")  # doctest: +SKIP
        ['tmp-1', 'tmp-2']
        """
        return self.herder.delete_connectors(connectors)

    @on_leader
    def restart_connectors(self, connectors: str | list[str], include_tasks: bool = False,
                           only_failed: bool = False) -> dict[str, dict | None]:
        """Restart every selected connector: ``{name: None}`` for connector-only restarts, else
        ``{name: restart plan}`` as :meth:`restart_connector` answers.

        >>> rt.restart_connectors(".*", include_tasks=True, only_failed=True)  # doctest: +SKIP
        {'lines': {'name': 'lines', 'connector': {'state': 'RUNNING', ...}, 'tasks': [...], 'type': 'source'}}
        """
        return self.herder.restart_connectors(connectors, include_tasks, only_failed)

    @functools.cached_property
    def offset_queries(self) -> Consumer:
        """A consumer of the runtime's cluster that only answers offset queries (``query_offsets`` of
        storage/offset_queries.py; ends are high watermarks), made on first use."""
        return query_consumer(self.worker_config.client_config("admin"), read_committed=False)

    def kafka_cluster_id(self) -> str | None:
        """The id of the Kafka cluster holding the runtime's state (``GET /`` answers it)."""
        return self.admin.list_topics(timeout=10).cluster_id

    # -- lifecycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every task (committing offsets), flush statuses, leave the group (another runtime of it takes
        over at once) and close the clients."""
        self.closed = True
        if self.assignor is not None:
            self.assignor.stop()
        self.herder.close()
        if self.task_worker is not None:
            self.task_worker.close()
        self.status_store.flush(10)
        self.membership.close()
        for store in reversed(self._stores):
            store.stop()
        self.executor.close()
        if "offset_queries" in self.__dict__:
            self.offset_queries.close()
        # Admin clients have no close(): they are destroyed with their last reference. A closed runtime can wait for
        # the garbage collector a long time (it is held in reference cycles, and tasks raise the collector's first
        # threshold), and its admin clients stayed connected meanwhile, reconnecting through broker restarts.
        self.herder.services.close()
        self.admin = _ClosedAdmin()

    def __enter__(self) -> ConnectRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- topic creation (KIP-158) -----------------------------------------------------------------
    # Everything below serves the explain API and the record of created topics; the rules are in
    # runtime/topics/creation.py, the admin calls in runtime/worker/topic_admin.py (docs/topic-creation.md).

    def explain_topic_creation(self, config_or_connector_name: str | Mapping[str, Any],
                               topics: list[str] | tuple[str, ...] | None = None,
                               include_existing: bool = True) -> dict[str, Any]:
        """Which topic creation group each topic matches and why, and what it would be created with.

        ``config_or_connector_name`` is a connector config (a dict, nothing is created) or the name of
        an existing connector. ``topics`` are names to explain first; with ``include_existing`` the
        broker's existing topics follow. The answer has ``connector``, ``type``, ``enabled``, ``reason``,
        ``groups`` (in the order they are tried), ``broker_defaults`` (what ``-1`` stands for), ``topics``
        (per topic: ``group``, ``included_by``, ``excluded_by``, ``reason``, ``groups_tried``,
        ``partitions``, ``replication_factor``, ``configs``, ``settings_from``, ``exists``, ``action``,
        ``effective_partitions``, ``effective_replication_factor``, ``broker_check``,
        ``created_by_connector``) and ``created_topics`` (names this connector created).
        Invalid settings or topic names raise a 400 naming them; an unknown connector a 404.

        Example::

            >>> answer = rt.explain_topic_creation({"connector.class": "SequenceSource",  # doctest: +SKIP
            ...     "topic.creation.default.partitions": "3",
            ...     "topic.creation.default.replication.factor": "1"},
            ...     topics=["orders"], include_existing=False)
            >>> answer["topics"][0]["group"], answer["topics"][0]["partitions"]  # doctest: +SKIP
            ('default', 3)
        """
        from connect_magics.errors import BadRequestError
        from connect_magics.runtime.topics.creation import (
            TopicCreation,
            TopicCreationConfigError,
            inactive_reason,
            topic_name_error,
        )
        from connect_magics.runtime.worker.topic_admin import explain_topics

        name: str | None = None
        if isinstance(config_or_connector_name, str):
            name = config_or_connector_name
            config = self.herder.connector_config(name)
        elif isinstance(config_or_connector_name, Mapping):
            config = {str(k): str(v).lower() if isinstance(v, bool) else str(v)
                      for k, v in config_or_connector_name.items()}
        else:
            raise BadRequestError("config_or_connector_name must be a connector config (dict) or a connector "
                                  f"name (str), not {type(config_or_connector_name).__name__}")
        if topics is None:
            topics = []
        elif isinstance(topics, (str, bytes)) or not isinstance(topics, (list, tuple)):
            raise BadRequestError(f"topics must be a list of topic names, not {type(topics).__name__}")
        for topic in topics:
            problem = topic_name_error(topic)
            if problem is not None:
                raise BadRequestError(f"Invalid value {topic!r} in topics: {problem}")
        ctype = self.herder._type(config)
        worker_enabled = self.worker_config.bool("topic.creation.enable")
        try:
            topic_creation = TopicCreation.EMPTY if ctype == "sink" else TopicCreation.from_connector_config(
                config, worker_enabled, lambda message: None)
        except TopicCreationConfigError as e:
            raise BadRequestError(f"Connector configuration has {len(e.errors)} invalid topic creation "
                                  f"setting(s):\n{e}") from None
        created = self.status_store.created_topics(name) if name is not None else {}
        answer = explain_topics(self.admin, topic_creation, inactive_reason(config, worker_enabled, ctype),
                                topics, include_existing, created)
        return {"connector": name, "type": ctype, **answer, "created_topics": sorted(created)}

    def created_topics(self, name: str) -> list[dict[str, Any]]:
        """The topics this connector's tasks created, with how: ``name``, ``connector``, ``task``, ``group``,
        ``partitions``, ``replication_factor``, ``configs``, ``createdTimestamp`` (ms). Recorded in the
        status topic, so a new runtime on the same group knows them; forgotten when the connector is
        deleted. Topics that already existed are not listed.

        Example::

            >>> [t["name"] for t in rt.created_topics("orders-source")]  # doctest: +SKIP
            ['orders']
        """
        self.herder.connector_config(name)  # 404 for an unknown connector
        return list(self.status_store.created_topics(name).values())

    # -- end of topic creation ----------------------------------------------------------------------

    # -- offsets (KIP-875) --------------------------------------------------------------------------
    def get_offsets(self, name: str) -> dict[str, list[dict[str, Any]]]:
        """The connector's offsets, as ``GET /connectors/{name}/offsets`` answers them.

        >>> rt.get_offsets("lines")  # doctest: +SKIP
        {'offsets': [{'partition': {'filename': '/tmp/in.txt'}, 'offset': {'position': 1234}}]}
        """
        from connect_magics.runtime.offsets import get_offsets

        return get_offsets(self.herder, name)

    @on_leader
    def alter_offsets(self, name: str, body: Mapping[str, Any]) -> dict[str, str]:
        """Change the offsets of some partitions of a STOPPED connector (a null offset resets one).

        >>> rt.stop_connector("sink")  # doctest: +SKIP
        >>> rt.alter_offsets("sink", {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0},
        ...                                        "offset": {"kafka_offset": 10}}]})  # doctest: +SKIP
        {'message': 'The offsets for this connector have been altered successfully'}
        """
        from connect_magics.runtime.offsets import alter_offsets

        return alter_offsets(self.herder, name, body)

    @on_leader
    def reset_offsets(self, name: str) -> dict[str, str]:
        """Forget every offset of a STOPPED connector (idempotent); it starts from the beginning when resumed.

        >>> rt.reset_offsets("lines")["message"]  # doctest: +SKIP
        'The offsets for this connector have been reset successfully'
        """
        from connect_magics.runtime.offsets import reset_offsets

        return reset_offsets(self.herder, name)

    def preview(self, connector: str | Mapping[str, Any], records: int = 10, position: str = "earliest",
                timeout: float = 10.0, name: str | None = None) -> Any:
        """What ``connector`` (a connector's name, or a config to try before creating it) does to ``records``
        records, writing nothing: the records as its converters made them (``before``), after its
        transformations and predicates (``after``: what a sink task's ``put`` receives, or what a source
        would produce) and the ones that failed, with the stage and what error handling would do
        (``failures``), as DataFrames of a :class:`~connect_magics.runtime.preview.Preview`. A sink's records
        are read from ``position`` (``"earliest"``, ``"latest"``, ``"committed"``) by a consumer of no group;
        a source's task is started on its own and polled up to ``timeout`` seconds, and nothing is produced
        or committed.

        >>> p = rt.preview("orders-sink", records=5)   # doctest: +SKIP
        >>> p.after                                     # doctest: +SKIP
        >>> rt.preview({"connector.class": "FileStreamSink", "topics": "orders", "file": "/tmp/x",
        ...             "transforms": "mask", ...})     # doctest: +SKIP
        """
        from connect_magics.runtime.preview import preview

        if isinstance(connector, str):
            return preview(self.herder, connector, None, records, position, timeout)
        return preview(self.herder, name, connector, records, position, timeout)

    def rewind(self, name: str, to: Any = None, by: Any = None, apply: bool = True) -> Any:
        """Rewind sink connector ``name`` to time ``to`` (epoch ms, a datetime or an ISO 8601 string; without a
        zone, local time) or by duration ``by`` (a timedelta, ``"10m"``, ``"PT1H"``): for each partition it
        consumes, the first offset at or after that time (the broker's offsets-for-times; the end if there is
        none). Applied with KIP-875: the connector is stopped, its offsets altered and its target state
        (running, paused, stopped) restored; the offsets it replaced are kept for :meth:`undo_rewind`. With
        ``apply=False`` nothing changes: the plan is only shown. Returns the plan as a pandas DataFrame
        (``kafka_topic``, ``kafka_partition``, ``kafka_offset_before``, ``kafka_offset``).

        >>> rt.rewind("orders-sink", by="15m")                  # doctest: +SKIP
        >>> rt.rewind("orders-sink", to="2026-11-26T10:00:00Z", apply=False)  # doctest: +SKIP
        >>> rt.undo_rewind("orders-sink")                       # doctest: +SKIP
        """
        from connect_magics.runtime.rewind import parse_duration, parse_time, rewind_plan  # pandas: on use

        if (to is None) == (by is None):
            raise BadRequestError("Give the rewind one of 'to' (a time) or 'by' (a duration)")
        to_ms = parse_time(to) if to is not None else int(time.time() * 1000) - parse_duration(by)
        plan = rewind_plan(self.herder, name, to_ms)
        if apply:
            stopped_for(self, name, lambda: self.alter_offsets(name, plan.request()))
            self._rewinds.setdefault(name, []).append(plan)
        return plan.frame()

    def undo_rewind(self, name: str) -> Any:
        """Put back the offsets the last :meth:`rewind` of ``name`` in this runtime replaced (a partition that
        had none is reset), the same way; returns that as a DataFrame, as :meth:`rewind` does.

        >>> rt.undo_rewind("orders-sink")  # doctest: +SKIP
        """
        if not self._rewinds.get(name):
            raise BadRequestError(f"Connector {name} has no rewind to undo in this runtime")
        plan = self._rewinds[name][-1].undone()
        stopped_for(self, name, lambda: self.alter_offsets(name, plan.request()))
        self._rewinds[name].pop()
        return plan.frame()

    def offsets_frame(self, name: str) -> Any:
        """The connector's offsets as a pandas DataFrame: one row per partition, a column per partition
        field and per offset field (sink: ``kafka_topic``, ``kafka_partition``, ``kafka_offset``).

        >>> df = rt.offsets_frame("lines")  # doctest: +SKIP
        >>> df.loc[0, "position"] = 0; rt.alter_offsets_from_frame("lines", df)  # doctest: +SKIP
        """
        from connect_magics.runtime.offsets import offsets_view
        from connect_magics.spark.offsets_frame import offsets_to_frame

        view, sink = offsets_view(self.herder, name)  # the stores' own maps: the frame copies their values
        return offsets_to_frame(view, sink=sink, connector=name)

    def alter_offsets_from_frame(self, name: str, frame: Any, partition_columns: list[str] | None = None,
                                 offset_columns: list[str] | None = None) -> dict[str, str]:
        """Alter the offsets to the rows of a pandas or Spark DataFrame (see :meth:`offsets_frame`); a row
        whose offset columns are all null resets that partition. Which columns are partition fields comes
        from the frame's metadata, else the arguments, else the connector's current offsets."""
        from connect_magics.spark.offsets_frame import frame_to_request

        return self.alter_offsets(name, frame_to_request(frame, partition_columns, offset_columns,
                                                         known=lambda: self.get_offsets(name)))

    def read_topic(self, topic: str, converter: Any = None, starting: Any = "earliest", ending: Any = "latest",
                   max_records: int | None = None, reader: str = "auto", options: Mapping[str, str] | None = None,
                   spark: Any = None) -> Any:
        """``topic``'s records as a Spark DataFrame (``topic``, ``partition``, ``offset``, ``timestamp``, ``key``,
        ``value``, ``headers``), keys and values decoded by ``converter``: None for the worker's converters,
        a name or :class:`~connect_magics.api.converters.Converter` for both, or a connector-style config
        (``{"value.converter": ..., "value.converter.schemas.enable": "false"}``). Reads the offsets from
        ``starting`` to ``ending`` (``"earliest"``, ``"latest"`` or ``{partition: offset}``), at most
        ``max_records``, with Spark's Kafka source when the session has it, else a consumer (``reader``:
        ``"auto"``, ``"kafka-source"``, ``"consumer"``). Session: ``spark``, else the runtime's, else the
        active one, else a local one. See :mod:`connect_magics.spark.topic_frame`.

        >>> rt.read_topic("orders", {"value.converter": "JsonConverter",
        ...                          "value.converter.schemas.enable": "false"}).select("value.*")  # doctest: +SKIP
        """
        from connect_magics.spark import require_pyspark

        require_pyspark("Reading a topic as a DataFrame")
        from connect_magics.spark.topic_frame import read_topic_with

        return read_topic_with(self.plugins, self.worker_config, spark or self.spark, topic, converter, starting,
                               ending, max_records, reader, options)

    def schemas(self, subject: str | None = None, url: str | None = None) -> Any:
        """The Schema Registry's subjects (subject, latest version, id, type) as a pandas DataFrame, or the
        versions of ``subject`` (version, id, type, schema). The registry: ``url``, else the one
        ``%connect start --schema-registry`` started, else the worker's ``value.converter.schema.registry.url``
        (or ``key.converter.``'s) with that converter's credentials and TLS settings.

        >>> rt.schemas()  # doctest: +SKIP
                 subject  latest version  id  type
        0  orders-value               2   3  AVRO
        """
        import pandas as pd

        from connect_magics.converters.schema_registry import URL, subjects_table

        settings: dict[str, str] = {}
        for prefix in ("key.converter.", "value.converter."):
            found = {k[len(prefix):]: v for k, v in self.worker_config.originals.items() if k.startswith(prefix)}
            if URL in found:
                settings = found
        if url or self.schema_registry_url:
            settings = {**settings, URL: url or self.schema_registry_url}
        if URL not in settings:
            raise BadRequestError("No Schema Registry: pass url=, start one with %connect start --schema-registry, "
                                  "or set value.converter.schema.registry.url in the worker config")
        return pd.DataFrame(subjects_table(settings, subject))

    # -- topics and metrics (KIP-558, KIP-1278) -----------------------------------------------------
    # Status calls: answered from memory, never waiting on the broker (docs/status-and-topics.md).

    def connector_topics(self, name: str) -> dict[str, dict[str, list[str]]]:
        """The topics connector ``name`` has used since it was created or its topics were last reset, as
        ``GET /connectors/{name}/topics`` answers them. Like Kafka Connect there is no existence check
        (an unknown connector has no topics); 403 when ``topic.tracking.enable`` is false.

        >>> rt.connector_topics("orders-sink")  # doctest: +SKIP
        {'orders-sink': {'topics': ['orders']}}
        """
        from connect_magics.runtime.topics.tracking import check_allowed

        self._check_topics_name(name)
        check_allowed(self.worker_config)
        return {name: {"topics": self.status_store.topics(name)}}

    @on_leader
    def reset_connector_topics(self, name: str) -> None:
        """Forget the topics connector ``name`` has used (a tombstone for each in the status topic), as
        ``PUT /connectors/{name}/topics/reset`` (202). No existence check; 403 when topic tracking, or
        resetting it (``topic.tracking.allow.reset``), is disabled.

        >>> rt.reset_connector_topics("orders-sink"); rt.connector_topics("orders-sink")  # doctest: +SKIP
        {'orders-sink': {'topics': []}}
        """
        from connect_magics.runtime.topics.tracking import check_allowed

        self._check_topics_name(name)
        check_allowed(self.worker_config, reset=True)
        self.status_store.reset_topics(name)

    def metrics(self) -> dict[str, dict[str, Any]]:
        """Every metric group contributed to :attr:`metrics_registry`, as ``{group: {metric: value}}``,
        including KIP-1278's ``status-backing-store-metrics``.

        >>> rt.metrics()["status-backing-store-metrics"]  # doctest: +SKIP
        {'status-update-retry-total': 0, 'status-update-failure-total': 0, 'status-update-success-total': 7}
        """
        return self.metrics_registry.collect()

    @staticmethod
    def _check_topics_name(name: object) -> None:
        from connect_magics.errors import BadRequestError

        if not isinstance(name, str):
            raise BadRequestError(f"Invalid connector name {name!r}: must be a string, not {type(name).__name__}")
    # -- end of topics and metrics ------------------------------------------------------------------

    # -- plugins and versions (KIP-891) -------------------------------------------------------------
    # Discovery, isolation and selection are in runtime/plugins/registry.py and runtime/plugins/loader.py, version
    # configs and validation in runtime/config/connector_config.py, metrics in runtime/plugins/metrics.py
    # (docs/plugins.md).

    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """The installed plugins as ``GET /connector-plugins`` lists them: one entry per version, by type
        (sink, source, then with ``connectors_only=False`` transformation, predicate, converter,
        header_converter), class name and ascending version.

        >>> rt.connector_plugins()[:2]  # doctest: +SKIP
        [{'class': 'vplug.sink.VersionedSinkConnector', 'type': 'sink', 'version': '1.0.0'},
         {'class': 'vplug.sink.VersionedSinkConnector', 'type': 'sink', 'version': '2.0.0'}]
        """
        return self.plugins.listing(connectors_only)

    def connector_plugin_config(self, plugin: str, version: str | None = None) -> list[dict[str, Any]]:
        """The config definitions (ConfigKeyInfo) of a plugin in one version, as
        ``GET /connector-plugins/{plugin}/config?version=`` answers; ``None`` or ``"latest"``: the newest.

        404 ``Unknown plugin {plugin}.``; 400 ``Invalid version specification: {version}``; 400 when no
        installed version matches.

        >>> [k["name"] for k in rt.connector_plugin_config("VersionedSource", version="2.0.0")]  # doctest: +SKIP
        ['topic', 'interval.ms', 'greeting']
        """
        from connect_magics.runtime.config.connector_config import plugin_config_keys

        return plugin_config_keys(self.plugins, plugin, version)
    # -- end of plugins and versions ------------------------------------------------------------------


class _ClosedAdmin:
    """A closed runtime's admin client: any use says the runtime is closed."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("This ConnectRuntime is closed; start a new one")


def _as_dict(config: Any) -> Any:
    """A copy of a config mapping; anything else as it is, for the herder to refuse with a 400."""
    return dict(config) if isinstance(config, Mapping) else config


def _json_args(values: Any) -> Any:
    """Arguments as JSON carries them (mappings and tuples become dicts and lists)."""
    if isinstance(values, Mapping):
        return {str(k): _json_args(v) for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [_json_args(v) for v in values]
    if isinstance(values, (set, frozenset)):
        return sorted(_json_args(v) for v in values)
    if isinstance(values, re.Pattern):  # a connector selection: its expression
        return values.pattern
    return values
