"""``RemoteRuntime``: the Python API of :class:`~connect_magics.ConnectRuntime` over a Kafka Connect REST API
(any Apache Kafka Connect 3.x/4.x cluster, or ``connect-magics worker``), so that the magics and the
widgets manage a real Connect cluster.

Every method is one REST call; an error answer raises :class:`~connect_magics.ConnectRestError` with
the cluster's status and message. What REST does not offer (topic-creation explanations, task
metrics) raises :class:`RemoteUnsupportedError` saying so.

>>> rt = RemoteRuntime("http://connect:8083", auth=("admin", "secret"))  # doctest: +SKIP
>>> rt.connectors()                                                      # doctest: +SKIP
['lines']
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from connect_magics.errors import ConnectRestError


class RemoteUnsupportedError(ConnectRestError):
    """A call a Kafka Connect REST API cannot answer (501)."""

    status = 501


def _name(name: str) -> str:
    return quote(name, safe="")


class RemoteRuntime:
    """A Kafka Connect cluster at ``url``, with HTTP basic ``auth=(user, password)`` or a bearer token
    (``auth="TOKEN"``), driven through the same methods as a :class:`~connect_magics.ConnectRuntime`.

    The REST API does not reach the cluster's Kafka: with ``bootstrap_servers`` (and the client settings
    ``client_config``, e.g. SASL), what needs the broker works too (reading a topic, sink offsets checked
    against the topics); without them, those calls say so.

    >>> rt = RemoteRuntime("http://connect:8083", bootstrap_servers="kafka:9092")  # doctest: +SKIP
    >>> rt.read_topic("orders", max_records=5).toPandas()                        # doctest: +SKIP
    """

    def __init__(self, url: str, auth: tuple[str, str] | str | None = None, timeout: float = 60.0,
                 bootstrap_servers: str | None = None, client_config: Mapping[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.bootstrap_servers = bootstrap_servers
        self.client_config = dict(client_config or {})
        self.spark: Any = None  # the SparkSession read_topic uses (None: the active one, else a local one)
        self._plugins: Any = None
        self._admin: Any = None
        self._offset_queries: Any = None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if isinstance(auth, tuple):
            self._headers["Authorization"] = "Basic " + base64.b64encode(":".join(auth).encode()).decode()
        elif auth:
            self._headers["Authorization"] = f"Bearer {auth}"

    def _call(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        params = {k: v for k, v in query.items() if v is not None}
        target = self.url + path + (("?" + urlencode(params, doseq=True)) if params else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(target, data=data, method=method, headers=self._headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read()
                status = response.status
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                error = json.loads(text)
                message = error.get("message") or e.reason
            except ValueError:
                message = text.decode(errors="replace").strip() or str(e.reason)
            raise ConnectRestError(str(message), e.code) from None
        except urllib.error.URLError as e:
            raise ConnectRestError(f"Cannot reach the Kafka Connect REST API at {self.url}: {e.reason}", 503) \
                from None
        if status == 204 or not text:
            return None
        return json.loads(text)

    @staticmethod
    def _flag(value: bool) -> str:
        return "true" if value else "false"

    # -- connectors -----------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        return self._call("GET", "/connectors")

    def create_connector(self, name: str, config: Mapping[str, Any], initial_state: str | None = None) -> dict:
        body: dict[str, Any] = {"name": name, "config": dict(config)}
        if initial_state is not None:
            body["initial_state"] = initial_state
        return self._call("POST", "/connectors", body)

    def connector_info(self, name: str) -> dict:
        return self._call("GET", f"/connectors/{_name(name)}")

    def connector_config(self, name: str) -> dict[str, str]:
        return self._call("GET", f"/connectors/{_name(name)}/config")

    def task_configs(self, name: str) -> list[dict]:
        return self._call("GET", f"/connectors/{_name(name)}/tasks")

    def update_connector(self, name: str, config: Mapping[str, Any]) -> dict:
        return self._call("PUT", f"/connectors/{_name(name)}/config", dict(config))

    def patch_connector_config(self, name: str, partial: Mapping[str, Any]) -> dict:
        return self._call("PATCH", f"/connectors/{_name(name)}/config", dict(partial))

    def delete_connector(self, name: str) -> None:
        self._call("DELETE", f"/connectors/{_name(name)}")

    def validate_connector_config(self, config: Mapping[str, Any]) -> dict:
        plugin = str(config.get("connector.class") or "")
        if not plugin:
            raise ConnectRestError(f"Connector config {dict(config)} contains no connector type", 400)
        return self._call("PUT", f"/connector-plugins/{_name(plugin)}/config/validate", dict(config))

    def connector_status(self, name: str) -> dict:
        return self._call("GET", f"/connectors/{_name(name)}/status")

    def task_status(self, name: str, task_id: int) -> dict:
        return self._call("GET", f"/connectors/{_name(name)}/tasks/{int(task_id)}/status")

    def pause_connector(self, name: str) -> None:
        self._call("PUT", f"/connectors/{_name(name)}/pause")

    def resume_connector(self, name: str) -> None:
        self._call("PUT", f"/connectors/{_name(name)}/resume")

    def stop_connector(self, name: str) -> None:
        self._call("PUT", f"/connectors/{_name(name)}/stop")

    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False) -> dict | None:
        return self._call("POST", f"/connectors/{_name(name)}/restart", includeTasks=self._flag(include_tasks),
                          onlyFailed=self._flag(only_failed))

    def restart_task(self, name: str, task_id: int) -> None:
        self._call("POST", f"/connectors/{_name(name)}/tasks/{int(task_id)}/restart")

    def kafka_cluster_id(self) -> str | None:
        return self._call("GET", "/").get("kafka_cluster_id")

    # -- offsets (KIP-875) ----------------------------------------------------------------------
    def get_offsets(self, name: str) -> dict[str, list[dict[str, Any]]]:
        return self._call("GET", f"/connectors/{_name(name)}/offsets")

    def alter_offsets(self, name: str, body: Mapping[str, Any]) -> dict[str, str]:
        return self._call("PATCH", f"/connectors/{_name(name)}/offsets", dict(body))

    def reset_offsets(self, name: str) -> dict[str, str]:
        return self._call("DELETE", f"/connectors/{_name(name)}/offsets")

    def offsets_frame(self, name: str) -> Any:
        """The connector's offsets as a pandas DataFrame (as :meth:`ConnectRuntime.offsets_frame`)."""
        from connect_magics.spark.offsets_frame import offsets_to_frame

        sink = self.connector_info(name)["type"] == "sink"
        return offsets_to_frame(self.get_offsets(name), sink=sink, connector=name)

    def alter_offsets_from_frame(self, name: str, frame: Any, partition_columns: list[str] | None = None,
                                 offset_columns: list[str] | None = None) -> dict[str, str]:
        """Alter the offsets to the rows of a pandas or Spark DataFrame (see :meth:`offsets_frame`)."""
        from connect_magics.spark.offsets_frame import frame_to_request

        return self.alter_offsets(name, frame_to_request(frame, partition_columns, offset_columns,
                                                         known=lambda: self.get_offsets(name)))

    # -- topics (KIP-558) and plugins -----------------------------------------------------------
    def connector_topics(self, name: str) -> dict[str, dict[str, list[str]]]:
        return self._call("GET", f"/connectors/{_name(name)}/topics")

    def reset_connector_topics(self, name: str) -> None:
        self._call("PUT", f"/connectors/{_name(name)}/topics/reset")

    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        return self._call("GET", "/connector-plugins", connectorsOnly=self._flag(connectors_only))

    def connector_plugin_config(self, plugin: str, version: str | None = None) -> list[dict[str, Any]]:
        return self._call("GET", f"/connector-plugins/{_name(plugin)}/config", version=version)

    @property
    def plugins(self) -> Any:
        """The cluster's plugins and versions (``GET /connector-plugins?connectorsOnly=false``) as a registry to
        look versions up in (:meth:`~connect_magics.runtime.plugins.registry.Plugins.find`); no class loads."""
        if self._plugins is None:
            from connect_magics.runtime.plugins.registry import Plugins

            self._plugins = Plugins.listed(self.connector_plugins(connectors_only=False))
        return self._plugins

    # -- the cluster's Kafka, when its bootstrap servers are given ---------------------------------
    def _kafka(self, what: str) -> dict[str, str]:
        if not self.bootstrap_servers:
            raise RemoteUnsupportedError(f"{what} needs the cluster's Kafka, which the Kafka Connect REST API does "
                                         "not reach: start with %connect start --remote URL --bootstrap-servers "
                                         "HOST:PORT (or RemoteRuntime(url, bootstrap_servers=...))")
        return {**self.client_config, "bootstrap.servers": self.bootstrap_servers}

    @property
    def admin(self) -> Any:
        """An admin client of the cluster's Kafka (needs ``bootstrap_servers``)."""
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            from connect_magics.storage.client_logs import client_logger

            self._admin = AdminClient({**self._kafka("Looking at the cluster's topics"),
                                       "logger": client_logger("admin")})
        return self._admin

    @property
    def offset_queries(self) -> Any:
        """A consumer of the cluster's Kafka that only answers offset queries (needs ``bootstrap_servers``)."""
        if self._offset_queries is None:
            from connect_magics.storage.offset_queries import query_consumer

            self._offset_queries = query_consumer(self._kafka("Looking at the cluster's offsets"), read_committed=False)
        return self._offset_queries

    def read_topic(self, topic: str, converter: Any = None, starting: Any = "earliest", ending: Any = "latest",
                   max_records: int | None = None, reader: str = "auto", options: Mapping[str, str] | None = None,
                   spark: Any = None) -> Any:
        """``topic``'s records as a Spark DataFrame, as :meth:`ConnectRuntime.read_topic
        <connect_magics.runtime.runtime.ConnectRuntime.read_topic>` reads them (needs ``bootstrap_servers``).
        The cluster's worker converters are not exposed by its REST API: without ``converter``, Kafka Connect's
        JsonConverter with schemas is assumed."""
        from connect_magics.runtime.config.worker_config import WorkerConfig
        from connect_magics.runtime.plugins.registry import Plugins
        from connect_magics.spark import require_pyspark

        require_pyspark("Reading a topic as a DataFrame")
        from connect_magics.spark.topic_frame import read_topic_with

        kafka = self._kafka("Reading a topic")
        worker = WorkerConfig(kafka.pop("bootstrap.servers"), "connect-magics-remote", kafka)
        return read_topic_with(Plugins(entry_points=False), worker, spark or self.spark, topic, converter,
                               starting, ending, max_records, reader, options)

    # -- what the REST API does not offer --------------------------------------------------------
    def explain_topic_creation(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RemoteUnsupportedError("Explaining topic creation needs the worker's topic creation rules and "
                                     "the cluster's topics, which the Kafka Connect REST API does not expose: "
                                     "run it on a local runtime (%connect start) with the same config")

    def rewind(self, name: str, *args: Any, **kwargs: Any) -> Any:
        raise RemoteUnsupportedError("Rewinding by time needs the broker's offsets for that time, and the Kafka "
                                     "Connect REST API does not reach the broker: read them with a local runtime "
                                     "on the same cluster, or alter the offsets (%connect offsets NAME --edit)")

    undo_rewind = rewind

    def preview(self, *args: Any, **kwargs: Any) -> Any:
        raise RemoteUnsupportedError("A preview runs the connector's converters and transformations in this "
                                     "kernel on records read from the broker, which the Kafka Connect REST API "
                                     "does not reach: preview with a local runtime on the same cluster")

    def metrics(self) -> dict[str, dict[str, Any]]:
        raise RemoteUnsupportedError("Task metrics are not served by the Kafka Connect REST API (Kafka Connect "
                                     "publishes them over JMX)")

    def close(self) -> None:
        """Close the offsets consumer if one was made; the cluster keeps running."""
        if self._offset_queries is not None:
            self._offset_queries.close()
            self._offset_queries = None

    def __enter__(self) -> RemoteRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteRuntime({self.url})"
