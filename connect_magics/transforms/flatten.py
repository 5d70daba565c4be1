"""``Flatten``: flatten nested structs (or maps) into one level, joining names with ``delimiter``.

Example::

    >>> t = Flatten.Value(); t.configure({"delimiter": "_"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"a": {"b": 1, "c": {"d": 2}}, "e": [3]})).value
    {'a_b': 1, 'a_c_d': 2, 'e': [3]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.data import Schema, SchemaBuilder, SchemaType, Struct, copy_schema_basics
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import (
    KeyOrValue,
    class_name,
    copy_schema,
    require_map,
    require_struct_or_null,
    variants,
)

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

_KEPT = {SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT32,
         SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES, SchemaType.ARRAY}


class Flatten(KeyOrValue):
    """Flatten a nested struct or map; arrays and their contents are kept as they are."""

    CONFIG_DEF = ConfigDef().define(
        "delimiter", Type.STRING, ".", None, Importance.MEDIUM,
        "Delimiter to insert between field names from the input record when generating field names for the output "
        "record")
    _PURPOSE = "flattening"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        self.delimiter: str = AbstractConfig(self.CONFIG_DEF, props).get("delimiter")

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    def _flatten_map(self, value: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, v in value.items():
            name = self._name(prefix, key)
            if isinstance(v, Mapping):
                self._flatten_map(require_map(v, self._PURPOSE), name, out)
            elif v is None or isinstance(v, (bool, int, float, str, bytes, list)):
                out[name] = v
            elif isinstance(v, Struct):
                raise DataException(f"Flatten transformation does not support {class_name(v)} for record without "
                                    f"schemas (for field {name}).")
            else:
                raise DataException(f"Flatten transformation was passed a value of type {class_name(v)} which is "
                                    "not supported by Connect's data API")

    def _build_schema(self, schema: Schema, prefix: str, builder: SchemaBuilder, optional: bool,
                      parent_default: Struct | None) -> None:
        for f in schema.fields:
            name = self._name(prefix, f.name)
            field_optional = optional or f.schema.optional
            default = f.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(f)
            if f.schema.type in _KEPT:
                field_builder = copy_schema(f.schema)
                if field_optional:
                    field_builder.optional()
                if default is not None:
                    field_builder.default_value(default)
                builder.field(name, field_builder.build())
            elif f.schema.type is SchemaType.STRUCT:
                self._build_schema(f.schema, name, builder, field_optional, default)
            else:
                raise DataException(f"Flatten transformation does not support {f.schema.type.name} for record "
                                    f"with schemas (for field {name}).")

    def _make_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        self._build_schema(schema, "", builder, schema.optional, schema.default_value)
        return builder.build()

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for f in struct.schema.fields:
            name = self._name(prefix, f.name)
            if f.schema.type in _KEPT:
                out.put(name, struct.get(f))
            elif f.schema.type is SchemaType.STRUCT:
                self._flatten_struct(struct.get(f), name, out)
            else:
                raise DataException(f"Flatten transformation does not support {f.schema.type.name} for record "
                                    f"with schemas (for field {name}).")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            out: dict[str, Any] = {}
            self._flatten_map(require_map(value, self._PURPOSE), "", out)
            return self.new_record(record, None, out)
        struct = require_struct_or_null(value, self._PURPOSE)
        updated_schema = self._updated_schema(schema, self._make_schema)
        updated = Struct(updated_schema)
        self._flatten_struct(struct, "", updated)
        return self.new_record(record, updated_schema, updated)


FlattenKey, FlattenValue = variants(Flatten)
