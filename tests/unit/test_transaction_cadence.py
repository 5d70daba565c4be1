"""The ``interval`` transaction boundary's cadence (runtime/worker/exactly_once_source.py): boundaries every interval
from the task's start, as Kafka's ExactlyOnceWorkerSourceTask keeps them, so that no transaction outlives it."""

from __future__ import annotations

import pytest

from connect_magics.runtime.worker.exactly_once_source import Cadence

pytestmark = pytest.mark.unit


def test_a_boundary_every_interval_from_the_start_whether_a_transaction_is_open_or_not() -> None:
    cadence = Cadence(60.0, now=0.0)
    assert [t for t in (10.0, 59.9, 60.0, 61.0, 119.9, 120.0, 180.2) if cadence.due(t)] == [60.0, 120.0, 180.2]


def test_a_transaction_begun_after_a_boundary_ends_at_the_next_one() -> None:
    """A source writing one record every 20 s, the first at the start, and the runner's loop looking each second
    (poll, then the boundary): each transaction holds the records since a boundary and ends at the next one, so none
    outlives the interval, nor a transaction.timeout.ms equal to it (both 60 s by default). Counted from their first
    record, every transaction lasted the interval plus the time to notice it."""
    cadence, interval = Cadence(60.0, now=0.0), 60.0
    opened: float | None = None
    lasted = []
    for second in range(0, 600):
        if second % 20 == 0 and opened is None:
            opened = second  # a record: the transaction begins
        if cadence.due(float(second)) and opened is not None:
            lasted.append(second - opened)
            opened = None
    assert lasted[0] == interval and set(lasted[1:]) == {interval - 20}


def test_restart_begins_the_cadence_again() -> None:
    cadence = Cadence(5.0, now=0.0)
    cadence.restart(100.0)
    assert not cadence.due(104.0)
    assert cadence.due(105.0)
