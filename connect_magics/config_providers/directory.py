"""``DirectoryConfigProvider``: ``${directory:/run/secrets:db-password}`` is the content of the file
``db-password`` in that directory (as Kubernetes mounts secrets)."""

from __future__ import annotations

import os

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigData
from connect_magics.config_providers.paths import PathConfigProvider


class DirectoryConfigProvider(PathConfigProvider):
    """Each regular file of a directory is a key, its content the value (Kafka's ``DirectoryConfigProvider``)."""

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData()
        directory = self.allowed.check(path, "path")
        if not os.path.isdir(directory):
            raise ConfigException("path", path, "not a directory")
        names = keys if keys is not None else set(os.listdir(directory))
        data = {}
        for name in names:
            file = os.path.join(directory, name)
            if os.path.dirname(os.path.normpath(file)) == directory and os.path.isfile(file):
                with open(file, encoding="utf-8") as f:
                    data[name] = f.read()
        return ConfigData(data)
