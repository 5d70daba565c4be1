"""RecordErrorHandler: Kafka's retry, tolerance and reporting decisions for a failed record (pure logic)."""

from __future__ import annotations

import logging

import pytest

from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.runtime.worker.error_handling import (
    ErrorSettings,
    RecordErrorHandler,
    Stage,
    StagedError,
    staged,
)


class Upper:
    def apply(self, value: str) -> str:
        return value.upper()


def failing(cause: BaseException, stage: Stage = Stage.TRANSFORMATION) -> StagedError:
    return StagedError(stage, Upper, cause)


def handler(waits: list[float] | None = None, **settings: object) -> RecordErrorHandler:
    def wait(seconds: float) -> bool:
        if waits is not None:
            waits.append(seconds)
        return True
    return RecordErrorHandler(ErrorSettings(**settings), "conn-0", wait)


def test_settings_from_a_connector_config() -> None:
    s = ErrorSettings.from_config({"errors.tolerance": " All ", "errors.retry.timeout": "-1",
                                   "errors.log.enable": "TRUE", "errors.deadletterqueue.topic.name": " dlq ",
                                   "errors.deadletterqueue.context.headers.enable": "true"})
    assert (s.tolerance, s.retry_timeout_ms, s.log_enable, s.dlq_topic, s.dlq_context_headers) == \
        ("all", -1, True, "dlq", True)
    assert ErrorSettings.from_config({}) == ErrorSettings()


def test_staged_names_the_stage_and_class() -> None:
    with pytest.raises(StagedError) as e:
        staged(Stage.VALUE_CONVERTER, Upper(), int, "x")
    assert e.value.stage is Stage.VALUE_CONVERTER and e.value.executing_class is Upper
    assert isinstance(e.value.cause, ValueError)
    assert staged(Stage.TRANSFORMATION, Upper(), Upper().apply, "a") == "A"


def test_tolerance_none_fails_and_all_skips() -> None:
    with pytest.raises(ConnectException, match="Tolerance exceeded in error handler") as e:
        handler().handle(failing(ValueError("bad")), lambda: "never", record=None)
    assert isinstance(e.value.__cause__, ValueError)
    h = handler(tolerance="all")
    assert h.handle(failing(ValueError("bad")), lambda: "never", record=None) is None
    assert h.counts["total-records-skipped"] == 1 and h.counts["total-record-errors"] == 1


def test_only_converter_and_transformation_failures_are_tolerated() -> None:
    with pytest.raises(ConnectException, match="Unhandled exception in error handler"):
        handler(tolerance="all").handle(failing(ValueError("x"), Stage.TASK_PUT), lambda: None, record=None)


def test_retriable_failures_are_retried_with_kafkas_backoff_until_one_succeeds() -> None:
    waits: list[float] = []
    attempts = iter([failing(RetriableException("1")), failing(RetriableException("2")), "done"])

    def retry() -> str:
        outcome = next(attempts)
        if isinstance(outcome, StagedError):
            raise outcome
        return outcome
    h = handler(waits, retry_timeout_ms=-1, max_delay_ms=60000)
    assert h.handle(failing(RetriableException("0")), retry, record=None) == "done"
    assert waits == [0.3, 0.6, 1.2] and h.counts["total-retries"] == 3


def test_no_retry_without_a_retry_timeout_and_a_random_delay_past_the_max() -> None:
    waits: list[float] = []
    with pytest.raises(ConnectException, match="Tolerance exceeded"):
        handler(waits).handle(failing(RetriableException("r")), lambda: "unused", record=None)
    assert waits == []
    h = handler(waits, retry_timeout_ms=-1, max_delay_ms=500)
    assert 0 <= h._backoff(3, 0) < 0.5  # 1200 ms would pass the 500 ms max: a random delay below it


def test_a_stop_ends_the_retries() -> None:
    h = RecordErrorHandler(ErrorSettings(retry_timeout_ms=-1, tolerance="all"), "conn-0", lambda s: False)
    assert h.handle(failing(RetriableException("r")), lambda: "unused", record=None) is None


def test_errors_log(caplog: pytest.LogCaptureFixture) -> None:
    h = handler(tolerance="all", log_enable=True)
    with caplog.at_level(logging.ERROR, logger="connect_magics.runtime.worker.error_handling"):
        h.handle(failing(ValueError("bad value")), lambda: None, record=None)
    assert "Error encountered in task conn-0. Executing stage 'TRANSFORMATION' with class " \
           f"'{Upper.__module__}.Upper'" in caplog.text
    assert h.counts["total-errors-logged"] == 1


def test_records_the_task_reports_fail_it_unless_tolerated() -> None:
    error = failing(ValueError("cannot write"), Stage.TASK_PUT)
    with pytest.raises(ConnectException, match="Tolerance exceeded in error handler"):
        handler().report_failed(error, record=None)
    h = handler(tolerance="all")
    h.report_failed(error, record=None)  # tolerated: a task failure is reportable at any stage
    assert h.metrics()["total-record-errors"] == 1 and h.metrics()["last-error-timestamp"] > 0
