"""``RegexRouter``: rename the topic when it matches a Java regular expression.

Example::

    >>> r = RegexRouter(); r.configure({"regex": "(.*)-raw", "replacement": "$1-clean"})
    >>> from connect_magics.api.records import SourceRecord
    >>> r.apply(SourceRecord(None, None, "orders-raw")).topic
    'orders-clean'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, ConfigException, Importance, Type
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import RegexValidator, Transformation
from connect_magics.java_regex import compile_java_regex

__all__ = ["RegexRouter", "java_replacement"]


def java_replacement(name: str, replacement: str, regex: re.Pattern[str]) -> Callable[[re.Match[str]], str]:
    """Translate a Java ``Matcher.replaceFirst`` replacement (``$1``, ``${name}``, ``\\$``) to a function."""
    parts: list[str | int] = []
    i, n = 0, len(replacement)

    def fail(message: str) -> ConfigException:
        return ConfigException(name, replacement, message)

    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n:
                raise fail("character to be escaped is missing")
            parts.append(replacement[i + 1])
            i += 2
        elif c == "$":
            if i + 1 >= n:
                raise fail("Illegal group reference: group index is missing")
            if replacement[i + 1] == "{":
                end = replacement.find("}", i + 2)
                group = replacement[i + 2:end] if end > 0 else ""
                if group not in regex.groupindex:
                    raise fail(f"No group with name {{{group}}}")
                parts.append(regex.groupindex[group])
                i = end + 1
            elif replacement[i + 1].isdigit():
                ref, i = int(replacement[i + 1]), i + 2
                while i < n and replacement[i].isdigit() and ref * 10 + int(replacement[i]) <= regex.groups:
                    ref, i = ref * 10 + int(replacement[i]), i + 1
                if ref > regex.groups:
                    raise fail(f"No group {ref}")
                parts.append(ref)
            else:
                raise fail("Illegal group reference")
        else:
            parts.append(c)
            i += 1

    def expand(match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)
    return expand


class RegexRouter(Transformation):
    """Rename the topic when the whole topic name matches ``regex`` (Java syntax, ``$1`` group references).

    >>> r = RegexRouter(); r.configure({"regex": "db1[.](?<table>.*)", "replacement": "cdc-${table}"})
    >>> from connect_magics.api.records import SourceRecord
    >>> r.apply(SourceRecord(None, None, "db1.users")).topic
    'cdc-users'
    """

    CONFIG_DEF = (ConfigDef()
                  .define("regex", Type.STRING, NO_DEFAULT, RegexValidator(), Importance.HIGH,
                          "Regular expression to use for matching.")
                  .define("replacement", Type.STRING, NO_DEFAULT, None, Importance.HIGH, "Replacement string."))

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.regex = compile_java_regex(config.get("regex"))
        self._expand = java_replacement("replacement", config.get("replacement"), self.regex)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.topic is None or not self.regex.fullmatch(record.topic):
            return record
        first = self.regex.match(record.topic)  # Java's replaceFirst: the first match from the start
        assert first is not None
        return record.new_record(topic=self._expand(first) + record.topic[first.end():])
