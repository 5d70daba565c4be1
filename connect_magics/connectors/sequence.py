"""A deterministic data generator: each task counts ``start, start+1, ...`` into a topic.

Task ``i`` writes records with source partition ``{"task": i}``, offset ``{"seq": n}`` and the schemaless
value ``{"task": i, "seq": n, "payload": "x" * value.size}``; over a task's lifetime (restarts included)
the sequence numbers it produces are exactly ``range(start, start + records)``.

Example::

    >>> c = SequenceSourceConnector()
    >>> c.start({"topic": "numbers", "records": "10"})
    >>> [cfg["task.id"] for cfg in c.task_configs(3)]
    ['0', '1', '2']
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigException, Importance, Type
from connect_magics.api.connector import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceTask,
    Task,
)
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SourceRecord
from connect_magics.connectors.file import (
    _at_least,
    _is_long,
    _non_empty,
    _one_of,
    _partition_dict,
    _plugin_version,
)

__all__ = ["SequenceSourceConnector", "SequenceSourceTask"]

TOPIC_CONFIG = "topic"
RECORDS_CONFIG = "records"
RATE_CONFIG = "rate"
BATCH_SIZE_CONFIG = "batch.size"
KEY_MODE_CONFIG = "key.mode"
VALUE_SIZE_CONFIG = "value.size"
START_CONFIG = "start"
TRANSACTION_RECORDS_CONFIG = "transaction.records"
TASK_ID_CONFIG = "task.id"
TASK_FIELD = "task"
SEQ_FIELD = "seq"
KEY_MODES = ("none", "sequence", "task")


def _config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(TOPIC_CONFIG, Type.STRING, validator=_non_empty, importance=Importance.HIGH,
                documentation="The topic to write the generated records to")
        .define(RECORDS_CONFIG, Type.LONG, -1, _at_least(-1), Importance.HIGH,
                "How many records each task produces in total (over restarts); -1 for no end")
        .define(RATE_CONFIG, Type.DOUBLE, 0.0, _at_least(0), Importance.MEDIUM,
                "Records per second per task; 0 for as fast as possible")
        .define(BATCH_SIZE_CONFIG, Type.INT, 1000, _at_least(1), Importance.LOW,
                "The maximum number of records a task returns from one poll")
        .define(KEY_MODE_CONFIG, Type.STRING, "sequence", _one_of(*KEY_MODES), Importance.LOW,
                "The record key: 'none' (null), 'sequence' (the sequence number as a string) or "
                "'task' (the task number as a string)")
        .define(VALUE_SIZE_CONFIG, Type.INT, 0, _at_least(0), Importance.LOW,
                "How many characters of padding the value's 'payload' field holds")
        .define(START_CONFIG, Type.LONG, 0, None, Importance.LOW,
                "The first sequence number of every task")
        .define(TRANSACTION_RECORDS_CONFIG, Type.INT, 0, _at_least(0), Importance.LOW,
                "With exactly-once support and transaction.boundary=connector: commit a transaction after "
                "every this many sequence numbers and after the last one; 0 for after every batch")
    )


def _task_id(props: Mapping[str, Any]) -> int:
    """The ``task.id`` the connector gave this task (0 if absent)."""
    value = props.get(TASK_ID_CONFIG, "0")
    try:
        task_id = int(str(value).strip())
    except ValueError:
        raise ConfigException(TASK_ID_CONFIG, value, "Not a number of type INT") from None
    if task_id < 0:
        raise ConfigException(TASK_ID_CONFIG, value, "Value must be at least 0")
    return task_id


class SequenceSourceConnector(SourceConnector):
    """Generates ``records`` numbered records per task, at ``rate`` records/s, for tests and demos.

    Configs: ``topic``, ``records`` (-1), ``rate`` (0), ``batch.size`` (1000), ``key.mode`` (sequence),
    ``value.size`` (0), ``start`` (0); ``tasks.max`` tasks, each given its ``task.id``.

    Example::

        >>> try:
        ...     SequenceSourceConnector().start({"topic": "t", "key.mode": "random"})
        ... except ConfigException as e:
        ...     print(e.name, "|", e.reason)
        key.mode | String must be one of: none, sequence, task
    """

    ALIASES: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return _config_def()

    def start(self, props: dict[str, str]) -> None:
        _config_def().parse(props)
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self._props, TASK_ID_CONFIG: str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do: the connector does no background work."""

    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport:
        """KIP-618: a task resumes right after its committed sequence number, so it supports exactly once."""
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        """KIP-618: tasks end transactions every ``transaction.records`` sequence numbers (or batch)."""
        return ConnectorTransactionBoundaries.SUPPORTED

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[Any, dict[str, Any] | None]) -> bool:
        """KIP-875: tombstones for anything, else ``{"task": i}`` → ``{"seq": n}`` with integers.

        >>> SequenceSourceConnector().alter_offsets({"topic": "t"}, {(("task", 0),): {"seq": 41}})
        True
        """
        for frozen, offset in offsets.items():
            if offset is None:
                continue
            if SEQ_FIELD not in offset:
                raise ConnectException(f"Offset objects should either be null or contain the key '{SEQ_FIELD}'")
            if not _is_long(offset[SEQ_FIELD]):
                raise ConnectException(
                    f"The value for the '{SEQ_FIELD}' key in the offset is expected to be a Long value")
            partition = _partition_dict(frozen)
            if partition is None:
                raise ConnectException("Partition objects cannot be null")
            if TASK_FIELD not in partition:
                raise ConnectException(f"Partition objects should contain the key '{TASK_FIELD}'")
            task = partition[TASK_FIELD]
            if not _is_long(task) or task < 0:
                raise ConnectException(
                    f"The value for the '{TASK_FIELD}' key in the partition is expected to be a "
                    "non-negative Integer value")
        return True


