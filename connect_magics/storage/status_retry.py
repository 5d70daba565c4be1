"""Retrying, non-blocking writes of status records (KIP-1278).

Kafka Connect persists connector, task and topic status to a compacted topic. KIP-1278 makes
failed status writes retry with capped exponential backoff plus jitter, never block the
caller, and count retries, failures and successes. This module holds the pieces:

* :class:`RetryPolicy` -- the five ``status.storage.retry.*`` worker settings, validated;
* :func:`backoff_ms` -- the KIP's backoff formula;
* :class:`StatusSender` -- an ordered, per-key, retrying sender on a daemon thread.

Example::

    >>> policy = RetryPolicy.from_worker_config({"status.storage.retry.max.retries": "10"})
    >>> policy.max_retries, backoff_ms(policy, 2, 0.0)
    (10, 1200.0)
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import numbers
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from connect_magics.api.config import ConfigException

__all__ = [
    "BACKOFF_MULTIPLIER_CONFIG",
    "INITIAL_BACKOFF_MS_CONFIG",
    "JITTER_FACTOR_CONFIG",
    "MAX_BACKOFF_MS_CONFIG",
    "MAX_RETRIES_CONFIG",
    "METRICS_GROUP",
    "METRIC_FAILURE_TOTAL",
    "METRIC_RETRY_TOTAL",
    "METRIC_SUCCESS_TOTAL",
    "DoneCallback",
    "FailureCallback",
    "RetryConfigError",
    "RetryLogEntry",
    "RetryPolicy",
    "SendFunction",
    "StatusSender",
    "backoff_ms",
]

MAX_RETRIES_CONFIG = "status.storage.retry.max.retries"
INITIAL_BACKOFF_MS_CONFIG = "status.storage.retry.initial.backoff.ms"
MAX_BACKOFF_MS_CONFIG = "status.storage.retry.max.backoff.ms"
BACKOFF_MULTIPLIER_CONFIG = "status.storage.retry.backoff.multiplier"
JITTER_FACTOR_CONFIG = "status.storage.retry.jitter.factor"

METRICS_GROUP = "status-backing-store-metrics"
METRIC_RETRY_TOTAL = "status-update-retry-total"
METRIC_FAILURE_TOTAL = "status-update-failure-total"
METRIC_SUCCESS_TOTAL = "status-update-success-total"

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1

DoneCallback = Callable[[BaseException | None], None]
"""Completion callback handed to ``send``: ``None`` on success, else the error."""

SendFunction = Callable[[str, bytes | None, DoneCallback], None]
"""Asynchronous write of one status record: ``send(key, value, on_done)``."""

FailureCallback = Callable[[str, bytes | None], None]
"""Told about a value that was given up (retries exhausted or a non-retriable error): ``(key, value)``."""


# --------------------------------------------------------------------------- configuration


class RetryConfigError(ConfigException):
    """An invalid ``status.storage.retry.*`` value: a :class:`~connect_magics.api.config.ConfigException`
    (hence a ``ValueError``) worded like Kafka's, whose ``key`` (also ``name``) is the offending setting.

    >>> str(RetryConfigError("status.storage.retry.jitter.factor", 1.5, "Value must be no more than 1.0"))
    'Invalid value 1.5 for configuration status.storage.retry.jitter.factor: Value must be no more than 1.0'
    """

    def __init__(self, key: str, value: object, reason: str | None = None) -> None:
        self.key = key
        self.value = value
        self.reason = reason
        self.name = key
        message = f"Invalid value {_java_str(value)} for configuration {key}"
        ValueError.__init__(self, f"{message}: {reason}" if reason else message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.value, self.reason))


def _java_str(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_INT_RE = re.compile(r"[+-]?[0-9]+")
_DOUBLE_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE
)


def _parse_integer(key: str, raw: object, type_name: str, bits: int) -> int:
    """Parse an INT (32-bit) or LONG (64-bit) setting the way Kafka's ``ConfigDef`` does."""
    if raw is None:
        raise RetryConfigError(key, raw, "Value must be non-null")
    if isinstance(raw, str):
        text = raw.strip()
        if _INT_RE.fullmatch(text):
            parsed = int(text)
            if -(2 ** (bits - 1)) <= parsed < 2 ** (bits - 1):
                return parsed
        raise RetryConfigError(key, raw, f"Not a number of type {type_name}")
    if isinstance(raw, numbers.Integral) and not isinstance(raw, bool):
        return int(raw)
    raise RetryConfigError(
        key, raw, f"Expected value to be a {bits}-bit integer, but it was a {type(raw).__name__}"
    )


