"""Kafka Connect's record error handling (KIP-298): retries, tolerance, the error log and the dead letter queue.

A record that fails in a converter or a transformation is retried while the failure is a
:class:`~connect_magics.api.errors.RetriableException` and ``errors.retry.timeout`` allows, then
reported (``errors.log.enable``; for sinks the dead letter queue ``errors.deadletterqueue.topic.name``),
then skipped when ``errors.tolerance=all`` or failing the task with "Tolerance exceeded in error
handler" when it is ``none`` (Kafka's ``RetryWithToleranceOperator``, ``LogReporter`` and
``DeadLetterQueueReporter``).

>>> settings = ErrorSettings.from_config({"errors.tolerance": "ALL", "errors.retry.timeout": "1000"})
>>> settings.tolerance, settings.retry_timeout_ms
('all', 1000)
"""

from __future__ import annotations

import logging
import random
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.runtime.plugins.registry import kafka_class_name, python_name
from connect_magics.storage.authorization import (
    KafkaAuthorizationError,
    check_topic_operations,
    principal,
    raise_access,
)
from connect_magics.storage.client_limit import Reservation, new_client
from connect_magics.storage.client_logs import client_logger

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRIES_DELAY_MIN_MS = 300  # Kafka's first backoff, doubled on every retry
HEADER_PREFIX = "__connect.errors."


class Stage(Enum):
    """Where in the pipeline a record failed (Kafka's ``Stage``; the DLQ's ``__connect.errors.stage``)."""

    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    TRANSFORMATION = "TRANSFORMATION"
    TASK_PUT = "TASK_PUT"
    TASK_POLL = "TASK_POLL"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"


#: Stages whose every exception can be tolerated; elsewhere only retriable ones (as in Kafka).
TOLERABLE_STAGES = frozenset({Stage.KEY_CONVERTER, Stage.VALUE_CONVERTER, Stage.HEADER_CONVERTER,
                              Stage.TRANSFORMATION})


class StagedError(Exception):
    """A record failure with the stage and the class (converter, transformation) that raised it."""

    def __init__(self, stage: Stage, executing_class: type, cause: BaseException) -> None:
        super().__init__(f"{stage.value} {executing_class.__name__}: {cause}")
        self.stage, self.executing_class, self.cause = stage, executing_class, cause


def staged(stage: Stage, executing: Any, call: Callable[..., T], *args: Any) -> T:
    """``call(*args)``, with any exception wrapped in a :class:`StagedError` naming ``stage``."""
    try:
        return call(*args)
    except Exception as e:
        raise StagedError(stage, type(executing), e) from e


@dataclass(frozen=True)
class ErrorSettings:
    """The ``errors.*`` settings of a connector."""

    retry_timeout_ms: int = 0
    max_delay_ms: int = 60000
    tolerance: str = "none"
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> ErrorSettings:
        """Read from a connector config that validation already accepted."""
        def flag(key: str) -> bool:
            return str(config.get(key, "false")).strip().lower() == "true"
        return cls(retry_timeout_ms=int(config.get("errors.retry.timeout", 0)),
                   max_delay_ms=int(config.get("errors.retry.delay.max.ms", 60000)),
                   tolerance=str(config.get("errors.tolerance", "none")).strip().lower(),
                   log_enable=flag("errors.log.enable"),
                   log_include_messages=flag("errors.log.include.messages"),
                   dlq_topic=str(config.get("errors.deadletterqueue.topic.name", "")).strip(),
                   dlq_replication_factor=int(config.get("errors.deadletterqueue.topic.replication.factor", 3)),
                   dlq_context_headers=flag("errors.deadletterqueue.context.headers.enable"))


