"""``HeaderFrom``: move or copy fields of the key or value into headers.

Example::

    >>> t = HeaderFrom.Value(); t.configure({"fields": "id", "headers": "record-id", "operation": "move"})
    >>> from connect_magics.api.records import SourceRecord
    >>> r = t.apply(SourceRecord(None, None, "t", value={"id": 7, "x": 1}))
    >>> r.value, r.headers.last_with_name("record-id").value
    ({'x': 1}, 7)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigException,
    Importance,
    Type,
    ValidString,
)
from connect_magics.api.data import Schema, SchemaBuilder, Struct, copy_schema_basics
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    NonEmptyListValidator,
    field_value,
    require_map,
    require_struct,
    variants,
)

__all__ = ["HeaderFrom", "HeaderFromKey", "HeaderFromValue"]


class HeaderFrom(KeyOrValue):
    """Moves (``operation=move``) or copies (``copy``) the ``fields`` to the ``headers`` of the same position."""

    CONFIG_DEF = (ConfigDef()
                  .define("fields", Type.LIST, NO_DEFAULT, NonEmptyListValidator(), Importance.HIGH,
                          "Field names in the record whose values are to be copied or moved to headers.")
                  .define("headers", Type.LIST, NO_DEFAULT, NonEmptyListValidator(), Importance.HIGH,
                          "Header names, in the same order as the field names listed in the fields configuration "
                          "property.")
                  .define("operation", Type.STRING, NO_DEFAULT, ValidString.in_("move", "copy"), Importance.HIGH,
                          "Either <code>move</code> if the fields are to be moved to the headers (removed from the "
                          "key/value), or <code>copy</code> if the fields are to be copied to the headers (retained "
                          "in the key/value).")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.fields: list[str] = config.get("fields")
        self.headers: list[str] = config.get("headers")
        if len(self.fields) != len(self.headers):
            raise ConfigException("'fields' config must have the same number of elements as 'headers' config.")
        self.move = config.get("operation") == "move"
        self.operation = config.get("operation")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def _move_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            if f.name not in self.fields:
                builder.field(f.name, f.schema)
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value, schema = self.operating_value(record), self.operating_schema(record)
        headers = record.headers.duplicate()
        purpose = f"header {self.operation}"
        if schema is None:
            mapping = require_map(value, purpose)
            updated_map = dict(mapping)
            for field, header in zip(self.fields, self.headers, strict=True):
                if self.move:
                    updated_map.pop(field, None)
                headers.add(header, mapping.get(field), None)
            return self.new_record(record, None, updated_map, headers=headers)
        struct = require_struct(value, purpose)
        updated_schema, updated = schema, struct
        if self.move:
            updated_schema = self._updated_schema(schema, self._move_schema)
            updated = Struct(updated_schema)
            for f in updated_schema.fields:
                updated.put(f.name, field_value(struct, f.name, self.replace_null_with_default))
        for field, header in zip(self.fields, self.headers, strict=True):
            found = struct.schema.field(field)
            field_val = None if found is None else field_value(struct, found, self.replace_null_with_default)
            if schema.field(field) is None:  # Kafka fails here too (a NullPointerException)
                raise ValueError(f"Unknown field: {field}")
            headers.add(header, field_val, schema.field(field).schema)
        return self.new_record(record, updated_schema, updated, headers=headers)


HeaderFromKey, HeaderFromValue = variants(HeaderFrom)
