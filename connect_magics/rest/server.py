"""Kafka Connect's REST API over a :class:`~connect_magics.ConnectRuntime` (a thin mapping, no logic).

Paths, status codes and error bodies follow Apache Kafka Connect's ``ConnectorsResource``,
``ConnectorPluginsResource`` and ``RootResource``: errors are ``{"error_code": N, "message": "..."}``.
Tornado serves it on a background thread, so a notebook cell that starts it returns at once, on one or more
listeners: Kafka Connect 4's ``listeners`` (http and https, see :mod:`connect_magics.rest.listeners`).

Example::

    >>> server = RestServer(rt, port=0).start()       # doctest: +SKIP
    >>> server.url                                     # doctest: +SKIP
    'http://127.0.0.1:40123'
    >>> server.stop()                                  # doctest: +SKIP
    >>> RestServer(rt, listeners="http://127.0.0.1:0,https://127.0.0.1:0").start().urls  # doctest: +SKIP
    ['http://127.0.0.1:40124', 'https://127.0.0.1:40125']
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote

import tornado.httpserver
import tornado.web

from connect_magics import __version__
from connect_magics.api.config import Password
from connect_magics.errors import BadRequestError, ConnectRestError
from connect_magics.rest.auth import RestAuth
from connect_magics.rest.listeners import BoundListeners, listener_url
from connect_magics.runtime.config.worker_keys import (
    Listener,
    advertised_url,
    parse_listeners,
    rest_listeners,
)

log = logging.getLogger(__name__)
HIDDEN = Password.HIDDEN


@dataclass
class Response:
    status: int
    body: Any = None  # JSON, unless content_type says what the bytes are
    location: str | None = None
    content_type: str | None = None


@dataclass
class Request:
    params: dict[str, str]  # from the path
    query: dict[str, list[str]]
    body: bytes

    def flag(self, name: str, default: bool = False) -> bool:
        """A boolean query parameter, as JAX-RS parses one (``true`` in any case, else false)."""
        values = self.query.get(name)
        return default if not values else values[0].lower() == "true"

    def json(self) -> Any:
        """The body as JSON; unreadable JSON is a 500, as Kafka Connect's Jackson errors are."""
        try:
            return json.loads(self.body or b"null")
        except ValueError as e:
            raise ConnectRestError(f"Cannot deserialize the request body: {e}", 500) from None

    def json_object(self, what: str) -> dict[str, Any]:
        body = self.json()
        if not isinstance(body, dict):
            raise BadRequestError(f"The request body must be a JSON object ({what})")
        return body


Handler = Callable[[Any, Request], Response]


def _normalized_plugin_name(name: str) -> str:
    """Kafka's ``ConnectorPluginsResource.normalizedPluginName``: without a trailing ``Connector``."""
    return name[: -len("Connector")] if name.endswith("Connector") and len(name) > len("Connector") else name


