"""Resolving ``${provider:[path:]key}`` placeholders in worker and connector configs (KIP-297, KIP-421), with the
providers the worker's ``config.providers`` names.

Worker properties are resolved once, when the worker starts. Connector configs stay as written in the config
topic and in every answer; they are resolved for the connector and for each task when they start (so a restart
picks up a changed secret), and task configs the connector generates get the placeholders back
(:meth:`ConfigTransformer.restore`), as Kafka Connect's ``reverseTransform``.

>>> import os; os.environ["CM_DOC_PASSWORD"] = "s3cret"
>>> t = ConfigTransformer.from_worker_props({"config.providers": "env",
...                                          "config.providers.env.class": "EnvVarConfigProvider"})
>>> t.transform({"password": "${env:CM_DOC_PASSWORD}", "user": "connect"})
{'password': 's3cret', 'user': 'connect'}
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Mapping

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigProvider
from connect_magics.config_providers import BUILTIN_PROVIDERS
from connect_magics.security.redaction import install_log_redaction, is_sensitive, remember_secret

#: Kafka's ``ConfigTransformer.DEFAULT_PATTERN``: provider, optional path, key.
PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
PROVIDERS = "config.providers"
ENTRY_POINT_GROUP = "connect_magics.config_providers"


def provider_class(name: str, key: str) -> type[ConfigProvider]:
    """A provider class by Kafka's class name, a built-in's short name, an entry point's name or a Python path."""
    if name in BUILTIN_PROVIDERS:
        return BUILTIN_PROVIDERS[name]
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if name in (ep.name, ep.value.replace(":", ".")):
            return ep.load()
    module, _, cls = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), cls) if module else None
    except ImportError:
        found = None
    if not (isinstance(found, type) and issubclass(found, ConfigProvider)):
        raise ConfigException(key, name, "Class " + name + " cannot be found: use one of "
                              + ", ".join(sorted(n for n in BUILTIN_PROVIDERS if "." in n))
                              + ", an entry point of the group " + ENTRY_POINT_GROUP + " or a Python class path")
    return found


class ConfigTransformer:
    """Resolves placeholders with named providers (see the module's docs)."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self.providers = dict(providers)

    @classmethod
    def from_worker_props(cls, props: Mapping[str, str]) -> ConfigTransformer | None:
        """The providers ``config.providers`` names, each configured with its ``param.`` settings; None if none."""
        names = [n.strip() for n in props.get(PROVIDERS, "").split(",") if n.strip()]
        if not names:
            return None
        providers = {}
        for name in names:
            key = f"{PROVIDERS}.{name}.class"
            if not props.get(key):
                raise ConfigException(key, None, f"the provider {name} listed in {PROVIDERS} needs a class")
            provider = provider_class(props[key].strip(), key)()
            prefix = f"{PROVIDERS}.{name}.param."
            provider.configure({k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)})
            providers[name] = provider
        install_log_redaction()
        return cls(providers)

    @staticmethod
    def has_placeholders(value: str) -> bool:
        return "${" in value and PATTERN.search(value) is not None

    def transform(self, config: Mapping[str, str], skip: tuple[str, ...] = ()) -> dict[str, str]:
        """``config`` with every placeholder of a known provider replaced (placeholders of other providers are
        left as they are, as Kafka does); raises ConfigException naming the key and the placeholder when a
        provider has no value for it. Keys starting with ``skip`` are kept as they are."""
        out = {}
        for key, value in config.items():
            if isinstance(value, str) and not key.startswith(skip) and self.has_placeholders(value):
                value = PATTERN.sub(lambda m, k=key: self._lookup(k, m), value)
            out[key] = value
        return out

    def _lookup(self, key: str, match: re.Match[str]) -> str:
        provider = self.providers.get(match.group(1))
        if provider is None:
            return match.group(0)
        path, name = match.group(3) or "", match.group(4)
        try:
            data = provider.get(path, {name}).data
        except ConfigException as e:
            raise ConfigException(key, match.group(0), f"the {match.group(1)} provider cannot resolve it: "
                                                       f"{e}") from None
        if name not in data:
            where = f" in {path}" if path else ""
            raise ConfigException(key, match.group(0), f"the {match.group(1)} provider has no key {name}{where}")
        if is_sensitive(key):
            remember_secret(data[name])
        return data[name]

    def restore(self, raw: Mapping[str, str], generated: Mapping[str, str], resolved: Mapping[str, str]) \
            -> dict[str, str]:
        """A task config the connector generated from ``resolved``, with the placeholders of ``raw`` back where
        the task got a resolved value unchanged (Kafka's ``reverseTransform``): no secret in the config topic."""
        return {k: raw[k] if k in raw and raw[k] != resolved.get(k) and v == resolved.get(k) else v
                for k, v in generated.items()}

    def close(self) -> None:
        for provider in self.providers.values():
            provider.close()