class SequenceSourceTask(SourceTask):
    """Produces the records of one task of :class:`SequenceSourceConnector`; resumes after the committed seq.

    :meth:`poll` never blocks for longer than ``MAX_WAIT_S``: when the rate allows no record yet, or the
    sequence is finished, it waits (without spinning) and returns None.

    Example::

        task = SequenceSourceTask()
        task.initialize(SourceTaskContext(config, offset_reader))
        task.start({"topic": "t", "records": "3", "task.id": "1"})
        task.poll()   # three records: values {"task": 1, "seq": 0, "payload": ""}, ... seq 1, seq 2
    """

    MAX_WAIT_S: float = 1.0
    """The longest :meth:`poll` waits before returning None (as Kafka's FileStreamSourceTask): with a rate, it
    waits until the next record is due, and a finished sequence's task wakes once a second."""
    MAX_BACKLOG_S: float = 1.0
    """With a rate, how far behind schedule a task may catch up in bursts (the rest is dropped)."""

    def __init__(self) -> None:
        self.task_id = 0
        self.topic = ""
        self.key_mode = "sequence"
        self.rate = 0.0
        self.batch_size = 1000
        self.first = 0
        self.end: int | None = None
        self.next_seq = 0
        self.transaction_records = 0
        self._payload = ""
        self._due: float | None = None  # monotonic time the next record is due at (with a rate)
        self._stopping = threading.Event()

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        parsed = _config_def().parse(props)
        self.task_id = _task_id(props)
        self.topic = parsed[TOPIC_CONFIG]
        self.key_mode = parsed[KEY_MODE_CONFIG]
        self.rate = parsed[RATE_CONFIG]
        self.batch_size = parsed[BATCH_SIZE_CONFIG]
        self.first = parsed[START_CONFIG]
        records = parsed[RECORDS_CONFIG]
        self.end = None if records < 0 else self.first + records
        self._payload = "x" * parsed[VALUE_SIZE_CONFIG]
        self.transaction_records = parsed[TRANSACTION_RECORDS_CONFIG]
        self._due = None
        self._stopping.clear()
        self.next_seq = max(self.first, self._committed_next())

    def _committed_next(self) -> int:
        offset = self.context.offset_storage_reader().offset({TASK_FIELD: self.task_id})
        seq = None if offset is None else offset.get(SEQ_FIELD)
        if seq is None:
            return self.first
        if not _is_long(seq):
            raise ConnectException(f"Offset '{SEQ_FIELD}' is the incorrect type: {seq!r}")
        return seq + 1

    def _allowed(self) -> int:
        """How many records the rate allows now, waiting up to ``MAX_WAIT_S`` for the next one."""
        if self.rate <= 0:
            return self.batch_size
        now = time.monotonic()
        if self._due is None:
            self._due = now
        elif self._due > now:
            self._stopping.wait(min(self._due - now, self.MAX_WAIT_S))
            now = time.monotonic()
            if self._due > now or self._stopping.is_set():
                return 0
        self._due = max(self._due, now - self.MAX_BACKLOG_S)
        return min(self.batch_size, 1 + int((now - self._due) * self.rate))

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        remaining = self.batch_size if self.end is None else self.end - self.next_seq
        if remaining <= 0:
            self._stopping.wait(self.MAX_WAIT_S)
            return None
        count = min(remaining, self._allowed())
        if count <= 0:
            return None
        if self.rate > 0 and self._due is not None:
            self._due += count / self.rate
        task = self.task_id
        records = []
        for seq in range(self.next_seq, self.next_seq + count):
            key = None if self.key_mode == "none" else str(task if self.key_mode == "task" else seq)
            records.append(SourceRecord({TASK_FIELD: task}, {SEQ_FIELD: seq}, self.topic, key=key,
                                        value={TASK_FIELD: task, SEQ_FIELD: seq, "payload": self._payload}))
        self.next_seq += count
        transactions = self.context.transaction_context()
        if transactions is not None:  # KIP-618, transaction.boundary=connector
            every = self.transaction_records
            if every == 0:
                transactions.commit_transaction()
            for record in records:  # every `every` numbers, and after the last one
                seq = record.source_offset[SEQ_FIELD]
                if every and (seq % every == every - 1 or seq + 1 == self.end):
                    transactions.commit_transaction(record)
        return records

    def stop(self) -> None:
        self._stopping.set()
