"""Single Message Transformations (SMTs) and Kafka's built-in ones.

A transformation maps one record to another (or to None, dropping it). ``predicate`` and
``negate`` settings are applied by the runtime's transformation chain, not by the transform.

Example::

    >>> t = RegexRouter()
    >>> t.configure({"regex": "(.*)-raw", "replacement": "$1-clean"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "orders-raw", value=1)).topic
    'orders-clean'
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigException,
    Importance,
    LambdaValidator,
    Type,
    Validator,
    plugin_version,
)
from connect_magics.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    LRUCache,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
    copy_schema_basics,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord, SinkRecord
from connect_magics.java_regex import JavaRegexError, compile_java_regex

__all__ = [
    "BUILTIN_TRANSFORMS", "ExtractField", "Filter", "HoistField", "InsertField", "RegexRouter", "RegexValidator",
    "ReplaceField", "Transformation", "InsertFieldKey", "InsertFieldValue", "ReplaceFieldKey",
    "ReplaceFieldValue", "HoistFieldKey", "HoistFieldValue", "ExtractFieldKey", "ExtractFieldValue",
]


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


def _java_replacement(name: str, replacement: str, regex: re.Pattern[str]) -> Callable[[re.Match[str]], str]:
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
        self._expand = _java_replacement("replacement", config.get("replacement"), self.regex)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.topic is None or not self.regex.fullmatch(record.topic):
            return record
        first = self.regex.match(record.topic)  # Java's replaceFirst: the first match from the start
        assert first is not None
        return record.new_record(topic=self._expand(first) + record.topic[first.end():])


class Filter(Transformation):
    """Drops every record; combine with a predicate to drop only some.

    >>> Filter().apply(object()) is None
    True
    """

    def configure(self, props: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return None


# ------------------------------------------------------------------------------ key / value transforms


def _class_name(value: Any) -> str:
    return "null" if value is None else f"{type(value).__module__}.{type(value).__qualname__}"


def _require_map(value: Any, purpose: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DataException(f"Only Map objects supported in absence of schema for [{purpose}], "
                            f"found: {_class_name(value)}")
    return value


def _require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {_class_name(value)}")
    return value


class _KeyOrValue(Transformation):
    """Transformations with ``.Key`` and ``.Value`` variants (Kafka's ``X$Key`` / ``X$Value``)."""

    Key: ClassVar[type[_KeyOrValue]]
    Value: ClassVar[type[_KeyOrValue]]
    _on_key: ClassVar[bool | None] = None

    def __init__(self) -> None:
        if self._on_key is None:
            raise TypeError(f"use {type(self).__name__}.Key or {type(self).__name__}.Value")
        self._schema_cache = LRUCache(16)

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema if self._on_key else record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key if self._on_key else record.value

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        if self._on_key:
            return record.new_record(key_schema=schema, key=value)
        return record.new_record(value_schema=schema, value=value)

    def _updated_schema(self, schema: Schema, make: Callable[[Schema], Schema]) -> Schema:
        updated = self._schema_cache.get(schema)
        if updated is None:
            updated = make(schema)
            self._schema_cache.put(schema, updated)
        return updated


def _variants(base: type[_KeyOrValue]) -> tuple[type[_KeyOrValue], type[_KeyOrValue]]:
    key = type(f"{base.__name__}Key", (base,), {"_on_key": True, "__doc__": f"{base.__name__} on record keys."})
    value = type(f"{base.__name__}Value", (base,),
                 {"_on_key": False, "__doc__": f"{base.__name__} on record values."})
    key.__module__ = value.__module__ = base.__module__
    base.Key, base.Value = key, value
    return key, value


_REPLACE_NULL_DOC = ("Whether to replace fields that have a default value and that are null to the default value. "
                     "When set to true, the default value is used, otherwise null is used.")
_OPTIONALITY_DOC = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional " \
                   "(the default)."


def _insertion_spec(spec: str | None) -> tuple[str, bool] | None:
    """``name`` / ``name?`` → optional field, ``name!`` → required."""
    if spec is None:
        return None
    if spec.endswith(("?", "!")):
        return spec[:-1], spec.endswith("?")
    return spec, True


class InsertField(_KeyOrValue):
    """Insert topic, partition, offset, timestamp and/or a static value as fields (``InsertField.Value``).

    >>> t = InsertField.Value(); t.configure({"topic.field": "topic", "static.field": "src", "static.value": "db"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "orders", value={"id": 1})).value
    {'id': 1, 'topic': 'orders', 'src': 'db'}
    """

    CONFIG_DEF = (ConfigDef()
                  .define("topic.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka topic. " + _OPTIONALITY_DOC)
                  .define("partition.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka partition. " + _OPTIONALITY_DOC)
                  .define("offset.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC)
                  .define("timestamp.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for record timestamp. " + _OPTIONALITY_DOC)
                  .define("static.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for static data field. " + _OPTIONALITY_DOC)
                  .define("static.value", Type.STRING, None, None, Importance.MEDIUM,
                          "Static field value, if field name configured.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM,
                          _REPLACE_NULL_DOC))
    _PURPOSE = "field insertion"
    _OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.topic_field = _insertion_spec(config.get("topic.field"))
        self.partition_field = _insertion_spec(config.get("partition.field"))
        self.offset_field = _insertion_spec(config.get("offset.field"))
        self.timestamp_field = _insertion_spec(config.get("timestamp.field"))
        self.static_field = _insertion_spec(config.get("static.field"))
        self.static_value: str | None = config.get("static.value")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        specs = (self.topic_field, self.partition_field, self.offset_field, self.timestamp_field, self.static_field)
        if all(s is None for s in specs):
            raise ConfigException("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigException("static.value", None, f"No value specified for static field: {self.static_field[0]}")

    def _insertions(self, record: ConnectRecord, with_schema: bool) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self.topic_field:
            out.append((self.topic_field[0], record.topic))
        if self.partition_field and record.kafka_partition is not None:
            out.append((self.partition_field[0], record.kafka_partition))
        if self.offset_field:
            if not isinstance(record, SinkRecord):
                raise DataException(f"Only SinkRecord supported for [{self._PURPOSE}], found: {_class_name(record)}")
            out.append((self.offset_field[0], record.kafka_offset))
        if self.timestamp_field and record.timestamp is not None:
            ts = Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp) if with_schema else record.timestamp
            out.append((self.timestamp_field[0], ts))
        if self.static_field and self.static_value is not None:
            out.append((self.static_field[0], self.static_value))
        return out

    def _make_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            builder.field(f.name, f.schema)
        extra = [(self.topic_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
                 (self.partition_field, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
                 (self.offset_field, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
                 (self.timestamp_field, self._OPTIONAL_TIMESTAMP, Timestamp.SCHEMA),
                 (self.static_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA)]
        for spec, optional_schema, required_schema in extra:
            if spec is not None:
                builder.field(spec[0], optional_schema if spec[1] else required_schema)
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated_map = dict(_require_map(value, self._PURPOSE))
            updated_map.update(self._insertions(record, with_schema=False))
            return self.new_record(record, None, updated_map)
        struct = _require_struct(value, self._PURPOSE)
        updated_schema = self._updated_schema(struct.schema, self._make_schema)
        updated = Struct(updated_schema)
        for f in struct.schema.fields:
            updated.put(f.name, struct.get(f) if self.replace_null_with_default else struct.get_without_default(f))
        for name, field_value in self._insertions(record, with_schema=True):
            updated.put(name, field_value)
        return self.new_record(record, updated_schema, updated)


def _parse_renames(mappings: list[str], name: str = "renames") -> dict[str, str]:
    renames = {}
    for mapping in mappings:
        parts = mapping.split(":")
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise ConfigException(name, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


class ReplaceField(_KeyOrValue):
    """Keep (``include``), drop (``exclude``) and rename (``renames``: ``old:new``) fields.

    ``blacklist`` and ``whitelist`` are accepted as older names of ``exclude`` and ``include``.

    >>> t = ReplaceField.Value(); t.configure({"exclude": "secret", "renames": "id:order_id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"id": 1, "secret": "x"})).value
    {'order_id': 1}
    """

    CONFIG_DEF = (ConfigDef()
                  .define("exclude", Type.LIST, [], None, Importance.MEDIUM,
                          "Fields to exclude. This takes precedence over the fields to include.")
                  .define("include", Type.LIST, [], None, Importance.MEDIUM,
                          "Fields to include. If specified, only these fields will be used.")
                  .define("renames", Type.LIST, [],
                          LambdaValidator(lambda name, value: _parse_renames(value, name),
                                          "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                          Importance.MEDIUM, "Field rename mappings.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, _REPLACE_NULL_DOC)
                  .define("blacklist", Type.LIST, [], None, Importance.LOW, "Deprecated. Use exclude instead.")
                  .define("whitelist", Type.LIST, [], None, Importance.LOW, "Deprecated. Use include instead."))
    _PURPOSE = "field replacement"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.exclude = set(config.get("exclude")) | set(config.get("blacklist"))
        self.include = set(config.get("include")) | set(config.get("whitelist"))
        self.renames = _parse_renames(config.get("renames"))
        self.reverse_renames = {new: old for old, new in self.renames.items()}
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def _keep(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def _make_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            if self._keep(f.name):
                builder.field(self.renames.get(f.name, f.name), f.schema)
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated_map = {self.renames.get(k, k): v for k, v in _require_map(value, self._PURPOSE).items()
                           if self._keep(k)}
            return self.new_record(record, None, updated_map)
        struct = _require_struct(value, self._PURPOSE)
        updated_schema = self._updated_schema(struct.schema, self._make_schema)
        updated = Struct(updated_schema)
        get = struct.get if self.replace_null_with_default else struct.get_without_default
        for f in updated_schema.fields:
            updated.put(f.name, get(self.reverse_renames.get(f.name, f.name)))
        return self.new_record(record, updated_schema, updated)


class HoistField(_KeyOrValue):
    """Wrap the key or value in a single-field struct (or map when schemaless).

    >>> t = HoistField.Key(); t.configure({"field": "id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", key=42)).key
    {'id': 42}
    """

    CONFIG_DEF = ConfigDef().define(
        "field", Type.STRING, NO_DEFAULT, None, Importance.MEDIUM,
        "Field name for the single field that will be created in the resulting Struct or Map.")

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        self.field: str = AbstractConfig(self.CONFIG_DEF, props).get("field")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field: value})
        updated_schema = self._updated_schema(schema, lambda s: SchemaBuilder.struct().field(self.field, s).build())
        return self.new_record(record, updated_schema, Struct(updated_schema).put(self.field, value))


class ExtractField(_KeyOrValue):
    """Replace the key or value by one of its (top-level) fields; null passes through.

    >>> t = ExtractField.Value(); t.configure({"field": "id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"id": 7, "x": 1})).value
    7
    """

    CONFIG_DEF = (ConfigDef()
                  .define("field", Type.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, _REPLACE_NULL_DOC))
    _PURPOSE = "field extraction"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.field: str = config.get("field")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            extracted = None if value is None else _require_map(value, self._PURPOSE).get(self.field)
            return self.new_record(record, None, extracted)
        field = schema.field(self.field)
        if field is None:
            raise ValueError(f"Unknown field: {self.field}")
        if value is None:
            return self.new_record(record, field.schema, None)
        struct = _require_struct(value, self._PURPOSE)
        extracted = struct.get(field) if self.replace_null_with_default else struct.get_without_default(field)
        return self.new_record(record, field.schema, extracted)


InsertFieldKey, InsertFieldValue = _variants(InsertField)
ReplaceFieldKey, ReplaceFieldValue = _variants(ReplaceField)
HoistFieldKey, HoistFieldValue = _variants(HoistField)
ExtractFieldKey, ExtractFieldValue = _variants(ExtractField)

_PACKAGE = "org.apache.kafka.connect.transforms."
BUILTIN_TRANSFORMS: dict[str, type[Transformation]] = {
    _PACKAGE + "RegexRouter": RegexRouter,
    _PACKAGE + "Filter": Filter,
    **{f"{_PACKAGE}{base.__name__}${variant}": getattr(base, variant)
       for base in (InsertField, ReplaceField, HoistField, ExtractField) for variant in ("Key", "Value")},
}
"""Kafka's class names of the built-in transformations, mapped to their Python classes."""
