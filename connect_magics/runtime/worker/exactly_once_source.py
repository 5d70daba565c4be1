"""Exactly-once source tasks (KIP-618): records and their source offsets in one transaction.

With ``exactly.once.source.support=enabled`` a source task writes through its fence's transactional
producer (``{group.id}-{connector}-{task}``, claimed when the task starts, which fences every earlier
instance). A transaction holds the records of one or more ``poll()`` batches and, at its end, the
offsets of those records: a ``read_committed`` consumer sees a record exactly once, and the offsets
topic (read ``read_committed``) never moves past what was committed with it. When the transaction ends
is the connector's ``transaction.boundary``: after every ``poll()`` batch (``poll``, the default), every
``transaction.boundary.interval.ms`` (``interval``), or when the task asks through its
:class:`~connect_magics.api.connector.TransactionContext` (``connector``).

>>> TransactionRequests().split([1, 2, 3])  # no requests: one segment, ended by the boundary
[([1, 2, 3], None)]
"""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from connect_magics.api.connector import SourceTaskContext, TransactionContext
from connect_magics.api.records import SourceRecord
from connect_magics.runtime.config.exactly_once import TransactionBoundary
from connect_magics.runtime.worker.source_runner import SourceTaskRunner, SubmittedRecords
from connect_magics.storage.fence import TransactionLostError, broken_producer_error
from connect_magics.storage.offset_store import OffsetStore, validate_format, write_offsets

log = logging.getLogger(__name__)

#: How long one read of the offsets topic waits for transactions still open in it before it says so and waits on.
OFFSETS_READ_S = 30.0

COMMIT, ABORT = "commit", "abort"


class TransactionRequests(TransactionContext):
    """What a task asked of its transactions during one ``poll()``: an end after given records, or after
    the batch."""

    def __init__(self) -> None:
        self.after: list[tuple[Any, str]] = []  # (record, COMMIT | ABORT), in the order asked
        self.batch: str | None = None

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._ask(record, COMMIT)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._ask(record, ABORT)

    def _ask(self, record: SourceRecord | None, action: str) -> None:
        if record is None:
            self.batch = action
        else:
            self.after.append((record, action))

    def split(self, records: list) -> list[tuple[list, str | None]]:
        """``records`` cut after each record a request names: segments and how each ends (None: by the
        boundary); the requests are taken.

        >>> r = TransactionRequests(); r.commit_transaction(2); r.split([1, 2, 3])
        [([1, 2], 'commit'), ([3], None)]
        """
        asked = {id(record): action for record, action in self.after}
        segments, start = [], 0
        for i, record in enumerate(records):
            action = asked.get(id(record))
            if action is not None:
                segments.append((records[start:i + 1], action))
                start = i + 1
        if start < len(records) or not segments:
            segments.append((records[start:], None))
        if self.batch is not None:
            last, action = segments[-1]
            segments[-1] = (last, action or self.batch)
        self.after, self.batch = [], None
        return segments


class Cadence:
    """The ``interval`` boundary: one every ``interval`` seconds from :meth:`restart`, due whether a transaction
    is open or not, as Kafka's ``ExactlyOnceWorkerSourceTask`` keeps them (its ``lastCommit``). A transaction that
    begins after one boundary ends at the next, so none lasts longer than the interval plus the time to notice.

    >>> c = Cadence(60.0, now=0.0)
    >>> c.due(59.9), c.due(60.5), c.due(100.0), c.due(120.4), c.due(121.0)
    (False, True, False, False, True)
    """

    def __init__(self, interval: float, now: float) -> None:
        self.interval = interval
        self.last = now

    def restart(self, now: float) -> None:
        self.last = now

    def due(self, now: float) -> bool:
        """True if a boundary passed since the last one (which is then ``now``)."""
        if now - self.last < self.interval:
            return False
        self.last = now
        return True


