"""``ReplaceField``: keep, drop and rename fields.

Example::

    >>> t = ReplaceField.Value(); t.configure({"exclude": "secret", "renames": "id:order_id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"id": 1, "secret": "x"})).value
    {'order_id': 1}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    AbstractConfig,
    ConfigDef,
    ConfigException,
    Importance,
    LambdaValidator,
    Type,
)
from connect_magics.api.data import Schema, SchemaBuilder, Struct, copy_schema_basics
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import REPLACE_NULL_DOC, KeyOrValue, require_map, require_struct, variants

__all__ = ["ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue", "parse_renames"]


def parse_renames(mappings: list[str], name: str = "renames") -> dict[str, str]:
    renames = {}
    for mapping in mappings:
        parts = mapping.split(":")
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise ConfigException(name, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


class ReplaceField(KeyOrValue):
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
                          LambdaValidator(lambda name, value: parse_renames(value, name),
                                          "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                          Importance.MEDIUM, "Field rename mappings.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
                  .define("blacklist", Type.LIST, [], None, Importance.LOW, "Deprecated. Use exclude instead.")
                  .define("whitelist", Type.LIST, [], None, Importance.LOW, "Deprecated. Use include instead."))
    _PURPOSE = "field replacement"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.exclude = set(config.get("exclude")) | set(config.get("blacklist"))
        self.include = set(config.get("include")) | set(config.get("whitelist"))
        self.renames = parse_renames(config.get("renames"))
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
            updated_map = {self.renames.get(k, k): v for k, v in require_map(value, self._PURPOSE).items()
                           if self._keep(k)}
            return self.new_record(record, None, updated_map)
        struct = require_struct(value, self._PURPOSE)
        updated_schema = self._updated_schema(struct.schema, self._make_schema)
        updated = Struct(updated_schema)
        get = struct.get if self.replace_null_with_default else struct.get_without_default
        for f in updated_schema.fields:
            updated.put(f.name, get(self.reverse_renames.get(f.name, f.name)))
        return self.new_record(record, updated_schema, updated)


ReplaceFieldKey, ReplaceFieldValue = variants(ReplaceField)
