"""Fencing replaced task instances: one mechanism for Spark retries, speculative copies and other processes.

A task instance that was replaced (a Spark task retried after its Python worker was lost, a speculative
copy, a round that outlived its successor, a runtime that lost its group) must never commit offsets
after its successor started. Every fenced instance commits through a transactional producer whose id
names the task, ``{group.id}-{connector}-{task}`` (the transactional id Kafka Connect gives source tasks
under KIP-618). :meth:`TaskFence.claim` initialises it, which makes the broker fence every earlier
producer with that id: their next transaction fails with ``PRODUCER_FENCED`` and they stop without
committing. Source offsets are written to the offsets topic inside the transaction; sink offsets are
sent to the consumer group inside it (``send_offsets_to_transaction``, which also checks the consumer's
group generation).

>>> fence = TaskFence("nb", TaskId("lines", 0), {"bootstrap.servers": "127.0.0.1:9092"})  # doctest: +SKIP
>>> fence.claim()                                                       # doctest: +SKIP
>>> with fence.transaction() as producer:                               # doctest: +SKIP
...     producer.produce("nb-offsets", b"value", b"key")
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException, Producer

from connect_magics.api.errors import ConnectException
from connect_magics.runtime.config.worker_config import CLIENT_KEYS_PREFIXES
from connect_magics.storage.kafka_log import client_logger

if TYPE_CHECKING:
    from connect_magics.runtime.worker.task_runner import TaskId

log = logging.getLogger(__name__)

_FENCED = {KafkaError._FENCED, getattr(KafkaError, "PRODUCER_FENCED", 90), KafkaError.INVALID_PRODUCER_EPOCH}


class TaskFencedError(ConnectException):
    """A newer instance of this task started: this one may no longer commit, and stops."""


def transactional_id(group_id: str, task_id: TaskId) -> str:
    """``{group.id}-{connector}-{task}``, as Kafka Connect names a source task's transactional id.

    >>> from connect_magics.runtime.worker.task_runner import TaskId
    >>> transactional_id("nb", TaskId("lines", 2))
    'nb-lines-2'
    """
    return f"{group_id}-{task_id.connector}-{task_id.task}"


def is_fenced(error: BaseException) -> bool:
    """True if ``error`` says a newer producer with the same transactional id started."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0].code() in _FENCED
    return False


def _fatal(error: BaseException) -> bool:
    return isinstance(error, KafkaException) and bool(error.args) and isinstance(error.args[0], KafkaError) \
        and error.args[0].fatal()


class TaskFence:
    """One task instance's right to commit, held by a transactional producer (see the module's docs)."""

    def __init__(self, group_id: str, task_id: TaskId, client_config: Mapping[str, Any],
                 timeout: float = 30.0) -> None:
        self.task_id = task_id
        self.transactional_id = transactional_id(group_id, task_id)
        self.timeout = timeout
        self._config = {k: v for k, v in client_config.items() if k.startswith(CLIENT_KEYS_PREFIXES)}
        self._producer: Producer | None = None

    def claim(self) -> None:
        """Become the task's current instance: every earlier instance's commits are refused from now on."""
        # murmur2, as every other writer of the offsets topic (and Java's producers): a key's records must
        # all land in one partition, or a reader could take an older offset as the newest.
        producer = Producer({**self._config, "transactional.id": self.transactional_id,
                             "enable.idempotence": True, "partitioner": "murmur2_random",
                             "logger": client_logger("producer")})
        producer.init_transactions(self.timeout)
        self._producer = producer

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Producer]:
        """A transaction on the fence's producer, committed on exit; raises :class:`TaskFencedError` if a
        newer instance claimed the task, and aborts (re-raising) on any other failure."""
        if self._producer is None:
            self.claim()
        producer = self._producer
        try:
            producer.begin_transaction()
            yield producer
            producer.flush(self.timeout)
            producer.commit_transaction(self.timeout)
        except BaseException as e:
            # A fenced producer's error can surface as the commit's, the flush's or a callback's; its
            # abort then fails with the same fatal error.
            if is_fenced(e) or _fatal(e) or not self._abort():
                self._producer = None
                raise TaskFencedError(f"Task {self.task_id} was fenced: a newer instance of it started "
                                      f"(transactional id {self.transactional_id})") from e
            raise

    def commit_consumer_offsets(self, offsets: list, group_metadata: Any) -> None:
        """Commit a sink task's consumer offsets inside a transaction of this fence."""
        with self.transaction() as producer:
            producer.send_offsets_to_transaction(offsets, group_metadata, self.timeout)

    def _abort(self) -> bool:
        """Abort the open transaction; False if the producer was fenced (or failed fatally)."""
        try:
            self._producer.abort_transaction(self.timeout)
        except KafkaException as e:
            if is_fenced(e) or _fatal(e):
                return False
            log.warning("Task %s could not abort its transaction: %s", self.task_id, e)
        return True

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(self.timeout)
            self._producer = None
