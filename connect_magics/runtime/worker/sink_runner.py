"""Running a sink task: consume, convert, transform, put, and commit to the consumer group only
what the task flushed (Kafka's ``WorkerSinkTask``)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from connect_magics.api.config import java_str_join
from connect_magics.api.connector import ErrantRecordReporter, SinkTask, SinkTaskContext
from connect_magics.api.converters import StringColumn
from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.api.records import SinkRecord, SinkRecords, TopicPartition
from connect_magics.runtime.worker.error_handling import (
    ConsumedRecord,
    DeadLetterQueue,
    Stage,
    StagedError,
    staged,
)
from connect_magics.runtime.worker.task_metrics import SinkTaskMetrics
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.storage.authorization import access_error
from connect_magics.storage.client_limit import new_client
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.fence import TransactionLostError
from connect_magics.storage.kafka_log import CONSUMER_DEFAULTS

log = logging.getLogger(__name__)

MAX_POLL_RECORDS = 500  # the consumer's max.poll.records unless set: the most records a put() gets
_CONSUME_LIMIT = 1_000_000  # the most confluent-kafka's consume() takes
POLL_TIMEOUT = 0.1  # seconds: how long a poll waits for messages, and the default wait before a redelivery
#: A member learns of a rebalance from a heartbeat's answer: with Kafka's 3 s, the first of tasks started
#: together takes every partition for up to 3 s before the others get theirs (docs/deviations.md).
SINK_CONSUMER_DEFAULTS = {"auto.offset.reset": "earliest", "heartbeat.interval.ms": "100", **CONSUMER_DEFAULTS}


def sink_consumer_config(consumer_config: Mapping[str, str], group: str) -> dict[str, str]:
    """A sink task's consumer settings: our defaults, then the worker's and the connector's, then what the
    runner relies on (its group, commits only by the runner).

    >>> sink_consumer_config({"heartbeat.interval.ms": "3000"}, "connect-orders")["heartbeat.interval.ms"]
    '3000'
    """
    return {**SINK_CONSUMER_DEFAULTS, **consumer_config, "group.id": group, "enable.auto.commit": False,
            "enable.auto.offset.store": False}


_MESSAGE_FIELDS = {"topic": Message.topic, "kafka_partition": Message.partition, "kafka_offset": Message.offset,
                   "key": Message.key, "value": Message.value}
_FAILS_TASK = {KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.GROUP_AUTHORIZATION_FAILED}


def sink_group_id(connector: str, config: dict[str, str]) -> str:
    """``consumer.override.group.id`` if set, else ``connect-{connector}`` (Kafka's ``SinkUtils``)."""
    return config.get("consumer.override.group.id") or f"connect-{connector}"


def _to_kafka(partitions: Iterable[TopicPartition]) -> list[KafkaTopicPartition]:
    return [KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions]


def _one_topic(msgs: list[Message]) -> str | None:
    """The topic of every message, or None if they are of several topics (or none)."""
    if not msgs:
        return None
    topic = msgs[0].topic()
    return topic if msgs[-1].topic() == topic and len(set(map(Message.topic, msgs))) == 1 else None


def _decode(decode: Callable[[bytes], Any], datas: list[bytes | None]) -> list[Any]:
    """The non-null keys or values through a fixed-schema converter's ``decode``."""
    if None not in datas:  # every item through C-level iteration
        return list(map(decode, datas))
    return [None if data is None else decode(data) for data in datas]


def _records_of(msgs: list[Message], keys: list[tuple[Any, Any]], values: list[tuple[Any, Any]]) -> list[SinkRecord]:
    """Records of messages without headers, from their decoded keys and values."""
    return [SinkRecord(m.topic(), m.partition(), key_schema, key, value_schema, value, ts if ts_type else None,
                       None, m.offset())
            for m, (key_schema, key), (value_schema, value), (ts_type, ts)
            in zip(msgs, keys, values, map(Message.timestamp, msgs), strict=True)]


class _Deferred:
    """What a deferred ``SinkRecords`` reads: messages without headers nor transformations (all of ``topic``, if
    known), whose keys or values are decoded only when read if their converter has a fixed schema (``fixed``:
    field to ``fixed_schema()``), and were decoded already, as (schema, value) pairs, otherwise (``decoded``:
    field to pairs)."""

    def __init__(self, msgs: list[Message], topic: str | None, converters: dict[str, Any], fixed: dict[str, Any],
                 decoded: dict[str, list[tuple[Any, Any]]]) -> None:
        self.msgs, self.topic, self.converters, self.fixed, self.decoded = msgs, topic, converters, fixed, decoded

    def column(self, field: str) -> list[Any]:
        """One field of ``SinkRecords.COLUMNS``."""
        if field in self.decoded:
            decoded = self.decoded[field]
            return decoded.values() if isinstance(decoded, StringColumn) else list(map(itemgetter(1), decoded))
        if field == "timestamp":
            return [ts if ts_type else None for ts_type, ts in map(Message.timestamp, self.msgs)]
        column = list(map(_MESSAGE_FIELDS[field], self.msgs))
        decode = self.fixed[field][1] if field in self.fixed else None
        return column if decode is None else _decode(decode, column)

    def text(self, field: str, separator: str) -> str:
        """``SinkRecords.joined``: fixed-schema keys or values of one topic through ``Converter.to_connect_text``,
        which need not decode each."""
        if isinstance(self.decoded.get(field), StringColumn):
            return self.decoded[field].joined(separator)  # type: ignore[union-attr]
        topic = (self.topic or _one_topic(self.msgs)) if field in self.fixed else None
        if topic is None:
            return java_str_join(self.column(field), separator)
        return self.converters[field].to_connect_text(topic, list(map(_MESSAGE_FIELDS[field], self.msgs)), separator)

    def records(self) -> list[SinkRecord]:
        keys, values = (self.decoded[f] if f in self.decoded else list(zip(repeat(self.fixed[f][0]), self.column(f)))
                        for f in ("key", "value"))
        return _records_of(self.msgs, keys, values)


class _Context(SinkTaskContext):
    def __init__(self, runner: SinkTaskRunner) -> None:
        super().__init__(runner.task_config)
        self._runner = runner

    def assignment(self) -> set[TopicPartition]:
        return set(self._runner.assigned)

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self._runner.seeks.update(offsets)

    def pause(self, *partitions: TopicPartition) -> None:
        self._runner.consumer.pause(_to_kafka(partitions))
        self._runner.task_paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self._runner.task_paused.difference_update(partitions)
        if not self._runner.paused and self._runner.pending is None:
            self._runner.consumer.resume(_to_kafka(partitions))

    def timeout(self, timeout_ms: int) -> None:
        self._runner.retry_timeout = timeout_ms / 1000

    def request_commit(self) -> None:
        self._runner.commit_requested = True

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        settings = self._runner.errors.settings
        return self._runner.errant_reporter if settings.dlq_topic or settings.log_enable else None


class _ErrantReporter(ErrantRecordReporter):
    """KIP-610: a record ``put`` could not write, converted back to bytes and reported as consumed."""

    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    def report(self, record: SinkRecord, error: BaseException) -> None:
        r = self._runner
        topic = record.original_topic
        consumed = ConsumedRecord(
            topic, record.original_kafka_partition, record.original_kafka_offset,
            r.key_converter.from_connect_data(topic, record.key_schema, record.key),
            r.value_converter.from_connect_data(topic, record.value_schema, record.value),
            r.headers_to_kafka(topic, record.headers) if record.has_headers() else [], record.timestamp)
        r.errors.report_failed(StagedError(Stage.TASK_PUT, type(r.task), error), consumed)


class SinkTaskRunner(TaskRunner):
    task: SinkTask
    METRICS_GROUP = "sink-task-metrics"

    def __init__(self, *args: Any, consumer_config: dict[str, str], producer_config: dict[str, str],
                 admin_config: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.consumer_config = consumer_config
        self.max_poll_records = min(int(consumer_config.get("max.poll.records", MAX_POLL_RECORDS)), _CONSUME_LIMIT)
        self.producer_config = producer_config  # for the dead letter queue
        self.admin_config = admin_config
        wc = self.services.worker_config
        self.flush_interval = wc.int("offset.flush.interval.ms") / 1000
        self.flush_timeout = wc.int("offset.flush.timeout.ms") / 1000
        self.track_topics = wc.bool("topic.tracking.enable")
        self.assigned: set[TopicPartition] = set()
        self.current: dict[TopicPartition, int] = {}
        self._positions: dict[tuple[str, int], int] = {}  # librdkafka's position of each partition at the last batch
        self._position_query: list[KafkaTopicPartition] | None = None  # the assignment, as position() takes it
        self.seeks: dict[TopicPartition, int] = {}
        self._taken_away = False  # partitions were revoked or lost during the current poll
        self._assigned_in_poll: set[TopicPartition] = set()  # partitions assigned during the current poll
        #: Offsets the task flushed for partitions its consumer lost, where it goes on if they come back.
        self._flushed_when_lost: dict[TopicPartition, int] = {}
        self.task_paused: set[TopicPartition] = set()
        self.commit_requested = False
        # A batch put() refused with a RetriableException, with its offsets, redelivered at redeliver_at while
        # every partition is paused (Kafka's pausedForRedelivery); retry_timeout is context.timeout().
        self.pending: tuple[SinkRecords, dict[TopicPartition, int]] | None = None
        self.redeliver_at = 0.0
        self.retry_timeout: float | None = None
        self._closing = False
        self._last_commit = time.monotonic()
        self.consumer: Consumer | None = None
        self._topic: str | None = None  # the one topic subscribed to, if only one
        self.task_metrics = SinkTaskMetrics()
        self.errant_reporter = _ErrantReporter(self)

    def initialize(self) -> None:
        if self.errors.settings.dlq_topic:
            self.errors.dlq = DeadLetterQueue(
                self.errors.settings, self.id.connector, self.id.task, self.producer_config, self.admin_config,
                self.clients, admin=self.services.shared_admin(self.admin_config, f"Task {self.id}"))
        group = sink_group_id(self.id.connector, self.connector_config)
        self.consumer = new_client(Consumer, {**sink_consumer_config(self.consumer_config, group),
                                              "logger": client_logger("consumer")}, f"Task {self.id}", self.clients)
        topics = [t.strip() for t in self.connector_config.get("topics", "").split(",") if t.strip()]
        regex = self.connector_config.get("topics.regex", "").strip()
        # librdkafka searches a "^..." subscription; Kafka Connect matches the whole topic name.
        subscription = topics or [f"^({regex.lstrip('^').rstrip('$')})$"]
        self._topic = topics[0] if len(set(topics)) == 1 else None  # then every message is of this topic
        if regex:
            re.compile(regex)
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)
        self.task.initialize(_Context(self))

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        new = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.assigned.update(new)
        self._assigned_in_poll.update(new)
        self._position_query = None
        self.task.open(new)
        for tp in new:  # lost and given straight back: go on after what this task flushed, not from the committed
            if tp in self._flushed_when_lost:  # offset (which the outage kept it from moving)
                self.seeks[tp] = self._flushed_when_lost[tp]
                self._taken_away = True
        self._flushed_when_lost.clear()  # a partition that went elsewhere first starts from its committed offset
        if self.paused or self.pending is not None:
            consumer.pause(partitions)

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        if self._closing:
            return
        gone = [TopicPartition(p.topic, p.partition) for p in partitions]
        self._commit(only=set(gone))
        self._close_partitions(gone)

    def _on_lost(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        """The consumer lost its membership (the coordinator was unreachable for its session timeout): the
        partitions may already be another member's, so nothing is committed for them (Kafka's
        ``onPartitionsLost``); their records are consumed again from the committed offsets."""
        if self._closing:
            return
        gone = [TopicPartition(p.topic, p.partition) for p in partitions]
        log.warning("Task %s lost its partitions %s (its consumer's session timed out); if they come back to it, "
                    "it goes on after the records it flushed", self.id, ", ".join(f"{tp.topic}-{tp.partition}" for tp in gone))
        current = {tp: o for tp, o in self.current.items() if tp in gone}
        if current:
            try:  # what the task flushed is in its output: consumed again only if another member takes it
                self._flushed_when_lost.update(self.task.pre_commit(dict(current)))
            except Exception:  # noqa: BLE001 - then they are consumed again from the committed offsets
                log.warning("Task %s could not flush its lost partitions", self.id, exc_info=True)
        self._close_partitions(gone)

    def _close_partitions(self, gone: list[TopicPartition]) -> None:
        self._taken_away = True
        self.task.close(gone)
        for tp in gone:
            self.assigned.discard(tp)
            self.current.pop(tp, None)
            self.seeks.pop(tp, None)
            self._positions.pop((tp.topic, tp.partition), None)
        self._position_query = None
        if self.pending is not None:  # their records will be consumed again from the committed offsets
            batch, consumed = self.pending
            self.pending = (SinkRecords(r for r in batch if TopicPartition(r.original_topic,
                                                                           r.original_kafka_partition) not in gone),
                            {tp: o for tp, o in consumed.items() if tp not in gone})

    def on_pause_change(self, paused: bool) -> None:
        if paused or self.pending is None:
            self._pause_or_resume(paused)

    def _pause_or_resume(self, pause: bool) -> None:
        """Pause (or resume) every assigned partition the task did not pause itself."""
        parts = _to_kafka(self.assigned - self.task_paused)
        if parts:
            (self.consumer.pause if pause else self.consumer.resume)(parts)

    def execute_once(self) -> None:
        """One round of Kafka's ``WorkerSinkTask.iteration``: rewind, poll, put (even an empty batch, as
        Kafka Connect does), commit when due."""
        for tp, offset in list(self.seeks.items()):
            try:
                self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
            except KafkaException as e:
                # A partition open() just rewound is fetched only once librdkafka applied the assignment
                # (seek() answers _STATE until then): seek again after this poll.
                if e.args[0].code() == KafkaError._STATE and tp in self.assigned:
                    continue
                raise
            self.current[tp] = offset
            self._positions.pop((tp.topic, tp.partition), None)  # whatever position follows is news
            del self.seeks[tp]
        timeout, self.retry_timeout = min(POLL_TIMEOUT, self.retry_timeout or POLL_TIMEOUT), None
        if self.pending is not None and time.monotonic() < self.redeliver_at:
            timeout = min(timeout, self.redeliver_at - time.monotonic())
        msgs = self.consumer.consume(self.max_poll_records, timeout=max(timeout, 0.0))
        if msgs and self._assigned_in_poll:
            self._refetch_assigned_in_poll(msgs)
        self._assigned_in_poll.clear()
        if msgs and (self._taken_away or self.seeks):
            # Not delivered: messages fetched before a revoke or loss in this very poll (no longer ours), and those
            # of a partition whose seek is still pending (open() rewound it, or it came back after a loss and goes
            # on after what the task flushed; librdkafka refuses the seek with _STATE until it applied the
            # assignment). They are fetched again from the seek's offset, as Kafka Connect seeks before it
            # delivers; delivered, they were a batch of 500 written twice after an outage.
            msgs = [m for m in msgs
                    if (tp := TopicPartition(m.topic(), m.partition())) in self.assigned and tp not in self.seeks]
        self._taken_away = False
        if self.pending is not None:  # every partition is paused: this poll only kept the consumer alive
            if msgs:
                self._rewind_to(msgs)
            if time.monotonic() >= self.redeliver_at:
                batch, consumed = self.pending
                self._put(batch, consumed)
        elif msgs:
            self._deliver(msgs)
        else:
            self._put(SinkRecords(), {})
        if self.commit_requested or time.monotonic() - self._last_commit >= self.flush_interval:
            self._commit()

    def _refetch_assigned_in_poll(self, msgs: list[Message]) -> None:
        """Fetch again, from the first of them, the messages of partitions assigned during the poll that returned
        ``msgs``: a poll that served a revoke and then the same partitions' assignment (an eager rebalance) can
        return records fetched before the revoke beside the same offsets fetched again from the committed offset
        after it. Delivered, they are written twice; the seek delivers each once."""
        first: dict[TopicPartition, int] = {}
        for m in msgs:
            tp = TopicPartition(m.topic(), m.partition())
            if m.error() is None and tp in self._assigned_in_poll and tp in self.assigned and tp not in self.seeks:
                first[tp] = min(first.get(tp, m.offset()), m.offset())
        self.seeks.update(first)  # a seek already asked for (the task's rewind, a lost partition's) comes first

    def metrics(self) -> dict[str, float]:
        return {**self.task_metrics.snapshot(len(self.assigned)), **self.task_stats.snapshot()}

    def _rewind_to(self, msgs: list[Message]) -> None:
        """Consume these messages again later (they arrived while a batch waits for redelivery)."""
        first: dict[tuple[str, int], int] = {}
        for m in msgs:
            if m.error() is None:
                first.setdefault((m.topic(), m.partition()), m.offset())
        for (topic, partition), offset in first.items():  # not a task's rewind: the current offsets stay
            self.consumer.seek(KafkaTopicPartition(topic, partition, offset))
            self._positions.pop((topic, partition), None)

    def _put(self, batch: SinkRecords, consumed: dict[TopicPartition, int]) -> None:
        """Hand ``batch`` to the task; on a RetriableException pause every partition and keep the batch for
        redelivery after ``context.timeout()`` (or one poll timeout), as Kafka's ``deliverMessages``."""
        started = time.perf_counter()
        try:
            self.task.put(batch)
        except RetriableException:
            log.error("Task %s: RetriableException from SinkTask; redelivering the batch", self.id, exc_info=True)
            if self.pending is None:
                self._pause_or_resume(True)
            self.pending = (batch, consumed)
            self.redeliver_at = time.monotonic() + (self.retry_timeout or POLL_TIMEOUT)
            return
        except Exception as e:
            raise ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.") from e
        self.task_metrics.put_times.record(time.perf_counter() - started)
        self.task_metrics.sent.record(len(batch))
        self.task_stats.batch(len(batch))
        self.current.update(consumed)
        if self.pending is not None:
            self.pending = None
            if not self.paused:
                self._pause_or_resume(False)

    def _deliver(self, msgs: list[Message]) -> None:
        if any(map(Message.error, msgs)):
            msgs = self._without_errors(msgs)
        self.task_metrics.read.record(len(msgs))
        self.task_metrics.uncommitted += len(msgs)
        self.task_metrics.active.sample(self.task_metrics.uncommitted)
        key_fixed, value_fixed = self.key_converter.fixed_schema(), self.value_converter.fixed_schema()
        if self.chain.stages or any(map(Message.headers, msgs)):
            batch = SinkRecords(self._records(msgs, key_fixed, value_fixed))
        else:
            batch = self._deferred(msgs, key_fixed, value_fixed)
        consumed = self._consumed()
        if self.track_topics:  # KIP-558: the topics consumed, before transformations
            for topic in {tp.topic for tp in consumed}:
                self.services.status.put_topic(self.id.connector, topic, self.id.task)
        self._put(batch, consumed)

    def _without_errors(self, msgs: list[Message]) -> list[Message]:
        """The messages that are records. librdkafka's error events are informational (it retries by itself)
        unless fatal; authorization failures fail the task, as they fail the Java consumer's poll."""
        kept = []
        for m in msgs:
            err = m.error()
            if err is None:
                kept.append(m)
            elif err.fatal() or err.code() in _FAILS_TASK:
                topic = m.topic() or self._topic or self.connector_config.get("topics") or \
                    self.connector_config.get("topics.regex")
                raise access_error(err, self.consumer_config, f"sink task {self.id} consuming",
                                   topic=("READ", topic), group=("READ", sink_group_id(self.id.connector,
                                                                                       self.connector_config))) \
                    or KafkaException(err)
            elif err.code() != KafkaError._PARTITION_EOF and not err.retriable():
                log.warning("Task %s: the consumer reports %s; carrying on", self.id, err.str())
        return kept

    def _consumed(self) -> dict[TopicPartition, int]:
        """The partitions the last ``consume()`` returned messages of, each with its next offset.

        librdkafka's position of a partition is the offset after the last message it handed over, so one
        call per batch replaces tracking every message: a partition whose position moved was consumed.
        """
        if self._position_query is None:
            self._position_query = _to_kafka(self.assigned)
        consumed = {}
        for p in self.consumer.position(self._position_query):
            key = (p.topic, p.partition)
            if self.seeks and TopicPartition(p.topic, p.partition) in self.seeks:
                continue  # its messages were dropped: its offset is the seek's, once done
            if p.offset >= 0 and self._positions.get(key) != p.offset:
                self._positions[key] = p.offset
                consumed[TopicPartition(p.topic, p.partition)] = p.offset
        return consumed

    def _records(self, msgs: list[Message], key_fixed: Any, value_fixed: Any) -> list[SinkRecord]:
        """The messages through the converters and transformations (the error handler deciding on failures)."""
        batch: list[SinkRecord] = []
        key_to_connect, value_to_connect = self.key_converter.to_connect_data, self.value_converter.to_connect_data
        key_schema, key_decode = key_fixed or (None, None)
        value_schema, value_decode = value_fixed or (None, None)
        apply = self.chain.apply if self.chain.stages else None
        append = batch.append
        for m in msgs:
            try:
                topic, key, value = m.topic(), m.key(), m.value()
                if key_fixed is None:
                    key_schema, key = key_to_connect(topic, key)
                elif key is not None and key_decode is not None:
                    key = key_decode(key)
                if value_fixed is None:
                    value_schema, value = value_to_connect(topic, value)
                elif value is not None and value_decode is not None:
                    value = value_decode(value)
                ts_type, ts = m.timestamp()
                raw_headers = m.headers()
                record = SinkRecord(topic, m.partition(), key_schema, key, value_schema, value,
                                    ts if ts_type else None,
                                    self.headers_from_kafka(topic, raw_headers) if raw_headers else None,
                                    m.offset())
                if apply is not None:
                    record = apply(record)
            except Exception:  # noqa: BLE001 - the slow path finds the stage; the error handler decides
                record = self.recover(partial(self._convert, m), m)
            if record is not None:
                append(record)
        return batch

    def _deferred(self, msgs: list[Message], key_fixed: Any, value_fixed: Any) -> SinkRecords:
        """Messages without headers nor transformations, as a batch whose records are built on the task's first
        access (columns and its text need none). Converters with a fixed schema cannot fail and decode only what
        is read; the others decode the batch now, as columns of one topic (``Converter.to_connect_column``), so
        that a failure is handled before put(): if a message does not convert, or the batch mixes topics, the
        batch goes record by record instead (converting again), where the error handler decides at its stage."""
        converters = {"key": self.key_converter, "value": self.value_converter}
        fixed = {f: schema for f, schema in (("key", key_fixed), ("value", value_fixed)) if schema is not None}
        decoded: dict[str, list[tuple[Any, Any]]] = {}
        topic = self._topic
        if len(fixed) < 2:
            topic = topic or _one_topic(msgs)
            if topic is None:  # several topics, or none: the poll brought only (informational) error events
                return SinkRecords(self._records(msgs, key_fixed, value_fixed))
            try:
                decoded = {f: c.to_connect_column(topic, list(map(_MESSAGE_FIELDS[f], msgs)))
                           for f, c in converters.items() if f not in fixed}
            except Exception:  # noqa: BLE001 - the record by record path finds the stage; the error handler decides
                return SinkRecords(self._records(msgs, key_fixed, value_fixed))
        source = _Deferred(msgs, topic, converters, fixed, decoded)
        return SinkRecords.deferred(len(msgs), source.records, source.column, source.text)

    def _convert(self, m: Any) -> SinkRecord | None:
        """One message through the converters and transformations, naming the stage of any failure."""
        return self.transform(self.converted(m))

    def converted(self, m: Any) -> SinkRecord:
        """One message through the converters (before the transformations), naming the stage of any failure."""
        topic = m.topic()
        kc, vc, hc = self.key_converter, self.value_converter, self.header_converter
        key = staged(Stage.KEY_CONVERTER, kc, kc.to_connect_data, topic, m.key())
        value = staged(Stage.VALUE_CONVERTER, vc, vc.to_connect_data, topic, m.value())
        raw_headers = m.headers()
        headers = staged(Stage.HEADER_CONVERTER, hc, self.headers_from_kafka, topic, raw_headers) \
            if raw_headers else None
        ts_type, ts = m.timestamp()
        return SinkRecord(topic, m.partition(), key.schema, key.value, value.schema, value.value,
                          ts if ts_type else None, headers, m.offset())

    def _commit(self, only: set[TopicPartition] | None = None) -> None:
        self._last_commit = time.monotonic()
        self.commit_requested = False
        current = {tp: o for tp, o in self.current.items() if only is None or tp in only}
        if not current:
            return
        if self.fence is not None and not self._claimed_for(only):
            return  # the claim is still under way (the broker is away): commit later
        if self.errors.dlq is not None:  # records sent to the dead letter queue are written before their offsets
            self.errors.dlq.flush(self.flush_timeout)
        committable = self.task.pre_commit(dict(current))
        offsets = [KafkaTopicPartition(tp.topic, tp.partition, o) for tp, o in committable.items()
                   if tp in self.assigned]
        if offsets:
            self.timed_commit(partial(self._commit_offsets, offsets))

    def _claimed_for(self, only: set[TopicPartition] | None) -> bool:
        """Whether the fence's claim is done, so that offsets can be committed. A periodic commit does not wait for
        it; a stop or a revoke (``only``) does, up to ``offset.flush.timeout.ms``: there is no later commit for the
        revoked partitions, and their next owner would consume again every record this task wrote."""
        if self.fence.wait_claimed(0):
            return True
        if not (self.stopping or only is not None):
            return False
        if only is not None:
            log.info("Task %s waits up to %d ms for its claim of transactional id %s to commit the offsets of its "
                     "revoked partitions", self.id, self.flush_timeout * 1000, self.fence.transactional_id)
        return self.fence.wait_claimed(self.flush_timeout)

    def _commit_offsets(self, offsets: list[KafkaTopicPartition]) -> bool:
        try:
            if self.fence is not None:  # refused once a newer instance of the task started
                self.fence.commit_consumer_offsets(offsets, self.consumer.consumer_group_metadata(),
                                                   self.flush_timeout)
            else:
                self.consumer.commit(offsets=offsets, asynchronous=False)
        except TransactionLostError as e:  # the offsets stay current: committed with the next commit
            log.warning("Task %s failed to commit offsets, committing them again later: %s", self.id, e)
            return False
        except KafkaException as e:
            if e.args[0].code() != KafkaError._NO_OFFSET:
                log.warning("Task %s failed to commit offsets: %s", self.id, e)
            return False
        self.task_metrics.commits.record(1)
        self.task_metrics.uncommitted = 0
        return True

    def commit_on_stop(self) -> None:
        if self.consumer is not None:
            self._commit()

    def close(self) -> None:
        if self.consumer is not None:
            self._closing = True
            if self.assigned:
                self.task.close(sorted(self.assigned))
                self.assigned.clear()
            self.consumer.close()
            # Let go of it: its rebalance callbacks refer to this runner, and the cycle would keep the client (its
            # thread-specific-data key, docs/design.md) until the next full garbage collection.
            self.consumer = None
        if self.errors.dlq is not None:
            self.errors.dlq.close(self.flush_timeout)
