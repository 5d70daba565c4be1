"""Where a table's files are: a local (or mounted) directory, or a prefix in an object store.

A :class:`TableStore` gives the table connectors what they need of either, through pyarrow's filesystems
(and delta-rs, which takes the same location and :attr:`TableStore.options`):

- a local or mounted directory (a Databricks Unity Catalog volume ``/Volumes/...``, a DBFS or NFS mount):
  files are written under a hidden temporary name, fsynced and renamed, so a file is there whole or not at all;
- ``s3://`` (``s3a://``), ``gs://``, ``abfss://``, ``abfs://``: an object is written with one upload, which
  the store makes visible whole or not at all (a multipart upload only once it completes), so no rename is
  needed, and there is none to rely on.

S3 credentials and endpoint come from the connector's settings (``aws.access.key.id``,
``aws.secret.access.key``, ``s3.region``, ``store.url``: values may be config provider references such as
``${file:/secrets/aws.properties:secret}``), or, when those are empty, from the environment as AWS's clients
find them (variables, profile, instance role). Google Cloud Storage and Azure use the environment's
credentials (``GOOGLE_APPLICATION_CREDENTIALS``; ``AZURE_STORAGE_ACCOUNT_NAME`` with a key or a token).

Example::

    >>> store = TableStore("/tmp/orders")
    >>> store.local, store.path("part.parquet")
    (True, '/tmp/orders/part.parquet')
"""

from __future__ import annotations

import os
import posixpath
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

__all__ = ["OBJECT_STORE_SCHEMES", "StoredFile", "TableStore", "is_object_store_uri", "s3_options"]

OBJECT_STORE_SCHEMES = ("s3", "s3a", "gs", "gcs", "abfs", "abfss")

SETTLE_S = 2.0
"""Object stores keep modification times to the second: a listing leaves out files modified less than this
long ago, so that every file of a second is seen together (see :meth:`TableStore.files`)."""


def is_object_store_uri(location: str) -> bool:
    """Whether ``location`` names an object store.

    >>> is_object_store_uri("s3://lake/orders"), is_object_store_uri("/Volumes/main/raw/orders")
    (True, False)
    """
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in OBJECT_STORE_SCHEMES


def s3_options(endpoint: str | None, access_key: str | None, secret_key: str | None,
               region: str | None) -> dict[str, str]:
    """delta-rs' (the ``object_store`` crate's) options for S3 from the connector's settings; empty ones
    are left to the environment.

    >>> s3_options("http://127.0.0.1:9000", "AK", "SK", "eu-west-1")["AWS_ALLOW_HTTP"]
    'true'
    """
    options = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key,
               "AWS_REGION": region}
    if endpoint and endpoint.startswith("http://"):
        options["AWS_ALLOW_HTTP"] = "true"
    return {k: v for k, v in options.items() if v}


@dataclass(frozen=True)
class StoredFile:
    """A file of the table: its path relative to the table's location and its modification time."""

    name: str
    modified_ns: int


@dataclass
class TableStore:
    """The files of the table at ``location`` (an absolute local path or an object store URI)."""

    location: str
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def local(self) -> bool:
        return not is_object_store_uri(self.location)

    @property
    def uri(self) -> str:
        """The location as delta-rs takes it (``s3a://`` is ``s3://`` to it)."""
        scheme, _, rest = self.location.partition("://")
        return f"s3://{rest}" if scheme.lower() == "s3a" else self.location

    @cached_property
    def _fs(self) -> tuple[pafs.FileSystem, str]:
        if self.local:
            return pafs.LocalFileSystem(), self.location
        scheme, _, rest = self.location.partition("://")
        if scheme.lower() in ("s3", "s3a"):
            o = self.options
            kwargs: dict[str, Any] = {"region": o.get("AWS_REGION"), "endpoint_override": o.get("AWS_ENDPOINT_URL")}
            if o.get("AWS_ACCESS_KEY_ID"):
                kwargs |= {"access_key": o["AWS_ACCESS_KEY_ID"], "secret_key": o.get("AWS_SECRET_ACCESS_KEY")}
            return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v}), rest.rstrip("/")
        fs, path = pafs.FileSystem.from_uri(self.location)
        return fs, path.rstrip("/")

    @property
    def filesystem(self) -> pafs.FileSystem:
        return self._fs[0]

    def path(self, name: str) -> str:
        """The path of ``name`` in :attr:`filesystem`."""
        return posixpath.join(self._fs[1], name)

    def _listing(self, root: str, recursive: bool) -> list[pafs.FileInfo]:
        selector = pafs.FileSelector(root, recursive=recursive, allow_not_found=True)
        return [info for info in self.filesystem.get_file_info(selector) if info.type == pafs.FileType.File]

    def names(self, under: str = "") -> list[str]:
        """The names of every file in the table's directory (or its subdirectory ``under``), hidden ones too."""
        return [posixpath.basename(info.path) for info in self._listing(self.path(under), recursive=False)]

    def data_files(self) -> list[StoredFile]:
        """The files under the table, recursively, but for files and directories whose name starts with
        ``_`` or ``.`` (the Delta log, writers' temporary files).

        On an object store, files modified less than :data:`SETTLE_S` ago are left for a later listing:
        times there are whole seconds, and a reader that went on from the last file of a second it saw
        would skip a file of that second listed later under a smaller name."""
        settled = None if self.local else time.time_ns() - int(SETTLE_S * 1e9)
        found = []
        for info in self._listing(self._fs[1], recursive=True):
            name = posixpath.relpath(info.path, self._fs[1])
            if any(part.startswith(("_", ".")) for part in name.split("/")):
                continue
            modified = info.mtime_ns or 0
            if settled is None or modified <= settled:
                found.append(StoredFile(name, modified))
        return found

    def read_text(self, name: str) -> str:
        with self.filesystem.open_input_stream(self.path(name)) as stream:
            return stream.read().decode("utf-8")

    def parquet_file(self, name: str) -> pq.ParquetFile:
        """The Parquet file ``name``; FileNotFoundError if it is gone."""
        return pq.ParquetFile(self.filesystem.open_input_file(self.path(name)))

    def dataset(self) -> ds.Dataset:
        """Every Parquet file of the table (hidden ones left out) as one dataset."""
        return ds.dataset(self._fs[1], filesystem=self.filesystem, format="parquet")

    def remove(self, name: str) -> None:
        try:
            self.filesystem.delete_file(self.path(name))
        except FileNotFoundError:
            pass

    def write_parquet(self, name: str, table: pa.Table) -> None:
        """Write ``table`` as the file ``name``, there whole or not at all (see the module's docs)."""
        if not self.local:
            with self.filesystem.open_output_stream(self.path(name)) as out:
                pq.write_table(table, out)
            return
        os.makedirs(self.location, exist_ok=True)
        temporary = os.path.join(self.location, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with open(temporary, "wb") as out:
                pq.write_table(table, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, os.path.join(self.location, name))
        except BaseException:
            self.remove(os.path.basename(temporary))
            raise
        fd = os.open(self.location, os.O_RDONLY)  # make the rename durable
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
