"""A secured front for the test Schema Registry: HTTPS (optionally mutual TLS) and HTTP basic authentication,
forwarding every call to the Apicurio registry behind it, as a registry behind a company's gateway is reached.

Example::

    with RegistryGateway(schema_registry.url, tls, users={"fred": "s3cret"}) as gateway:
        gateway.url   # https://localhost:PORT/apis/ccompat/v7
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

import tornado.httpclient
import tornado.httpserver
import tornado.web

from connect_magics.local.secured import TlsMaterial


class _Forward(tornado.web.RequestHandler):
    SUPPORTED_METHODS = ("GET", "POST", "PUT", "DELETE")

    def initialize(self, upstream: str, users: Mapping[str, str]) -> None:
        self.upstream, self.users = upstream, users

    async def _forward(self) -> None:
        auth = self.request.headers.get("Authorization", "")
        user, _, password = base64.b64decode(auth[6:]).decode().partition(":") if auth.startswith("Basic ") \
            else ("", "", "")
        if self.users.get(user) != password or not user:
            self.set_status(401)
            self.set_header("WWW-Authenticate", 'Basic realm="registry"')
            self.finish({"error_code": 401, "message": "Unauthorized"})
            return
        body = self.request.body if self.request.method in ("POST", "PUT") else None
        headers = {k: v for k, v in self.request.headers.items() if k.lower() in ("content-type", "accept")}
        response = await tornado.httpclient.AsyncHTTPClient().fetch(
            self.upstream + self.request.uri, method=self.request.method, body=body, headers=headers,
            raise_error=False, allow_nonstandard_methods=True)
        self.set_status(response.code)
        for key in ("Content-Type",):
            if key in response.headers:
                self.set_header(key, response.headers[key])
        self.finish(response.body or b"")

    get = post = put = delete = _forward


class RegistryGateway:
    """HTTPS with the broker certificate of ``tls`` (client certificates required when ``mutual``) and basic
    auth for ``users``, in front of the registry at ``registry_url``."""

    def __init__(self, registry_url: str, tls: TlsMaterial, users: Mapping[str, str], mutual: bool = False) -> None:
        parts = urlsplit(registry_url)
        self.upstream = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path
        self.tls, self.users, self.mutual = tls, dict(users), mutual
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}{self.path}"

    def _ssl(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.tls.broker.cert_pem), str(self.tls.broker.key_pem))
        if self.mutual:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(str(self.tls.ca_pem))
        return context

    def _run(self) -> None:
        async def serve() -> None:
            app = tornado.web.Application([(r".*", _Forward, {"upstream": self.upstream, "users": self.users})])
            server = tornado.httpserver.HTTPServer(app, ssl_options=self._ssl())
            server.listen(self.port, "127.0.0.1")
            self._stop = asyncio.Event()
            self._ready.set()
            await self._stop.wait()
            server.stop()

        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(serve())

    def __enter__(self) -> RegistryGateway:
        self._thread = threading.Thread(target=self._run, name="registry-gateway", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the registry gateway did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
