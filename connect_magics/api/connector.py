"""What connector authors implement: connectors, tasks and the contexts the runtime hands them.

Modelled on Kafka Connect's public API. A minimal source connector::

    class Counter(SourceConnector):
        def version(self): return "1.0"
        def start(self, props): self.props = props
        def task_class(self): return CounterTask
        def task_configs(self, max_tasks): return [dict(self.props)]
        def stop(self): pass
        def config_def(self): return ConfigDef()
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigValue
from connect_magics.api.records import SinkRecord, SinkRecords, SourceRecord, SourceRecords, TopicPartition


class ConnectorContext:
    """What a connector can ask of the runtime."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again and restart the tasks if they changed."""
        raise NotImplementedError

    def raise_error(self, error: BaseException) -> None:
        """Fail the connector with this error."""
        raise NotImplementedError


class OffsetStorageReader:
    """Reads the committed offsets of a source connector's partitions."""

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offsets([partition]).get(_freeze(partition))

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        """Offsets keyed by the frozen partition (see :func:`partition_key`)."""
        raise NotImplementedError


def _freeze(partition: dict[str, Any]) -> Any:
    return tuple(sorted(partition.items()))


partition_key = _freeze


class SourceConnectorContext(ConnectorContext):
    def offset_storage_reader(self) -> OffsetStorageReader:
        raise NotImplementedError


class Connector(ABC):
    """Base class of every connector."""

    context: ConnectorContext | None = None

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def task_class(self) -> type[Task]: ...

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]: ...

    @abstractmethod
    def stop(self) -> None: ...

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        """Validate the connector's own settings; the default checks them against :meth:`config_def`."""
        return self.config_def().validate(connector_configs)


class ExactlyOnceSupport(enum.Enum):
    """What :meth:`SourceConnector.exactly_once_support` answers (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    """What :meth:`SourceConnector.can_define_transaction_boundaries` answers (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class SourceConnector(Connector):
    def exactly_once_support(self, connector_config: dict[str, str]) -> ExactlyOnceSupport | None:
        """KIP-618: whether the connector can give exactly-once delivery with this config (checked when it
        sets ``exactly.once.support=required``). None, the default, means "not said"."""
        return None

    def can_define_transaction_boundaries(self, connector_config: dict[str, str]) -> ConnectorTransactionBoundaries:
        """KIP-618: whether its tasks define transactions (``transaction.boundary=connector``) through
        :meth:`SourceTaskContext.transaction_context`."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[Any, dict[str, Any] | None]) -> bool:
        """KIP-875 hook: called before offsets are altered or reset.

        ``offsets`` maps each frozen source partition (see :func:`partition_key`) to its new
        offset, ``None`` for a reset. Return True if the connector manages its offsets
        entirely through the framework (so the change is complete), False otherwise; raise
        ``NotImplementedError`` to refuse any external modification.
        """
        return False


class SinkConnector(Connector):
    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[TopicPartition, int | None]) -> bool:
        """KIP-875 hook for sink connectors; see :meth:`SourceConnector.alter_offsets`."""
        return False


class TaskContext:
    def __init__(self, config: dict[str, str]) -> None:
        self._config = config

    def configs(self) -> dict[str, str]:
        return dict(self._config)


class TransactionContext(ABC):
    """How a task of a connector that defines its own transaction boundaries (KIP-618,
    ``transaction.boundary=connector``) ends transactions. A task calls it from ``poll()``::

        def poll(self):
            records = self.read_batch()
            self.context.transaction_context().commit_transaction(records[-1])
            return records
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit the transaction after ``record`` was sent (None: after the current batch)."""

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort the transaction after ``record`` was sent, ``record`` included (None: after the current
        batch): its records are never read committed, and its offsets never committed."""


class SourceTaskContext(TaskContext):
    def __init__(self, config: dict[str, str], reader: OffsetStorageReader,
                 transactions: TransactionContext | None = None) -> None:
        super().__init__(config)
        self._reader = reader
        self._transactions = transactions

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        """The task's transactions when it defines their boundaries (exactly-once sources with
        ``transaction.boundary=connector``), else None."""
        return self._transactions


class ErrantRecordReporter(ABC):
    """Reports records a sink task could not write (Kafka's KIP-610 ``ErrantRecordReporter``).

    A reported record goes to the connector's dead letter queue and error log; it is written before the
    task's offsets are committed. With ``errors.tolerance=none`` reporting fails the task.

    Example::

        def put(self, records):
            reporter = self.context.errant_record_reporter()
            for record in records:
                try:
                    self.write(record)
                except ValueError as e:
                    if reporter is None:
                        raise
                    reporter.report(record, e)
    """

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> None: ...


class SinkTaskContext(TaskContext):
    """A sink task's view of its consumer: assignment, seeks, pause and resume."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records ``put`` cannot write, or None when the connector configures neither a
        dead letter queue nor ``errors.log.enable`` (as in Kafka Connect)."""
        return None

    def assignment(self) -> set[TopicPartition]:
        raise NotImplementedError

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        """Rewind or skip: consume these partitions from these offsets next."""
        raise NotImplementedError

    def pause(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def resume(self, *partitions: TopicPartition) -> None:
        raise NotImplementedError

    def request_commit(self) -> None:
        raise NotImplementedError

    def timeout(self, timeout_ms: int) -> None:
        """How long to wait before the next poll, and before redelivering a batch that :meth:`SinkTask.put`
        refused with a :class:`~connect_magics.api.errors.RetriableException` (Kafka's ``timeout``)."""
        raise NotImplementedError


class Task(ABC):
    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...


class SourceTask(Task):
    """Reads from an external system; :meth:`poll` returns records (a list, or a
    :class:`~connect_magics.api.records.SourceRecords` batch of alike records kept as columns) or None when idle."""

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | SourceRecords | None: ...

    def commit(self) -> None:
        """Called after offsets were committed."""

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        """Called once the broker acknowledged ``record`` (``metadata`` is None if it was filtered)."""


class SinkTask(Task):
    """Writes to an external system; the runtime commits what :meth:`pre_commit` returns."""

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: SinkRecords) -> None:
        """Write (or buffer) a batch: a sequence of :class:`SinkRecord`, built on first access.

        A task that writes whole columns can skip the records altogether::

            def put(self, records):
                self.file.writelines(records.values())
        """

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything given to :meth:`put` durable."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Flush and return the offsets (next offset to read) that are safe to commit."""
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: list[TopicPartition]) -> None:
        """Partitions newly assigned to this task."""

    def close(self, partitions: list[TopicPartition]) -> None:
        """Partitions taken away from this task."""
