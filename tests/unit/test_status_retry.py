"""Unit tests of the KIP-1278 status-store retry pieces (pure logic, fake ``send``)."""

from __future__ import annotations

import dataclasses
import logging
import math
import pickle
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from connect_magics.storage.status_retry import (
    BACKOFF_MULTIPLIER_CONFIG,
    INITIAL_BACKOFF_MS_CONFIG,
    JITTER_FACTOR_CONFIG,
    MAX_BACKOFF_MS_CONFIG,
    MAX_RETRIES_CONFIG,
    RetryConfigError,
    RetryLogEntry,
    RetryPolicy,
    StatusSender,
    backoff_ms,
)

pytestmark = pytest.mark.unit

WAIT = 10.0  # generous deadline (s) for anything that should happen "soon"
FAST = RetryPolicy(
    max_retries=3, initial_backoff_ms=1, max_backoff_ms=4, backoff_multiplier=2.0, jitter_factor=0.5
)
SLOW = RetryPolicy(max_retries=3, initial_backoff_ms=60_000, max_backoff_ms=60_000, jitter_factor=0.0)
LOGGER = "test.status_retry"


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT, what: str = "condition") -> None:
    """Poll ``predicate`` until it holds, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        pause.wait(0.002)


HOLD = object()  # outcome: keep the callback; the test completes it (or never does)


@dataclass
class Call:
    key: str
    value: bytes | None
    on_done: Callable[[BaseException | None], None]
    time: float


@dataclass
class FakeSend:
    """A fake asynchronous ``send``: records calls and completes them per ``outcome``.

    ``outcome(key, value, n)`` (``n`` = how many earlier calls this key had) returns ``None``
    (success, applied to ``store``), an exception (failure), or ``HOLD``.
    """

    outcome: Callable[[str, bytes | None, int], object] = lambda key, value, n: None
    calls: list[Call] = field(default_factory=list)
    store: dict[str, bytes | None] = field(default_factory=dict)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def __call__(
        self, key: str, value: bytes | None, on_done: Callable[[BaseException | None], None]
    ) -> None:
        with self.cond:
            n = sum(1 for c in self.calls if c.key == key)
            self.calls.append(Call(key, value, on_done, time.monotonic()))
            self.cond.notify_all()
        result = self.outcome(key, value, n)
        if result is HOLD:
            return
        if result is None:
            self.store[key] = value
        on_done(result)  # type: ignore[arg-type]

    def wait_calls(self, n: int, timeout: float = WAIT) -> list[Call]:
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.calls) >= n, timeout):
                raise AssertionError(f"expected {n} send calls, got {len(self.calls)}")
            return list(self.calls)

    def values(self, key: str) -> list[bytes | None]:
        with self.cond:
            return [c.value for c in self.calls if c.key == key]

    def complete(self, index: int, err: BaseException | None = None) -> None:
        call = self.calls[index]
        if err is None:
            self.store[call.key] = call.value
        call.on_done(err)


def fail_first(
    n: int, exc: type[BaseException] = ConnectionError
) -> Callable[[str, bytes | None, int], object]:
    return lambda key, value, i: exc(f"attempt {i}") if i < n else None


@pytest.fixture
def make_sender():
    senders: list[StatusSender] = []

    def make(send: Callable, policy: RetryPolicy = FAST, **kwargs) -> StatusSender:
        kwargs.setdefault("logger", logging.getLogger(LOGGER))
        kwargs.setdefault("rand", lambda: 1.0)
        sender = StatusSender(send, policy, **kwargs)
        senders.append(sender)
        return sender

    yield make
    for sender in senders:
        sender.close(0.5)


def expected_backoff(
    initial: float, multiplier: float, cap: float, jitter: float, n: int, rand: float
) -> float:
    base = initial * multiplier**n
    capped = min(base, cap)
    return capped + capped * jitter * rand


# --------------------------------------------------------------------------- backoff_ms


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, 300.0), (1, 600.0), (2, 1200.0), (3, 2400.0), (4, 4800.0), (5, 9600.0), (6, 10000.0), (7, 10000.0)],
)
def test_backoff_default_policy_doubles_then_caps(n: int, expected: float) -> None:
    assert backoff_ms(RetryPolicy(), n, 0.0) == expected


@pytest.mark.parametrize(
    "policy",
    [
        RetryPolicy(),
        RetryPolicy(initial_backoff_ms=100, max_backoff_ms=30_000, backoff_multiplier=1.5, jitter_factor=0.1),
        RetryPolicy(initial_backoff_ms=7, max_backoff_ms=7, backoff_multiplier=3.0, jitter_factor=1.0),
        RetryPolicy(initial_backoff_ms=0, max_backoff_ms=0, jitter_factor=0.0),
    ],
)
@pytest.mark.parametrize("rand", [0.0, 0.25, 0.5, 0.999, 1.0])
def test_backoff_is_exactly_the_kip_formula(policy: RetryPolicy, rand: float) -> None:
    for n in range(12):
        expected = expected_backoff(
            policy.initial_backoff_ms,
            policy.backoff_multiplier,
            policy.max_backoff_ms,
            policy.jitter_factor,
            n,
            rand,
        )
        assert backoff_ms(policy, n, rand) == expected


def test_backoff_cap_applies_before_jitter() -> None:
    policy = RetryPolicy(initial_backoff_ms=1000, max_backoff_ms=1500, jitter_factor=0.2)
    assert backoff_ms(policy, 1, 0.0) == 1500.0  # 2000 capped to 1500
    assert backoff_ms(policy, 1, 1.0) == 1800.0  # jitter is on top of the cap


def test_jitter_bounds() -> None:
    policy = RetryPolicy(jitter_factor=0.25)
    for n in range(10):
        capped = min(300 * 2.0**n, 10_000)
        assert backoff_ms(policy, n, 0.0) == capped
        assert backoff_ms(policy, n, 1.0) == capped * 1.25
        samples = [backoff_ms(policy, n, r) for r in (0.0, 0.1, 0.5, 0.9, 1.0)]
        assert samples == sorted(samples)
        assert all(capped <= s <= capped * 1.25 for s in samples)


def test_zero_jitter_is_deterministic() -> None:
    policy = RetryPolicy(jitter_factor=0.0)
    assert backoff_ms(policy, 3, 0.0) == backoff_ms(policy, 3, 1.0) == 2400.0


@pytest.mark.parametrize("n", [64, 1024, 1075, 10_000, 2**31 - 1, 10**400])
def test_backoff_huge_retry_counts_saturate_without_overflow(n: int) -> None:
    assert backoff_ms(RetryPolicy(), n, 1.0) == 12_500.0
    assert backoff_ms(RetryPolicy(backoff_multiplier=1.0), n, 0.0) == 300.0
    assert backoff_ms(RetryPolicy(initial_backoff_ms=0, backoff_multiplier=1e308), n, 1.0) == 0.0


def test_backoff_with_infinite_multiplier() -> None:
    policy = RetryPolicy(backoff_multiplier=math.inf, jitter_factor=0.0)
    assert backoff_ms(policy, 0, 0.0) == 300.0
    assert backoff_ms(policy, 1, 0.0) == 10_000.0
    assert backoff_ms(RetryPolicy(initial_backoff_ms=0, backoff_multiplier="Infinity"), 5, 1.0) == 0.0


def test_backoff_with_long_max_values() -> None:
    top = 2**63 - 1
    policy = RetryPolicy(initial_backoff_ms=top, max_backoff_ms=top, jitter_factor=1.0)
    assert backoff_ms(policy, 3, 1.0) == float(top) * 2


@pytest.mark.parametrize(
    ("n", "rand"), [(-1, 0.0), (True, 0.0), (1.0, 0.0), (0, -0.01), (0, 1.01), (0, math.nan)]
)
def test_backoff_rejects_bad_arguments(n: object, rand: float) -> None:
    with pytest.raises(ValueError):
        backoff_ms(RetryPolicy(), n, rand)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- RetryPolicy


def test_defaults() -> None:
    policy = RetryPolicy.from_worker_config({})
    assert policy == RetryPolicy()
    assert (policy.max_retries, policy.initial_backoff_ms, policy.max_backoff_ms) == (5, 300, 10_000)
    assert (policy.backoff_multiplier, policy.jitter_factor) == (2.0, 0.25)
    assert type(policy.backoff_multiplier) is float and type(policy.max_retries) is int


def test_reads_properties_file_strings() -> None:
    policy = RetryPolicy.from_worker_config(
        {
            MAX_RETRIES_CONFIG: "10",
            INITIAL_BACKOFF_MS_CONFIG: " 100 ",
            MAX_BACKOFF_MS_CONFIG: "30000",
            BACKOFF_MULTIPLIER_CONFIG: "1.5",
            JITTER_FACTOR_CONFIG: "0.1",
            "status.storage.topic": "connect-status",  # unrelated keys are ignored
        }
    )
    assert policy == RetryPolicy(10, 100, 30_000, 1.5, 0.1)
    assert isinstance(policy.max_retries, int) and isinstance(policy.backoff_multiplier, float)


def test_reads_numbers() -> None:
    policy = RetryPolicy.from_worker_config(
        {
            MAX_RETRIES_CONFIG: 2,
            INITIAL_BACKOFF_MS_CONFIG: 50,
            MAX_BACKOFF_MS_CONFIG: 500,
            BACKOFF_MULTIPLIER_CONFIG: 3,
            JITTER_FACTOR_CONFIG: 0,
        }
    )
    assert policy == RetryPolicy(2, 50, 500, 3.0, 0.0)
    assert type(policy.backoff_multiplier) is float and type(policy.jitter_factor) is float


def test_kip_example_configurations() -> None:
    unstable = RetryPolicy.from_worker_config({MAX_RETRIES_CONFIG: "10", MAX_BACKOFF_MS_CONFIG: "30000"})
    assert (unstable.max_retries, unstable.max_backoff_ms) == (10, 30_000)
    infinite = RetryPolicy.from_worker_config({MAX_RETRIES_CONFIG: "2147483647"})
    assert infinite.max_retries == 2_147_483_647


@pytest.mark.parametrize(
    ("key", "raw", "parsed"),
    [
        (MAX_RETRIES_CONFIG, "0", 0),
        (MAX_RETRIES_CONFIG, "+7", 7),
        (MAX_RETRIES_CONFIG, 2_147_483_647, 2_147_483_647),
        (INITIAL_BACKOFF_MS_CONFIG, "0", 0),
        (MAX_BACKOFF_MS_CONFIG, "9223372036854775807", 2**63 - 1),
        (MAX_BACKOFF_MS_CONFIG, "300", 300),  # equal to initial is fine
        (BACKOFF_MULTIPLIER_CONFIG, "1.0", 1.0),
        (BACKOFF_MULTIPLIER_CONFIG, "1e3", 1000.0),
        (BACKOFF_MULTIPLIER_CONFIG, "Infinity", math.inf),
        (JITTER_FACTOR_CONFIG, "0.0", 0.0),
        (JITTER_FACTOR_CONFIG, "1.0", 1.0),
        (JITTER_FACTOR_CONFIG, 1, 1.0),
        (JITTER_FACTOR_CONFIG, ".5", 0.5),
    ],
)
def test_accepts_boundary_values(key: str, raw: object, parsed: float) -> None:
    policy = RetryPolicy.from_worker_config({key: raw})
    attr = {
        MAX_RETRIES_CONFIG: "max_retries",
        INITIAL_BACKOFF_MS_CONFIG: "initial_backoff_ms",
        MAX_BACKOFF_MS_CONFIG: "max_backoff_ms",
        BACKOFF_MULTIPLIER_CONFIG: "backoff_multiplier",
        JITTER_FACTOR_CONFIG: "jitter_factor",
    }[key]
    assert getattr(policy, attr) == parsed


@pytest.mark.parametrize(
    ("key", "raw", "shown", "reason"),
    [
        (MAX_RETRIES_CONFIG, "-1", "-1", "Value must be at least 0"),
        (MAX_RETRIES_CONFIG, -1, "-1", "Value must be at least 0"),
        (MAX_RETRIES_CONFIG, 2**31, "2147483648", "Value must be no more than 2147483647"),
        (MAX_RETRIES_CONFIG, "2147483648", "2147483648", "Not a number of type INT"),
        (MAX_RETRIES_CONFIG, "abc", "abc", "Not a number of type INT"),
        (MAX_RETRIES_CONFIG, "1.5", "1.5", "Not a number of type INT"),
        (MAX_RETRIES_CONFIG, "", "", "Not a number of type INT"),
        (MAX_RETRIES_CONFIG, "1_000", "1_000", "Not a number of type INT"),
        (MAX_RETRIES_CONFIG, 2.0, "2.0", "Expected value to be a 32-bit integer, but it was a float"),
        (MAX_RETRIES_CONFIG, True, "true", "Expected value to be a 32-bit integer, but it was a bool"),
        (MAX_RETRIES_CONFIG, None, "null", "Value must be non-null"),
        (INITIAL_BACKOFF_MS_CONFIG, "-1", "-1", "Value must be at least 0"),
        (INITIAL_BACKOFF_MS_CONFIG, "abc", "abc", "Not a number of type LONG"),
        (
            INITIAL_BACKOFF_MS_CONFIG,
            "9223372036854775808",
            "9223372036854775808",
            "Not a number of type LONG",
        ),
        (INITIAL_BACKOFF_MS_CONFIG, 1.5, "1.5", "Expected value to be a 64-bit integer, but it was a float"),
        (MAX_BACKOFF_MS_CONFIG, "-5", "-5", "Value must be at least 0"),
        (MAX_BACKOFF_MS_CONFIG, "10s", "10s", "Not a number of type LONG"),
        (MAX_BACKOFF_MS_CONFIG, 2**63, str(2**63), "Value must be no more than 9223372036854775807"),
        (BACKOFF_MULTIPLIER_CONFIG, "0.5", "0.5", "Value must be at least 1.0"),
        (BACKOFF_MULTIPLIER_CONFIG, 0, "0.0", "Value must be at least 1.0"),
        (BACKOFF_MULTIPLIER_CONFIG, "nan", "nan", "Value must be at least 1.0"),
        (BACKOFF_MULTIPLIER_CONFIG, "abc", "abc", "Not a number of type DOUBLE"),
        (BACKOFF_MULTIPLIER_CONFIG, "1_0", "1_0", "Not a number of type DOUBLE"),
        (BACKOFF_MULTIPLIER_CONFIG, [2.0], "[2.0]", "Expected value to be a double, but it was a list"),
        (JITTER_FACTOR_CONFIG, "1.5", "1.5", "Value must be no more than 1.0"),
        (JITTER_FACTOR_CONFIG, 2, "2.0", "Value must be no more than 1.0"),
        (JITTER_FACTOR_CONFIG, "-0.1", "-0.1", "Value must be at least 0.0"),
        (JITTER_FACTOR_CONFIG, "inf", "inf", "Value must be no more than 1.0"),
        (JITTER_FACTOR_CONFIG, "abc", "abc", "Not a number of type DOUBLE"),
        (JITTER_FACTOR_CONFIG, None, "null", "Value must be non-null"),
    ],
)
def test_rejects_invalid_values(key: str, raw: object, shown: str, reason: str) -> None:
    with pytest.raises(RetryConfigError) as info:
        RetryPolicy.from_worker_config({key: raw})
    assert str(info.value) == f"Invalid value {shown} for configuration {key}: {reason}"
    assert info.value.key == key
    assert info.value.reason == reason
    assert isinstance(info.value, ValueError)


def test_spec_examples_verbatim() -> None:
    with pytest.raises(
        RetryConfigError,
        match=r"^Invalid value 1\.5 for configuration "
        r"status\.storage\.retry\.jitter\.factor: Value must be no more than 1\.0$",
    ):
        RetryPolicy.from_worker_config({JITTER_FACTOR_CONFIG: "1.5"})
    with pytest.raises(RetryConfigError) as info:
        RetryPolicy.from_worker_config({INITIAL_BACKOFF_MS_CONFIG: "20000"})
    assert str(info.value) == (
        "Invalid value 20000 for configuration status.storage.retry.initial.backoff.ms: "
        "must not be greater than status.storage.retry.max.backoff.ms (10000)"
    )
    assert info.value.key == INITIAL_BACKOFF_MS_CONFIG


def test_initial_greater_than_max_uses_the_configured_max() -> None:
    with pytest.raises(RetryConfigError) as info:
        RetryPolicy.from_worker_config({INITIAL_BACKOFF_MS_CONFIG: 500, MAX_BACKOFF_MS_CONFIG: "499"})
    assert str(info.value).endswith(": must not be greater than status.storage.retry.max.backoff.ms (499)")
    with pytest.raises(RetryConfigError, match=r"must not be greater than .*\(100\)$"):
        RetryPolicy.from_worker_config({MAX_BACKOFF_MS_CONFIG: "100"})  # default initial is 300


def test_direct_construction_is_validated_and_frozen() -> None:
    with pytest.raises(RetryConfigError, match="status.storage.retry.max.retries: Value must be at least 0"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(RetryConfigError, match="status.storage.retry.backoff.multiplier"):
        RetryPolicy(backoff_multiplier=0.9)
    policy = RetryPolicy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_retries = 1  # type: ignore[misc]
    assert hash(policy) == hash(RetryPolicy())


def test_config_error_survives_pickling() -> None:
    err = RetryConfigError(JITTER_FACTOR_CONFIG, 1.5, "Value must be no more than 1.0")
    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.key, copy.value) == (str(err), err.key, 1.5)


# --------------------------------------------------------------------------- StatusSender: counting


def test_metrics_names_are_exactly_the_kip_ones(make_sender) -> None:
    sender = make_sender(FakeSend())
    assert sender.metrics() == {
        "status-update-retry-total": 0,
        "status-update-failure-total": 0,
        "status-update-success-total": 0,
    }


def test_successes_are_counted(make_sender) -> None:
    send = FakeSend()
    sender = make_sender(send)
    for i in range(3):
        sender.submit(f"status-task-c-{i}", b"RUNNING")
    sender.submit("status-connector-c", None)  # tombstones pass through
    assert sender.flush(WAIT)
    assert sender.metrics()["status-update-success-total"] == 4
    assert send.store == {
        "status-task-c-0": b"RUNNING",
        "status-task-c-1": b"RUNNING",
        "status-task-c-2": b"RUNNING",
        "status-connector-c": None,
    }
    assert sender.pending == 0 and list(sender.retry_log) == []


def test_retries_then_succeeds_with_kip_delays(make_sender, caplog) -> None:
    send = FakeSend(fail_first(2))
    sender = make_sender(send)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        sender.submit("status-task-r-0", b"v")
        assert sender.flush(WAIT)
    assert sender.metrics() == {
        "status-update-retry-total": 2,
        "status-update-failure-total": 0,
        "status-update-success-total": 1,
    }
    assert send.values("status-task-r-0") == [b"v"] * 3 and send.store == {"status-task-r-0": b"v"}
    log = list(sender.retry_log)
    assert [(e.key, e.attempt, e.delay_ms) for e in log] == [
        ("status-task-r-0", 0, 1.5),
        ("status-task-r-0", 1, 3.0),
    ]
    assert all(isinstance(e, RetryLogEntry) for e in log)
    # A retry is never sent before its backoff has elapsed (lower bound only, no upper bound).
    for entry, resend in zip(log, send.calls[1:], strict=True):
        assert resend.time >= entry.time + entry.delay_ms / 1000.0 - 1e-6
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and all("status-task-r-0" in r.getMessage() for r in warnings)


def test_gives_up_after_max_retries_and_logs_the_key(make_sender, caplog) -> None:
    send = FakeSend(lambda key, value, n: TimeoutError("broker down"))
    sender = make_sender(send)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sender.submit("status-task-sink-3", b"FAILED")
        assert sender.flush(WAIT)
    assert len(send.calls) == 1 + FAST.max_retries
    assert sender.metrics() == {
        "status-update-retry-total": 3,
        "status-update-failure-total": 1,
        "status-update-success-total": 0,
    }
    # rand() == 1.0: capped + capped * 0.5 with 1, 2, 4 ms
    assert [(e.attempt, e.delay_ms) for e in sender.retry_log] == [(0, 1.5), (1, 3.0), (2, 6.0)]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "status-task-sink-3" in errors[0].getMessage()
    assert send.store == {}


def test_delays_follow_the_policy_and_rand(make_sender) -> None:
    policy = RetryPolicy(
        max_retries=5, initial_backoff_ms=1, max_backoff_ms=5, backoff_multiplier=3.0, jitter_factor=0.2
    )
    draws = iter([0.0, 1.0, 0.5, 0.25, 0.75])
    sender = make_sender(FakeSend(fail_first(5)), policy, rand=lambda: next(draws))
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert [e.delay_ms for e in sender.retry_log] == [
        backoff_ms(policy, n, r) for n, r in enumerate([0.0, 1.0, 0.5, 0.25, 0.75])
    ]
    assert sender.metrics()["status-update-success-total"] == 1


def test_max_retries_zero_means_no_retry(make_sender) -> None:
    send = FakeSend(fail_first(1))
    sender = make_sender(send, dataclasses.replace(FAST, max_retries=0))
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert len(send.calls) == 1
    assert sender.metrics() == {
        "status-update-retry-total": 0,
        "status-update-failure-total": 1,
        "status-update-success-total": 0,
    }


def test_non_retriable_error_fails_immediately(make_sender, caplog) -> None:
    class Fatal(Exception):
        pass

    send = FakeSend(lambda key, value, n: Fatal("topic authorization failed"))
    sender = make_sender(send, is_retriable=lambda e: not isinstance(e, Fatal))
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sender.submit("status-connector-x", b"v")
        assert sender.flush(WAIT)
    assert len(send.calls) == 1
    assert sender.metrics()["status-update-failure-total"] == 1
    assert sender.metrics()["status-update-retry-total"] == 0
    assert any("status-connector-x" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)


def test_is_retriable_that_raises_counts_as_non_retriable(make_sender) -> None:
    def broken(exc: BaseException) -> bool:
        raise RuntimeError("bug")

    send = FakeSend(fail_first(1))
    sender = make_sender(send, is_retriable=broken)
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert len(send.calls) == 1 and sender.metrics()["status-update-failure-total"] == 1


def test_synchronous_raise_is_a_failed_attempt(make_sender) -> None:
    attempts: list[int] = []

    def send(key, value, on_done) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            raise BufferError("local queue full")
        on_done(None)

    sender = make_sender(send)
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert len(attempts) == 2
    assert sender.metrics() == {
        "status-update-retry-total": 1,
        "status-update-failure-total": 0,
        "status-update-success-total": 1,
    }


def test_repeated_completion_is_counted_once(make_sender) -> None:
    def send(key, value, on_done) -> None:
        on_done(None)
        on_done(ConnectionError("late duplicate"))
        raise RuntimeError("raised after completing")

    sender = make_sender(send)
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert sender.metrics() == {
        "status-update-retry-total": 0,
        "status-update-failure-total": 0,
        "status-update-success-total": 1,
    }


def test_broken_rand_drops_the_update_instead_of_wedging(make_sender) -> None:
    sender = make_sender(FakeSend(fail_first(1)), rand=lambda: math.nan)
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert sender.metrics()["status-update-failure-total"] == 1


def test_retry_log_is_bounded(make_sender) -> None:
    sender = make_sender(FakeSend(fail_first(3)), retry_log_size=2)
    sender.submit("k", b"v")
    assert sender.flush(WAIT)
    assert [e.attempt for e in sender.retry_log] == [1, 2]
    assert sender.metrics()["status-update-retry-total"] == 3


# --------------------------------------------------------------------------- StatusSender: ordering


def test_newer_value_supersedes_an_in_flight_one_that_fails(make_sender) -> None:
    send = FakeSend(lambda key, value, n: HOLD)
    sender = make_sender(send)
    sender.submit("k", b"v1")
    send.wait_calls(1)
    sender.submit("k", b"v2")
    sender.submit("k", b"v3")
    assert send.values("k") == [b"v1"]  # at most one in flight per key
    send.complete(0, ConnectionError("timeout"))  # the old write fails: it must not be retried
    send.wait_calls(2)
    send.complete(1)
    assert sender.flush(WAIT)
    assert send.values("k") == [b"v1", b"v3"]
    assert send.store == {"k": b"v3"}
    assert sender.metrics() == {
        "status-update-retry-total": 0,
        "status-update-failure-total": 0,
        "status-update-success-total": 1,
    }
    assert sender.superseded == 2  # v2 never sent, v1 not retried


def test_newer_value_waits_for_the_in_flight_one_that_succeeds(make_sender) -> None:
    send = FakeSend(lambda key, value, n: HOLD)
    sender = make_sender(send)
    sender.submit("k", b"v1")
    send.wait_calls(1)
    sender.submit("k", b"v2")
    assert not sender.flush(0.05)
    assert len(send.calls) == 1
    send.complete(0)
    send.wait_calls(2)
    send.complete(1)
    assert sender.flush(WAIT)
    assert send.values("k") == [b"v1", b"v2"] and send.store == {"k": b"v2"}
    assert sender.metrics()["status-update-success-total"] == 2 and sender.superseded == 0


def test_newer_value_cancels_a_waiting_retry(make_sender) -> None:
    send = FakeSend(lambda key, value, n: ConnectionError("down") if value == b"old" else None)
    sender = make_sender(send, SLOW)  # the retry would wait a minute
    sender.submit("k", b"old")
    wait_until(lambda: len(sender.retry_log) == 1, what="a scheduled retry")
    sender.submit("k", b"new")  # sent at once, not after the old retry's backoff
    assert sender.flush(WAIT)
    assert send.values("k") == [b"old", b"new"] and send.store == {"k": b"new"}
    assert sender.metrics() == {
        "status-update-retry-total": 1,
        "status-update-failure-total": 0,
        "status-update-success-total": 1,
    }
    assert sender.superseded == 1
    assert sender.close(WAIT)
    assert send.values("k") == [b"old", b"new"]  # the cancelled retry never fires


def test_queued_values_coalesce_to_the_newest(make_sender) -> None:
    gate = threading.Event()
    send = FakeSend(lambda key, value, n: None if key != "blocker" or gate.wait(WAIT) else None)
    sender = make_sender(send)
    sender.submit("blocker", b"x")  # occupies the dispatcher thread
    send.wait_calls(1)
    for i in range(100):
        sender.submit("k", b"%d" % i)
    gate.set()
    assert sender.flush(WAIT)
    assert send.values("k") == [b"99"]
    assert sender.superseded == 99


def test_older_value_never_overwrites_newer_under_concurrency(make_sender) -> None:
    """Random async failures from a 'broker' thread; the last submitted value of every key wins."""
    rng = random.Random(1278)
    inbox: queue.Queue = queue.Queue()
    store: dict[str, bytes | None] = {}
    in_flight: set[str] = set()
    violations: list[str] = []
    lock = threading.Lock()

    def send(key, value, on_done) -> None:
        with lock:
            if key in in_flight:
                violations.append(key)
            in_flight.add(key)
        inbox.put((key, value, on_done))

    def broker() -> None:
        while (item := inbox.get()) is not None:
            key, value, on_done = item
            fail = rng.random() < 0.3
            with lock:
                in_flight.discard(key)
                if not fail:
                    store[key] = value
            on_done(ConnectionError("flaky") if fail else None)

    thread = threading.Thread(target=broker, daemon=True)
    thread.start()
    policy = RetryPolicy(max_retries=1000, initial_backoff_ms=0, max_backoff_ms=1, jitter_factor=0.5)
    sender = make_sender(send, policy, rand=rng.random)
    keys = [f"status-task-c-{i}" for i in range(8)]
    last: dict[str, bytes] = {}
    for i in range(2000):
        key = rng.choice(keys)
        last[key] = b"%d" % i
        sender.submit(key, last[key])
    try:
        assert sender.flush(30.0)
    finally:
        inbox.put(None)
        thread.join(WAIT)
    assert violations == []
    assert store == last
    m = sender.metrics()
    assert m["status-update-failure-total"] == 0
    assert m["status-update-success-total"] + sender.superseded == 2000


# --------------------------------------------------------------------------- StatusSender: never blocking


def test_keys_do_not_wait_on_each_other(make_sender) -> None:
    send = FakeSend(
        lambda key, value, n: HOLD if key == "stuck" else ConnectionError() if key == "slow" else None
    )
    sender = make_sender(send, SLOW)
    sender.submit("stuck", b"callback never comes")
    sender.submit("slow", b"waits a minute to retry")
    wait_until(lambda: len(sender.retry_log) == 1, what="the slow key's retry")
    sender.submit("fast", b"ok")
    wait_until(lambda: send.store.get("fast") == b"ok", what="the fast key")
    assert sender.metrics()["status-update-success-total"] == 1
    assert sender.pending == 2
    assert not sender.flush(0.05)


def test_submit_never_blocks_while_send_blocks(make_sender) -> None:
    gate = threading.Event()

    def outcome(key, value, n):
        if key == "blocking":
            gate.wait(WAIT)  # the dispatcher thread is stuck inside send()
        return None

    send = FakeSend(outcome)
    sender = make_sender(send)
    sender.submit("blocking", b"x")
    send.wait_calls(1)
    submitter = threading.Thread(target=lambda: [sender.submit(f"k{i % 10}", b"%d" % i) for i in range(1000)])
    submitter.start()
    submitter.join(WAIT)
    alive = submitter.is_alive()
    gate.set()
    assert not alive, "submit() blocked while send() was blocked"
    assert sender.flush(WAIT)
    assert send.store == {"blocking": b"x", **{f"k{i}": b"%d" % (990 + i) for i in range(10)}}


def test_submit_never_blocks_when_the_callback_never_comes(make_sender) -> None:
    send = FakeSend(lambda key, value, n: HOLD)
    sender = make_sender(send)
    submitter = threading.Thread(target=lambda: [sender.submit(f"k{i % 50}", b"v") for i in range(500)])
    submitter.start()
    submitter.join(WAIT)
    assert not submitter.is_alive()
    send.wait_calls(50)
    assert sender.pending == 50 and not sender.flush(0.05)
    assert sender.metrics()["status-update-success-total"] == 0


# --------------------------------------------------------------------------- StatusSender: lifecycle


def test_dispatcher_is_a_named_daemon_thread(make_sender) -> None:
    sender = make_sender(FakeSend(), name="status-store-retry-connect-status")
    assert sender._thread.daemon and sender._thread.name == "status-store-retry-connect-status"


def test_close_flushes_then_stops(make_sender) -> None:
    send = FakeSend(fail_first(2))
    sender = make_sender(send)
    sender.submit("k", b"v")
    assert sender.close(WAIT)
    assert not sender._thread.is_alive()
    assert send.store == {"k": b"v"} and sender.metrics()["status-update-success-total"] == 1
    assert sender.close(WAIT)  # idempotent


def test_close_drops_what_it_cannot_flush(make_sender, caplog) -> None:
    send = FakeSend(lambda key, value, n: HOLD if key == "held" else ConnectionError("down"))
    sender = make_sender(send, SLOW)
    sender.submit("held", b"1")
    sender.submit("retrying", b"1")
    send.wait_calls(2)
    wait_until(lambda: len(sender.retry_log) == 1, what="a scheduled retry")
    sender.submit("held", b"2")  # queued behind the in-flight write
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        assert not sender.close(0.05)
        wait_until(lambda: not sender._thread.is_alive(), what="the dispatcher thread to stop")
        dropped = {r.getMessage() for r in caplog.records if r.levelno == logging.ERROR}
        assert any("retrying" in m for m in dropped) and any("held" in m for m in dropped)
        assert sender.metrics()["status-update-failure-total"] == 2
        # A late failure of the in-flight write is counted but not retried; a late submit is dropped.
        send.complete(0, ConnectionError("late"))
        sender.submit("after-close", b"x")
    assert sender.metrics() == {
        "status-update-retry-total": 1,
        "status-update-failure-total": 4,
        "status-update-success-total": 0,
    }
    assert sender.pending == 0
    assert len(send.calls) == 2
    assert any("after-close" in r.getMessage() for r in caplog.records)


def test_late_success_after_close_is_counted(make_sender) -> None:
    send = FakeSend(lambda key, value, n: HOLD)
    sender = make_sender(send)
    sender.submit("k", b"v")
    send.wait_calls(1)
    assert not sender.close(0.05)
    send.complete(0)
    assert sender.flush(WAIT)
    assert sender.metrics()["status-update-success-total"] == 1


def test_context_manager_closes() -> None:
    send = FakeSend()
    with StatusSender(send, FAST, rand=lambda: 0.0) as sender:
        sender.submit("k", b"v")
    assert not sender._thread.is_alive()
    assert send.store == {"k": b"v"}


# --------------------------------------------------------------------------- on_failure (given-up values)


def test_on_failure_is_told_each_given_up_value(make_sender) -> None:
    given_up: list[tuple[str, bytes | None]] = []
    send = FakeSend(lambda key, value, n: TimeoutError("down") if key.startswith("bad") else None)
    sender = make_sender(send, on_failure=lambda key, value: given_up.append((key, value)))
    sender.submit("bad-1", b"v1")
    sender.submit("good", b"g")
    sender.submit("bad-2", None)
    assert sender.flush(WAIT)
    wait_until(lambda: len(given_up) == 2, what="two on_failure calls")
    assert sorted(given_up, key=lambda kv: kv[0]) == [("bad-1", b"v1"), ("bad-2", None)]
    assert sender.metrics()["status-update-failure-total"] == 2


def test_on_failure_is_not_told_about_superseded_or_non_retriable_successes(make_sender) -> None:
    class Fatal(Exception):
        pass

    given_up: list[tuple[str, bytes | None]] = []
    send = FakeSend(lambda key, value, n: Fatal("no") if value == b"fatal" else HOLD if n == 0 else None)
    sender = make_sender(send, on_failure=lambda key, value: given_up.append((key, value)),
                         is_retriable=lambda e: not isinstance(e, Fatal))
    sender.submit("k", b"old")
    first = send.wait_calls(1)[0]
    sender.submit("k", b"new")  # supersedes the in-flight value
    first.on_done(ConnectionError("lost"))
    assert sender.flush(WAIT)
    assert given_up == []  # the old value was superseded, the new one written
    sender.submit("f", b"fatal")
    assert sender.flush(WAIT)
    wait_until(lambda: given_up == [("f", b"fatal")], what="the non-retriable value")


def test_on_failure_that_raises_is_logged_and_ignored(make_sender, caplog) -> None:
    def broken(key: str, value: bytes | None) -> None:
        raise RuntimeError("bug in owner")

    sender = make_sender(FakeSend(lambda key, value, n: TimeoutError("down")), on_failure=broken)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sender.submit("k", b"v")
        assert sender.flush(WAIT)
        wait_until(lambda: any("on_failure raised" in r.getMessage() for r in caplog.records),
                   what="the on_failure error log")
    sender.submit("k2", b"v")  # the sender still works
    assert sender.flush(WAIT)


# --------------------------------------------------------------------------- worker configuration


def test_retry_config_error_is_a_config_exception() -> None:
    from connect_magics.api.config import ConfigException

    with pytest.raises(ConfigException) as info:
        RetryPolicy.from_worker_config({JITTER_FACTOR_CONFIG: "2"})
    assert info.value.name == JITTER_FACTOR_CONFIG == info.value.key


@pytest.mark.parametrize(
    ("props", "key"),
    [
        ({MAX_RETRIES_CONFIG: "-1"}, MAX_RETRIES_CONFIG),
        ({INITIAL_BACKOFF_MS_CONFIG: "-1"}, INITIAL_BACKOFF_MS_CONFIG),
        ({INITIAL_BACKOFF_MS_CONFIG: "20000"}, INITIAL_BACKOFF_MS_CONFIG),
        ({MAX_BACKOFF_MS_CONFIG: "-1"}, MAX_BACKOFF_MS_CONFIG),
        ({BACKOFF_MULTIPLIER_CONFIG: "0.99"}, BACKOFF_MULTIPLIER_CONFIG),
        ({JITTER_FACTOR_CONFIG: "1.01"}, JITTER_FACTOR_CONFIG),
        ({JITTER_FACTOR_CONFIG: "-0.5"}, JITTER_FACTOR_CONFIG),
        ({"status.storage.request.timeout.ms": "0"}, "status.storage.request.timeout.ms"),
        ({"status.storage.request.timeout.ms": "-5"}, "status.storage.request.timeout.ms"),
        ({"status.storage.request.timeout.ms": "9"}, "status.storage.request.timeout.ms"),
        ({"status.storage.request.timeout.ms": str(2**31)}, "status.storage.request.timeout.ms"),
        ({"status.storage.request.timeout.ms": "1.5s"}, "status.storage.request.timeout.ms"),
    ],
)
def test_worker_config_rejects_each_invalid_status_setting_naming_it(props: dict, key: str) -> None:
    from connect_magics.api.config import ConfigException
    from connect_magics.runtime.config.worker_config import WorkerConfig

    with pytest.raises(ConfigException) as info:
        WorkerConfig("127.0.0.1:9", "g", props)
    assert f"for configuration {key}" in str(info.value)


def test_worker_config_carries_the_policy_and_request_timeout() -> None:
    from connect_magics.runtime.config.worker_config import WorkerConfig

    wc = WorkerConfig("127.0.0.1:9", "g", {MAX_RETRIES_CONFIG: 7, JITTER_FACTOR_CONFIG: "0"})
    assert wc.retry_policy == RetryPolicy(max_retries=7, jitter_factor=0.0)
    assert wc.int("status.storage.request.timeout.ms") == 1500
    assert WorkerConfig("127.0.0.1:9", "g").retry_policy == RetryPolicy()


def test_worker_config_accepts_the_request_timeout_bounds() -> None:
    from connect_magics.runtime.config.worker_config import WorkerConfig

    for value in ("10", "2147483647"):
        wc = WorkerConfig("127.0.0.1:9", "g", {"status.storage.request.timeout.ms": value})
        assert wc.int("status.storage.request.timeout.ms") == int(value)
