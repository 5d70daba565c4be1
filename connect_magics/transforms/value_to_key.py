"""``ValueToKey``: replace the key by a struct (or map) of some of the value's fields.

Example::

    >>> t = ValueToKey(); t.configure({"fields": "id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"id": 7, "x": 1})).key
    {'id': 7}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.data import LRUCache, Schema, SchemaBuilder, Struct
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    NonEmptyListValidator,
    field_value,
    require_map,
    require_struct,
)

__all__ = ["ValueToKey"]


class ValueToKey(Transformation):
    """Replace the record key with a new key formed from the value's ``fields``."""

    CONFIG_DEF = (ConfigDef()
                  .define("fields", Type.LIST, NO_DEFAULT, NonEmptyListValidator(), Importance.HIGH,
                          "Field names on the record value to extract as the record key.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))
    _PURPOSE = "copying fields from value to key"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.fields: list[str] = config.get("fields")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        self._cache = LRUCache(16)

    def _key_schema(self, schema: Schema) -> Schema:
        key_schema = self._cache.get(schema)
        if key_schema is None:
            builder = SchemaBuilder.struct()
            for name in self.fields:
                field = schema.field(name)
                if field is None:
                    raise DataException(f"Field does not exist: {name}")
                builder.field(name, field.schema)
            key_schema = builder.build()
            self._cache.put(schema, key_schema)
        return key_schema

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.value_schema is None:
            value = require_map(record.value, self._PURPOSE)
            return record.new_record(key_schema=None, key={name: value.get(name) for name in self.fields})
        struct = require_struct(record.value, self._PURPOSE)
        key_schema = self._key_schema(struct.schema)
        key = Struct(key_schema)
        for name in self.fields:
            key.put(name, field_value(struct, name, self.replace_null_with_default))
        return record.new_record(key_schema=key_schema, key=key, value_schema=struct.schema)
