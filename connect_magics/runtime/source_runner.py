"""Running a source task: poll, transform, convert, create topics, produce, and commit offsets only
for records the broker acknowledged (Kafka's ``WorkerSourceTask`` with ``SubmittedRecords``)."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from connect_magics.api.connector import OffsetStorageReader, SourceTask, SourceTaskContext
from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.api.records import SourceRecord
from connect_magics.runtime.task_runner import TaskRunner
from connect_magics.runtime.topic_admin import create_or_find_topic, describe_topic
from connect_magics.runtime.topic_creation import TopicCreation
from connect_magics.storage.kafka_log import client_logger
from connect_magics.storage.offset_store import OffsetStore, freeze, validate_format, write_offsets

log = logging.getLogger(__name__)


class _Submitted:
    __slots__ = ("partition", "offset", "acked")

    def __init__(self, partition: dict | None, offset: dict | None) -> None:
        self.partition, self.offset, self.acked = partition, offset, False


class SubmittedRecords:
    """Records sent but maybe not yet acknowledged, per source partition, in submission order.

    The committable offset of a partition is that of the last record of its acknowledged prefix, so
    an offset is never committed ahead of a record the broker has not confirmed.
    Used from the task's thread only (delivery callbacks are served by its ``poll``), so it needs no lock.
    """

    def __init__(self) -> None:
        self._by_partition: dict[Any, deque[_Submitted]] = {}
        self._last: tuple[dict | None, Any] = (None, freeze(None))
        self.outstanding = 0

    def submit(self, partition: dict | None, offset: dict | None) -> _Submitted:
        rec = _Submitted(partition, offset)
        last_partition, key = self._last
        if partition != last_partition:  # consecutive records mostly share a partition: skip re-freezing
            key = freeze(partition)
            self._last = (partition, key)
        queue = self._by_partition.get(key)
        if queue is None:
            queue = self._by_partition[key] = deque()
        queue.append(rec)
        self.outstanding += 1
        return rec

    def ack(self, rec: _Submitted) -> None:
        rec.acked = True
        self.outstanding -= 1

    def committable(self) -> list[tuple[dict, dict | None]]:
        """Pop each partition's acknowledged prefix; return (partition, latest offset) pairs."""
        out = []
        for key, queue in list(self._by_partition.items()):
            last = None
            while queue and queue[0].acked:
                last = queue.popleft()
            if last is not None and last.partition is not None and last.offset is not None:
                out.append((last.partition, last.offset))
            if not queue:
                del self._by_partition[key]
        return out


class StoreOffsetReader(OffsetStorageReader):
    def __init__(self, connector: str, stores: list[OffsetStore]) -> None:
        self.connector, self.stores = connector, stores

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        result: dict[Any, dict[str, Any]] = {}
        for store in self.stores:  # later stores (the connector's own topic) override
            store.read_to_end()  # as Kafka's reader: offsets a previous task just committed are seen
            result.update(store.get(self.connector, partitions))
        return result

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offsets([partition]).get(freeze(partition))


