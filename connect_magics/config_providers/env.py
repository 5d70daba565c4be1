"""``EnvVarConfigProvider`` (KIP-887): ``${env:DB_PASSWORD}`` (or ``${env::DB_PASSWORD}``) is an environment
variable; ``allowlist.pattern`` (a regular expression) limits which ones may be read.

>>> import os; os.environ["CM_DOC_VAR"] = "value"
>>> EnvVarConfigProvider().get("", {"CM_DOC_VAR"}).data
{'CM_DOC_VAR': 'value'}
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigData, ConfigProvider

ALLOWLIST = "allowlist.pattern"


class EnvVarConfigProvider(ConfigProvider):
    """Environment variables of the worker process (Kafka's ``EnvVarConfigProvider``)."""

    def __init__(self) -> None:
        self.allowlist: re.Pattern[str] | None = None

    def configure(self, configs: Mapping[str, str]) -> None:
        pattern = configs.get(ALLOWLIST)
        if pattern:
            try:
                self.allowlist = re.compile(pattern)
            except re.error as e:
                raise ConfigException(ALLOWLIST, pattern, f"not a regular expression: {e}") from None

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if path:
            raise ConfigException("path", path, "the env provider takes no path: write ${env:NAME}")
        names = keys if keys is not None else set(os.environ)
        return ConfigData({k: os.environ[k] for k in names
                           if k in os.environ and (self.allowlist is None or self.allowlist.fullmatch(k))})
