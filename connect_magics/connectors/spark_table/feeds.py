"""The data files of a table in the order a source reads them, and the table as a pyarrow dataset.

- :class:`ParquetFeed`: every Parquet file under the directory (names starting with ``_`` or ``.``
  are skipped at any depth, as Spark skips them), ordered by modification time, then path.
- :class:`DeltaFeed`: the files each Delta commit added (``_delta_log/<version>.json``), ordered by
  version, then path. Appends only: removed files are not taken back, and partitioned tables and
  deletion vectors are refused.

Files are ordered by ``(order, name)``: ``order`` is the modification time in nanoseconds for Parquet,
the commit version for Delta. Files are assumed immutable once they appear. On an object store, whose
modification times are whole seconds, Parquet files are listed only once their second is over (see
:meth:`.TableStore.data_files`).

Example::

    >>> DataFile(5, "a.parquet").key < DataFile(5, "b.parquet").key < DataFile(6, "a.parquet").key
    True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.dataset as ds
import pyarrow.parquet as pq

from connect_magics.api.errors import ConnectException
from connect_magics.connectors.spark_table.store import TableStore

__all__ = ["DataFile", "DeltaFeed", "Feed", "ParquetFeed"]

_LOG_ENTRY = re.compile(r"[0-9]{20}\.json")


@dataclass(frozen=True)
class DataFile:
    """A data file: its position in the read order and its path relative to the table directory."""

    order: int
    name: str

    @property
    def key(self) -> tuple[int, str]:
        return self.order, self.name


class Feed:
    """The data files of a table, oldest first (see the module's docs)."""

    ORDER_FIELD = ""
    """The name of ``order`` in source offsets."""

    def __init__(self, store: TableStore) -> None:
        self.store = store

    @property
    def directory(self) -> str:
        """The table's location (a directory or an object store URI)."""
        return self.store.location

    def files(self) -> list[DataFile]:
        raise NotImplementedError

    def dataset(self) -> ds.Dataset | None:
        """The table's current rows, None while it does not exist."""
        raise NotImplementedError

    def parquet_file(self, file: DataFile) -> pq.ParquetFile:
        """The data file ``file``; FileNotFoundError if it is gone."""
        return self.store.parquet_file(file.name)


class ParquetFeed(Feed):
    ORDER_FIELD = "modified"

    def files(self) -> list[DataFile]:
        found = [DataFile(f.modified_ns, f.name) for f in self.store.data_files() if f.name.endswith(".parquet")]
        return sorted(found, key=lambda f: f.key)

    def dataset(self) -> ds.Dataset | None:
        if not self.files():
            return None
        return self.store.dataset()


class DeltaFeed(Feed):
    ORDER_FIELD = "version"

    def __init__(self, store: TableStore) -> None:
        super().__init__(store)
        self._files: list[DataFile] = []
        self._next_version = 0

    def files(self) -> list[DataFile]:
        """The files added by every commit so far; reads only the commits that are new since the last call."""
        versions = sorted(int(n[:20]) for n in self.store.names("_delta_log") if _LOG_ENTRY.fullmatch(n))
        if versions and self._next_version == 0 and versions[0] > 0:
            raise ConnectException(f"The Delta log of {self.directory} starts at version {versions[0]}: older "
                                   "commits were cleaned up, so their files cannot be listed; use "
                                   "mode=incrementing")
        for version in versions:
            if version >= self._next_version:
                self._files.extend(self._added(version))
                self._next_version = version + 1
        return list(self._files)

    def _added(self, version: int) -> list[DataFile]:
        added = []
        for line in self.store.read_text(f"_delta_log/{version:020d}.json").splitlines():
            action: dict[str, Any] = json.loads(line) if line.strip() else {}
            if action.get("metaData", {}).get("partitionColumns"):
                raise ConnectException(f"The Delta table {self.directory} is partitioned; only unpartitioned "
                                       "tables can be read by files (use mode=incrementing)")
            add = action.get("add")
            if add is None or not add.get("dataChange", True):
                continue
            if add.get("deletionVector"):
                raise ConnectException(f"Version {version} of the Delta table {self.directory} uses deletion "
                                       "vectors, which mode=files cannot read (use mode=incrementing)")
            added.append(DataFile(version, _relative(unquote(add["path"]))))
        return sorted(added, key=lambda f: f.key)

    def parquet_file(self, file: DataFile) -> pq.ParquetFile:
        if file.name.startswith("/"):  # an absolute path in a local table's log
            return pq.ParquetFile(file.name)
        if "://" in file.name:
            raise ConnectException(f"The Delta table {self.directory} refers to the data file {file.name} outside "
                                   "it (a shallow clone?), which mode=files cannot read (use mode=incrementing)")
        return super().parquet_file(file)

    def dataset(self) -> ds.Dataset | None:
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            return DeltaTable(self.store.uri, storage_options=dict(self.store.options)).to_pyarrow_dataset()
        except TableNotFoundError:
            return None


def _relative(path: str) -> str:
    """A Delta add action's path: relative to the table, or an absolute ``file:`` URI made a plain path."""
    parsed = urlparse(path)
    return parsed.path if parsed.scheme == "file" else path
