"""A compacted Kafka topic read from the beginning into memory and written to (Kafka's ``KafkaBasedLog``).

A background thread consumes every partition from the start and hands each record to a
callback; :meth:`KafkaLog.read_to_end` waits until everything written before the call has been
handed over. Writes are asynchronous; :meth:`KafkaLog.send` takes a completion callback.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from functools import partial
from typing import TYPE_CHECKING, Any

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from connect_magics.api.errors import ConnectException
from connect_magics.storage.authorization import (
    KafkaAccessError,
    KafkaAuthorizationError,
    access_error,
    authorization_code,
    principal,
)
from connect_magics.storage.client_limit import new_client
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.coalesced import Coalesced
from connect_magics.storage.offset_queries import EARLIEST, LATEST, query_consumer, query_offsets

if TYPE_CHECKING:
    from connect_magics.storage.fence import ProducerFence

log = logging.getLogger(__name__)

Records = list[tuple[bytes | str | None, bytes | None]]
RecordCallback = Callable[[bytes | None, bytes | None, int, int], None]
BatchCallback = Callable[[list[Message]], None]
DoneCallback = Callable[[BaseException | None], None]

# A bulk write (thousands of records at once, e.g. altering or resetting the offsets of many partitions):
# large batches, and delivery reports only for failures, so that Python is called once per failed record
# instead of once per record.
BULK_PRODUCER = {"linger.ms": 5, "batch.size": 1_000_000, "queue.buffering.max.messages": 1_000_000,
                 "delivery.report.only.error": True}


class BadRecord(ValueError):
    """A record of an internal topic that cannot be applied (its key or value is not what the key's kind
    needs): the reader skips it with one warning naming the topic, its position, its key and this reason.

    >>> try:
    ...     json_value(b"{oops")
    ... except BadRecord as e:
    ...     print(e)
    the value is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))
    """


def json_value(value: bytes | None, loads: Callable[[bytes], Any] = json.loads) -> Any:
    """A record value decoded from JSON by ``loads`` (None for a tombstone); BadRecord if it is not JSON."""
    if value is None:
        return None
    try:
        return loads(value)
    except ValueError as e:
        raise BadRecord(f"the value is not JSON ({e})") from None


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean"}


def json_object(value: bytes | None, shape: str, loads: Callable[[bytes], Any] = json.loads) -> dict[str, Any] | None:
    """A record value that must be a JSON object (None for a tombstone); BadRecord naming ``shape``, the
    value the key's kind needs, if it is not one."""
    data = json_value(value, loads)
    if data is not None and not isinstance(data, dict):
        raise BadRecord(f"the value must be {shape}, not {_JSON_TYPES.get(type(data), 'null')}")
    return data


def text_key(key: bytes) -> str:
    """A record key as text; BadRecord if it is not UTF-8."""
    try:
        return key.decode()
    except UnicodeDecodeError:
        raise BadRecord("the key is not UTF-8 text") from None


# librdkafka waits fetch.queue.backoff.ms (1 s by default) before fetching again once its local queue is
# full; for a consumer that drains that queue as fast as Python can, a short wait keeps the fetches
# flowing (about twice the throughput when each record takes Python work). Users can override it.
CONSUMER_DEFAULTS = {"fetch.queue.backoff.ms": 10}


def known_partitions(consumer: Consumer, topic: str, timeout: float) -> list[int]:
    """The topic's partitions, asked through ``consumer`` itself so that it knows their leaders when they are
    assigned: a consumer that does not waits for its next metadata scan, up to a second, before it fetches.
    A topic the client may not describe raises its ``TOPIC_AUTHORIZATION_FAILED``."""
    metadata = consumer.list_topics(topic, timeout=timeout).topics[topic]
    if metadata.error is not None and metadata.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
        raise KafkaException(metadata.error)
    return sorted(metadata.partitions)


def ensure_topic(admin: AdminClient, name: str, partitions: int, replication_factor: int,
                 configs: Mapping[str, str], timeout: float = 30.0,
                 client_config: Mapping[str, Any] | None = None) -> int:
    """Create ``name`` if it does not exist (-1 means the broker's default); return its partition count
    (:func:`ensure_topics` for one topic)."""
    return ensure_topics(admin, {name: (partitions, replication_factor, configs)}, timeout, client_config)[name]


