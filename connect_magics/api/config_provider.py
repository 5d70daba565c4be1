"""Config providers (Kafka's ``org.apache.kafka.common.config.provider.ConfigProvider``, KIP-297): where the
values of ``${provider:path:key}`` placeholders in worker and connector configs come from.

A provider is named in the worker's properties and configured with its ``param.`` settings::

    config.providers=vault
    config.providers.vault.class=mycompany.VaultConfigProvider
    config.providers.vault.param.url=https://vault.example.com

A provider plugin, installed as an entry point of the group ``connect_magics.config_providers``:

>>> class StaticConfigProvider(ConfigProvider):
...     def configure(self, configs):
...         self.values = dict(configs)
...     def get(self, path, keys=None):
...         return ConfigData({k: v for k, v in self.values.items() if keys is None or k in keys})
>>> p = StaticConfigProvider(); p.configure({"password": "s3cret"})
>>> p.get("", {"password"}).data
{'password': 's3cret'}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConfigData:
    """The values a provider found for a path (Kafka's ``ConfigData``); ``ttl`` in ms, None for no expiry."""

    data: dict[str, str] = field(default_factory=dict)
    ttl: int | None = None


class ConfigProvider(ABC):
    """Looks up configuration values by path and key (see the module's docs)."""

    def configure(self, configs: Mapping[str, str]) -> None:
        """Called once with the provider's ``config.providers.{name}.param.*`` settings (prefix removed)."""

    @abstractmethod
    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        """The values at ``path``: only ``keys`` if given (a key not found is simply absent)."""

    def close(self) -> None:
        """Release what the provider holds."""
