"""Helpers shared by the transformations (Kafka's ``transforms.util``): the ``$Key`` / ``$Value`` base,
Kafka's ``Requirements`` checks, schema copying and the ``replace.null.with.default`` setting.

Example::

    >>> require_map({"a": 1}, "testing")
    {'a': 1}
    >>> require_map(3, "testing")
    Traceback (most recent call last):
    ...
    connect_magics.api.errors.DataException: Only Map objects supported in absence of schema for [testing], found: builtins.int
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from connect_magics.api.config import ConfigException, Validator
from connect_magics.api.data import LRUCache, Schema, SchemaBuilder, SchemaType, Struct, copy_schema_basics
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation

__all__ = ["KeyOrValue", "NonEmptyListValidator", "REPLACE_NULL_DOC", "class_name", "copy_schema", "field_value",
           "require_map", "require_map_or_null", "require_schema", "require_struct", "require_struct_or_null",
           "variants"]

REPLACE_NULL_DOC = ("Whether to replace fields that have a default value and that are null to the default value. "
                    "When set to true, the default value is used, otherwise null is used.")


def class_name(value: Any) -> str:
    """The class name shown in error messages (``null`` for None)."""
    return "null" if value is None else f"{type(value).__module__}.{type(value).__qualname__}"


def require_map(value: Any, purpose: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DataException(f"Only Map objects supported in absence of schema for [{purpose}], "
                            f"found: {class_name(value)}")
    return value


def require_map_or_null(value: Any, purpose: str) -> Mapping[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def field_value(struct: Struct, field: Any, replace_null_with_default: bool) -> Any:
    """``struct.get(field)`` (the schema's default for a null) or, when not replacing, the null itself."""
    return struct.get(field) if replace_null_with_default else struct.get_without_default(field)


def copy_schema(schema: Schema) -> SchemaBuilder:
    """A builder holding a copy of ``schema``: type, basics, optionality, default and nested schemas
    (Kafka's ``SchemaUtil.copySchemaBasics(Schema)``)."""
    if schema.type is SchemaType.ARRAY:
        builder = SchemaBuilder.array(schema.value_schema)
    elif schema.type is SchemaType.MAP:
        builder = SchemaBuilder.map(schema.key_schema, schema.value_schema)
    else:
        builder = SchemaBuilder.of_type(schema.type)
        if schema.type is SchemaType.STRUCT:
            for f in schema.fields:
                builder.field(f.name, f.schema)
    copy_schema_basics(schema, builder)
    if schema.optional:
        builder.optional()
    return builder


class NonEmptyListValidator(Validator):
    """A list with at least one element (Kafka's ``NonEmptyListValidator``: "Empty list")."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if not value:
            raise ConfigException(name, value, "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


class KeyOrValue(Transformation):
    """Transformations with ``.Key`` and ``.Value`` variants (Kafka's ``X$Key`` / ``X$Value``).

    Subclasses use :meth:`operating_schema`, :meth:`operating_value` and :meth:`new_record`; the
    variants made by :func:`variants` pick the key or the value.
    """

    Key: ClassVar[type[KeyOrValue]]
    Value: ClassVar[type[KeyOrValue]]
    _on_key: ClassVar[bool | None] = None

    def __init__(self) -> None:
        if self._on_key is None:
            raise TypeError(f"use {type(self).__name__}.Key or {type(self).__name__}.Value")
        self._schema_cache = LRUCache(16)

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema if self._on_key else record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key if self._on_key else record.value

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any, **changes: Any) -> ConnectRecord:
        if self._on_key:
            return record.new_record(key_schema=schema, key=value, **changes)
        return record.new_record(value_schema=schema, value=value, **changes)

    def _updated_schema(self, schema: Schema, make: Callable[[Schema], Schema]) -> Schema:
        updated = self._schema_cache.get(schema)
        if updated is None:
            updated = make(schema)
            self._schema_cache.put(schema, updated)
        return updated


def variants(base: type[KeyOrValue]) -> tuple[type[KeyOrValue], type[KeyOrValue]]:
    """Make ``base.Key`` and ``base.Value`` (named ``{base}Key`` / ``{base}Value``) and return them."""
    key = type(f"{base.__name__}Key", (base,), {"_on_key": True, "__doc__": f"{base.__name__} on record keys."})
    value = type(f"{base.__name__}Value", (base,),
                 {"_on_key": False, "__doc__": f"{base.__name__} on record values."})
    key.__module__ = value.__module__ = base.__module__
    base.Key, base.Value = key, value
    return key, value
