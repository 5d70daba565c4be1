"""Kafka Connect's ``source-task-metrics`` and ``sink-task-metrics``: counters a task runner updates once per
batch, and the windowed rates and batch times computed from them when ``metrics()`` is read.

    >>> clock = iter([0.0, 0.0, 10.0]).__next__
    >>> polled = WindowedRate(clock=clock)
    >>> polled.record(500); polled.total, polled.rate()
    (500, 50.0)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 60.0  # Kafka's metrics.sample.window.ms (30 s) times metrics.num.samples (2)


class WindowedRate:
    """A running total and its rate per second over the last :data:`WINDOW_S` (its whole life while younger)."""

    def __init__(self, window: float = WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = 0
        self._window, self._clock = window, clock
        self._samples: deque[tuple[float, int]] = deque([(clock(), 0)])  # (time, total then), one per second

    def record(self, n: int) -> None:
        self.total += n
        now = self._clock()
        if now - self._samples[-1][0] >= 1.0:
            self._samples.append((now, self.total))
            while len(self._samples) > 2 and now - self._samples[1][0] >= self._window:
                self._samples.popleft()  # the oldest sample still at least a window old stays as the base

    def rate(self) -> float:
        now = self._clock()
        samples = list(self._samples)  # read from other threads while the task's thread records
        base_time, base_total = samples[0]
        for t, total in samples:  # the newest sample at least a window old, if any
            if now - t < self._window:
                break
            base_time, base_total = t, total
        elapsed = now - base_time
        return (self.total - base_total) / elapsed if elapsed > 0 else 0.0


class BatchTimes:
    """The longest and the average time of a task's batches (``poll`` or ``put``), in milliseconds."""

    def __init__(self) -> None:
        self.count, self._sum, self.max_ms = 0, 0.0, 0.0

    def record(self, seconds: float) -> None:
        ms = seconds * 1000
        self.count += 1
        self._sum += ms
        self.max_ms = max(self.max_ms, ms)

    @property
    def avg_ms(self) -> float:
        return self._sum / self.count if self.count else 0.0


class SourceTaskMetrics:
    """``source-task-metrics``: records polled from the task and written to Kafka, poll times, records in flight."""

    def __init__(self) -> None:
        self.polled, self.written, self.poll_times = WindowedRate(), WindowedRate(), BatchTimes()
        self.active_max = 0

    def snapshot(self, active: int) -> dict[str, float]:
        self.active_max = max(self.active_max, active)
        return {"source-record-poll-total": self.polled.total, "source-record-poll-rate": self.polled.rate(),
                "source-record-write-total": self.written.total, "source-record-write-rate": self.written.rate(),
                "poll-batch-max-time-ms": self.poll_times.max_ms, "poll-batch-avg-time-ms": self.poll_times.avg_ms,
                "source-record-active-count": active, "source-record-active-count-max": self.active_max}


class SinkTaskMetrics:
    """``sink-task-metrics``: records read from Kafka and put, put times, offset commits, partitions."""

    def __init__(self) -> None:
        self.read, self.sent, self.commits, self.put_times = WindowedRate(), WindowedRate(), WindowedRate(), BatchTimes()

    def snapshot(self, partitions: int) -> dict[str, float]:
        return {"sink-record-read-total": self.read.total, "sink-record-read-rate": self.read.rate(),
                "sink-record-send-total": self.sent.total, "sink-record-send-rate": self.sent.rate(),
                "put-batch-max-time-ms": self.put_times.max_ms, "put-batch-avg-time-ms": self.put_times.avg_ms,
                "offset-commit-completion-total": self.commits.total,
                "offset-commit-completion-rate": self.commits.rate(),
                "offset-commit-seq-no": self.commits.total, "partition-count": partitions}
