"""Coalesced (storage/coalesced.py): callers arriving while a query runs share the next one, and each gets an answer
asked for after its call began. Pure logic: the query is a function of the test's."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

import pytest
from helpers import wait_until

from connect_magics.storage.coalesced import Coalesced


class GatedQuery:
    """A query that answers the number of queries started before it, each held until the test lets it go."""

    def __init__(self, fail: Callable[[int, float], BaseException | None] = lambda n, timeout: None) -> None:
        self.started = itertools.count()
        self.count = 0
        self.gates: list[threading.Event] = []
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self, timeout: float) -> int:
        with self.lock:
            n = next(self.started)
            gate = threading.Event()
            self.gates.append(gate)
            self.count = n + 1
        gate.wait(30)
        error = self.fail(n, timeout)
        if error is not None:
            raise error
        return n

    def release(self, n: int) -> None:
        wait_until(lambda: len(self.gates) > n, 10, message=f"query {n} started")
        self.gates[n].set()


def call_in_threads(shared: Coalesced, timeouts: list[float], before: Callable[[], int]) -> list:
    """Each call in a thread of its own: (the queries started before the call, its answer or error)."""
    out: list = [None] * len(timeouts)

    def one(i: int) -> None:
        seen = before()
        try:
            out[i] = (seen, shared(timeouts[i]))
        except BaseException as e:  # noqa: BLE001 - returned to the test
            out[i] = (seen, e)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(timeouts))]
    for t in threads:
        t.start()
    return [threads, out]


def running_and_waiting(shared: Coalesced, query: GatedQuery, waiting: int) -> tuple[list, list, list]:
    """One call running the first query, then ``waiting`` calls waiting behind it: (threads, first's, theirs)."""
    first = call_in_threads(shared, [30.0], lambda: query.count)
    wait_until(lambda: query.count == 1, 10, message="the first query running")
    behind = call_in_threads(shared, [30.0] * waiting, lambda: query.count)
    wait_until(lambda: shared.waiting == waiting, 10, message="the callers waiting")
    return first[0] + behind[0], first[1], behind[1]


def release_and_join(query: GatedQuery, threads: list, queries: int) -> None:
    for n in range(queries):
        query.release(n)
    for t in threads:
        t.join(30)


def test_callers_waiting_together_share_the_next_query_asked_after_their_calls() -> None:
    query = GatedQuery()
    shared = Coalesced(query)
    threads, first, waiting = running_and_waiting(shared, query, 20)
    release_and_join(query, threads, 2)
    assert first == [(0, 0)]
    assert [answer for _, answer in waiting] == [1] * 20  # all twenty from one query, the second
    assert all(answer >= seen for seen, answer in waiting)  # each asked after the call began
    assert shared.queries == query.count == 2


def test_an_error_reaches_every_caller_of_its_query() -> None:
    query = GatedQuery(fail=lambda n, timeout: ValueError(f"query {n} failed") if n == 1 else None)
    shared = Coalesced(query)
    threads, _, waiting = running_and_waiting(shared, query, 5)
    release_and_join(query, threads, 2)
    assert {str(error) for _, error in waiting} == {"query 1 failed"}
    assert shared.queries == 2


def test_a_query_ended_by_its_first_caller_s_deadline_is_asked_again_for_callers_with_time_left() -> None:
    query = GatedQuery(fail=lambda n, timeout: TimeoutError(f"query {n} timed out") if n == 1 else None)
    shared = Coalesced(query, retry_on=lambda e: isinstance(e, TimeoutError))
    threads, _, waiting = running_and_waiting(shared, query, 3)

    def released_all_started() -> bool:
        for gate in list(query.gates):
            gate.set()
        return not any(t.is_alive() for t in threads)
    wait_until(released_all_started, 30, message="every caller answered")
    assert all(answer >= 2 for _, answer in waiting), waiting  # the failed query 1 was asked again
    assert 3 <= shared.queries <= 4


def test_a_caller_behind_a_running_query_gives_up_at_its_deadline() -> None:
    query = GatedQuery()
    shared = Coalesced(query)
    first = call_in_threads(shared, [30.0], lambda: query.count)
    wait_until(lambda: query.count == 1, 10, message="the first query running")
    with pytest.raises(TimeoutError, match="shared query"):
        shared(0.05)
    query.release(0)
    first[0][0].join(30)
    assert first[1] == [(0, 0)] and shared.queries == 1
