"""The collector's first threshold is raised from CPython's default once per process for streaming tasks; one the
process chose, before or after, stands."""

from __future__ import annotations

import gc

import pytest

from connect_magics.runtime.worker import gc_threshold

pytestmark = pytest.mark.unit


@pytest.fixture
def fresh(monkeypatch):
    """A process where no task ran yet, its thresholds restored afterwards."""
    saved = gc.get_threshold()
    monkeypatch.setattr(gc_threshold, "_RAISED", False)
    yield
    gc.set_threshold(*saved)


def test_raised_from_the_default_once(fresh) -> None:
    gc.set_threshold(700, 10, 10)
    assert gc_threshold.raise_once() is True
    assert gc.get_threshold() == (gc_threshold.STREAMING_THRESHOLD, 10, 10)
    gc.set_threshold(2000, 10, 10)  # the user's choice after the first task
    assert gc_threshold.raise_once() is False
    assert gc.get_threshold() == (2000, 10, 10)


@pytest.mark.parametrize("first", [0, 500, 2000, 100_000])
def test_a_threshold_the_process_chose_is_left(fresh, first: int) -> None:
    gc.set_threshold(first, 5, 5)
    assert gc_threshold.raise_once() is False
    assert gc.get_threshold() == (first, 5, 5)
