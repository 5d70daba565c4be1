"""Running a source task: poll, transform, convert, create topics, produce, and commit offsets only
for records the broker acknowledged (Kafka's ``WorkerSourceTask`` with ``SubmittedRecords``)."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from itertools import repeat
from operator import attrgetter, length_hint
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from connect_magics.api.connector import OffsetStorageReader, SourceTask, SourceTaskContext
from connect_magics.api.converters import ByteArrayConverter, Converter, JsonConverter, StringConverter
from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.api.records import SourceRecord, SourceRecords
from connect_magics.runtime.topics.creation import TopicCreation
from connect_magics.runtime.worker.error_handling import Stage, staged
from connect_magics.runtime.worker.task_metrics import SourceTaskMetrics
from connect_magics.runtime.worker.task_runner import TaskRunner
from connect_magics.runtime.worker.topic_admin import create_or_find_topic, describe_topic
from connect_magics.storage.authorization import raise_access
from connect_magics.storage.client_limit import new_client
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.fence import TransactionLostError
from connect_magics.storage.offset_store import OffsetStore, freeze, validate_format, write_offsets

log = logging.getLogger(__name__)

_NULL_AS_NULL = (ByteArrayConverter, StringConverter, JsonConverter)  # null without a schema -> null
_SOURCE_PARTITION = attrgetter("source_partition")
_TOPIC, _VALUE_SCHEMA, _VALUE = attrgetter("topic"), attrgetter("value_schema"), attrgetter("value")
_KEY, _KEY_SCHEMA, _PARTITION = attrgetter("key"), attrgetter("key_schema"), attrgetter("kafka_partition")
_TIMESTAMP, _HEADERS = attrgetter("timestamp"), attrgetter("_headers")


def _sent_head(records: Sequence[SourceRecord], count: int) -> Sequence[SourceRecord]:
    """``records[:count]`` for the offsets bookkeeping, which keeps each source partition's last record: of
    ``SourceRecords`` not read as records (one source partition), that last record alone, made by itself."""
    if type(records) is SourceRecords and not records.built:
        return [records.record(count - 1)] if count else []
    return records[:count]


class SubmittedBatch:
    """The records of one ``poll()`` handed to the producer: how many the broker has not acknowledged
    yet, the last record of each source partition, and the topics they went to. Its :meth:`ack` is the
    producer's delivery callback for those records."""

    __slots__ = ("unacked", "last", "topics", "closed", "_owner", "_on_done")

    def __init__(self, owner: SubmittedRecords, on_done: Callable[[SubmittedBatch], None] | None) -> None:
        self.unacked = 0
        self.last: dict[Any, SourceRecord] = {}
        self.topics: set[str] = set()
        self.closed = False  # all its records were submitted
        self._owner = owner
        self._on_done = on_done

    def ack(self, err: KafkaError | None, msg: Any) -> None:
        """The delivery report of one record: acknowledged, or the batch's first error is kept."""
        if err is not None:
            self._owner.failed(err, msg)
            return
        self.unacked -= 1
        if not self.unacked and self.closed and self._on_done is not None:
            self._on_done(self)


