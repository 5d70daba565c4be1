"""``DatabricksSecretsConfigProvider``: ``${databricks:SCOPE:KEY}`` is a secret of a Databricks secret scope,
read with ``dbutils.secrets.get`` on the cluster the notebook runs on (the worked example of a provider
plugin: docs/configuration.md). In worker.properties::

    config.providers=databricks
    config.providers.databricks.class=DatabricksSecretsConfigProvider
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigData, ConfigProvider


def _notebook_dbutils() -> Any:
    """The ``dbutils`` of a Databricks notebook: in the IPython namespace, else built from the SparkSession."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and "dbutils" in shell.user_ns:
            return shell.user_ns["dbutils"]
    except ImportError:
        pass
    try:
        from pyspark.dbutils import DBUtils  # only on Databricks
        from pyspark.sql import SparkSession

        return DBUtils(SparkSession.getActiveSession())
    except ImportError:
        raise ConfigException("config.providers", "databricks", "dbutils is only available on Databricks") from None


class DatabricksSecretsConfigProvider(ConfigProvider):
    """Secrets of Databricks secret scopes: the path is the scope, each key a secret's key."""

    def __init__(self, dbutils: Any = None) -> None:
        self._dbutils = dbutils

    def configure(self, configs: Mapping[str, str]) -> None:
        """No settings: the notebook's own credentials read the scope."""

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        if not path:
            raise ConfigException("path", path, "the scope is missing: write ${databricks:SCOPE:KEY}")
        dbutils = self._dbutils or _notebook_dbutils()
        names = keys if keys is not None else {s.key for s in dbutils.secrets.list(path)}
        data = {}
        for key in names:
            try:
                data[key] = dbutils.secrets.get(scope=path, key=key)
            except Exception:  # noqa: BLE001 - an unknown key is absent, as in Kafka's providers
                continue
        return ConfigData(data)
