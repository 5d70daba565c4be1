"""Shared test helpers: waiting on a condition with a deadline (never bare sleeps)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

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
