"""Field paths (KIP-821): ``field.syntax.version`` ``V1`` names a top-level field, ``V2`` a nested one in
dotted notation, with backticks around names that contain dots (Kafka's ``transforms.field``).

Example::

    >>> SingleFieldPath("a.`b.c`.d", FieldSyntaxVersion.V2).steps
    ('a', 'b.c', 'd')
    >>> SingleFieldPath("a.b", FieldSyntaxVersion.V1).value_from({"a.b": 1, "a": {"b": 2}})
    1
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    Importance,
    Type,
)
from connect_magics.api.data import Field, Schema, Struct
from connect_magics.transforms.util import require_map_or_null, require_struct_or_null

__all__ = ["FIELD_SYNTAX_VERSION_CONFIG", "FieldSyntaxVersion", "SingleFieldPath"]

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
FIELD_SYNTAX_VERSION_DOC = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access "
    "the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested "
    "elements. To access nested elements, dotted notation is used. If dots are already included in the field name, "
    "then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a "
    "field named \"foo.bar\" in a struct/map the following format can be used to access its elements: "
    "\"`foo.bar`.baz\".")


class FieldSyntaxVersion(enum.Enum):
    """``V1`` (top-level names, the default) or ``V2`` (nested paths)."""

    V1 = "V1"
    V2 = "V2"

    @staticmethod
    def append_config_to(config_def: ConfigDef) -> ConfigDef:
        """Define ``field.syntax.version`` (default ``V1``, case-insensitive) on ``config_def``."""
        return config_def.define(FIELD_SYNTAX_VERSION_CONFIG, Type.STRING, FieldSyntaxVersion.V1.value,
                                 CaseInsensitiveValidString(["V1", "V2"]), Importance.HIGH, FIELD_SYNTAX_VERSION_DOC)

    @staticmethod
    def from_config(config: AbstractConfig) -> FieldSyntaxVersion:
        text = config.get(FIELD_SYNTAX_VERSION_CONFIG)
        try:
            return FieldSyntaxVersion(text.upper())
        except ValueError as e:
            raise ConfigException(FIELD_SYNTAX_VERSION_CONFIG, text, "Unrecognized field syntax version") from e


def _incomplete(path: str, at: int) -> ConfigException:
    return ConfigException(f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
                           f"backtick at position {at} to escape it")


def _steps_v2(path: str) -> list[str]:
    steps: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] != "`":
            dot = path.find(".", i)
            if dot < 0:
                steps.append(path[i:])
                i = n
            else:
                steps.append(path[i:dot])
                i = dot + 1
            continue
        backtick_at, i = i, i + 1
        start, field = i, ""
        while True:
            i = path.find("`", i)
            if i < 0:
                raise _incomplete(path, backtick_at)
            escaped = path[i - 1] == "\\"
            if i >= n - 1:  # the closing backtick ends the path
                if escaped:
                    raise _incomplete(path, backtick_at)
                steps.append(field + path[start:i])
                i += 1
                break
            if path[i + 1] != ".":  # a backtick inside the name
                i += 1
                continue
            if escaped:  # \` followed by a dot: a backtick in the name
                field += path[start:i - 1] + "`"
                i += 1
                start = i
                continue
            steps.append(field + path[start:i])
            i += 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


class SingleFieldPath:
    """One field, at the top level (``V1``) or nested (``V2``), in a struct and its schema or in a map."""

    def __init__(self, path: str, version: FieldSyntaxVersion) -> None:
        self.version = version
        self.steps: tuple[str, ...] = (path,) if version is FieldSyntaxVersion.V1 else tuple(_steps_v2(path))

    def field_from(self, schema: Schema | None) -> Field | None:
        """The path's field in ``schema``, or None."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step) if current.type is Schema.Type.STRUCT else None
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1]) if current.type is Schema.Type.STRUCT else None

    def value_from(self, value: Struct | Mapping[str, Any] | None, with_default: bool = True) -> Any:
        """The value at the path in a struct or a map; None when a step is missing or null."""
        if value is None:
            return None
        if isinstance(value, Struct):
            current: Any = value
            for step in self.steps[:-1]:
                if current.schema.field(step) is None:
                    return None
                current = require_struct_or_null(current.get(step), "nested field access")
                if current is None:
                    return None
            last = current.schema.field(self.steps[-1])
            if last is None:
                return None
            return current.get(last) if with_default else current.get_without_default(last)
        current = value
        for step in self.steps[:-1]:
            current = require_map_or_null(current.get(step), "nested field access")
            if current is None:
                return None
        return current.get(self.steps[-1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.value}, path={'.'.join(self.steps)}}}"