def _parse_double(key: str, raw: object) -> float:
    """Parse a DOUBLE setting the way Kafka's ``ConfigDef`` does."""
    if raw is None:
        raise RetryConfigError(key, raw, "Value must be non-null")
    if isinstance(raw, str):
        text = raw.strip()
        if _DOUBLE_RE.fullmatch(text):
            return float(text)
        raise RetryConfigError(key, raw, "Not a number of type DOUBLE")
    if isinstance(raw, numbers.Real) and not isinstance(raw, bool):
        return float(raw)
    raise RetryConfigError(key, raw, f"Expected value to be a double, but it was a {type(raw).__name__}")


def _check_range(key: str, value: float, low: float, high: float | None = None) -> None:
    # ``not (x >= low)`` also rejects NaN.
    if not value >= low:
        raise RetryConfigError(key, value, f"Value must be at least {low}")
    if high is not None and not value <= high:
        raise RetryConfigError(key, value, f"Value must be no more than {high}")


@dataclass(frozen=True)
class RetryPolicy:
    """How failed status writes are retried (the ``status.storage.retry.*`` worker settings).

    Values are validated on construction; strings are parsed like a worker properties file.

    >>> p = RetryPolicy()
    >>> p.max_retries, p.initial_backoff_ms, p.max_backoff_ms, p.backoff_multiplier, p.jitter_factor
    (5, 300, 10000, 2.0, 0.25)
    >>> try:
    ...     RetryPolicy(jitter_factor="1.5")
    ... except RetryConfigError as e:
    ...     print(e.key, "->", e.reason)
    status.storage.retry.jitter.factor -> Value must be no more than 1.0
    """

    max_retries: int = 5
    initial_backoff_ms: int = 300
    max_backoff_ms: int = 10000
    backoff_multiplier: float = 2.0
    jitter_factor: float = 0.25

    def __post_init__(self) -> None:
        parsed = {
            "max_retries": _parse_integer(MAX_RETRIES_CONFIG, self.max_retries, "INT", 32),
            "initial_backoff_ms": _parse_integer(
                INITIAL_BACKOFF_MS_CONFIG, self.initial_backoff_ms, "LONG", 64
            ),
            "max_backoff_ms": _parse_integer(MAX_BACKOFF_MS_CONFIG, self.max_backoff_ms, "LONG", 64),
            "backoff_multiplier": _parse_double(BACKOFF_MULTIPLIER_CONFIG, self.backoff_multiplier),
            "jitter_factor": _parse_double(JITTER_FACTOR_CONFIG, self.jitter_factor),
        }
        _check_range(MAX_RETRIES_CONFIG, parsed["max_retries"], 0, _INT_MAX)
        _check_range(INITIAL_BACKOFF_MS_CONFIG, parsed["initial_backoff_ms"], 0, _LONG_MAX)
        _check_range(MAX_BACKOFF_MS_CONFIG, parsed["max_backoff_ms"], 0, _LONG_MAX)
        _check_range(BACKOFF_MULTIPLIER_CONFIG, parsed["backoff_multiplier"], 1.0)
        _check_range(JITTER_FACTOR_CONFIG, parsed["jitter_factor"], 0.0, 1.0)
        if parsed["initial_backoff_ms"] > parsed["max_backoff_ms"]:
            raise RetryConfigError(
                INITIAL_BACKOFF_MS_CONFIG,
                parsed["initial_backoff_ms"],
                f"must not be greater than {MAX_BACKOFF_MS_CONFIG} ({parsed['max_backoff_ms']})",
            )
        for name, value in parsed.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_worker_config(cls, cfg: Mapping[str, Any]) -> RetryPolicy:
        """Read the policy from worker properties; missing keys take their defaults.

        Values may be strings (as in a properties file) or numbers. Raises :class:`RetryConfigError`.

        >>> RetryPolicy.from_worker_config({"status.storage.retry.max.backoff.ms": "30000"}).max_backoff_ms
        30000
        >>> try:
        ...     RetryPolicy.from_worker_config({"status.storage.retry.initial.backoff.ms": "20000"})
        ... except RetryConfigError as e:
        ...     print(e.reason)
        must not be greater than status.storage.retry.max.backoff.ms (10000)
        """
        defaults = cls.__dataclass_fields__
        return cls(
            max_retries=cfg.get(MAX_RETRIES_CONFIG, defaults["max_retries"].default),
            initial_backoff_ms=cfg.get(INITIAL_BACKOFF_MS_CONFIG, defaults["initial_backoff_ms"].default),
            max_backoff_ms=cfg.get(MAX_BACKOFF_MS_CONFIG, defaults["max_backoff_ms"].default),
            backoff_multiplier=cfg.get(BACKOFF_MULTIPLIER_CONFIG, defaults["backoff_multiplier"].default),
            jitter_factor=cfg.get(JITTER_FACTOR_CONFIG, defaults["jitter_factor"].default),
        )


