"""One query for many callers: calls that arrive while a query is running share the next one.

Hundreds of task instances starting at once each read the offsets topic to its end; each used to ask the broker for
the topic's end offsets, a thousand requests in a second on one connection while the broker was also answering their
claims. With :class:`Coalesced`, every caller still gets an answer asked for after its call began (so nothing written
before the call is missed), but the callers waiting together share one request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Round(Generic[T]):
    """One query and the callers that wait for it."""

    def __init__(self) -> None:
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None


class Coalesced(Generic[T]):
    """``query(timeout)`` for many threads: a call joins the next query that has not started yet, and one of the
    callers of each query (its first) runs it with its own time left. A caller whose shared query failed with a
    ``retry_on`` error while its own deadline is still ahead (a shorter deadline ended it) joins the next one.

    >>> ends = Coalesced(lambda timeout: {0: 42})
    >>> ends(5.0)
    {0: 42}
    """

    def __init__(self, query: Callable[[float], T], retry_on: Callable[[BaseException], bool] = lambda e: False) -> None:
        self._query = query
        self._retry_on = retry_on
        self._cond = threading.Condition()
        self._next: _Round[T] | None = None  # the query callers join, not started yet
        self._running = False
        #: How many queries ran, and how many callers wait for the next one (for tests and benchmarks).
        self.queries = self.waiting = 0

    def __call__(self, timeout: float) -> T:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._once(deadline)
            except BaseException as e:
                if not self._retry_on(e) or time.monotonic() >= deadline:
                    raise

    def _once(self, deadline: float) -> T:
        with self._cond:
            mine = self._next = self._next or _Round()
            self.waiting += 1
            try:
                while self._running and not mine.done:
                    self._cond.wait(max(0.0, deadline - time.monotonic()))
                    if time.monotonic() >= deadline and not mine.done:
                        raise TimeoutError("Timed out waiting for a shared query")
            finally:
                self.waiting -= 1
            if not mine.done:  # nobody runs it yet: this caller does
                self._running, self._next = True, None
                self.queries += 1
        if not mine.done:
            try:
                mine.value = self._query(max(0.0, deadline - time.monotonic()))
            except BaseException as e:  # noqa: BLE001 - handed to every caller of this query
                mine.error = e
            finally:
                with self._cond:
                    mine.done, self._running = True, False
                    self._cond.notify_all()
        if mine.error is not None:
            raise mine.error
        return mine.value  # type: ignore[return-value]
