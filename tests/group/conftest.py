"""The ``members`` fixture: runtimes of a group in processes of their own, killed after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from group_members import Member


@pytest.fixture
def members(bootstrap: str) -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for m in started:
        m.stop()