class DeadLetterQueue:
    """A sink connector's dead letter queue: failed records as they were consumed, plus context headers.

    The topic is created (one partition, ``errors.deadletterqueue.topic.replication.factor``) when the
    task starts if it is missing. Writes are asynchronous; :meth:`flush` waits for them before the task
    commits offsets, and raises if one failed, so a record is never both skipped and lost.
    """

    def __init__(self, settings: ErrorSettings, connector: str, task: int, producer_config: Mapping[str, Any],
                 admin_config: Mapping[str, Any], clients: Reservation | None = None,
                 admin: AdminClient | None = None) -> None:
        """``admin``: an admin client to check and create the topic with (the worker's shared one), else one
        is built; ``clients``: the Kafka clients promised to the task (runtime/worker/capacity.py)."""
        self.topic, self.context_headers = settings.dlq_topic, settings.dlq_context_headers
        self.connector, self.task = connector, task
        what = f"The dead letter queue of task {connector}-{task}"
        if admin is None:
            admin = new_client(AdminClient, {**admin_config, "logger": client_logger("admin")}, what, clients)
        if self.topic not in admin.list_topics(timeout=30).topics:
            log.error("Topic %s doesn't exist. Will attempt to create topic.", self.topic)
            new = NewTopic(self.topic, 1, settings.dlq_replication_factor)
            try:
                admin.create_topics([new], request_timeout=30)[self.topic].result(30)
            except KafkaException as e:
                raise_access(e, admin_config, f"Could not initialize dead letter queue with topic={self.topic}",
                             topic=("CREATE", self.topic))
                if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise ConnectException(f"Could not initialize dead letter queue with topic={self.topic}") from e
        missing = check_topic_operations(admin, admin_config, {self.topic: ("WRITE",)})  # fail now, not at a record
        if missing:
            raise KafkaAuthorizationError(principal(admin_config), missing, "the sink's dead letter queue")
        self._producer_config = producer_config
        self._producer = new_client(Producer, {**producer_config, "logger": client_logger("producer")}, what, clients)
        self._failure: KafkaError | None = None
        self.produced = self.failed = 0

    def report(self, message: Any, error: StagedError) -> None:
        """Send the consumed ``message`` (key, value, headers, timestamp) to the dead letter queue."""
        headers = list(message.headers() or [])
        if self.context_headers:
            headers += [(HEADER_PREFIX + k, v.encode()) for k, v in (
                ("topic", message.topic()), ("partition", str(message.partition())),
                ("offset", str(message.offset())), ("connector.name", self.connector),
                ("task.id", str(self.task)), ("stage", error.stage.value),
                ("class.name", kafka_class_name(error.executing_class)),
                ("exception.class.name", kafka_class_name(type(error.cause))),
                ("exception.message", str(error.cause)),
                ("exception.stacktrace", "".join(traceback.format_exception(error.cause))))]
        ts_type, ts = message.timestamp()
        options = {"timestamp": ts} if ts_type != TIMESTAMP_NOT_AVAILABLE else {}
        self._producer.produce(self.topic, message.value(), message.key(), headers=headers,
                               on_delivery=self._delivered, **options)
        self._producer.poll(0)

    def _delivered(self, err: KafkaError | None, msg: Any) -> None:
        if err is None:
            self.produced += 1
            return
        self.failed += 1
        self._failure = err
        log.error("Could not produce message to dead letter queue. topic=%s: %s", self.topic, err)

    def flush(self, timeout: float) -> None:
        """Wait until every reported record was acknowledged; raise if one could not be written."""
        if self._producer.flush(timeout) > 0:
            raise ConnectException(f"Timed out writing to the dead letter queue topic={self.topic}")
        if self._failure is not None:
            raise_access(self._failure, self._producer_config, "writing to the dead letter queue",
                         topic=("WRITE", self.topic))
            raise ConnectException(f"Could not produce message to dead letter queue topic={self.topic}: "
                                   f"{self._failure}")

    def close(self, timeout: float) -> None:
        """Flush, then let go of the producer: freed now, not at the next full garbage collection if a cycle
        holds this reporter."""
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush(timeout)