def ensure_topics(admin: AdminClient, topics: Mapping[str, tuple[int, int, Mapping[str, str]]],
                  timeout: float = 30.0, client_config: Mapping[str, Any] | None = None) -> dict[str, int]:
    """Create those of ``topics`` (name -> partitions, replication factor, configs; -1: the broker's default)
    that do not exist, in one request, and wait until every partition of each has a leader; return each
    topic's partition count.

    Existence is checked with a metadata request for all topics, never for a name alone: that would
    make a broker with ``auto.create.topics.enable`` create it with the wrong settings. A principal that may
    neither see nor create a topic gets a :class:`~connect_magics.storage.authorization.KafkaAuthorizationError`
    (``client_config``: the admin client's settings, to name the principal).
    """
    found = admin.list_topics(timeout=timeout).topics
    missing = [name for name in topics if found.get(name) is None or found[name].error is not None]
    if missing:
        futures = admin.create_topics([NewTopic(name, num_partitions=topics[name][0],
                                                replication_factor=topics[name][1], config=dict(topics[name][2]))
                                       for name in missing], request_timeout=timeout)
        for name in missing:
            try:
                futures[name].result(timeout)
            except KafkaException as e:
                if authorization_code(e) is not None:  # absent, or present but invisible to this principal
                    raise KafkaAuthorizationError(
                        principal(client_config or {}), [("CREATE", "topic", name)],
                        "the topic does not exist or is not visible to it; if it exists, it needs DESCRIBE on it, "
                        "implied by READ and WRITE") from e
                if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
        deadline = time.monotonic() + timeout
        waiting = list(missing)
        while True:  # until every partition has a leader, so that the first reads and writes succeed
            found = {**found, **admin.list_topics(timeout=timeout).topics}
            for name in list(waiting):
                topic = found.get(name)
                if topic is not None and topic.error is None and topic.partitions \
                        and all(p.leader >= 0 for p in topic.partitions.values()):
                    waiting.remove(name)
                elif topic is None:  # it exists (created, or already there): asking for it alone creates nothing
                    alone = admin.list_topics(name, timeout=timeout).topics.get(name)
                    if alone is not None and alone.error is not None and authorization_code(alone.error) is not None:
                        raise KafkaAuthorizationError(principal(client_config or {}), [("DESCRIBE", "topic", name)],
                                                      "the topic exists, but it may not see it")
            if not waiting:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"Topic {waiting[0]} was created but its partitions have no leader yet")
            time.sleep(0.05)
    return {name: len(found[name].partitions) for name in topics}


def describe_topic_config(admin: AdminClient, name: str, timeout: float = 30.0) -> dict[str, str]:
    res = ConfigResource(ResourceType.TOPIC, name)
    return {k: v.value for k, v in admin.describe_configs([res])[res].result(timeout).items()}


_TRANSIENT = {KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
              KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
              KafkaError._NOENT, KafkaError._UNKNOWN_PARTITION}  # no leaders known yet, just after a restart


# The broker refuses the record itself: writing it again cannot succeed.
_REFUSED_RECORD = {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE, KafkaError.INVALID_RECORD}


def _refused_record(error: BaseException, delivered: list[KafkaError]) -> KafkaError | None:
    """The error refusing a record of a failed write, from its delivery reports or its cause chain; else None."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KafkaException) and seen.args and isinstance(seen.args[0], KafkaError) \
                and seen.args[0].code() in _REFUSED_RECORD:
            return seen.args[0]
        seen = seen.__cause__ or seen.__context__
    return next((e for e in delivered if e.code() in _REFUSED_RECORD), None)


def _note_end(ends: dict[int, int], msg: Message) -> None:
    """Note in ``ends`` (partition -> offset after the last record) where a delivered record ends."""
    ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)


def _timed_out(error: BaseException) -> bool:
    """Whether a shared offsets query ended at its first caller's deadline (another caller may wait longer)."""
    return isinstance(error, KafkaException) and error.args[0].code() == KafkaError._TIMED_OUT


