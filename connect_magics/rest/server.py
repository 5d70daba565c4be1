"""Kafka Connect's REST API over a :class:`~connect_magics.ConnectRuntime` (a thin mapping, no logic).

Paths, status codes and error bodies follow Apache Kafka Connect's ``ConnectorsResource``,
``ConnectorPluginsResource`` and ``RootResource``: errors are ``{"error_code": N, "message": "..."}``.
The server runs on background threads, so a notebook cell that starts it returns at once.

Example::

    >>> server = RestServer(rt, port=0).start()       # doctest: +SKIP
    >>> server.url                                     # doctest: +SKIP
    'http://127.0.0.1:40123'
    >>> server.stop()                                  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from connect_magics import __version__
from connect_magics.api.config import Password
from connect_magics.errors import BadRequestError, ConnectRestError
from connect_magics.rest.auth import RestAuth, check_listener

log = logging.getLogger(__name__)
HIDDEN = Password.HIDDEN


@dataclass
class Response:
    status: int
    body: Any = None
    location: str | None = None


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
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = [
            (method, re.compile(f"^{path}/?$"), handler) for method, path, handler in [
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
                 lambda api, r: Response(200, api.rt.connector_status(r.params["connector"]))),
                ("GET", f"/connectors/{c}/tasks", ConnectRestApi.task_configs),
                ("GET", f"/connectors/{c}/tasks/{t}/status",
                 lambda api, r: Response(200, api.rt.task_status(r.params["connector"], int(r.params["task"])))),
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
            ]
        ]

    # -- dispatch ---------------------------------------------------------------------------------
    def handle(self, method: str, target: str, body: bytes) -> Response:
        """Answer one request; every error becomes Kafka Connect's error body and status."""
        url = urlsplit(target)
        path = url.path.rstrip("/")
        allowed = False
        for route_method, pattern, handler in self.routes:
            match = pattern.match(path)
            if match is None:
                continue
            if route_method != method:
                allowed = True
                continue
            request = Request({k: unquote(v) for k, v in match.groupdict().items()},
                              parse_qs(url.query, keep_blank_values=True), body)
            try:
                return handler(self, request)
            except ConnectRestError as e:
                return Response(e.status, e.to_json())
            except Exception as e:  # noqa: BLE001 - Kafka Connect answers 500 for anything else
                log.warning("REST %s %s failed", method, target, exc_info=True)
                return Response(500, {"error_code": 500, "message": str(e) or type(e).__name__})
        if allowed:
            return Response(405, {"error_code": 405, "message": "HTTP 405 Method Not Allowed"})
        return Response(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

    def _void(self, call: Callable[[str], Any], request: Request, status: int) -> Response:
        call(request.params["connector"])
        return Response(status)

    # -- passwords: masked in every answer --------------------------------------------------------------
    def _masked(self, config: dict[str, str], keys: set[str] | None = None) -> dict[str, str]:
        """``config`` with its PASSWORD-type values replaced by ``[hidden]`` (keys: from ``config``)."""
        keys = self.rt.password_keys(config) if keys is None else keys
        return {k: HIDDEN if k in keys else v for k, v in config.items()}

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
                        expansions["status"] = self.rt.connector_status(name)
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
        return Response(204) if plan is None else Response(202, plan)

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


_UNAUTHORIZED = Response(401, {"error_code": 401, "message": "Authentication required: HTTP basic credentials "
                                "or a bearer token that this worker accepts"})


class _Handler(BaseHTTPRequestHandler):
    api: ConnectRestApi
    auth: RestAuth | None
    server_version = f"connect-magics/{__version__}"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length) if length else b""
        if self.auth is not None and not self.auth.allows(self.headers.get("Authorization")):
            response = _UNAUTHORIZED
        else:
            response = self.api.handle(self.command, self.path, payload)
        body = b"" if response.body is None else json.dumps(response.body).encode()
        self.send_response(response.status, HTTPStatus(response.status).phrase)
        if response.status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="connect-magics"')
        if response.location:
            self.send_header("Location", response.location)
        if response.body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("REST %s", format % args)


class RestServer:
    """Kafka Connect's REST API for ``runtime`` on ``host:port`` (0: a free port), on background threads.

    Every request must authenticate when ``auth`` is given; listening on anything but a loopback address
    requires it (:class:`~connect_magics.rest.auth.RestAuthError` otherwise).
    """

    def __init__(self, runtime: Any, host: str = "127.0.0.1", port: int = 8083, auth: RestAuth | None = None) -> None:
        check_listener(host, auth)
        handler = type("Handler", (_Handler,), {"api": ConnectRestApi(runtime), "auth": auth})
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        host = self._httpd.server_address[0]
        return f"http://{host}:{self.port}"

    def start(self) -> RestServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="connect-magics-rest", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> RestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
