"""Predicates: conditions that decide whether a transformation applies to a record; the :class:`Predicate`
base class. Kafka's own predicates live in :mod:`connect_magics.transforms.predicates`.

Example::

    >>> from connect_magics.api.records import SourceRecord
    >>> class IsBig(Predicate):
    ...     def configure(self, props): self.limit = int(props["limit"])
    ...     def test(self, record): return len(record.value) > self.limit
    >>> p = IsBig(); p.configure({"limit": "2"}); p.test(SourceRecord(None, None, "t", value="abc"))
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, plugin_version
from connect_magics.api.records import ConnectRecord

__all__ = ["Predicate"]


class Predicate(ABC):
    """Base class of predicates.

    Example::

        class IsBig(Predicate):
            def configure(self, props): self.limit = int(props["limit"])
            def test(self, record): return len(record.value) > self.limit
    """

    @abstractmethod
    def configure(self, props: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def test(self, record: ConnectRecord) -> bool: ...

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        """Release resources (nothing by default)."""
        return None

    def version(self) -> str:
        return plugin_version()