class SubmittedRecords:
    """Records sent but maybe not yet acknowledged, batch by batch, in submission order.

    A source partition's committable offset is that of its last record in the latest batch that is
    fully acknowledged and preceded only by fully acknowledged batches holding that partition, so an
    offset is never committed ahead of a record of its partition the broker has not confirmed (Kafka's
    ``SubmittedRecords``, tracked per batch rather than per record to keep the hot path cheap).
    Used from the task's thread only (delivery callbacks are served by its ``poll``), so it needs no lock.

    >>> s = SubmittedRecords(); b = s.batch()
    >>> s.submit(b, [SourceRecord({"f": "a"}, {"pos": 1}, "t")], sent=1)
    >>> s.committable()
    []
    >>> b.ack(None, None); s.committable()
    [({'f': 'a'}, {'pos': 1})]
    """

    def __init__(self) -> None:
        self._batches: deque[SubmittedBatch] = deque()
        self._unacked: list[SubmittedBatch] = []  # closed batches with records not acknowledged when submitted
        self._last: tuple[dict | None, Any] = (None, None)
        self.error: KafkaError | None = None  # the first failed delivery
        self.error_topic: str | None = None  # its topic

    def failed(self, err: KafkaError | None, msg: Any) -> None:
        """A failed delivery: the first one is kept (what a producer reporting failures only calls for any)."""
        if err is not None and self.error is None:
            self.error, self.error_topic = err, msg.topic() if msg is not None else None

    @property
    def outstanding(self) -> int:
        """Records sent and not acknowledged yet."""
        return sum(b.unacked for b in list(self._batches) if b.closed)  # a copy: other threads read this

    def batch(self, on_done: Callable[[SubmittedBatch], None] | None = None) -> SubmittedBatch:
        """Start the batch the next records are sent in; ``on_done(batch)`` once all of them are acknowledged."""
        batch = SubmittedBatch(self, on_done)
        self._batches.append(batch)
        return batch

    def submit(self, batch: SubmittedBatch, records: Sequence[SourceRecord], sent: int) -> None:
        """Close ``batch``: ``records`` are its records in order, ``sent`` of them handed to the producer (the
        others were dropped: their offsets are committable with the batch). Acknowledgements that came in
        before are counted."""
        last_partition, key = self._last
        last = batch.last
        partitions = list(map(_SOURCE_PARTITION, records))
        if partitions and partitions.count(partitions[-1]) == len(partitions):  # mostly: one partition (C loops)
            partition = partitions[-1]
            if partition is not None:
                if partition is not last_partition and partition != last_partition:
                    key = freeze(partition)
                    last_partition = partition
                last[key] = records[-1]
        else:
            for record, partition in zip(records, partitions, strict=True):
                if partition is not None:
                    if partition is not last_partition and partition != last_partition:  # mostly the same one
                        key = freeze(partition)
                        last_partition = partition
                    last[key] = record
        self._last = (last_partition, key)
        batch.unacked += sent
        batch.closed = True
        if batch.unacked:
            self._unacked.append(batch)
        elif batch._on_done is not None:
            batch._on_done(batch)

    def acknowledge_all(self) -> None:
        """Every record submitted so far was acknowledged (the producer holds none of them any more, and none
        failed): for a producer that reports failed deliveries only.

        >>> s = SubmittedRecords(); b = s.batch()
        >>> s.submit(b, [SourceRecord({"f": "a"}, {"pos": 1}, "t")], sent=1)
        >>> s.acknowledge_all(); s.committable()
        [({'f': 'a'}, {'pos': 1})]
        """
        for batch in self._unacked:
            if batch.unacked:
                batch.unacked = 0
                if batch._on_done is not None:
                    batch._on_done(batch)
        self._unacked.clear()

    def has_committable(self) -> bool:
        """True if some batch is fully acknowledged (so :meth:`committable` may give offsets)."""
        return any(b.closed and not b.unacked for b in self._batches)

    def committable(self) -> list[tuple[dict, dict | None]]:
        """Take each partition's committable offset; return (partition, latest offset) pairs."""
        latest: dict[Any, SourceRecord] = {}
        blocked: set[Any] = set()  # partitions with a record not acknowledged yet
        kept: deque[SubmittedBatch] = deque()
        for batch in self._batches:
            if batch.unacked or not batch.closed:
                blocked.update(batch.last)
                kept.append(batch)
                continue
            for key, record in batch.last.items():
                if key not in blocked:
                    latest[key] = record
            if blocked:
                batch.last = {k: r for k, r in batch.last.items() if k in blocked}
                if batch.last:
                    kept.append(batch)
        self._batches = kept
        self._unacked = [b for b in kept if b.unacked]
        return [(r.source_partition, r.source_offset) for r in latest.values() if r.source_offset is not None]


