"""Kafka's config providers (KIP-297, KIP-887, KIP-993), and one for Databricks secrets.

Each answers to Kafka's class name, so a worker.properties copied from Kafka Connect works unchanged:

>>> sorted(BUILTIN_PROVIDERS)[:2]
['DatabricksSecretsConfigProvider', 'DirectoryConfigProvider']
"""

from connect_magics.config_providers.databricks import DatabricksSecretsConfigProvider
from connect_magics.config_providers.directory import DirectoryConfigProvider
from connect_magics.config_providers.env import EnvVarConfigProvider
from connect_magics.config_providers.file import FileConfigProvider

#: Kafka's class names (and short names) of the built-in providers.
BUILTIN_PROVIDERS = {
    "org.apache.kafka.common.config.provider.FileConfigProvider": FileConfigProvider,
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider": DirectoryConfigProvider,
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider": EnvVarConfigProvider,
    "FileConfigProvider": FileConfigProvider,
    "DirectoryConfigProvider": DirectoryConfigProvider,
    "EnvVarConfigProvider": EnvVarConfigProvider,
    "DatabricksSecretsConfigProvider": DatabricksSecretsConfigProvider,
}

__all__ = ["BUILTIN_PROVIDERS", "DatabricksSecretsConfigProvider", "DirectoryConfigProvider",
           "EnvVarConfigProvider", "FileConfigProvider"]
