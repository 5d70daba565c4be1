"""KIP-993's ``allowed.paths``: the files and directories a provider may read.

>>> AllowedPaths("/etc/secrets,/run/keys").check("/etc/secrets/db.properties", "allowed.paths")
'/etc/secrets/db.properties'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from connect_magics.api.config import ConfigException
from connect_magics.api.config_provider import ConfigProvider

ALLOWED_PATHS = "allowed.paths"


class AllowedPaths:
    """No setting: any path; else only paths under one of the listed absolute directories or files."""

    def __init__(self, setting: str | None) -> None:
        self.roots = [os.path.normpath(p.strip()) for p in (setting or "").split(",") if p.strip()]
        for root in self.roots:
            if not os.path.isabs(root):
                raise ConfigException(ALLOWED_PATHS, setting, f"{root} is not an absolute path")

    def check(self, path: str, what: str) -> str:
        """``path`` normalised, if allowed; raises ConfigException naming ``what`` otherwise."""
        normal = os.path.normpath(path)
        if self.roots and not any(normal == r or normal.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
            raise ConfigException(what, path, f"the path is not under {ALLOWED_PATHS} ({', '.join(self.roots)})")
        return normal


class PathConfigProvider(ConfigProvider):
    """A provider that reads files: ``allowed.paths`` (KIP-993) limits which."""

    def __init__(self) -> None:
        self.allowed = AllowedPaths(None)

    def configure(self, configs: Mapping[str, str]) -> None:
        self.allowed = AllowedPaths(configs.get(ALLOWED_PATHS))
