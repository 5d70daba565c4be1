"""Kafka Connect's ``source-task-metrics``, ``sink-task-metrics`` and the measured part of
``connector-task-metrics``: counters a task runner updates once per batch, and the windowed rates, batch times
and ratios computed from them when ``metrics()`` is read.

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


class Gauge:
    """A count sampled now and then (records in flight): its last, average and largest value."""

    def __init__(self) -> None:
        self.last, self.max, self._sum, self._count = 0, 0, 0, 0

    def sample(self, value: int) -> None:
        self.last, self.max = value, max(self.max, value)
        self._sum += value
        self._count += 1

    @property
    def avg(self) -> float:
        return self._sum / self._count if self._count else 0.0


class TaskStats:
    """What a runner measures of ``connector-task-metrics``: the records per batch (``poll`` or ``put``), its
    offset commits' times and outcomes, and the share of its life it spent running or paused.

    >>> clock = iter([0.0, 1.0, 4.0]).__next__  # born at 0 s, paused at 1 s, read at 4 s
    >>> stats = TaskStats(clock); stats.batch(3); stats.commit(0.002, ok=True); stats.pause(True)
    >>> s = stats.snapshot(); s["batch-size-avg"], s["offset-commit-success-percentage"], s["pause-ratio"]
    (3.0, 1.0, 0.75)
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._born, self._paused_since, self._paused_s = clock(), None, 0.0
        self.batches, self.batch_records, self.batch_max = 0, 0, 0
        self.commit_times, self.commit_failures = BatchTimes(), 0

    def batch(self, records: int) -> None:
        self.batches += 1
        self.batch_records += records
        self.batch_max = max(self.batch_max, records)

    def commit(self, seconds: float, ok: bool) -> None:
        if ok:
            self.commit_times.record(seconds)
        else:
            self.commit_failures += 1

    def pause(self, paused: bool) -> None:
        """The task was paused (True) or resumed."""
        now = self._clock()
        if paused and self._paused_since is None:
            self._paused_since = now
        elif not paused and self._paused_since is not None:
            self._paused_s += now - self._paused_since
            self._paused_since = None

    def snapshot(self) -> dict[str, float]:
        now = self._clock()
        life = now - self._born
        paused = self._paused_s + (now - self._paused_since if self._paused_since is not None else 0.0)
        pause_ratio = paused / life if life > 0 else 0.0
        commits = self.commit_times.count + self.commit_failures
        return {"batch-size-avg": self.batch_records / self.batches if self.batches else 0.0,
                "batch-size-max": float(self.batch_max),
                "offset-commit-avg-time-ms": self.commit_times.avg_ms,
                "offset-commit-max-time-ms": self.commit_times.max_ms,
                "offset-commit-success-percentage": self.commit_times.count / commits if commits else 0.0,
                "offset-commit-failure-percentage": self.commit_failures / commits if commits else 0.0,
                "pause-ratio": pause_ratio, "running-ratio": 1.0 - pause_ratio if life > 0 else 0.0}


#: The keys of :meth:`TaskStats.snapshot`: a runner's ``metrics()`` holds them beside its task type's group,
#: and they belong to ``connector-task-metrics``.
CONNECTOR_TASK_METRICS = frozenset(TaskStats().snapshot())


class SourceTaskMetrics:
    """``source-task-metrics``: records polled from the task and written to Kafka, poll times, records in flight."""

    def __init__(self) -> None:
        self.polled, self.written, self.poll_times = WindowedRate(), WindowedRate(), BatchTimes()
        self.active = Gauge()  # sampled after each batch was sent

    def snapshot(self, active: int) -> dict[str, float]:
        return {"source-record-poll-total": self.polled.total, "source-record-poll-rate": self.polled.rate(),
                "source-record-write-total": self.written.total, "source-record-write-rate": self.written.rate(),
                "poll-batch-max-time-ms": self.poll_times.max_ms, "poll-batch-avg-time-ms": self.poll_times.avg_ms,
                "source-record-active-count": active, "source-record-active-count-max": max(self.active.max, active),
                "source-record-active-count-avg": self.active.avg}


class SinkTaskMetrics:
    """``sink-task-metrics``: records read from Kafka and put, put times, offset commits, partitions, and records
    read but not committed yet (sampled as each batch is read)."""

    def __init__(self) -> None:
        self.read, self.sent, self.commits, self.put_times = WindowedRate(), WindowedRate(), WindowedRate(), BatchTimes()
        self.active, self.uncommitted = Gauge(), 0

    def snapshot(self, partitions: int) -> dict[str, float]:
        return {"sink-record-read-total": self.read.total, "sink-record-read-rate": self.read.rate(),
                "sink-record-send-total": self.sent.total, "sink-record-send-rate": self.sent.rate(),
                "put-batch-max-time-ms": self.put_times.max_ms, "put-batch-avg-time-ms": self.put_times.avg_ms,
                "offset-commit-completion-total": self.commits.total,
                "offset-commit-completion-rate": self.commits.rate(),
                "offset-commit-seq-no": self.commits.total, "partition-count": partitions,
                # Kafka counts asynchronous commits overtaken by a newer one; ours are synchronous: none
                "offset-commit-skip-total": 0, "offset-commit-skip-rate": 0.0,
                "sink-record-active-count": self.uncommitted, "sink-record-active-count-max": self.active.max,
                "sink-record-active-count-avg": self.active.avg}


class StartupCounts:
    """``connect-worker-metrics``' startup counters of connectors and tasks.

    >>> counts = StartupCounts(); counts.task(ok=True); counts.task(ok=False)
    >>> counts.metrics()["task-startup-failure-percentage"]
    0.5
    """

    def __init__(self) -> None:
        self._counts = {"connector": [0, 0], "task": [0, 0]}  # successes, failures

    def connector(self, ok: bool) -> None:
        self._counts["connector"][0 if ok else 1] += 1

    def task(self, ok: bool) -> None:
        self._counts["task"][0 if ok else 1] += 1

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for kind, (succeeded, failed) in self._counts.items():
            attempts = succeeded + failed
            out |= {f"{kind}-startup-attempts-total": attempts, f"{kind}-startup-success-total": succeeded,
                    f"{kind}-startup-failure-total": failed,
                    f"{kind}-startup-success-percentage": succeeded / attempts if attempts else 0.0,
                    f"{kind}-startup-failure-percentage": failed / attempts if attempts else 0.0}
        return out
