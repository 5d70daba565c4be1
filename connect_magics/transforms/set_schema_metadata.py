"""``SetSchemaMetadata``: set the name and/or version of the key or value schema.

Example::

    >>> from connect_magics.api.data import SchemaBuilder, Struct, INT32_SCHEMA
    >>> from connect_magics.api.records import SourceRecord
    >>> schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    >>> t = SetSchemaMetadata.Value(); t.configure({"schema.name": "com.acme.Order", "schema.version": "3"})
    >>> r = t.apply(SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema).put("id", 1)))
    >>> r.value_schema.name, r.value_schema.version, r.value.schema is r.value_schema
    ('com.acme.Order', 3, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import AbstractConfig, ConfigDef, ConfigException, Importance, Type
from connect_magics.api.data import Schema, SchemaType, Struct
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import REPLACE_NULL_DOC, KeyOrValue, field_value, require_schema, variants

__all__ = ["SetSchemaMetadata", "SetSchemaMetadataKey", "SetSchemaMetadataValue"]


class SetSchemaMetadata(KeyOrValue):
    """Sets ``schema.name`` and/or ``schema.version`` on the key (``.Key``) or value (``.Value``) schema.

    As in Kafka, only struct schemas can be updated: another schema fails the record ("Cannot list fields on
    non-struct type").
    """

    CONFIG_DEF = (ConfigDef()
                  .define("schema.name", Type.STRING, None, None, Importance.HIGH, "Schema name to set.")
                  .define("schema.version", Type.INT, None, None, Importance.HIGH, "Schema version to set.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.schema_name: str | None = config.get("schema.name")
        self.schema_version: int | None = config.get("schema.version")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        if self.schema_name is None and self.schema_version is None:
            raise ConfigException("Neither schema name nor version configured")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value, schema = self.operating_value(record), self.operating_schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        is_map, is_array = schema.type is SchemaType.MAP, schema.type is SchemaType.ARRAY
        updated_schema = Schema(
            schema.type, schema.optional, schema.default_value,
            self.schema_name if self.schema_name is not None else schema.name,
            self.schema_version if self.schema_version is not None else schema.version,
            schema.doc, schema.parameters, schema.fields,  # not a struct: "Cannot list fields on non-struct type"
            schema.key_schema if is_map else None, schema.value_schema if is_map or is_array else None)
        if isinstance(value, Struct):
            updated = Struct(updated_schema)
            for f in updated_schema.fields:
                updated.put(f, field_value(value, f.name, self.replace_null_with_default))
            value = updated
        return self.new_record(record, updated_schema, value)


SetSchemaMetadataKey, SetSchemaMetadataValue = variants(SetSchemaMetadata)
