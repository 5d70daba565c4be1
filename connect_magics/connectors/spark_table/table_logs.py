"""Where a sink's rows and the Kafka offsets they cover are committed together, per table format.

Both logs answer :meth:`durable_offsets` (the next offset to write of each topic partition, read from
the table itself) and :meth:`commit` (rows of some topic partitions, with the offset ranges they cover,
made durable at once per partition). Neither needs a SparkSession: they run wherever the task runs.

- :class:`ParquetLog`: one Parquet file per partition and commit, named
  ``<topic>+<partition>+<first offset>+<last offset>.parquet`` (offsets zero-padded to 20 digits), written
  under a hidden temporary name, fsynced and renamed: a file is there whole or not at all, and its name
  says which offsets it holds.
- :class:`DeltaLog`: one Delta commit per call, carrying an application transaction per partition
  (app id ``connect_magics:<topic>:<partition>``, version = the next offset), as Spark's idempotent
  Delta writes (``txnAppId``/``txnVersion``) do.

Example::

    >>> data_file_name(TopicPartition("orders", 2), 0, 99)
    'orders+2+00000000000000000000+00000000000000000099.parquet'
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from connect_magics.api.errors import ConnectException
from connect_magics.api.records import TopicPartition

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

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except FileNotFoundError:
            return []

    def durable_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Read from the file names; also removes temporary files a crashed writer left for ``partitions``."""
        wanted = set(partitions)
        found: dict[TopicPartition, int] = {}
        for name in self._names():
            hidden = name.startswith(".") and name.endswith(".tmp")
            parsed = parse_data_file_name(name[1:].split(".parquet.", 1)[0] + ".parquet" if hidden else name)
            if parsed is None or parsed[0] not in wanted:
                continue
            tp, _, last = parsed
            if hidden:
                log.info("Removing %s, a file a writer of %s left unfinished", name, tp)
                try:
                    os.remove(os.path.join(self.directory, name))
                except FileNotFoundError:
                    pass
            else:
                found[tp] = max(found.get(tp, 0), last + 1)
        return found

    def commit(self, batch: Batch) -> None:
        os.makedirs(self.directory, exist_ok=True)
        for tp, (table, first, last) in batch.items():
            name = data_file_name(tp, first, last)
            temporary = os.path.join(self.directory, f".{name}.{uuid.uuid4().hex}.tmp")
            try:
                with open(temporary, "wb") as out:
                    pq.write_table(table, out)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, os.path.join(self.directory, name))
            except BaseException:
                try:
                    os.remove(temporary)
                except FileNotFoundError:
                    pass
                raise
        _fsync_directory(self.directory)


def _fsync_directory(directory: str) -> None:
    """Make renames in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DeltaLog(TableLog):
    """A Delta Lake table written with delta-rs, one application transaction per topic partition."""

    COMMIT_ATTEMPTS = 3
    """How often a commit is tried when a concurrent writer (another task) committed first."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._table = None

    def _refreshed(self):  # -> deltalake.DeltaTable | None
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        if self._table is None:
            try:
                self._table = DeltaTable(self.directory)
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
                    f"{self.directory}; this task stops so that its records are not written twice")
            try:
                write_deltalake(self.directory, rows, mode="append", schema_mode="merge",
                                commit_properties=CommitProperties(app_transactions=transactions))
                return
            except CommitFailedError:
                if attempt == self.COMMIT_ATTEMPTS:
                    raise
                log.info("Delta commit to %s lost a race with another writer; trying again", self.directory)
