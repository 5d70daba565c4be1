"""Unit tests of the metrics registry behind ``ConnectRuntime.metrics()``."""

from __future__ import annotations

import logging

import pytest

from connect_magics.runtime.metrics import MetricsRegistry, group_name

pytestmark = pytest.mark.unit


def test_collect_merges_providers_by_group() -> None:
    registry = MetricsRegistry()
    registry.register("status", lambda: {"status-backing-store-metrics": {"status-update-success-total": 2}})
    registry.register("a", lambda: {"connector-metrics,connector=c": {"connector-class": "X"}})
    registry.register("b", lambda: {"connector-metrics,connector=c": {"connector-version": "1.0"}})
    assert registry.collect() == {
        "connector-metrics,connector=c": {"connector-class": "X", "connector-version": "1.0"},
        "status-backing-store-metrics": {"status-update-success-total": 2},
    }


def test_providers_are_called_on_every_collect_and_can_be_replaced_or_removed() -> None:
    registry = MetricsRegistry()
    count = iter(range(100))
    registry.register("n", lambda: {"g": {"n": next(count)}})
    assert registry.collect()["g"]["n"] == 0
    assert registry.collect()["g"]["n"] == 1
    registry.register("n", lambda: {"g": {"n": -1}})
    assert registry.collect() == {"g": {"n": -1}}
    registry.unregister("n")
    registry.unregister("never-registered")
    assert registry.collect() == {}


def test_a_broken_provider_is_logged_and_left_out(caplog) -> None:
    registry = MetricsRegistry()
    registry.register("ok", lambda: {"g": {"m": 1}})
    registry.register("broken", lambda: 1 / 0)
    with caplog.at_level(logging.ERROR, logger="connect_magics.runtime.metrics"):
        assert registry.collect() == {"g": {"m": 1}}
    assert any("broken" in r.getMessage() for r in caplog.records)


def test_provider_must_be_callable() -> None:
    with pytest.raises(TypeError, match="provider for 'x' must be callable"):
        MetricsRegistry().register("x", {"g": {}})  # type: ignore[arg-type]


def test_group_name_follows_the_mbean_tags() -> None:
    assert group_name("connector-task-metrics", connector="c", task=1) == "connector-task-metrics,connector=c,task=1"
    assert group_name("status-backing-store-metrics") == "status-backing-store-metrics"
