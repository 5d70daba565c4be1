"""Single Message Transformations (SMTs): the :class:`Transformation` base class.

A transformation maps one record to another (or to None, dropping it). ``predicate`` and
``negate`` settings are applied by the runtime's transformation chain, not by the transform.
Kafka's own transformations live in :mod:`connect_magics.transforms` (``from connect_magics.transforms import
RegexRouter``), which imports this module, never the other way.

Example::

    >>> from connect_magics.api.records import SourceRecord
    >>> class Upper(Transformation):
    ...     def configure(self, props): pass
    ...     def apply(self, record): return record.new_record(value=record.value.upper())
    >>> Upper().apply(SourceRecord(None, None, "t", value="a")).value
    'A'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigException, Validator, plugin_version
from connect_magics.api.records import ConnectRecord
from connect_magics.java_regex import JavaRegexError, compile_java_regex

__all__ = ["RegexValidator", "Transformation"]


class Transformation(ABC):
    """Base class of every transformation.

    Example::

        class Upper(Transformation):
            def configure(self, props): pass
            def apply(self, record): return record.new_record(value=record.value.upper())
    """

    @abstractmethod
    def configure(self, props: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """The transformed record (never mutate the input), or None to drop it."""

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        """Release resources (nothing by default)."""
        return None

    def version(self) -> str:
        return plugin_version()


# ------------------------------------------------------------------------------------- Java regexes


class RegexValidator(Validator):
    """The value must be a valid Java regular expression (see :mod:`connect_magics.java_regex`)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:  # Kafka's message would be "Invalid regex: null"
            raise ConfigException(name, value, "Invalid regex: a regular expression is required")
        try:
            compile_java_regex(value)
        except (JavaRegexError, TypeError) as e:
            raise ConfigException(name, value, f"Invalid regex: {e}") from e

    def __str__(self) -> str:
        return "valid regex"

