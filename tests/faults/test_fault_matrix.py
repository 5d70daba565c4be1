"""The fault matrix (tests/faults/matrix.py) as tests: each case counts every record end to end and checks
that nothing is lost, that duplicates appear only where at-least-once allows them, and that within a bound
after the fault every task is RUNNING and progressing, or FAILED with a trace.

By default a CI subset runs (small record counts, short outages); ``CONNECT_MAGICS_FAULT_MATRIX=1`` runs
every fault x executor x connector type x exactly-once case, with the issue's 30 s outages.
``bench/fault_matrix.py`` runs any subset as a script and prints the table."""

from __future__ import annotations

import itertools

import pytest
from faults.matrix import EXECUTORS, FAULTS, KINDS, env_flag, run_case

FULL = env_flag("CONNECT_MAGICS_FAULT_MATRIX")
CI_CASES = [
    ("stop", "threads", "source", False),
    ("stop", "threads", "sink", False),
    ("kill", "processes", "sink", False),
    ("pause", "threads", "sink", False),
    ("coordinator", "threads", "source", True),
    ("slow-fsync", "threads", "sink", False),
]
CASES = list(itertools.product(FAULTS, EXECUTORS, KINDS, (False, True))) if FULL else CI_CASES
# CI: about 20 s of work per case; the full matrix: the issue's 30 s outage, more records.
SIZE = (dict(records=50_000, outage_s=30.0, feed_s=20.0, bound_s=60.0, deadline_s=240.0) if FULL
        else dict(records=20_000, outage_s=5.0, feed_s=8.0, bound_s=30.0, deadline_s=90.0))


def case_id(case: tuple[str, str, str, bool]) -> str:
    fault, executor, kind, eos = case
    return f"{fault}-{executor}-{kind}{'-eos' if eos else ''}"


def marks(case: tuple[str, str, str, bool]) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow, pytest.mark.broker, pytest.mark.faults] + (
        [pytest.mark.spark] if case[1] == "spark" else [])


@pytest.mark.parametrize(("fault", "executor", "kind", "exactly_once"),
                         [pytest.param(*c, id=case_id(c), marks=marks(c)) for c in CASES])
def test_fault(fault: str, executor: str, kind: str, exactly_once: bool, request: pytest.FixtureRequest) -> None:
    spark = request.getfixturevalue("spark") if executor == "spark" else None
    result = run_case(fault, executor, kind, exactly_once, spark=spark, **SIZE)
    print(result.summary())
    assert not result.error, result.summary()
    assert result.visible, f"a task stopped while its status said RUNNING: {result.summary()}"
    assert result.lost == 0, result.summary()
    assert result.duplicates_allowed or result.duplicated == 0, result.summary()
    assert result.passed, result.summary()


@pytest.mark.slow
@pytest.mark.broker
@pytest.mark.faults
def test_issue_31_pipeline_through_a_broker_stop() -> None:
    """Issue 31's reproduction, short (bench/fault_matrix.py --loop N runs it in full): a FileStreamSource and a
    FileStreamSink on one runtime with default consumer settings, the broker stopped in the middle; every line
    ends in the output file exactly once and both tasks are RUNNING."""
    result = run_case("stop", "threads", "pipeline", records=20_000, outage_s=5.0, feed_s=8.0, bound_s=30.0,
                      deadline_s=90.0, sink_session_timeout_ms=None)
    print(result.summary())
    assert result.passed and result.duplicated == 0 and sorted(result.tasks) == ["sink", "source"], \
        result.summary()