class ConnectRestApi:
    """The routes: each maps one HTTP call to one runtime method."""

    def __init__(self, runtime: Any) -> None:
        self.rt = runtime
        c, t, p = r"(?P<connector>[^/]+)", r"(?P<task>-?\d+)", r"(?P<plugin>[^/]+)"
        #: (method, path pattern, handler); the patterns' named groups are the path parameters.
        self.routes: list[tuple[str, str, Handler]] = [
            (method, f"{path}/?$", handler) for method, path, handler in [
                ("GET", "", ConnectRestApi.server_info),
                ("GET", "/connectors", ConnectRestApi.list_connectors),
                ("POST", "/connectors", ConnectRestApi.create_connector),
                ("GET", f"/connectors/{c}", lambda api, r: Response(200, api._info(api.rt.connector_info(
                    r.params["connector"])))),
                ("DELETE", f"/connectors/{c}", ConnectRestApi.delete_connector),
                ("GET", f"/connectors/{c}/config",
                 lambda api, r: Response(200, api._masked(api.rt.connector_config(r.params["connector"])))),
                ("PUT", f"/connectors/{c}/config", ConnectRestApi.put_config),
                ("PATCH", f"/connectors/{c}/config", ConnectRestApi.patch_config),
                ("GET", f"/connectors/{c}/status",
                 lambda api, r: Response(200, api._status(r.params["connector"],
                                                          api.rt.connector_status(r.params["connector"])))),
                ("GET", f"/connectors/{c}/tasks", ConnectRestApi.task_configs),
                ("GET", f"/connectors/{c}/tasks/{t}/status",
                 lambda api, r: Response(200, api._status(r.params["connector"], api.rt.task_status(
                     r.params["connector"], int(r.params["task"]))))),
                ("POST", f"/connectors/{c}/tasks/{t}/restart", ConnectRestApi.restart_task),
                ("POST", f"/connectors/{c}/restart", ConnectRestApi.restart_connector),
                ("PUT", f"/connectors/{c}/pause", lambda api, r: api._void(api.rt.pause_connector, r, 202)),
                ("PUT", f"/connectors/{c}/resume", lambda api, r: api._void(api.rt.resume_connector, r, 202)),
                ("PUT", f"/connectors/{c}/stop", lambda api, r: api._void(api.rt.stop_connector, r, 204)),
                ("GET", f"/connectors/{c}/topics",
                 lambda api, r: Response(200, api.rt.connector_topics(r.params["connector"]))),
                ("PUT", f"/connectors/{c}/topics/reset",
                 lambda api, r: api._void(api.rt.reset_connector_topics, r, 202)),
                ("GET", f"/connectors/{c}/offsets", lambda api, r: Response(200, api.rt.get_offsets(r.params["connector"]))),
                ("PATCH", f"/connectors/{c}/offsets", ConnectRestApi.alter_offsets),
                ("DELETE", f"/connectors/{c}/offsets",
                 lambda api, r: Response(200, api.rt.reset_offsets(r.params["connector"]))),
                ("GET", "/connector-plugins", ConnectRestApi.list_plugins),
                ("GET", f"/connector-plugins/{p}/config", ConnectRestApi.plugin_config),
                ("PUT", f"/connector-plugins/{p}/config/validate", ConnectRestApi.validate),
                ("GET", "/metrics", ConnectRestApi.prometheus_metrics),
            ]
        ]

    # -- dispatch ---------------------------------------------------------------------------------
    def call(self, handler: Handler, request: Request) -> Response:
        """Answer one routed request; every error becomes Kafka Connect's error body and status."""
        try:
            return handler(self, request)
        except ConnectRestError as e:
            return Response(e.status, e.to_json())
        except Exception as e:  # noqa: BLE001 - Kafka Connect answers 500 for anything else
            log.warning("REST request failed", exc_info=True)
            return Response(500, {"error_code": 500, "message": str(e) or type(e).__name__})

    def _void(self, call: Callable[[str], Any], request: Request, status: int) -> Response:
        call(request.params["connector"])
        return Response(status)

    # -- passwords: masked in every answer --------------------------------------------------------------
    def _masked(self, config: dict[str, str], keys: set[str] | None = None) -> dict[str, str]:
        """``config`` with its PASSWORD-type values replaced by ``[hidden]`` (keys: from ``config``)."""
        keys = self.rt.password_keys(config) if keys is None else keys
        return {k: HIDDEN if k in keys else v for k, v in config.items()}

    def _status(self, name: str, status: dict[str, Any]) -> dict[str, Any]:
        """A connector or task status whose traces show no password of the connector's config."""
        try:
            config = self.rt.connector_config(name)
        except ConnectRestError:  # deleted meanwhile: nothing to mask against
            return status
        secrets = [config[k] for k in self.rt.password_keys(config) if config[k]]

        def clean(state: dict[str, Any]) -> dict[str, Any]:
            trace = state.get("trace")
            if not trace or not secrets:
                return state
            for secret in secrets:
                trace = trace.replace(secret, HIDDEN)
            return {**state, "trace": trace}

        if "connector" not in status:  # one task's status
            return clean(status)
        return {**status, "connector": clean(status["connector"]), "tasks": [clean(t) for t in status["tasks"]]}

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        return {**info, "config": self._masked(info["config"])}

    def task_configs(self, request: Request) -> Response:
        name = request.params["connector"]
        tasks = self.rt.task_configs(name)
        keys = self.rt.password_keys(self.rt.connector_config(name)) if tasks else set()
        return Response(200, [{**t, "config": self._masked(t["config"], keys)} for t in tasks])

    # -- handlers -----------------------------------------------------------------------------------
    def server_info(self, request: Request) -> Response:
        return Response(200, {"version": __version__, "commit": "connect-magics",
                              "kafka_cluster_id": self.rt.kafka_cluster_id()})

    def list_connectors(self, request: Request) -> Response:
        if "expand" not in request.query:
            return Response(200, self.rt.connectors())
        out: dict[str, dict[str, Any]] = {}
        for name in self.rt.connectors():
            expansions: dict[str, Any] = {}
            try:
                for expansion in request.query["expand"]:
                    if expansion == "status":
                        expansions["status"] = self._status(name, self.rt.connector_status(name))
                    elif expansion == "info":
                        expansions["info"] = self._info(self.rt.connector_info(name))
                    else:
                        log.info("Ignoring unknown expansion type %s", expansion)
            except ConnectRestError as e:
                if e.status != 404:  # a connector deleted while we look it up is left out
                    raise
                continue
            out[name] = expansions
        return Response(200, out)

    def create_connector(self, request: Request) -> Response:
        body = request.json_object("a connector: name, config and optionally initial_state")
        name = str(body.get("name") or "").strip()
        config = body.get("config")
        if not isinstance(config, dict):
            raise BadRequestError("The request body must have a 'config' object of connector settings")
        info = self.rt.create_connector(name, config, body.get("initial_state"))
        return Response(201, self._info(info), location=f"/connectors/{quote(name, safe='')}")

    def delete_connector(self, request: Request) -> Response:
        self.rt.delete_connector(request.params["connector"])
        return Response(204)

    def put_config(self, request: Request) -> Response:
        name = request.params["connector"]
        info = self.rt.update_connector(name, request.json_object("connector settings"))
        created = info.pop("created", False)
        return Response(201 if created else 200, self._info(info),
                        location=f"/connectors/{quote(name, safe='')}" if created else None)

    def patch_config(self, request: Request) -> Response:
        return Response(200, self._info(self.rt.patch_connector_config(request.params["connector"],
                                                                       request.json_object("connector settings"))))

    def restart_task(self, request: Request) -> Response:
        self.rt.restart_task(request.params["connector"], int(request.params["task"]))
        return Response(204)

    def restart_connector(self, request: Request) -> Response:
        plan = self.rt.restart_connector(request.params["connector"], include_tasks=request.flag("includeTasks"),
                                         only_failed=request.flag("onlyFailed"))
        return Response(204) if plan is None else Response(202, self._status(request.params["connector"], plan))

    def alter_offsets(self, request: Request) -> Response:
        return Response(200, self.rt.alter_offsets(request.params["connector"], request.json()))

    def list_plugins(self, request: Request) -> Response:
        return Response(200, self.rt.connector_plugins(connectors_only=request.flag("connectorsOnly", True)))

    def plugin_config(self, request: Request) -> Response:
        version = (request.query.get("version") or [None])[0]
        return Response(200, self.rt.connector_plugin_config(request.params["plugin"], version))

    def validate(self, request: Request) -> Response:
        plugin = request.params["plugin"]
        config = request.json_object("connector settings")
        included = config.get("connector.class")
        if included is not None and not _normalized_plugin_name(str(included)).endswith(
                _normalized_plugin_name(plugin)):
            raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
        return Response(200, self.rt.validate_connector_config(config))


    def prometheus_metrics(self, request: Request) -> Response:
        """``GET /metrics``: :meth:`metrics` in Prometheus' text format, named as the JMX exporter names Kafka
        Connect's MBeans (see :mod:`connect_magics.rest.prometheus`)."""
        from connect_magics.rest.prometheus import CONTENT_TYPE_LATEST, exposition

        return Response(200, exposition(self.rt.metrics()), content_type=CONTENT_TYPE_LATEST)