def backoff_ms(policy: RetryPolicy, retry_count: int, rand: float) -> float:
    """The KIP-1278 delay (ms) before retry number ``retry_count`` (0 for the first retry).

    ``base = initial * multiplier ** retry_count``, ``capped = min(base, max)``,
    ``jitter = capped * jitter_factor * rand``, result ``capped + jitter``; ``rand`` is in [0, 1].
    Huge retry counts saturate at the cap instead of overflowing.

    >>> [backoff_ms(RetryPolicy(), n, 0.0) for n in range(7)]
    [300.0, 600.0, 1200.0, 2400.0, 4800.0, 9600.0, 10000.0]
    >>> backoff_ms(RetryPolicy(), 10_000, 1.0)
    12500.0
    """
    if isinstance(retry_count, bool) or not isinstance(retry_count, numbers.Integral) or retry_count < 0:
        raise ValueError(f"retry_count must be a non-negative integer, got {retry_count!r}")
    if not 0.0 <= rand <= 1.0:
        raise ValueError(f"rand must be in [0.0, 1.0], got {rand!r}")
    initial = float(policy.initial_backoff_ms)
    multiplier = float(policy.backoff_multiplier)
    if retry_count == 0 or initial == 0.0 or multiplier == 1.0:
        base = initial  # also avoids 0 * inf and float(huge int) below
    else:
        try:
            base = initial * multiplier ** int(retry_count)
        except OverflowError:
            base = math.inf
    capped = min(base, float(policy.max_backoff_ms))
    jitter = capped * policy.jitter_factor * rand
    return capped + jitter


# --------------------------------------------------------------------------- sender


class RetryLogEntry(NamedTuple):
    """One scheduled retry: ``attempt`` is the retry number (0 first), ``time`` the clock when scheduled."""

    key: str
    attempt: int
    delay_ms: float
    time: float


class _Entry:
    """The state of one key: its newest value and where that value is in its life."""

    __slots__ = ("value", "seq", "attempt", "in_flight_seq", "token", "token_ready")

    def __init__(self) -> None:
        self.value: bytes | None = None
        self.seq = 0  # generation of ``value``
        self.attempt = 0  # retries already scheduled for this generation
        self.in_flight_seq: int | None = None  # generation being written, if any
        self.token: object | None = None  # identifies the queued (ready or delayed) send, if any
        self.token_ready = False  # True: the token is in the ready queue, False: in the delay heap


class _Attempt:
    """One call of ``send``; ``done`` makes its completion count once."""

    __slots__ = ("key", "seq", "done")

    def __init__(self, key: str, seq: int) -> None:
        self.key = key
        self.seq = seq
        self.done = False


_LOG = logging.getLogger(__name__)
_JOIN_GRACE_S = 0.1


