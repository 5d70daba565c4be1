"""The data files of a table in the order a source reads them, and the table as a pyarrow dataset.

- :class:`ParquetFeed`: every Parquet file under the directory (names starting with ``_`` or ``.``
  are skipped at any depth, as Spark skips them), ordered by modification time, then path.
- :class:`DeltaFeed`: the files each Delta commit added (``_delta_log/<version>.json``), ordered by
  version, then path. Appends only: removed files are not taken back, and partitioned tables and
  deletion vectors are refused.

Files are ordered by ``(order, name)``: ``order`` is the modification time in nanoseconds for Parquet,
the commit version for Delta. Files are assumed immutable once they appear.

Example::

    >>> DataFile(5, "a.parquet").key < DataFile(5, "b.parquet").key < DataFile(6, "a.parquet").key
    True
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.dataset as ds

from connect_magics.api.errors import ConnectException

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
    """The data files of a table directory, oldest first (see the module's docs)."""

    ORDER_FIELD = ""
    """The name of ``order`` in source offsets."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def files(self) -> list[DataFile]:
        raise NotImplementedError

    def dataset(self) -> ds.Dataset | None:
        """The table's current rows, None while it does not exist."""
        raise NotImplementedError

    def path(self, file: DataFile) -> str:
        return os.path.join(self.directory, file.name)


class ParquetFeed(Feed):
    ORDER_FIELD = "modified"

    def files(self) -> list[DataFile]:
        found = []
        for root, dirs, names in os.walk(self.directory):
            dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
            for name in names:
                if name.startswith(("_", ".")) or not name.endswith(".parquet"):
                    continue
                path = os.path.join(root, name)
                try:
                    modified = os.stat(path).st_mtime_ns
                except FileNotFoundError:
                    continue
                found.append(DataFile(modified, os.path.relpath(path, self.directory)))
        return sorted(found, key=lambda f: f.key)

    def dataset(self) -> ds.Dataset | None:
        if not self.files():
            return None
        return ds.dataset(self.directory, format="parquet")


class DeltaFeed(Feed):
    ORDER_FIELD = "version"

    def __init__(self, directory: str) -> None:
        super().__init__(directory)
        self._files: list[DataFile] = []
        self._next_version = 0

    def files(self) -> list[DataFile]:
        """The files added by every commit so far; reads only the commits that are new since the last call."""
        log_dir = os.path.join(self.directory, "_delta_log")
        try:
            versions = sorted(int(n[:20]) for n in os.listdir(log_dir) if _LOG_ENTRY.fullmatch(n))
        except FileNotFoundError:
            return []
        if versions and self._next_version == 0 and versions[0] > 0:
            raise ConnectException(f"The Delta log of {self.directory} starts at version {versions[0]}: older "
                                   "commits were cleaned up, so their files cannot be listed; use "
                                   "mode=incrementing")
        for version in versions:
            if version >= self._next_version:
                self._files.extend(self._added(log_dir, version))
                self._next_version = version + 1
        return list(self._files)

    def _added(self, log_dir: str, version: int) -> list[DataFile]:
        added = []
        with open(os.path.join(log_dir, f"{version:020d}.json"), encoding="utf-8") as entry:
            for line in entry:
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

    def path(self, file: DataFile) -> str:
        return file.name if os.path.isabs(file.name) else os.path.join(self.directory, file.name)

    def dataset(self) -> ds.Dataset | None:
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            return DeltaTable(self.directory).to_pyarrow_dataset()
        except TableNotFoundError:
            return None


def _relative(path: str) -> str:
    """A Delta add action's path: relative to the table, or an absolute ``file:`` URI made a plain path."""
    parsed = urlparse(path)
    return parsed.path if parsed.scheme == "file" else path
