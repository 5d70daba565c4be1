"""``FileConfigProvider``: ``${file:/path/to/file.properties:key}`` reads ``key`` from a properties file.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "db.properties")
>>> _ = open(path, "w").write("password=s3cret\\n")
>>> FileConfigProvider().get(path, {"password"}).data
{'password': 's3cret'}
"""

from __future__ import annotations

from jproperties import Properties

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigData
from connect_magics.config_providers.paths import PathConfigProvider


class FileConfigProvider(PathConfigProvider):
    """Values from Java properties files (Kafka's ``FileConfigProvider``); ``allowed.paths`` limits the files."""

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData()
        path = self.allowed.check(path, "path")
        props = Properties()
        try:
            with open(path, "rb") as f:
                props.load(f, "utf-8")
        except OSError as e:
            raise ConfigException("path", path, f"cannot read the file: {e.strerror}") from None
        return ConfigData({k: v.data for k, v in props.items() if keys is None or k in keys})