class ExactlyOnceSourceTaskRunner(SourceTaskRunner):
    """A source task whose records and offsets commit together (see the module's docs)."""

    CLAIM_BEFORE_START = True  # no offset is read before earlier instances are fenced
    ACKS_BY_FLUSH = False  # the fence's producer also writes the offsets, counting their delivery reports

    def __init__(self, *args: Any, boundary: TransactionBoundary, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.fence is None:
            raise ValueError("An exactly-once source task needs a fence (its transactional producer)")
        self.boundary = boundary
        self.requests = TransactionRequests() if boundary.kind == "connector" else None
        self._open_since: float | None = None  # monotonic time the open transaction began
        self._cadence = Cadence(boundary.interval_ms / 1000, time.monotonic())

    def initialize(self) -> None:
        for store in self.offset_stores:  # read_committed: what earlier instances committed, nothing else
            self._read_to_end(store)
        self._cadence.restart(time.monotonic())  # as the task enters its send loop
        self._producer = self.fence.producer
        self.task.initialize(SourceTaskContext(self.task_config, self.offset_reader(), self.requests))

    def _read_to_end(self, store: OffsetStore) -> None:
        """Read ``store`` up to its high watermark (the last commit of an earlier instance may lie behind a
        transaction still open, see :meth:`KafkaLog.read_to_end`); while one stays open, again until the task is
        stopped, as Kafka Connect's reader waits for it."""
        while True:
            try:
                store.read_to_end(OFFSETS_READ_S, past_open_transactions=True)
                return
            except (TimeoutError, KafkaException) as e:  # the read, or the query of the ends (a missing ACL raises
                if self.stopping:                          # KafkaAccessError: not retried)
                    raise
                log.warning("Task %s still waits to read its offsets: %s", self.id, e)

    def execute_once(self) -> None:
        """The source task's iteration; a producer that broke on the way (fenced, or failed fatally, in a send,
        a flush or a delivery report) ends the open transaction through the fence, which tells a successor
        from an outage (:class:`TransactionLostError`: the task goes on, see :meth:`transaction_lost`)."""
        try:
            super().execute_once()
        except TransactionLostError:
            raise
        except Exception as e:
            cause = broken_producer_error(e)
            if cause is None and isinstance(e, SystemError):  # confluent-kafka's flush after a fatal error
                cause = KafkaException(KafkaError(KafkaError._FATAL, f"the producer failed: {e}", fatal=True))
            if cause is None:
                raise
            self.fence.abort(cause)  # raises TransactionLostError, or TaskFencedError
            raise

    def _dispatch(self, records: list[SourceRecord]) -> None:
        """Send the batch in the open transaction (begun if none is), ending it where the task or the
        boundary says."""
        segments = self.requests.split(records) if self.requests is not None else [(records, None)]
        for segment, end in segments:
            self._begin()
            self._send(segment)
            if self._retry is not None:  # a topic could not be created yet: the rest goes next time
                return
            if end == COMMIT:
                self.commit_transaction()
            elif end == ABORT:
                self.abort_transaction()
        if self.boundary.kind == "poll":
            self.commit_transaction()

    def _begin(self) -> None:
        if self._open_since is None:
            self.fence.begin()
            self._open_since = time.monotonic()

    def _maybe_commit(self) -> None:
        """``interval``: commit at each boundary of the task's :class:`Cadence`. (Counted from a transaction's first
        record instead, every transaction outlived the interval; at the default interval, ``offset.flush.interval.ms``,
        that is the producer's ``transaction.timeout.ms``, 60 s both, and the broker aborted some as timed out.)"""
        if self.boundary.kind == "interval" and self._cadence.due(time.monotonic()):
            self.commit_transaction()

    def on_pause_change(self, paused: bool) -> None:
        """A task being paused commits its open transaction (unless the connector ends them), as Kafka's does, so
        that none hangs open, and times out, while the task waits."""
        if paused and self.boundary.kind != "connector":
            try:
                self.commit_transaction()
            except TransactionLostError as e:
                self.transaction_lost(e)

    def commit_transaction(self) -> None:
        """Write the offsets of the transaction's records into it and commit; raises TaskFencedError if a
        newer instance started, and fails the task if a record could not be written."""
        if self._open_since is not None:
            self.timed_commit(self._commit_open_transaction)

    def _commit_open_transaction(self) -> bool:
        self._producer.flush(self.flush_timeout)  # delivery reports: a record that failed already fails the task
        self._check_send_error()
        # The transaction's records commit with it or not at all, so its offsets are those of every record sent
        # in it, acknowledged yet or not (as Kafka's ExactlyOnceWorkerSourceTask records an offset when its record
        # is dispatched). Offsets of the acknowledged ones only would let a transaction hold records whose offsets
        # it lacks when the flush above timed out (a broker outage) and the commit then completed: after a
        # restart from those offsets, the records were polled and committed again.
        self.submitted.acknowledge_all()
        offsets = self.submitted.committable()
        errors: list[BaseException] = []
        if offsets:
            for partition, offset in offsets:
                validate_format(partition)
                validate_format(offset)
            write_offsets(self.offset_stores, self.id.connector, offsets,
                          lambda err: errors.append(err) if err is not None else None, self.flush_timeout,
                          self._producer)
        self.fence.commit(self.fence.timeout)  # a commit that cannot end is a lost transaction, not a hang
        if offsets:
            self.offset_stores[-1].transaction_committed(self._producer)
        self._open_since = None
        self._last_commit = time.monotonic()
        if errors:
            raise errors[0]
        self._task_commit()
        return True

    def abort_transaction(self) -> None:
        """Drop the open transaction: its records are never read committed and their offsets are forgotten."""
        if self._open_since is None:
            return
        self.fence.abort()
        self._open_since = None
        self.submitted = SubmittedRecords()  # late delivery reports of the purged records go to the old one

    def commit_offsets(self, wait: bool) -> bool:
        self.commit_transaction()
        return True

    def transaction_lost(self, error: TransactionLostError) -> None:
        """The open transaction's records and offsets are gone, but no newer instance exists: start the task
        again from its committed offsets, with the fence's producer claimed again (Kafka Connect would fail
        the task here; the records of the lost transaction are polled again, and read committed once)."""
        log.warning("Task %s starts again from its committed offsets: %s", self.id, error)
        self._open_since = None
        self.submitted = SubmittedRecords()
        self._retry = None
        self._stop_task()
        while not self.fence.wait_claimed(1.0):  # raises TaskFencedError if a newer instance exists after all
            if self.stopping:
                return
        self.task = type(self.task)()
        self.initialize()
        self.task.start(self.task_config)
        self._started_task = self.task

    def commit_on_stop(self) -> None:
        """Commit the open transaction when stopping normally; abort it after a failure."""
        if self._failed or self.submitted.error is not None:
            self.abort_transaction()
        else:
            self.commit_transaction()

    def close(self) -> None:
        """The producer is the fence's: the fence closes it; this runner lets go of it (see the base class)."""
        self._producer = None
