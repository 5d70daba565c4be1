"""``HoistField``: wrap the key or value in a single-field struct (or a map when schemaless).

Example::

    >>> t = HoistField.Key(); t.configure({"field": "id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", key=42)).key
    {'id': 42}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.data import SchemaBuilder, Struct
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import KeyOrValue, variants

__all__ = ["HoistField", "HoistFieldKey", "HoistFieldValue"]


class HoistField(KeyOrValue):
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


HoistFieldKey, HoistFieldValue = variants(HoistField)