_UNAUTHORIZED = Response(401, {"error_code": 401, "message": "Authentication required: HTTP basic credentials "
                                "or a bearer token that this worker accepts"})
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class _Resource(tornado.web.RequestHandler):
    """One path of the API: authenticates, then runs the route's handler on the server's thread pool
    (runtime calls may wait on Kafka) and writes its Response."""

    SUPPORTED_METHODS = _METHODS

    def initialize(self, server: RestServer, handlers: dict[str, Handler]) -> None:
        self.server, self.handlers = server, handlers

    def prepare(self) -> None:
        auth = self.server.auth
        if auth is not None and not auth.allows(self.request.headers.get("Authorization")):
            self.set_header("WWW-Authenticate", 'Basic realm="connect-magics"')
            self._send(_UNAUTHORIZED)

    async def _dispatch(self, **params: str) -> None:
        handler = self.handlers.get(self.request.method or "")
        if handler is None:
            raise tornado.web.HTTPError(405)
        request = Request(params, parse_qs(self.request.query, keep_blank_values=True), self.request.body)
        loop = asyncio.get_running_loop()
        self._send(await loop.run_in_executor(self.server.executor, self.server.api.call, handler, request))

    get = post = put = patch = delete = _dispatch

    def _send(self, response: Response) -> None:
        self.set_status(response.status)
        if response.location:
            self.set_header("Location", response.location)
        if response.content_type is not None:
            self.set_header("Content-Type", response.content_type)
            self.write(response.body)
        elif response.body is not None:
            self.set_header("Content-Type", "application/json")
            self.write(json.dumps(response.body))
        self.finish()

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Tornado's own errors (404, 405, unreadable requests) in Kafka Connect's error body."""
        self._send(Response(status_code, {"error_code": status_code,
                                          "message": f"HTTP {status_code} {self._reason}"}))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if not isinstance(value, tornado.web.HTTPError):
            log.warning("REST %s %s failed", self.request.method, self.request.uri, exc_info=(typ, value, tb))


class _NotFound(_Resource):
    """Any path the API does not have: 404 (after authentication)."""

    def initialize(self, server: RestServer, handlers: dict[str, Handler] | None = None) -> None:
        super().initialize(server, {})

    async def _dispatch(self, **params: str) -> None:
        raise tornado.web.HTTPError(404)

    get = post = put = patch = delete = _dispatch


class RestServer:
    """Kafka Connect's REST API for ``runtime``, served by Tornado on a background thread; runtime calls run on a
    small thread pool.

    Listens on ``host:port`` (0: a free port), or on ``listeners``: Kafka Connect's ``listeners`` value
    (``"http://127.0.0.1:8083,https://:8443"``), a list of such URLs, or
    :class:`~connect_magics.rest.listeners.BoundListeners` already bound. ``config`` holds the https
    listeners' TLS settings (``listeners.https.ssl.*``, else ``ssl.*``) and ``rest.advertised.*``; it defaults
    to the runtime's worker config. :meth:`from_worker_config` takes the listeners from there too.

    Every request must authenticate when ``auth`` is given; listening on anything but a loopback address
    requires it, or client certificates on an https listener
    (:class:`~connect_magics.rest.auth.RestAuthError` otherwise).
    """

    def __init__(self, runtime: Any, host: str = "127.0.0.1", port: int = 8083, auth: RestAuth | None = None,
                 threads: int = 8, *, listeners: str | Sequence[str] | BoundListeners | None = None,
                 config: Mapping[str, str] | None = None) -> None:
        self.config: Mapping[str, str] = config if config is not None else (getattr(runtime, "worker_config", None)
                                                                            or {})
        if isinstance(listeners, BoundListeners):
            self.bound = listeners
        else:
            wanted = [Listener("http", host, port)] if listeners is None else parse_listeners(listeners)
            self.bound = BoundListeners(wanted, self.config, auth)  # binds now: a busy port fails here
        self.api = ConnectRestApi(runtime)
        self.auth = auth
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="connect-magics-rest")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_worker_config(cls, runtime: Any, auth: RestAuth | None = None, threads: int = 8) -> RestServer:
        """A server on the listeners of the runtime's worker config: ``listeners``, else the deprecated
        ``rest.host.name`` / ``rest.port``, else ``http://127.0.0.1:8083``."""
        config = runtime.worker_config
        return cls(runtime, auth=auth, threads=threads, listeners=BoundListeners(rest_listeners(config), config, auth),
                   config=config)

    def _application(self) -> tornado.web.Application:
        by_path: dict[str, dict[str, Handler]] = {}
        for method, pattern, handler in self.api.routes:
            by_path.setdefault(pattern, {})[method] = handler
        return tornado.web.Application(
            [(pattern, _Resource, {"server": self, "handlers": handlers}) for pattern, handlers in by_path.items()],
            default_handler_class=_NotFound, default_handler_args={"server": self})

    @property
    def listeners(self) -> list[Listener]:
        """The listeners, with the ports they are bound to."""
        return self.bound.listeners

    @property
    def host(self) -> str:
        return self.listeners[0].host

    @property
    def port(self) -> int:
        """The first listener's port."""
        return self.listeners[0].port

    @property
    def url(self) -> str:
        """The first listener's URL (every interface shown as 0.0.0.0)."""
        return self.urls[0]

    @property
    def urls(self) -> list[str]:
        return [listener_url(listener) for listener in self.listeners]

    @property
    def advertised_url(self) -> str:
        """The URL that names this worker, as Kafka's ``RestServer.advertisedUrl`` (``rest.advertised.*``)."""
        return advertised_url(self.config, self.listeners)

    def start(self) -> RestServer:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            application = self._application()
            servers = []
            for scheme, ssl_options in (("http", None), ("https", self.bound.ssl_context)):
                sockets = [sock for listener, socks in self.bound.sockets if listener.scheme == scheme
                           for sock in socks]
                if sockets:
                    server = tornado.httpserver.HTTPServer(application, ssl_options=ssl_options)
                    server.add_sockets(sockets)
                    servers.append(server)
            ready.set()
            try:
                self._loop.run_forever()
            finally:
                for server in servers:
                    server.stop()
                    self._loop.run_until_complete(server.close_all_connections())
                self._loop.close()

        self._thread = threading.Thread(target=serve, name="connect-magics-rest", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
        self.bound.close()
        self.executor.shutdown(wait=False)

    def __enter__(self) -> RestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
