"""``ExtractField``: replace the key or value by one of its fields, top-level or (``field.syntax.version=V2``)
nested.

Example::

    >>> t = ExtractField.Value(); t.configure({"field": "a.b", "field.syntax.version": "V2"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"a": {"b": 7}})).value
    7
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.field import FieldSyntaxVersion, SingleFieldPath
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    require_map_or_null,
    require_struct_or_null,
    variants,
)

__all__ = ["ExtractField", "ExtractFieldKey", "ExtractFieldValue"]


class ExtractField(KeyOrValue):
    """Replace the key or value by one of its fields; null passes through.

    >>> t = ExtractField.Value(); t.configure({"field": "id"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"id": 7, "x": 1})).value
    7
    """

    CONFIG_DEF = FieldSyntaxVersion.append_config_to(
        ConfigDef()
        .define("field", Type.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract.")
        .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))
    _PURPOSE = "field extraction"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.field: str = config.get("field")
        self.path = SingleFieldPath(self.field, FieldSyntaxVersion.from_config(config))
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema = self.operating_schema(record)
        if schema is None:
            value = require_map_or_null(self.operating_value(record), self._PURPOSE)
            return self.new_record(record, None, None if value is None else self.path.value_from(value))
        struct = require_struct_or_null(self.operating_value(record), self._PURPOSE)
        field = self.path.field_from(schema)
        if field is None:
            raise ValueError(f"Unknown field: {self.field}")
        extracted = None if struct is None else self.path.value_from(struct, self.replace_null_with_default)
        return self.new_record(record, field.schema, extracted)


ExtractFieldKey, ExtractFieldValue = variants(ExtractField)