class StatusSender:
    """Writes status records in the background, retrying failures per :class:`RetryPolicy`.

    ``send(key, value, on_done)`` starts one asynchronous write (for example a confluent-kafka
    ``produce`` whose delivery callback calls ``on_done(err or None)``); raising counts as a failed
    attempt. It is called on the sender's daemon thread and should not block.

    * :meth:`submit` never blocks; writes for one key are ordered (at most one in flight) and a
      newer value supersedes an older one that is queued, in flight or waiting to retry -- the older
      one is never written after the newer. Keys do not wait on each other.
    * A failed write is retried after ``backoff_ms(policy, n, rand())`` ms (``n`` = 0, 1, ...); after
      ``max_retries`` failed retries, or a non-retriable error, it is dropped and logged as an error.
    * Every submitted value ends as exactly one of success, failure or superseded.

    ``on_done`` may be called from any thread, at most once per call of ``send`` (later calls are
    ignored). Do not call :meth:`flush` or :meth:`close` from ``send`` or ``on_done``.

    ``on_failure(key, value)``, if given, is called (without the sender's lock held, on the thread
    that completed the write) for each value given up after a failed write, so that the owner can
    undo what it assumed; it is the newest value of its key at the time the write was given up.

    >>> written = {}
    >>> def send(key, value, on_done):
    ...     written[key] = value
    ...     on_done(None)
    >>> sender = StatusSender(send, RetryPolicy())
    >>> sender.submit("status-task-demo-0", b'{"state": "RUNNING"}')
    >>> sender.flush(5.0)
    True
    >>> sender.metrics()
    {'status-update-retry-total': 0, 'status-update-failure-total': 0, 'status-update-success-total': 1}
    >>> sender.close(5.0)
    True
    """

    def __init__(
        self,
        send: SendFunction,
        policy: RetryPolicy,
        *,
        is_retriable: Callable[[BaseException], bool] = lambda e: True,
        logger: logging.Logger | logging.LoggerAdapter[Any] = _LOG,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        name: str = "status-store-retry",
        retry_log_size: int = 1024,
        on_failure: FailureCallback | None = None,
    ) -> None:
        self._send = send
        self._on_failure = on_failure
        self.policy = policy
        self._is_retriable = is_retriable
        self._log = logger
        self._rand = rand
        self._clock = clock
        self.name = name
        self.retry_log: deque[RetryLogEntry] = deque(maxlen=retry_log_size)
        """Most recent scheduled retries; read it after :meth:`flush` (a deque is not safe to iterate
        while the sender appends to it)."""

        self._cond = threading.Condition()
        self._entries: dict[str, _Entry] = {}
        self._ready: deque[tuple[str, object]] = deque()
        self._delayed: list[tuple[float, int, str, object]] = []  # heap of (due, tiebreak, key, token)
        self._seq = itertools.count(1)
        self._tiebreak = itertools.count()
        self._retries = 0
        self._failures = 0
        self._successes = 0
        self._superseded = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public API

    def submit(self, key: str, value: bytes | None) -> None:
        """Queue ``value`` (``None`` is a tombstone) for ``key`` and return at once.

        Example: ``sender.submit("status-connector-demo", b'{"state": "PAUSED"}')``. After
        :meth:`close` the value is dropped, logged and counted as a failure.
        """
        with self._cond:
            if self._closed:
                self._failures += 1
                closed = True
            else:
                closed = False
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry()
                elif entry.in_flight_seq is None or entry.seq != entry.in_flight_seq:
                    # The current value is queued or waiting to retry: it will never be sent now.
                    self._superseded += 1
                # else the current value is in flight; its completion decides (see _complete).
                entry.value = value
                entry.seq = next(self._seq)
                entry.attempt = 0
                if entry.in_flight_seq is None and not (entry.token is not None and entry.token_ready):
                    self._queue_ready(key, entry)
                    self._cond.notify_all()
        if closed:
            self._log.error("Status sender %s is closed; dropping status update for key %s", self.name, key)

    def metrics(self) -> dict[str, int]:
        """The KIP-1278 counters (group ``status-backing-store-metrics``), e.g.
        ``{'status-update-retry-total': 2, 'status-update-failure-total': 0, 'status-update-success-total': 7}``.

        Read without the sender's lock (each counter is one int, read atomically), so that a metrics call
        never waits while the sender logs a retry under that lock during a broker outage.
        """
        return {
            METRIC_RETRY_TOTAL: self._retries,
            METRIC_FAILURE_TOTAL: self._failures,
            METRIC_SUCCESS_TOTAL: self._successes,
        }

    @property
    def superseded(self) -> int:
        """How many submitted values were replaced by a newer one for the same key before being written."""
        with self._cond:
            return self._superseded

    @property
    def pending(self) -> int:
        """How many keys still have a value queued, in flight or waiting to retry."""
        with self._cond:
            return len(self._entries)

    def flush(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds (``None``: forever) until nothing is pending; True if so.

        Waits through scheduled backoffs and for outstanding ``on_done`` callbacks.
        """
        with self._cond:
            return self._cond.wait_for(lambda: not self._entries, timeout)

    def close(self, timeout: float | None = 30.0) -> bool:
        """Flush for up to ``timeout`` s, then stop the thread (short grace to exit); True if all was flushed.

        Values still queued or waiting to retry are dropped and counted as failures. Writes in
        flight keep their callbacks (counted when they come) but are not retried. Idempotent.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        flushed = self.flush(timeout)
        dropped: list[str] = []
        with self._cond:
            self._closed = True
            for key, entry in list(self._entries.items()):
                if entry.in_flight_seq is None:
                    del self._entries[key]
                    dropped.append(key)
                elif entry.seq != entry.in_flight_seq:
                    entry.seq = entry.in_flight_seq  # forget the queued newer value
                    dropped.append(key)
                entry.token = None
            self._failures += len(dropped)
            self._ready.clear()
            self._delayed.clear()
            self._cond.notify_all()
        for key in dropped:
            self._log.error(
                "Status sender %s closed; dropping unsent status update for key %s", self.name, key
            )
        if self._thread is not threading.current_thread():
            # An idle dispatcher exits at once; a short grace lets it do so even when flush used up the timeout.
            remaining = None if deadline is None else max(_JOIN_GRACE_S, deadline - time.monotonic())
            self._thread.join(remaining)
        return flushed

    def __enter__(self) -> StatusSender:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _queue_ready(self, key: str, entry: _Entry) -> None:
        token = object()
        entry.token = token
        entry.token_ready = True
        self._ready.append((key, token))

    def _is_current(self, key: str, token: object) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.token is token

    def _start(self, key: str, token: object, batch: list[tuple[_Attempt, bytes | None]]) -> None:
        entry = self._entries.get(key)
        if entry is None or entry.token is not token or entry.in_flight_seq is not None:
            return  # stale: superseded or cancelled
        entry.token = None
        entry.in_flight_seq = entry.seq
        batch.append((_Attempt(key, entry.seq), entry.value))

    def _take_due(self) -> list[tuple[_Attempt, bytes | None]]:
        batch: list[tuple[_Attempt, bytes | None]] = []
        while self._ready:
            key, token = self._ready.popleft()
            self._start(key, token, batch)
        now = self._clock()
        while self._delayed and (
            self._delayed[0][0] <= now or not self._is_current(self._delayed[0][2], self._delayed[0][3])
        ):
            _, _, key, token = heapq.heappop(self._delayed)
            self._start(key, token, batch)
        return batch

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._closed:
                        return
                    batch = self._take_due()
                    if batch:
                        break
                    timeout = None
                    if self._delayed:
                        timeout = min(max(0.0, self._delayed[0][0] - self._clock()), threading.TIMEOUT_MAX)
                    self._cond.wait(timeout)
            for attempt, value in batch:
                self._dispatch(attempt, value)

    def _dispatch(self, attempt: _Attempt, value: bytes | None) -> None:
        try:
            self._send(attempt.key, value, lambda err: self._complete(attempt, err))
        except Exception as exc:  # a synchronous failure is a failed attempt
            self._complete(attempt, exc)

    def _complete(self, attempt: _Attempt, err: BaseException | None) -> None:
        key = attempt.key
        retriable = True
        if err is not None:
            try:
                retriable = bool(self._is_retriable(err))
            except Exception:
                self._log.exception("is_retriable raised for the status update of key %s", key)
                retriable = False
        given_up = False
        # Log while holding the lock so that a record is out before flush() can return.
        with self._cond:
            if attempt.done:
                self._log.debug("Ignoring a repeated completion of the status update for key %s", key)
                return
            attempt.done = True
            entry = self._entries[key]
            entry.in_flight_seq = None
            superseded = entry.seq != attempt.seq
            if err is None:
                self._successes += 1
            elif superseded:
                self._superseded += 1  # a newer value follows; never retry the older one
            elif not retriable:
                self._failures += 1
                given_up = True
                self._log.error(
                    "Failed to write the status update for key %s (non-retriable error); dropping it: %r",
                    key,
                    err,
                )
            elif self._closed or entry.attempt >= self.policy.max_retries:
                self._failures += 1
                given_up = True
                self._log.error(
                    "Failed to write the status update for key %s after %d retries%s; dropping it: %r",
                    key,
                    entry.attempt,
                    " (sender closed)" if self._closed else "",
                    err,
                )
            else:
                given_up = not self._schedule_retry(key, entry, err)
            value = entry.value
            if superseded and not self._closed:
                self._queue_ready(key, entry)
            elif entry.token is None:
                del self._entries[key]
            self._cond.notify_all()
        if given_up and self._on_failure is not None:
            try:
                self._on_failure(key, value)
            except Exception:
                self._log.exception("on_failure raised for the status update of key %s", key)

    def _schedule_retry(self, key: str, entry: _Entry, err: BaseException) -> bool:
        """Schedule the next retry of ``key``; False if it had to be given up instead."""
        try:
            delay = backoff_ms(self.policy, entry.attempt, float(self._rand()))
        except Exception:
            self._failures += 1
            self._log.exception("Cannot schedule a retry of the status update for key %s; dropping it", key)
            return False
        now = self._clock()
        self.retry_log.append(RetryLogEntry(key, entry.attempt, delay, now))
        self._retries += 1
        entry.attempt += 1
        token = object()
        entry.token = token
        entry.token_ready = False
        heapq.heappush(self._delayed, (now + delay / 1000.0, next(self._tiebreak), key, token))
        self._log.warning(
            "Retrying the status update for key %s (retry %d of %d) in %.0f ms after error: %r",
            key,
            entry.attempt,
            self.policy.max_retries,
            delay,
            err,
        )
        return True