def transient(error: KafkaError) -> bool:
    """Whether a failed offsets request is worth repeating: the broker is restarting or moving leaders.

    >>> transient(KafkaError(KafkaError._NOENT, "Failed to query partition leaders: No leaders found"))
    True
    >>> transient(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
    False
    """
    return error.retriable() or error.code() in _TRANSIENT


class KafkaLog:
    """One topic: a reader thread from offset 0 of every partition, and an idempotent producer.

    With a ``fence`` (:class:`~connect_magics.storage.fence.ProducerFence`), every write is a transaction of
    the fence's producer, made in order on a writer thread, and refused once a newer holder claimed the
    fence; readers skip aborted transactions (librdkafka reads ``read_committed``).
    """

    def __init__(self, topic: str, client_config: Mapping[str, str], on_record: RecordCallback,
                 producer_config: Mapping[str, str] | None = None, fence: ProducerFence | None = None,
                 on_batch: BatchCallback | None = None) -> None:
        """``on_record(key, value, partition, offset)`` gets every record read; ``on_batch`` (instead of it,
        when given) every consumed batch at once, as the consumer's messages, without the failed ones."""
        self.topic = topic
        self.fence = fence
        self._fenced_writer = ThreadPoolExecutor(1, thread_name_prefix=f"fenced-{topic}") if fence else None
        self._on_record = on_record
        self._on_batch = on_batch
        base = {k: v for k, v in client_config.items()}
        # murmur2, as Java's producers: a key goes to the partition a Kafka Connect worker writes it to, so
        # that the newest record of every key is in one partition whichever worker wrote it.
        self._producer_config = {**base, "enable.idempotence": True, "acks": "all", "linger.ms": 1,
                                 "partitioner": "murmur2_random", **(producer_config or {}),
                                 "logger": client_logger("producer")}
        what = f"The log of topic {topic}"  # built through new_client: a clear error past the process's limit
        self._producer = new_client(Producer, self._producer_config, what)
        self._bulk: Producer | None = None
        self._bulk_lock = threading.Lock()
        self._bulk_errors: list[BaseException] = []
        self._consumer = new_client(Consumer, {
            **CONSUMER_DEFAULTS, **base, "group.id": f"connect-magics-reader-{uuid.uuid4().hex}",
            "enable.auto.commit": False, "enable.partition.eof": False, "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50, "logger": client_logger("consumer")}, what)
        # confluent-kafka consumer calls block while another thread is inside consume(): a second consumer
        # answers offset queries for the reader, the start or end offsets of every partition in one request
        # (storage/offset_queries.py: not an admin client, whose timed-out requests can abort the process).
        self._query_config = base
        self._queries = new_client(query_consumer, base, what)
        self._ends = Coalesced(self._end_offsets, retry_on=_timed_out)
        self._watermark_queries: Consumer | None = None  # read_uncommitted, built at the first read past them
        self._watermark_lock = threading.Lock()
        self._high_watermarks = Coalesced(self._high_watermark_offsets, retry_on=_timed_out)
        self._positions: dict[int, int] = {}
        self._committed_ends: dict[int, int] = {}  # after committed transactions that wrote to this log
        self._transaction_ends: dict[int, dict[int, int]] = {}  # id(producer) -> ends of its open transaction
        self._cond = threading.Condition()
        self._stopping = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._partitions: list[int] = []

    def start(self, timeout: float = 30.0) -> None:
        """Assign every partition from the beginning, start reading, and read to the end."""
        try:
            self._partitions = known_partitions(self._consumer, self.topic, timeout)  # before the reader thread
        except KafkaException as e:
            self._raise_access(e, "DESCRIBE")
            raise
        # From each partition's start offset, asked of the querying consumer: assigned at OFFSET_BEGINNING,
        # librdkafka looks the offsets up itself and fetches half a second later.
        starts, = self._offsets(timeout, EARLIEST)
        self._consumer.assign([TopicPartition(self.topic, p, starts[p]) for p in self._partitions])
        self._thread = threading.Thread(target=self._run, name=f"kafka-log-{self.topic}", daemon=True)
        self._thread.start()
        self.read_to_end(timeout)

    def _run(self) -> None:
        while not self._stopping:
            self._producer.poll(0)  # serve delivery callbacks of asynchronous writes
            try:
                msgs = self._next_batch()
            except Exception as e:  # noqa: BLE001 - consumer closed under us
                if self._stopping:
                    return
                log.warning("Reading %s failed: %s", self.topic, e)
                continue
            if not msgs:
                self._note_positions()  # transaction markers move the position without a message
                continue
            good = []
            for m in msgs:
                error = m.error()
                if error is None:
                    good.append(m)
                elif error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED:
                    # The reader assigns its partitions and never commits: its throwaway group needs no ACL,
                    # but librdkafka looks the group's coordinator up anyway.
                    log.debug("Reading %s: %s (the reader uses no group)", self.topic, error)
                elif error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    with self._cond:
                        if self._error is None:
                            self._error = access_error(error, self._producer_config, f"reading topic {self.topic}",
                                                       topic=("READ", self.topic))
                            log.error("%s", self._error)
                        self._cond.notify_all()
                elif not error.retriable() and error.code() != KafkaError._PARTITION_EOF:
                    log.warning("Error reading %s: %s", self.topic, error)
            if self._on_batch is not None:
                try:
                    self._on_batch(good)
                except Exception:  # noqa: BLE001 - must never stop the reader (the callback skips bad records)
                    log.exception("Failed to process a batch of %s records of %s", len(good), self.topic)
            else:
                for m in good:
                    try:
                        self._on_record(m.key(), m.value(), m.partition(), m.offset())
                    except BadRecord as e:
                        log.warning("Skipping the record of %s at %s/%s with key %r: %s", self.topic,
                                    m.partition(), m.offset(), m.key(), e)
                    except Exception:  # noqa: BLE001 - a bad record must never stop the reader
                        log.exception("Skipping a record of %s at %s/%s that could not be processed",
                                      self.topic, m.partition(), m.offset())
            reached: dict[int, int] = {}
            for m in good:  # a partition's messages come in offset order
                reached[m.partition()] = m.offset() + 1
            with self._cond:
                positions = self._positions
                for partition, position in reached.items():
                    if position > positions.get(partition, 0):
                        positions[partition] = position
                self._cond.notify_all()

    def _next_batch(self) -> list[Message]:
        """What the consumer has now (large batches: a big topic is read fast), else the first record to arrive
        within 50 ms with whatever came with it. A batch consume waits out its whole timeout unless the batch fills,
        so waiting in it would delay every write read back (read_to_end) by that timeout."""
        consume = self._consumer.consume
        msgs = consume(10_000, timeout=0)
        if msgs:
            return msgs
        self._note_positions()  # past a commit marker consumed just now (it comes after its transaction's records)
        first = self._consumer.poll(0.05)
        if first is None:
            return []
        return [first, *consume(9_999, timeout=0)]

    def _note_positions(self) -> None:
        """The reader's positions (on the reader's thread), which pass transaction markers, as reached."""
        try:
            positions = self._consumer.position([TopicPartition(self.topic, p) for p in self._partitions])
        except KafkaException:
            return
        with self._cond:
            for tp in positions:
                if tp.offset >= 0 and tp.offset > self._positions.get(tp.partition, 0):
                    self._positions[tp.partition] = tp.offset
                    self._cond.notify_all()

    def end_offsets(self, timeout: float = 30.0) -> dict[int, int]:
        """The end offset of every partition that has anything left to read (compaction can leave a
        partition whose records all precede its start offset: nothing to wait for there).

        The end is the last stable offset, as the reader is read_committed: a transaction left open by a
        killed writer does not hold up a reader (its successor's fence aborts it). Callers waiting together
        share one query (storage/coalesced.py)."""
        return self._ends(timeout)

    def _end_offsets(self, timeout: float, queries: Consumer | None = None) -> dict[int, int]:
        starts, ends = self._offsets(timeout, EARLIEST, LATEST, queries=queries)
        return {p: end for p, end in ends.items() if end > starts[p]}

    def _high_watermark_offsets(self, timeout: float) -> dict[int, int]:
        with self._watermark_lock:
            if self._watermark_queries is None:
                queries = new_client(partial(query_consumer, read_committed=False), self._query_config,
                                     f"The log of topic {self.topic}")
                try:  # its partitions' leaders known before its first query (else _UNKNOWN_PARTITION)
                    known_partitions(queries, self.topic, timeout)
                except BaseException:
                    queries.close()
                    raise
                self._watermark_queries = queries
        return self._end_offsets(timeout, self._watermark_queries)

    def _offsets(self, timeout: float, *specs: int, queries: Consumer | None = None) -> list[dict[int, int]]:
        """Per spec (:data:`EARLIEST` or :data:`LATEST`), every partition's offset, in one request; a latest
        offset is the last stable one (the high watermark, asked of the read_uncommitted ``queries``). Retries
        while the partitions have no leader, until ``timeout`` (``KafkaException`` ``_TIMED_OUT``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return [{p: offset for (_, p), offset in query_offsets(
                    queries or self._queries, {(self.topic, p): spec for p in self._partitions},
                    deadline - time.monotonic()).items()} for spec in specs]
            except KafkaException as e:  # e.g. no leader yet just after a broker restart
                if not transient(e.args[0]) or time.monotonic() >= deadline:
                    self._raise_access(e, "DESCRIBE")
                    raise
                time.sleep(0.1)

    def _raise_access(self, error: BaseException, operation: str) -> None:
        """Raise ``error`` named (see storage/authorization.py) if it is an authorization failure."""
        named = access_error(error, self._producer_config, f"reading topic {self.topic}",
                             topic=(operation, self.topic))
        if named is not None:
            raise named from error

    def read_to_end(self, timeout: float = 30.0, past_open_transactions: bool = False) -> None:
        """Block until every record committed before this call has been passed to the callback.

        With ``past_open_transactions``, up to each partition's high watermark, as Kafka Connect's
        ``KafkaBasedLog`` reads a read_committed log: a transaction still open in a partition (another writer's
        commit under way, or one left open by a killed writer until its successor's fence aborts it) hides every
        record committed after it began from a read_committed reader, and this read waits until it ended. What a
        task needs before reading its offsets: its predecessor's last commit may lie behind such a transaction.
        Without it, up to the last stable offsets, and past what this log's own committed transactions wrote."""
        deadline = time.monotonic() + timeout
        if past_open_transactions:
            self._read_to(self._high_watermarks(timeout), deadline, waits_for_transactions=True)
            return
        ends = self.end_offsets(timeout)
        with self._cond:
            for partition, end in self._committed_ends.items():
                ends[partition] = max(ends.get(partition, 0), end)
        self._read_to(ends, deadline)

    def read_own_writes(self, timeout: float = 30.0) -> None:
        """Block until every record this log's :meth:`write` wrote has been passed to the callback, and so every
        record before them in their partitions: without asking the broker for its ends, which :meth:`read_to_end`
        does (for a single-partition topic such as the config topic: what the writer needs to see its write)."""
        with self._cond:
            ends = dict(self._committed_ends)
        self._read_to(ends, time.monotonic() + timeout)

    def _read_to(self, ends: Mapping[int, int], deadline: float, waits_for_transactions: bool = False) -> None:
        """Wait until the reader's position in every partition reached its end in ``ends``."""
        told_at = time.monotonic() + 1.0  # a read past open transactions that takes longer says why, once
        with self._cond:
            while behind := {p: end for p, end in ends.items() if self._positions.get(p, 0) < end}:
                if isinstance(self._error, KafkaAccessError):  # the reader may not read: it never will
                    raise self._error
                now = time.monotonic()
                if waits_for_transactions and now >= told_at:
                    told_at = float("inf")
                    log.info("Reading topic %s to its end waits for transactions still open in it (%s): a "
                             "read_committed reader sees no record committed after one began until it ends",
                             self.topic, self._behind(behind))
                if now >= deadline:
                    raise TimeoutError(f"Timed out reading topic {self.topic} to its end ({self._behind(behind)})"
                                       + (": a transaction still open there (its writer killed before it "
                                          "committed) ends when its writer's successor claims its transactional "
                                          "id, or after its transaction.timeout.ms" if waits_for_transactions
                                          else ""))
                self._cond.wait(min(deadline - now, 0.1))

    def _behind(self, behind: Mapping[int, int]) -> str:
        return ", ".join(f"partition {p} read up to {self._positions.get(p, 0)} of {end}"
                         for p, end in sorted(behind.items()))

    def send(self, key: bytes | str | None, value: bytes | None, partition: int | None = None,
             callback: DoneCallback | None = None) -> None:
        """Write asynchronously; ``callback(error_or_None)`` runs once the broker answered."""
        def on_delivery(err: KafkaError | None, _msg: object) -> None:
            if callback is not None:
                callback(None if err is None else KafkaException(err))

        if self.fence is not None:
            self._write_fenced([(key, value)], callback)
            return
        kwargs = {} if partition is None else {"partition": partition}
        while True:
            try:
                self._producer.produce(self.topic, value=value, key=key, on_delivery=on_delivery, **kwargs)
                break
            except BufferError:
                self._producer.poll(0.05)
        self._producer.poll(0)

    def send_all(self, records: Records, callback: DoneCallback,
                 producer: Producer | None = None) -> int:
        """Write many records asynchronously (the fast path for bulk writes); ``callback(first_error_or_None)``
        runs once, after the broker answered for the last one. ``producer`` replaces the log's own (a
        transactional one, for fenced writes): call :meth:`transaction_committed` once its transaction
        committed."""
        if not records:
            callback(None)
            return 0
        if self.fence is not None and producer is None:
            self._write_fenced(records, callback)
            return len(records)
        pending = [len(records)]
        first_error: list[BaseException | None] = [None]
        lock = threading.Lock()
        ends = None if producer is None else self._transaction_ends.setdefault(id(producer), {})

        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            with lock:
                pending[0] -= 1
                if err is not None and first_error[0] is None:
                    first_error[0] = KafkaException(err)
                elif err is None and ends is not None:
                    _note_end(ends, msg)
                last = pending[0] == 0
            if last:
                callback(first_error[0])

        producer = producer or self._producer
        produce, poll, topic = producer.produce, producer.poll, self.topic
        for key, value in records:
            while True:
                try:
                    produce(topic, value, key, on_delivery=on_delivery)
                    break
                except BufferError:
                    poll(0.05)
        poll(0)
        return len(records)

    def write_bulk(self, records: Iterable[tuple[bytes | str | None, bytes | None]], timeout: float = 30.0) -> int:
        """Write many records (produced as ``records`` yields them) and wait until the broker acknowledged all of
        them; return how many; raise the first failure.

        For large writes that the caller waits for anyway: a producer of its own with large batches and
        delivery reports for failures only (:data:`BULK_PRODUCER`), and one flush. Writes still queued on the
        log's own producer are flushed first, so that the bulk records come after them. With a fence, the
        records are one transaction of the fence, as every write of this log."""
        if self.fence is not None:
            batch = list(records)
            try:
                self._write_fenced(batch, None).result(timeout)
            except FutureTimeoutError:
                raise TimeoutError(f"Timed out writing {len(batch)} records to {self.topic}") from None
            return len(batch)
        with self._bulk_lock:
            if self._producer.flush(timeout) > 0:
                raise TimeoutError(f"Timed out writing to {self.topic}")
            if self._bulk is None:
                self._bulk = new_client(Producer, {**self._producer_config, **BULK_PRODUCER,
                                                   "on_delivery": self._bulk_failed}, f"The log of topic {self.topic}")
            producer, topic = self._bulk, self.topic
            self._bulk_errors = errors = []
            produce, poll = producer.produce, producer.poll
            count = 0
            for key, value in records:
                count += 1
                while True:
                    try:
                        produce(topic, value, key)
                        break
                    except BufferError:
                        poll(0.05)
            left = producer.flush(timeout)
        if errors:
            raise errors[0]
        if left > 0:
            raise TimeoutError(f"Timed out writing {count} records to {self.topic}: {left} not acknowledged")
        return count

    def transaction_committed(self, producer: Producer) -> None:
        """The transaction ``producer`` wrote records of :meth:`send_all` in committed: its markers follow the
        commit, and until they are written a read_committed reader's end (the last stable offset) falls short
        of those records, so :meth:`read_to_end` waits for them from now on."""
        self._note_committed(self._transaction_ends.pop(id(producer), {}))

    def _note_committed(self, ends: Mapping[int, int]) -> None:
        with self._cond:
            for partition, end in ends.items():
                self._committed_ends[partition] = max(self._committed_ends.get(partition, 0), end)

    def _bulk_failed(self, err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            self._bulk_errors.append(KafkaException(err))

    def _write_fenced(self, records: Records, callback: DoneCallback | None) -> Future:
        """One transaction of the fence holding ``records``, on the writer thread (after earlier writes); a
        failed one is written again until it succeeds, the fence is lost or the log stops."""
        from connect_magics.storage.fence import FencedError  # (fence.py builds on this module)

        fence, topic = self.fence, self.topic

        def transaction() -> None:
            error = None
            written: dict[int, int] = {}
            failed: list[KafkaError] = []

            def delivered(err: KafkaError | None, msg: object) -> None:
                if err is None:
                    _note_end(written, msg)
                else:
                    failed.append(err)
            while True:
                failed.clear()
                try:
                    with fence.transaction() as producer:
                        for key, value in records:
                            producer.produce(topic, value, key, on_delivery=delivered)
                    self._note_committed(written)  # see transaction_committed
                    break
                except FencedError as e:
                    error = e
                    break
                except Exception as e:  # noqa: BLE001 - aborted: written again, in order, unless stopping
                    named = access_error(e, self._producer_config, f"writing to topic {topic}",
                                         topic=("WRITE", topic), transactional_id=("WRITE", fence.transactional_id))
                    if named is not None:  # a missing ACL does not come back by itself
                        error = named
                        break
                    refused = _refused_record(e, failed)
                    if refused is not None:  # nor does a record the broker refuses (too large for the topic)
                        error = ConnectException(f"Error writing to topic {topic}: the broker refuses a record "
                                                 f"({refused.name()}: {refused.str()}); it is not written again")
                        break
                    if self._stopping:
                        error = e
                        break
                    log.warning("Writing to %s failed, writing again: %s", topic, e)
                    with self._cond:
                        self._cond.wait(1.0)
            if callback is not None:
                callback(error)
            if error is not None:
                raise error
        return self._fenced_writer.submit(transaction)

    def poll(self, timeout: float = 0) -> None:
        """Serve delivery callbacks."""
        self._producer.poll(timeout)

    def flush(self, timeout: float = 30.0) -> int:
        """Wait for every write; return how many are still outstanding."""
        if self._fenced_writer is not None and not self._stopping:
            done = self._fenced_writer.submit(lambda: None)
            try:
                done.result(timeout)
            except FutureTimeoutError:
                return 1
        return self._producer.flush(timeout)

    def write(self, records: Records, timeout: float = 30.0) -> None:
        """Write records and wait for the broker's acknowledgement; raise on any failure."""
        if self.fence is not None:
            try:
                self._write_fenced(records, None).result(timeout)
            except FutureTimeoutError:
                raise TimeoutError(f"Timed out writing to {self.topic}") from None
            return
        errors: list[BaseException] = []
        written: dict[int, int] = {}

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                errors.append(KafkaException(err))
            else:
                _note_end(written, msg)
        for key, value in records:
            while True:
                try:
                    self._producer.produce(self.topic, value, key, on_delivery=delivered)
                    break
                except BufferError:
                    self._producer.poll(0.05)
        if self.flush(timeout) > 0:
            raise TimeoutError(f"Timed out writing to {self.topic}")
        if errors:
            raise errors[0]
        self._note_committed(written)  # what read_own_writes waits for

    @property
    def partitions(self) -> list[int]:
        return list(self._partitions)

    def stop(self, timeout: float = 10.0) -> None:
        self.flush(timeout)
        if self._bulk is not None:
            self._bulk.flush(timeout)
        if self._fenced_writer is not None:
            self._fenced_writer.shutdown(wait=False)
        self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._consumer.close()
        self._queries.close()
        if self._watermark_queries is not None:
            self._watermark_queries.close()