class SourceTaskRunner(TaskRunner):
    task: SourceTask

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
        self._send_error: BaseException | None = None
        self._last_commit = time.monotonic()
        self._known_topics: set[str] = set()  # KIP-158's per-task cache of topics known to exist
        self._admin: AdminClient | None = None
        self._retry: list[SourceRecord] | None = None  # records to send again after a retriable failure
        self._producer: Producer | None = None
        self.records_sent = 0

    def initialize(self) -> None:
        self._producer = Producer({**self.producer_config, "logger": client_logger("producer")})
        self.task.initialize(SourceTaskContext(self.task_config,
                                               StoreOffsetReader(self.id.connector, self.offset_stores)))

    def execute_once(self) -> None:
        if not self.wait_while_paused():
            self._maybe_commit()
            return
        self._check_send_error()
        if self._retry is not None:
            records, self._retry = self._retry, None
        else:
            try:
                records = self.task.poll()
            except RetriableException:
                log.info("Task %s: retriable error from poll; polling again", self.id, exc_info=True)
                records = None
        if records:
            self._send(records)
        self._producer.poll(0)
        self._maybe_commit()

    def _send(self, records: list[SourceRecord]) -> None:
        produce, chain = self._producer.produce, self.chain
        kconv, vconv = self.key_converter, self.value_converter
        for index, record in enumerate(records):
            try:
                out = chain.apply(record)
                if out is None:
                    sub = self.submitted.submit(record.source_partition, record.source_offset)
                    self.submitted.ack(sub)
                    self.task.commit_record(record, None)
                    continue
                topic = out.topic
                key = kconv.from_connect_data(topic, out.key_schema, out.key)
                value = vconv.from_connect_data(topic, out.value_schema, out.value)
                headers = self.headers_to_kafka(topic, out.headers) if len(out.headers) else None
            except Exception:
                if self.tolerate_errors:
                    log.warning("Task %s skipped a record it could not convert", self.id, exc_info=True)
                    continue
                raise
            if topic not in self._known_topics:
                try:
                    self._ensure_topic(topic)
                except RetriableException:
                    log.warning("Task %s failed to send record to topic '%s'. Backing off before retrying: ",
                                self.id, topic, exc_info=True)
                    self._retry = records[index:]
                    with self._cond:
                        self._cond.wait(0.1)  # Kafka's SEND_FAILED_BACKOFF_MS; stop() wakes it up
                    return
            sub = self.submitted.submit(record.source_partition, record.source_offset)
            kwargs: dict[str, Any] = {}
            if out.kafka_partition is not None:
                kwargs["partition"] = out.kafka_partition
            if out.timestamp is not None:
                kwargs["timestamp"] = out.timestamp
            if headers:
                kwargs["headers"] = headers
            callback = self._delivery_callback(sub, record, topic)
            while True:
                try:
                    produce(topic, value, key, on_delivery=callback, **kwargs)
                    break
                except BufferError:
                    self._producer.poll(0.05)
                    self._check_send_error()
                    if self.stopping:
                        raise ConnectException("Task stopped while the producer queue was full") from None
            self.records_sent += 1

    def _delivery_callback(self, sub: _Submitted, record: SourceRecord,
                           topic: str) -> Callable[[KafkaError | None, Any], None]:
        def done(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                self._send_error = KafkaException(err)
                return
            self.submitted.ack(sub)
            if self.track_topics:
                self.services.status.put_topic(self.id.connector, topic, self.id.task)
            self.task.commit_record(record, msg)
        return done

    def _check_send_error(self) -> None:
        if self._send_error is not None:
            raise ConnectException(f"Unrecoverable exception from producer send callback: {self._send_error}") \
                from self._send_error

    # -- topic creation (KIP-158) ----------------------------------------------------------------
    def _ensure_topic(self, topic: str) -> None:
        """Kafka's ``maybeCreateTopic``: before the first send to ``topic``, create it if it is missing."""
        if not self.topic_creation.enabled:
            self._known_topics.add(topic)
            return
        log.info("The task will send records to topic '%s' for the first time. Checking whether topic exists",
                 topic)
        if self._admin is None:
            self._admin = AdminClient({**self.admin_config, "logger": client_logger("admin")})
        if describe_topic(self._admin, topic, self.admin_config):
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
            self.commit_offsets(wait=False)

    def commit_offsets(self, wait: bool) -> bool:
        """Write the acknowledged offsets; with ``wait``, until the broker confirmed them."""
        self._last_commit = time.monotonic()
        offsets = self.submitted.committable()
        if not offsets:
            return True
        for pair in offsets:
            validate_format(pair[0])
            validate_format(pair[1])
        done = threading.Event()
        errors: list[BaseException] = []

        def written(err: BaseException | None) -> None:
            if err is not None:
                errors.append(err)
                log.error("Task %s failed to commit offsets: %s", self.id, err)
            else:
                try:
                    self.task.commit()
                except Exception:  # noqa: BLE001
                    log.warning("Task %s: commit() raised", self.id, exc_info=True)
            done.set()

        write_offsets(self.offset_stores, self.id.connector, offsets, written, self.flush_timeout)
        if wait:
            deadline = time.monotonic() + self.flush_timeout
            while not done.is_set() and time.monotonic() < deadline:
                self.offset_stores[-1].log.poll(0.05)
        return not errors

    def commit_on_stop(self) -> None:
        deadline = time.monotonic() + self.flush_timeout
        while self.submitted.outstanding > 0 and time.monotonic() < deadline and self._send_error is None:
            self._producer.poll(0.05)
        self.commit_offsets(wait=True)

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(self.flush_timeout)

