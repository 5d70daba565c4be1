"""Shared test helpers: waiting on a condition with a deadline (never bare sleeps), one-task connectors, a
REST client."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 30.0, interval: float = 0.05,
               message: str | Callable[[], str] = "condition") -> T:
    """Call ``condition`` until it returns something truthy, and return that; fail after ``timeout`` s.

    Exceptions raised by ``condition`` count as "not yet"; the last one is reported on timeout.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = condition()
            if result:
                return result
        except Exception as e:  # noqa: BLE001
            last_error = e
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout} s waiting for {text}"
                                 + (f" (last error: {last_error!r})" if last_error else ""))
        time.sleep(interval)


def one_task_connector(name: str, base: type, task: type) -> type:
    """A connector class called ``name`` (a subclass of ``base``, SourceConnector or SinkConnector) that
    runs one ``task`` with the connector's own settings."""
    def start(self: Any, props: dict[str, str]) -> None:
        self.props = props

    return type(name, (base,), {
        "__module__": task.__module__, "__qualname__": name, "version": lambda self: "1", "start": start,
        "task_class": lambda self: task, "task_configs": lambda self, max_tasks: [dict(self.props)],
        "stop": lambda self: None})


class RestClient:
    """Calls a Kafka Connect REST API: ``client("GET", "/connectors")`` gives (status, JSON body, headers)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any, dict]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, text, headers = resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as e:
            status, text, headers = e.code, e.read(), dict(e.headers)
        return status, (json.loads(text) if text else None), headers
