"""Where a sink's rows and the Kafka offsets they cover are committed together, per table format.

Both logs answer :meth:`durable_offsets` (the next offset to write of each topic partition, read from
the table itself) and :meth:`commit` (rows of some topic partitions, with the offset ranges they cover,
made durable at once per partition). Neither needs a SparkSession: they run wherever the task runs.

- :class:`ParquetLog`: one Parquet file per partition and commit, named
  ``<topic>+<partition>+<first offset>+<last offset>.parquet`` (offsets zero-padded to 20 digits), there
  whole or not at all (:meth:`.TableStore.write_parquet`: a local file is renamed into place, an object
  is one upload); its name says which offsets it holds.
- :class:`DeltaLog`: one Delta commit per call, carrying an application transaction per partition
  (app id ``connect_magics:<topic>:<partition>``, version = the next offset), as Spark's idempotent
  Delta writes (``txnAppId``/``txnVersion``) do. Two writers never both commit a version: a local commit
  file is created only if absent, and on S3 delta-rs writes it with a conditional put (``If-None-Match``),
  which S3 has honoured since 2024; the loser reads the winner's commit and tries again.

Example::

    >>> data_file_name(TopicPartition("orders", 2), 0, 99)
    'orders+2+00000000000000000000+00000000000000000099.parquet'
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping

import pyarrow as pa

from connect_magics.api.errors import ConnectException
from connect_magics.api.records import TopicPartition
from connect_magics.connectors.spark_table.store import TableStore

__all__ = ["DeltaLog", "ParquetLog", "TableLog", "app_id", "data_file_name", "parse_data_file_name"]

log = logging.getLogger(__name__)

Batch = Mapping[TopicPartition, tuple[pa.Table, int, int]]
"""Rows to commit: for each topic partition, its rows and the first and last offsets they cover."""

_DATA_FILE = re.compile(r"(?P<topic>[A-Za-z0-9._-]+)\+(?P<partition>[0-9]+)\+(?P<first>[0-9]{20})"
                        r"\+(?P<last>[0-9]{20})\.parquet")


def data_file_name(tp: TopicPartition, first: int, last: int) -> str:
    """The name of the Parquet file holding offsets ``first..last`` (inclusive) of ``tp``."""
    return f"{tp.topic}+{tp.partition}+{first:020d}+{last:020d}.parquet"


def parse_data_file_name(name: str) -> tuple[TopicPartition, int, int] | None:
    """``(topic partition, first, last)`` of a data file name, None for any other name.

    >>> parse_data_file_name("orders+2+00000000000000000000+00000000000000000099.parquet")
    (TopicPartition(topic='orders', partition=2), 0, 99)
    """
    match = _DATA_FILE.fullmatch(name)
    if match is None:
        return None
    return TopicPartition(match["topic"], int(match["partition"])), int(match["first"]), int(match["last"])


def app_id(tp: TopicPartition) -> str:
    """The Delta application id of a topic partition's writes.

    >>> app_id(TopicPartition("orders", 2))
    'connect_magics:orders:2'
    """
    return f"connect_magics:{tp.topic}:{tp.partition}"


class TableLog:
    """What a sink task needs of its table: what is durable, and a way to add rows with their offsets."""

    def durable_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offset to write of each of ``partitions`` the table holds records of."""
        raise NotImplementedError

    def commit(self, batch: Batch) -> None:
        """Make the rows and the offsets they cover durable together (each partition atomically)."""
        raise NotImplementedError


class ParquetLog(TableLog):
    """A directory of Parquet files whose names carry the offsets they hold."""

    def __init__(self, store: TableStore) -> None:
        self.store = store

    def durable_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Read from the file names; also removes temporary files a crashed writer left for ``partitions``."""
        wanted = set(partitions)
        found: dict[TopicPartition, int] = {}
        for name in self.store.names():
            hidden = name.startswith(".") and name.endswith(".tmp")
            parsed = parse_data_file_name(name[1:].split(".parquet.", 1)[0] + ".parquet" if hidden else name)
            if parsed is None or parsed[0] not in wanted:
                continue
            tp, _, last = parsed
            if hidden:
                log.info("Removing %s, a file a writer of %s left unfinished", name, tp)
                self.store.remove(name)
            else:
                found[tp] = max(found.get(tp, 0), last + 1)
        return found

    def commit(self, batch: Batch) -> None:
        for tp, (table, first, last) in batch.items():
            self.store.write_parquet(data_file_name(tp, first, last), table)


class DeltaLog(TableLog):
    """A Delta Lake table written with delta-rs, one application transaction per topic partition."""

    COMMIT_ATTEMPTS = 3
    """How often a commit is tried when a concurrent writer (another task) committed first."""

    def __init__(self, store: TableStore) -> None:
        self.store = store
        self._table = None

    def _refreshed(self):  # -> deltalake.DeltaTable | None
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        if self._table is None:
            try:
                self._table = DeltaTable(self.store.uri, storage_options=dict(self.store.options))
            except TableNotFoundError:
                return None
        else:
            self._table.update_incremental()
        return self._table

    def durable_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        table = self._refreshed()
        if table is None:
            return {}
        found = {}
        for tp in partitions:
            version = table.transaction_version(app_id(tp))
            if version is not None:
                found[tp] = version
        return found

    def commit(self, batch: Batch) -> None:
        from deltalake import CommitProperties, Transaction, write_deltalake
        from deltalake.exceptions import CommitFailedError

        rows = pa.concat_tables([table for table, _, _ in batch.values()], promote_options="default")
        transactions = [Transaction(app_id(tp), last + 1) for tp, (_, _, last) in batch.items()]
        for attempt in range(1, self.COMMIT_ATTEMPTS + 1):
            # A writer that took over one of these partitions (a task that replaced this one) has
            # committed further: writing would duplicate its rows.
            written = self.durable_offsets(batch)
            ahead = [tp for tp, (_, first, _) in batch.items() if written.get(tp, 0) > first]
            if ahead:
                raise ConnectException(
                    f"Another writer already committed offsets of {', '.join(map(str, ahead))} to the Delta table "
                    f"{self.store.location}; this task stops so that its records are not written twice")
            try:
                write_deltalake(self.store.uri, rows, mode="append", schema_mode="merge",
                                storage_options=dict(self.store.options),
                                commit_properties=CommitProperties(app_transactions=transactions))
                return
            except CommitFailedError:
                if attempt == self.COMMIT_ATTEMPTS:
                    raise
                log.info("Delta commit to %s lost a race with another writer; trying again", self.store.location)
