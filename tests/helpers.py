"""Shared test helpers: waiting on a condition with a deadline (never bare sleeps), one-task connectors."""

from __future__ import annotations

import time
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
