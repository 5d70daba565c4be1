"""Windowed rates and batch times of the task metrics (pure logic, with a fake clock)."""

from __future__ import annotations

import pytest

from connect_magics.runtime.worker.task_metrics import (
    BatchTimes,
    SinkTaskMetrics,
    SourceTaskMetrics,
    WindowedRate,
)

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_young_rate_counts_over_its_whole_life() -> None:
    clock = Clock()
    rate = WindowedRate(window=60, clock=clock)
    clock.now += 5
    rate.record(100)
    clock.now += 5
    rate.record(100)
    assert rate.total == 200 and rate.rate() == pytest.approx(20.0)


def test_an_old_rate_counts_only_the_last_window() -> None:
    clock = Clock()
    rate = WindowedRate(window=60, clock=clock)
    for _ in range(120):  # 10 records a second for two minutes
        clock.now += 1
        rate.record(10)
    clock.now += 1
    for _ in range(30):  # then nothing for half a minute
        clock.now += 1
    assert rate.total == 1200
    assert rate.rate() == pytest.approx(10 * 29 / 60, rel=0.05)  # about half a window of records left in it


def test_an_idle_rate_is_zero() -> None:
    clock = Clock()
    rate = WindowedRate(window=60, clock=clock)
    assert rate.rate() == 0.0
    clock.now += 1
    assert rate.rate() == 0.0


def test_batch_times() -> None:
    times = BatchTimes()
    assert (times.max_ms, times.avg_ms) == (0.0, 0.0)
    for seconds in (0.010, 0.030, 0.020):
        times.record(seconds)
    assert times.max_ms == pytest.approx(30) and times.avg_ms == pytest.approx(20) and times.count == 3


def test_snapshots_use_kafka_connect_metric_names() -> None:
    source = SourceTaskMetrics().snapshot(active=3)
    assert set(source) == {"source-record-poll-total", "source-record-poll-rate", "source-record-write-total",
                           "source-record-write-rate", "poll-batch-max-time-ms", "poll-batch-avg-time-ms",
                           "source-record-active-count", "source-record-active-count-max"}
    assert source["source-record-active-count"] == 3 == source["source-record-active-count-max"]
    sink = SinkTaskMetrics().snapshot(partitions=2)
    assert {"sink-record-read-total", "sink-record-send-total", "put-batch-avg-time-ms",
            "offset-commit-completion-total", "partition-count"} <= set(sink)
    assert sink["partition-count"] == 2
