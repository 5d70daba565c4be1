"""``ConnectRuntime``: the Python API of connect_magics, REST-shaped so that every surface is a thin map.

>>> from connect_magics import ConnectRuntime
>>> rt = ConnectRuntime(bootstrap_servers="127.0.0.1:9092", group_id="nb")  # doctest: +SKIP
>>> rt.create_connector("lines", {"connector.class": "FileStreamSource",
...                               "file": "/tmp/in.txt", "topic": "lines"})  # doctest: +SKIP
{'name': 'lines', 'config': {...}, 'tasks': [{'connector': 'lines', 'task': 0}], 'type': 'source'}
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka.admin import AdminClient

from connect_magics.runtime.executor import Executor, ThreadExecutor
from connect_magics.runtime.herder import Herder
from connect_magics.runtime.plugins import Plugins
from connect_magics.runtime.worker_config import WorkerConfig
from connect_magics.storage.config_store import ConfigStore
from connect_magics.storage.kafka_log import client_logger, ensure_topic
from connect_magics.storage.offset_store import OffsetStore
from connect_magics.storage.status_store import StatusStore

log = logging.getLogger(__name__)

COMPACT = {"cleanup.policy": "compact"}


class ConnectRuntime:
    """A Kafka Connect worker inside this Python process, with all of its state in Kafka.

    ``worker_config`` takes Kafka Connect's worker property names. ``executor`` is ``"threads"``
    (tasks on driver threads, the default) or an :class:`~connect_magics.runtime.executor.Executor`.
    Errors raise :class:`~connect_magics.errors.ConnectRestError` with the HTTP status Kafka Connect
    would answer. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, bootstrap_servers: str, group_id: str = "connect-magics",
                 worker_config: Mapping[str, Any] | None = None, spark: Any = None,
                 executor: str | Executor = "threads", plugins: Plugins | None = None) -> None:
        self.worker_config = WorkerConfig(bootstrap_servers, group_id, worker_config)
        self.spark = spark
        self.plugins = plugins or Plugins()
        self.executor = executor if isinstance(executor, Executor) else self._executor(executor)
        wc = self.worker_config
        client = wc.client_config()
        self.admin = AdminClient({**wc.client_config("admin"), "logger": client_logger("admin")})
        config_topic = wc["config.storage.topic"]
        partitions = ensure_topic(self.admin, config_topic, 1, wc.int("config.storage.replication.factor"), COMPACT)
        if partitions != 1:
            raise ValueError(f"Topic '{config_topic}' supplied via the 'config.storage.topic' property is required to "
                             "have a single partition in order to guarantee consistency of connector "
                             f"configurations, but found {partitions} partitions.")
        ensure_topic(self.admin, wc["offset.storage.topic"], wc.int("offset.storage.partitions"),
                     wc.int("offset.storage.replication.factor"), COMPACT)
        ensure_topic(self.admin, wc["status.storage.topic"], wc.int("status.storage.partitions"),
                     wc.int("status.storage.replication.factor"), COMPACT)
        self.config_store = ConfigStore(config_topic, client)
        self.offset_store = OffsetStore(wc["offset.storage.topic"], client)
        self.status_store = StatusStore(wc["status.storage.topic"], client, wc.worker_id, wc.retry_policy,
                                        wc.int("status.storage.request.timeout.ms"))
        self._stores = [self.config_store, self.offset_store, self.status_store]
        for store in self._stores:
            store.start()
        self.herder = Herder(wc, self.plugins, self.config_store, self.offset_store, self.status_store,
                             self.executor)
        self.herder.start()

    def _executor(self, name: str) -> Executor:
        if name == "threads":
            return ThreadExecutor()
        if name == "spark":
            from connect_magics.spark.executor import SparkExecutor

            return SparkExecutor(self.spark)
        raise ValueError(f"Invalid value {name} for executor: must be 'threads' or 'spark'")

    # -- connectors ---------------------------------------------------------------------------------
    def create_connector(self, name: str, config: Mapping[str, Any], initial_state: str | None = None) -> dict:
        """Create and start a connector; returns ``{"name", "config", "tasks", "type"}``."""
        return self.herder.create_connector(name, dict(config), initial_state)

    def connectors(self) -> list[str]:
        return self.herder.connectors()

    def connector_info(self, name: str) -> dict:
        return self.herder.connector_info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        return self.herder.connector_config(name)

    def task_configs(self, name: str) -> list[dict]:
        return self.herder.task_configs(name)

    def update_connector(self, name: str, config: Mapping[str, Any]) -> dict:
        """Create or replace the config (PUT); the result has ``created`` True if it was new."""
        return self.herder.update_connector(name, dict(config))

    def patch_connector_config(self, name: str, partial: Mapping[str, Any]) -> dict:
        """Change some keys (a None value removes a key) and restart the connector."""
        return self.herder.patch_connector_config(name, dict(partial))

    def delete_connector(self, name: str) -> None:
        self.herder.delete_connector(name)

    def validate_connector_config(self, config: Mapping[str, Any]) -> dict:
        """Kafka Connect's ConfigInfos for this config: ``{"name", "error_count", "groups", "configs"}``."""
        return self.herder.validate({str(k): str(v) for k, v in config.items()})

    # -- state ------------------------------------------------------------------------------------------
    def connector_status(self, name: str) -> dict:
        return self.herder.connector_status(name)

    def task_status(self, name: str, task_id: int) -> dict:
        return self.herder.task_status(name, task_id)

    def pause_connector(self, name: str) -> None:
        self.herder.pause_connector(name)

    def resume_connector(self, name: str) -> None:
        self.herder.resume_connector(name)

    def stop_connector(self, name: str) -> None:
        self.herder.stop_connector(name)

    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False) -> dict | None:
        """None for a connector-only restart (REST 204), else the restart plan (REST 202)."""
        return self.herder.restart_connector(name, include_tasks, only_failed)

    def restart_task(self, name: str, task_id: int) -> None:
        self.herder.restart_task(name, task_id)

    # -- plugins ------------------------------------------------------------------------------------
    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        return self.plugins.listing(connectors_only)

    # -- lifecycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every task (committing offsets), flush statuses, and close the clients."""
        self.herder.close()
        self.status_store.flush(10)
        for store in reversed(self._stores):
            store.stop()
        self.executor.close()

    def __enter__(self) -> ConnectRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
