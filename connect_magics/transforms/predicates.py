"""Kafka's predicates (``org.apache.kafka.connect.transforms.predicates``): ``TopicNameMatches``,
``RecordIsTombstone`` and ``HasHeaderKey``. The :class:`~connect_magics.api.predicates.Predicate` base class
stays in the API.

Example::

    >>> p = TopicNameMatches()
    >>> p.configure({"pattern": "orders-.*"})
    >>> from connect_magics.api.records import SourceRecord
    >>> p.test(SourceRecord(None, None, "orders-eu")), p.test(SourceRecord(None, None, "x-orders-eu"))
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    CompositeValidator,
    ConfigDef,
    ConfigException,
    Importance,
    NonEmptyString,
    Type,
)
from connect_magics.api.predicates import Predicate
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import RegexValidator
from connect_magics.java_regex import JavaRegexError, compile_java_regex

__all__ = ["BUILTIN_PREDICATES", "HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]


class TopicNameMatches(Predicate):
    """True when the whole topic name matches ``pattern`` (a Java regular expression).

    >>> p = TopicNameMatches(); p.configure({"pattern": r"\\p{Alpha}+"})
    >>> from connect_magics.api.records import SourceRecord
    >>> p.test(SourceRecord(None, None, "orders")), p.test(SourceRecord(None, None, "orders1"))
    (True, False)
    """

    CONFIG_DEF = ConfigDef().define(
        "pattern", Type.STRING, NO_DEFAULT, CompositeValidator.of(NonEmptyString(), RegexValidator()),
        Importance.MEDIUM, "A Java regular expression for matching against the name of a record's topic.")

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        value = AbstractConfig(self.CONFIG_DEF, props).get("pattern")
        try:
            self.pattern = compile_java_regex(value)
        except JavaRegexError as e:
            raise ConfigException("pattern", value,
                                  f"entry must be a Java-compatible regular expression: {e}") from e

    def test(self, record: ConnectRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern.pattern}}}"


class RecordIsTombstone(Predicate):
    """True for records whose value is null.

    >>> from connect_magics.api.records import SourceRecord
    >>> RecordIsTombstone().test(SourceRecord(None, None, "t", key="k"))
    True
    """

    def configure(self, props: Mapping[str, Any]) -> None:
        pass

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"


class HasHeaderKey(Predicate):
    """True for records with at least one header named ``name``.

    >>> from connect_magics.api.records import Headers, SourceRecord
    >>> p = HasHeaderKey(); p.configure({"name": "trace"})
    >>> p.test(SourceRecord(None, None, "t", headers=Headers().add("trace", "1")))
    True
    """

    CONFIG_DEF = ConfigDef().define("name", Type.STRING, NO_DEFAULT, NonEmptyString(), Importance.MEDIUM,
                                    "The header name.")

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        self.name: str = AbstractConfig(self.CONFIG_DEF, props).get("name")

    def test(self, record: ConnectRecord) -> bool:
        return bool(record.headers.all_with_name(self.name))

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


_PACKAGE = "org.apache.kafka.connect.transforms.predicates."
BUILTIN_PREDICATES: dict[str, type[Predicate]] = {
    _PACKAGE + cls.__name__: cls for cls in (TopicNameMatches, RecordIsTombstone, HasHeaderKey)
}
"""Kafka's class names of the built-in predicates, mapped to their Python classes."""
