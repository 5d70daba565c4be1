"""Where objects go: an S3 bucket through s3fs (``store.url`` the endpoint of an S3-compatible store), or
any fsspec filesystem when ``store.url`` is an fsspec URL (``file:///dir``: objects under ``dir/<bucket>``).

Example::

    store = ObjectStore.from_config(parsed)
    store.put("topics/orders/partition=0/orders+0+0000000000.json", b'{"id":1}\\n')
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import Password
from connect_magics.api.errors import ConnectException
from connect_magics.connectors.s3 import config as c

__all__ = ["ObjectStore"]


class ObjectStore:
    """Writes whole objects (one PUT each: an object is there complete or not at all)."""

    def __init__(self, fs: Any, root: str) -> None:
        self.fs, self.root = fs, root.rstrip("/")
        protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
        self.local, self.s3 = "file" in protocols, "s3" in protocols

    @classmethod
    def from_config(cls, parsed: Mapping[str, Any]) -> ObjectStore:
        bucket, url = parsed[c.BUCKET], parsed[c.STORE_URL]
        if not url or url.startswith(("http://", "https://")):
            try:
                import s3fs
            except ImportError as e:
                raise ConnectException("The S3 sink needs s3fs: pip install 'connect-magics[s3]'") from e
            secret = parsed[c.SECRET_ACCESS_KEY]
            kwargs: dict[str, Any] = {"client_kwargs": {"region_name": parsed[c.REGION]}}
            if url:
                kwargs["endpoint_url"] = url
            if parsed[c.ACCESS_KEY_ID]:
                kwargs["key"] = parsed[c.ACCESS_KEY_ID]
                kwargs["secret"] = secret.value if isinstance(secret, Password) else secret
            return cls(s3fs.S3FileSystem(**kwargs), bucket)
        import fsspec

        fs, path = fsspec.core.url_to_fs(url, auto_mkdir=True) if url.startswith("file:") \
            else fsspec.core.url_to_fs(url)
        return cls(fs, f"{path.rstrip('/')}/{bucket}")

    def check_bucket(self) -> None:
        """Fail as Confluent's task does when the bucket does not exist (another store's is created)."""
        if not self.s3:
            self.fs.makedirs(self.root, exist_ok=True)
            return
        try:
            exists = self.fs.exists(self.root)
        except Exception as e:  # noqa: BLE001 - unreachable store, refused credentials
            raise ConnectException(f"Could not reach S3 bucket {self.root}: {e}") from e
        if not exists:
            raise ConnectException(f"Non-existent S3 bucket: {self.root}")

    def put(self, key: str, data: bytes) -> None:
        """Write (or overwrite) the object ``key``."""
        path = f"{self.root}/{key}"
        try:
            if self.local:  # a file is written then renamed, so that it too is complete or absent
                tmp = f"{path}.{uuid.uuid4().hex}.tmp"
                self.fs.pipe_file(tmp, data)
                self.fs.mv(tmp, path)
            else:
                self.fs.pipe_file(path, data)
        except Exception as e:  # noqa: BLE001 - a store error fails the task, naming the object
            raise ConnectException(f"Could not write object {path}: {e}") from e
