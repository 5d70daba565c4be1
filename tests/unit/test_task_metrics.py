"""Windowed rates and batch times of the task metrics (pure logic, with a fake clock)."""

from __future__ import annotations

import pytest

from connect_magics.runtime.worker.task_metrics import (
    CONNECTOR_TASK_METRICS,
    BatchTimes,
    SinkTaskMetrics,
    SourceTaskMetrics,
    StartupCounts,
    TaskStats,
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
                           "source-record-active-count", "source-record-active-count-max",
                           "source-record-active-count-avg"}
    assert source["source-record-active-count"] == 3 == source["source-record-active-count-max"]
    sink = SinkTaskMetrics().snapshot(partitions=2)
    assert {"sink-record-read-total", "sink-record-send-total", "put-batch-avg-time-ms",
            "offset-commit-completion-total", "partition-count"} <= set(sink)
    assert sink["partition-count"] == 2


def test_task_stats_measure_batches_commits_and_pauses() -> None:
    clock = Clock()
    stats = TaskStats(clock)
    for records in (10, 30):
        stats.batch(records)
    stats.commit(0.004, ok=True)
    stats.commit(0.002, ok=True)
    stats.commit(1.0, ok=False)  # a failed commit counts, but not its time
    clock.now += 6
    stats.pause(True)
    clock.now += 2
    stats.pause(True)  # no change: still paused since then
    clock.now += 2
    snap = stats.snapshot()
    assert set(snap) == CONNECTOR_TASK_METRICS
    assert (snap["batch-size-avg"], snap["batch-size-max"]) == (20.0, 30.0)
    assert snap["offset-commit-avg-time-ms"] == pytest.approx(3) and snap["offset-commit-max-time-ms"] == pytest.approx(4)
    assert snap["offset-commit-success-percentage"] == pytest.approx(2 / 3)
    assert snap["offset-commit-failure-percentage"] == pytest.approx(1 / 3)
    assert snap["pause-ratio"] == pytest.approx(0.4) and snap["running-ratio"] == pytest.approx(0.6)
    stats.pause(False)
    clock.now += 10
    assert stats.snapshot()["pause-ratio"] == pytest.approx(0.2)


def test_startup_counts() -> None:
    counts = StartupCounts()
    assert counts.metrics()["connector-startup-success-percentage"] == 0.0
    counts.connector(ok=True)
    counts.connector(ok=True)
    counts.connector(ok=False)
    snap = counts.metrics()
    assert (snap["connector-startup-attempts-total"], snap["connector-startup-success-total"],
            snap["connector-startup-failure-total"]) == (3, 2, 1)
    assert snap["connector-startup-failure-percentage"] == pytest.approx(1 / 3)
    assert snap["task-startup-attempts-total"] == 0