class RecordErrorHandler:
    """Retry, report, then tolerate or fail: what happens to a record that failed in a converter or transform.

    ``wait(seconds)`` sleeps for a backoff and returns False if the task is stopping (as the task's
    condition variable does), so that a stop is never held up by retries.
    """

    def __init__(self, settings: ErrorSettings, task_name: str, wait: Callable[[float], bool],
                 dlq: DeadLetterQueue | None = None) -> None:
        self.settings, self.task_name, self.wait, self.dlq = settings, task_name, wait, dlq
        self.counts = {"total-record-failures": 0, "total-record-errors": 0, "total-records-skipped": 0,
                       "total-retries": 0, "total-errors-logged": 0, "deadletterqueue-produce-requests": 0}
        self.last_error_timestamp = 0

    def metrics(self) -> dict[str, int]:
        """Kafka's ``task-error-metrics`` for this task."""
        return {**self.counts, "deadletterqueue-produce-failures": self.dlq.failed if self.dlq else 0,
                "last-error-timestamp": self.last_error_timestamp}

    def handle(self, error: StagedError, retry: Callable[[], T], record: Any) -> T | None:
        """Retry ``retry`` while ``error`` is retriable and time allows; return its result if it succeeds,
        else report the failure and return None (skip the record) or raise (fail the task).

        ``record`` is the consumed message (sink) or the source record (source), for the reports.
        """
        started, attempt = time.monotonic(), 0
        while isinstance(error.cause, RetriableException) and self._may_retry(started):
            attempt += 1
            self.counts["total-record-failures"] += 1
            if not self.wait(self._backoff(attempt, started)):
                break
            self.counts["total-retries"] += 1
            try:
                return retry()
            except StagedError as e:
                error = e
        self._record_error(error, record)
        if error.stage not in TOLERABLE_STAGES and not isinstance(error.cause, RetriableException):
            raise ConnectException("Unhandled exception in error handler") from error.cause
        self._check_tolerance(error)
        self.counts["total-records-skipped"] += 1
        return None

    def report_failed(self, error: StagedError, record: Any) -> None:
        """A record the task itself failed to process (KIP-610's ``executeFailed``): report it, then fail
        the task unless ``errors.tolerance=all``."""
        self._record_error(error, record)
        self._check_tolerance(error)

    def _record_error(self, error: StagedError, record: Any) -> None:
        self.counts["total-record-failures"] += 1
        self.counts["total-record-errors"] += 1
        self.last_error_timestamp = int(time.time() * 1000)
        self._report(error, record)

    def _check_tolerance(self, error: StagedError) -> None:
        if self.settings.tolerance != "all":
            raise ConnectException("Tolerance exceeded in error handler") from error.cause

    def _may_retry(self, started: float) -> bool:
        timeout = self.settings.retry_timeout_ms
        return timeout == -1 or (time.monotonic() - started) * 1000 < timeout

    def _backoff(self, attempt: int, started: float) -> float:
        """Kafka's backoff: 300 ms doubled per retry, random below the max delay once past it, within the timeout."""
        delay = RETRIES_DELAY_MIN_MS << min(attempt - 1, 30)
        if delay > self.settings.max_delay_ms:
            delay = random.randrange(max(self.settings.max_delay_ms, 1))
        if self.settings.retry_timeout_ms != -1:
            left = self.settings.retry_timeout_ms - (time.monotonic() - started) * 1000
            delay = max(0.0, min(delay, left))
        return delay / 1000

    def _report(self, error: StagedError, record: Any) -> None:
        if self.settings.log_enable:
            self.counts["total-errors-logged"] += 1
            where = ""
            if self.settings.log_include_messages:
                where = f", where {'consumed' if hasattr(record, 'offset') else 'source'} record is {describe(record)}"
            log.error("Error encountered in task %s. Executing stage '%s' with class '%s'%s.", self.task_name,
                      error.stage.value, python_name(error.executing_class), where, exc_info=error.cause)
        if self.dlq is not None and hasattr(record, "offset"):  # sink records only, as in Kafka
            self.counts["deadletterqueue-produce-requests"] += 1
            self.dlq.report(record, error)


def describe(record: Any) -> str:
    """For the error log: a consumed message's coordinates (as Kafka logs them), or a source record."""
    if hasattr(record, "offset"):
        return (f"{{topic='{record.topic()}', partition={record.partition()}, offset={record.offset()}, "
                f"timestamp={record.timestamp()[1]}}}")
    return repr(record)


@dataclass(frozen=True)
class ConsumedRecord:
    """A sink record turned back into what was consumed (bytes, original coordinates), with the accessors
    of a confluent-kafka ``Message`` so that the reporters treat it like one."""

    topic_: str
    partition_: int
    offset_: int
    key_: bytes | None
    value_: bytes | None
    headers_: list[tuple[str, bytes | None]]
    timestamp_: int | None

    def topic(self) -> str:
        return self.topic_

    def partition(self) -> int:
        return self.partition_

    def offset(self) -> int:
        return self.offset_

    def key(self) -> bytes | None:
        return self.key_

    def value(self) -> bytes | None:
        return self.value_

    def headers(self) -> list[tuple[str, bytes | None]]:
        return self.headers_

    def timestamp(self) -> tuple[int, int]:
        return (TIMESTAMP_NOT_AVAILABLE, -1) if self.timestamp_ is None else (1, self.timestamp_)