class StoreOffsetReader(OffsetStorageReader):
    """A task's offsets, read to the end of its offset stores. ``before_first_read`` runs once, before the
    first read (a fenced task waits there for its predecessors' last commits to become readable)."""

    def __init__(self, connector: str, stores: list[OffsetStore],
                 before_first_read: Callable[[], object] | None = None) -> None:
        self.connector, self.stores = connector, stores
        self._before_first_read = before_first_read

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        if self._before_first_read is not None:
            ready, self._before_first_read = self._before_first_read, None
            ready()
        result: dict[Any, dict[str, Any]] = {}
        for store in self.stores:  # later stores (the connector's own topic) override
            try:  # offsets a previous task just committed are seen, even behind a transaction still open
                store.read_to_end(past_open_transactions=True)
            except TimeoutError as e:  # at least once: older offsets send records again, a failed task sends none
                log.warning("Reading offsets of %s up to the last stable offsets instead; records after them may be "
                            "sent again: %s", self.connector, e)
                store.read_to_end()
            result.update(store.get(self.connector, partitions))
        return result

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offsets([partition]).get(freeze(partition))


class SourceTaskRunner(TaskRunner):
    """Runs a source task on the task's own idempotent producer.

    The producer reports failed deliveries only: a delivery report per record costs a Python call per record,
    a third of the producer's own time. A record counts as acknowledged once the producer holds nothing any
    more (nothing unsent or unanswered, no failure unreported): when it runs dry between polls, or when an
    offset commit flushes it, as Kafka Connect did before ``SubmittedRecords`` (KAFKA-12226). Tasks that
    override ``commit_record`` get a delivery report per record instead."""

    task: SourceTask
    METRICS_GROUP = "source-task-metrics"
    ACKS_BY_FLUSH = True  # the producer reports failures only (see above); not for a shared transactional one

    def __init__(self, *args: Any, producer_config: dict[str, str], admin_config: dict[str, str],
                 offset_stores: list[OffsetStore], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.producer_config = producer_config
        self.admin_config = admin_config
        self.offset_stores = offset_stores  # the worker's, then the connector's own (primary) if any
        wc = self.services.worker_config
        self.flush_interval = wc.int("offset.flush.interval.ms") / 1000
        self.flush_timeout = wc.int("offset.flush.timeout.ms") / 1000
        self.track_topics = wc.bool("topic.tracking.enable")
        # Warnings about these settings were logged when the connector started; don't repeat them per task.
        self.topic_creation = TopicCreation.from_connector_config(self.connector_config,
                                                                  wc.bool("topic.creation.enable"), log.debug)
        self.submitted = SubmittedRecords()
        self._last_commit = time.monotonic()
        self._last_write: threading.Event | None = None  # set once the latest offset write was answered
        self._known_topics: set[str] = set()  # KIP-158's per-task cache of topics known to exist
        self._admin: AdminClient | None = None
        self._retry: list[SourceRecord] | None = None  # records to send again after a retriable failure
        self._unwritten: list[tuple[dict, dict | None]] = []  # offsets of a lost transaction, to write again
        self._producer: Producer | None = None
        self.task_metrics = SourceTaskMetrics()
        # Tasks that override commit_record get a delivery report per record; others failures only.
        self._commits_records = type(self.task).commit_record is not SourceTask.commit_record
        self._acks_by_flush = self.ACKS_BY_FLUSH and not self._commits_records
        self._column_values = getattr(type(self.value_converter), "from_connect_column",
                                      Converter.from_connect_column) is not Converter.from_connect_column

    def stop(self) -> None:
        """Stop the runner, and call the task's ``stop()`` now if it started: a ``poll()`` waiting for data returns
        at once (``SourceTask.stop`` may be called from another thread than ``poll``, as in Kafka Connect)."""
        super().stop()
        if self._started_task is self.task:
            self._stop_task()

    def initialize(self) -> None:
        config = {**self.producer_config, "logger": client_logger("producer"),
                  "delivery.report.only.error": self._acks_by_flush}
        if self._acks_by_flush:  # one callback for the producer: no callback for the producer to keep per record
            config["on_delivery"] = lambda err, msg: self.submitted.failed(err, msg)
        self._producer = new_client(Producer, config, f"Task {self.id}", self.clients)
        self.task.initialize(SourceTaskContext(self.task_config, self.offset_reader()))

    def offset_reader(self) -> StoreOffsetReader:
        """The task's offset reader. A fenced task reads only once its claim completed, or after
        ``offset.flush.timeout.ms``: the claim completes once the previous instance's last transaction
        did, and only then are the offsets it committed in the stable part of the offsets topic that a
        read_committed reader reaches (the transaction's markers are written after its commit returned)."""
        fence = self.fence
        ready = None if fence is None else partial(fence.wait_claimed, self.flush_timeout)
        return StoreOffsetReader(self.id.connector, self.offset_stores, ready)

    def execute_once(self) -> None:
        if not self.wait_while_paused():
            self._maybe_commit()
            return
        self._check_send_error()
        records = self._poll_records()
        if records:
            self._dispatch(records)
        self._producer.poll(0)
        self._acknowledge_if_drained()
        self._maybe_commit()

    def _acknowledge_if_drained(self) -> None:
        """With failure-only reports: once the producer holds nothing and no failure was reported, every record
        sent so far was acknowledged."""
        if self._acks_by_flush and not len(self._producer) and self.submitted.error is None:
            self.submitted.acknowledge_all()

    def _flush_sent(self) -> None:
        """With failure-only reports: wait up to ``offset.flush.timeout.ms`` (or a stop) for the producer to
        deliver what it holds, so the records sent so far count as acknowledged and their offsets can commit."""
        if not self._acks_by_flush:
            return
        deadline = time.monotonic() + self.flush_timeout
        while (left := self._producer.flush(0.1)) and not self.stopping and self.submitted.error is None:
            if time.monotonic() >= deadline:
                log.warning("Task %s failed to flush, timed out while waiting for producer to flush outstanding "
                            "%d messages; their offsets are committed later", self.id, left)
                break
        self._acknowledge_if_drained()

    def _dispatch(self, records: list[SourceRecord]) -> None:
        """Send a ``poll()`` batch (exactly-once tasks also end transactions here)."""
        self._send(records)

    def _poll_records(self) -> list[SourceRecord] | None:
        """The records to send now: those a retriable failure left over, else the task's next ``poll()``."""
        if self._retry is not None:
            records, self._retry = self._retry, None
            return records
        started = time.perf_counter()
        try:
            records = self.task.poll()
        except RetriableException:
            log.info("Task %s: retriable error from poll; polling again", self.id, exc_info=True)
            return None
        if records is not None:
            self.task_metrics.poll_times.record(time.perf_counter() - started)
            self.task_metrics.polled.record(len(records))
            self.task_stats.batch(len(records))
        return records

    def _send(self, records: list[SourceRecord]) -> None:
        produce, apply = self._producer.produce, self.chain.apply if self.chain.stages else None
        kc, vc = self.key_converter, self.value_converter
        key_to_kafka, value_to_kafka = kc.from_connect_data, vc.from_connect_data
        # Kafka's converters write null for a null without a schema, and ByteArrayConverter hands bytes without
        # a schema over as they are: skip the call for those. StringConverter writes a string as its encoding
        # whatever the schema: encode it here.
        null_keys, null_values = (type(c) in _NULL_AS_NULL for c in (kc, vc))
        raw_keys, raw_values = (type(c) is ByteArrayConverter for c in (kc, vc))
        key_encoding = kc.encoding if type(kc) is StringConverter else None
        value_encoding = vc.encoding if type(vc) is StringConverter else None
        # A converter that converts a whole batch of one topic (Converter.from_connect_column) does it at once.
        values = self._value_column(records) if apply is None and self._column_values else None
        submitted, known = self.submitted, self._known_topics
        batch = submitted.batch(self._batch_done if self.track_topics else None)
        per_record = self._commits_records
        on_delivery = None if self._acks_by_flush else batch.ack
        plain = None if values is None or per_record else self._plain_columns(records)
        last_topic = None
        sent = 0
        index = 0  # the records before it were sent or dropped
        try:
            if plain is not None:  # the whole batch in C loops
                topic, keys, timestamps = plain
                batch.topics.add(topic)
                while index < len(records):
                    rest = iter(values[index:])  # type: ignore[index]
                    try:
                        deque(map(produce, repeat(topic), rest, repeat(None) if keys is None else keys[index:],
                                  repeat(-1), repeat(on_delivery), repeat(None), timestamps[index:]), 0)
                        index = len(records)
                    except BufferError:
                        index = sent = len(records) - length_hint(rest) - 1  # the record the queue refused
                        self._wait_for_queue()
                sent = index
                return
            for index, record in enumerate(records):
                try:
                    out = record if apply is None else apply(record)
                    if out is not None:
                        topic, key, value = out.topic, out.key, out.value
                        if key is None and null_keys and out.key_schema is None:
                            pass
                        elif key.__class__ is str and key_encoding is not None:
                            key = key.encode(key_encoding)
                        elif not (raw_keys and key.__class__ is bytes and out.key_schema is None):
                            key = key_to_kafka(topic, out.key_schema, key)
                        if values is not None:
                            value = values[index]
                        elif value is None and null_values and out.value_schema is None:
                            pass
                        elif value.__class__ is str and value_encoding is not None:
                            value = value.encode(value_encoding)
                        elif not (raw_values and value.__class__ is bytes and out.value_schema is None):
                            value = value_to_kafka(topic, out.value_schema, value)
                        headers = out._headers  # has_headers(), without the call
                        if headers is not None:
                            headers = (self.headers_to_kafka(topic, headers) or None) if headers else None
                except Exception:  # noqa: BLE001 - the slow path finds the stage; the error handler decides
                    converted = self.recover(partial(self._convert, record), record)
                    out = None
                    if converted is not None:
                        out, key, value, headers = converted
                        topic = out.topic
                if out is None:  # filtered out, or skipped after an error: its offset can be committed
                    self.task.commit_record(record, None)
                    continue
                if topic != last_topic:
                    if topic not in known:
                        try:
                            self._ensure_topic(topic)
                        except RetriableException:
                            log.warning("Task %s failed to send record to topic '%s'. Backing off before "
                                        "retrying: ", self.id, topic, exc_info=True)
                            self._retry = records[index:]
                            with self._cond:
                                self._cond.wait(0.1)  # Kafka's SEND_FAILED_BACKOFF_MS; stop() wakes it up
                            return
                    batch.topics.add(topic)
                    last_topic = topic
                callback = partial(self._on_record_delivery, batch, record) if per_record else on_delivery
                partition, timestamp = out.kafka_partition, out.timestamp
                while True:
                    try:
                        # Positional arguments (topic, value, key, partition, callback, on_delivery, timestamp,
                        # headers): keywords cost the producer a third of its per-record time. Partition -1 is
                        # the partitioner's choice, timestamp 0 the time of sending, as when they are left out.
                        if not headers:
                            produce(topic, value, key, -1 if partition is None else partition, callback, None,
                                    timestamp or 0)
                        else:
                            produce(topic, value, key, -1 if partition is None else partition, callback, None,
                                    timestamp or 0, headers)
                        break
                    except BufferError:
                        self._wait_for_queue()
                sent += 1
            index = len(records)
        finally:
            submitted.submit(batch, _sent_head(records, index), sent)
            self.task_metrics.written.record(sent)
            self.task_metrics.active.sample(self._outstanding())

    def _wait_for_queue(self) -> None:
        """The producer's queue is full: serve its callbacks for a while (raising a failed delivery, or a stop)."""
        self._producer.poll(0.05)
        self._check_send_error()
        if self.stopping:
            raise ConnectException("Task stopped while the producer queue was full") from None

    def _plain_columns(self, records: list[SourceRecord]) -> tuple[str, list[bytes | None] | None, list[int]] | None:
        """``(topic, keys, timestamps)`` for a batch whose values were converted at once, if the producer can take
        it in one C loop: one topic already known, no headers, no partition chosen, keys null without a schema
        (``keys`` None) or converted at once too; timestamps 0 where none is set (the time of sending). Else None."""
        if type(records) is SourceRecords and not records.built:  # alike but for values and offsets, no keys
            if records.topic not in self._known_topics or type(self.key_converter) not in _NULL_AS_NULL:
                return None
            return records.topic, None, [records.timestamp or 0] * len(records)
        topic, n = records[0].topic, len(records)
        if topic not in self._known_topics or list(map(_HEADERS, records)).count(None) != n \
                or list(map(_PARTITION, records)).count(None) != n:
            return None
        keys: list[bytes | None] | None = list(map(_KEY, records))
        key_schemas = list(map(_KEY_SCHEMA, records))
        if keys.count(None) == n and key_schemas.count(None) == n and type(self.key_converter) in _NULL_AS_NULL:
            keys = None
        elif (keys := self.key_converter.from_connect_column(topic, key_schemas, keys)) is None:
            return None
        timestamps = list(map(_TIMESTAMP, records))
        if None in timestamps:
            timestamps = [t or 0 for t in timestamps]
        return topic, keys, timestamps

    def _value_column(self, records: list[SourceRecord]) -> list[bytes | None] | None:
        """The values of a batch sent to one topic, converted at once if the value converter can (else None)."""
        if type(records) is SourceRecords and not records.built:  # its columns, without making its records
            return self.value_converter.from_connect_column(records.topic, [records.value_schema] * len(records),
                                                            records.values)
        topics = list(map(_TOPIC, records))
        if not topics or topics.count(topics[0]) != len(topics):
            return None
        return self.value_converter.from_connect_column(topics[0], list(map(_VALUE_SCHEMA, records)),
                                                        list(map(_VALUE, records)))

    def _convert(self, record: SourceRecord) -> tuple[SourceRecord, bytes | None, bytes | None, list | None] | None:
        """One record through the transformations and converters, naming the stage of any failure."""
        out = self.transform(record)
        if out is None:
            return None
        topic, kc, vc = out.topic, self.key_converter, self.value_converter
        key = staged(Stage.KEY_CONVERTER, kc, kc.from_connect_data, topic, out.key_schema, out.key)
        value = staged(Stage.VALUE_CONVERTER, vc, vc.from_connect_data, topic, out.value_schema, out.value)
        headers = staged(Stage.HEADER_CONVERTER, self.header_converter, self.headers_to_kafka, topic, out.headers) \
            if out.has_headers() else None
        return out, key, value, headers

    def metrics(self) -> dict[str, float]:
        return {**self.task_metrics.snapshot(self._outstanding()), **self.task_stats.snapshot()}

    def _outstanding(self) -> int:
        """Records sent and not acknowledged yet (with failure-only reports: those the producer still holds)."""
        producer = self._producer
        if self._acks_by_flush:
            return len(producer) if producer is not None else 0
        return self.submitted.outstanding

    def _batch_done(self, batch: SubmittedBatch) -> None:
        """KIP-558: every record of ``batch`` was acknowledged, so its topics are in use."""
        for topic in batch.topics:
            self.services.status.put_topic(self.id.connector, topic, self.id.task)

    def _on_record_delivery(self, batch: SubmittedBatch, record: SourceRecord, err: KafkaError | None,
                            msg: Any) -> None:
        """For tasks that override ``commit_record``: also hand them each acknowledged record."""
        batch.ack(err, msg)
        if err is None:
            self.task.commit_record(record, msg)

    def _check_send_error(self) -> None:
        if self.submitted.error is not None:
            error = KafkaException(self.submitted.error)
            raise_access(error, self.producer_config, f"source task {self.id} sending records",
                         topic=("WRITE", self.submitted.error_topic))
            raise ConnectException(f"Unrecoverable exception from producer send callback: {error}") from error

    # -- topic creation (KIP-158) ----------------------------------------------------------------
    def _ensure_topic(self, topic: str) -> None:
        """Kafka's ``maybeCreateTopic``: before the first send to ``topic``, create it if it is missing."""
        if not self.topic_creation.enabled:
            self._known_topics.add(topic)
            return
        log.info("The task will send records to topic '%s' for the first time. Checking whether topic exists",
                 topic)
        if self._admin is None:
            self._admin = self.services.shared_admin(self.admin_config, f"Task {self.id}")
        if describe_topic(self._admin, topic, self.admin_config, operation="WRITE"):
            log.info("Topic '%s' already exists.", topic)
            self._known_topics.add(topic)
            return
        log.info("Creating topic '%s'", topic)
        group = self.topic_creation.find_first_group(topic)
        outcome = create_or_find_topic(self._admin, group, topic, self.admin_config)
        spec = group.new_topic(topic)
        if outcome == "created":
            log.info("Created topic '%s' using creation group %s", spec.to_java_string(), group.name)
            self.services.status.put_created_topic(self.id.connector, topic, {
                "task": self.id.task, "group": group.name, "partitions": spec.partitions,
                "replication_factor": spec.replication_factor, "configs": spec.configs})
        else:
            log.info("Found existing topic '%s'", spec.to_java_string())
        self._known_topics.add(topic)

    # -- offsets ----------------------------------------------------------------------------------
    def _maybe_commit(self) -> None:
        if time.monotonic() - self._last_commit >= self.flush_interval:
            self.timed_commit(partial(self.commit_offsets, wait=False))

    def commit_offsets(self, wait: bool) -> bool | None:
        """Write the acknowledged offsets; with ``wait``, until the broker confirmed them. True if they were
        written, False if that failed, None if nothing was to be written now."""
        self._last_commit = time.monotonic()
        self._flush_sent()
        if self.fence is not None and not self.submitted.has_committable() and not self._unwritten:
            return None
        if self.fence is not None and not self.fence.wait_claimed(self.flush_timeout if wait else 0):
            return None  # the claim is still under way (the broker is away): commit later
        offsets = self.submitted.committable()
        if self._unwritten:  # a lost transaction's offsets, then any newer ones
            offsets = list({freeze(p): (p, o) for p, o in (*self._unwritten, *offsets)}.values())
            self._unwritten = []
        if not offsets:  # nothing new; a stop still waits for a periodic write in flight
            return None if not wait or self._wait_written(self._last_write) else False
        for pair in offsets:
            validate_format(pair[0])
            validate_format(pair[1])
        done = threading.Event()
        errors: list[BaseException] = []

        def written(err: BaseException | None) -> None:
            if err is not None:
                errors.append(err)
                log.error("Task %s failed to commit offsets: %s", self.id, err)
            elif self.fence is None:
                self._task_commit()
            done.set()

        if self.fence is not None:  # in a transaction, refused once a newer instance of the task started
            try:
                with self.fence.transaction(self.flush_timeout) as producer:
                    write_offsets(self.offset_stores, self.id.connector, offsets, written, self.flush_timeout,
                                  producer)
                    producer.flush(self.flush_timeout)
                    if errors:
                        raise errors[0]
            except TransactionLostError as e:  # the records were acknowledged: their offsets are written later
                log.warning("Task %s failed to commit offsets, committing them again later: %s", self.id, e)
                self._unwritten = offsets
                return False
            self.offset_stores[-1].transaction_committed(producer)
            self._task_commit()
            return True
        self._last_write = done
        write_offsets(self.offset_stores, self.id.connector, offsets, written, self.flush_timeout)
        return not (wait and not self._wait_written(done)) and not errors

    def _wait_written(self, done: threading.Event | None) -> bool:
        """Wait up to the flush timeout for an offset write to be answered (True if it was, or if none)."""
        deadline = time.monotonic() + self.flush_timeout
        while done is not None and not done.is_set() and time.monotonic() < deadline:
            self.offset_stores[-1].log.poll(0.05)
        return done is None or done.is_set()

    def _task_commit(self) -> None:
        try:
            self.task.commit()
        except Exception:  # noqa: BLE001
            log.warning("Task %s: commit() raised", self.id, exc_info=True)

    def commit_on_stop(self) -> None:
        deadline = time.monotonic() + self.flush_timeout
        while self.submitted.outstanding > 0 and time.monotonic() < deadline and self.submitted.error is None:
            self._producer.poll(0.05)
            self._acknowledge_if_drained()
        self.timed_commit(partial(self.commit_offsets, wait=True))

    def close(self) -> None:
        # Let go of the producer: its delivery callback refers to this runner, and the cycle would otherwise keep
        # it (its threads, connections and thread-specific-data key) until a full garbage collection.
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush(self.flush_timeout)

