"""``MaskField``: replace fields by their type's empty value (0, false, "", an empty list or map) or by a
``replacement`` converted to the field's type.

Example::

    >>> t = MaskField.Value(); t.configure({"fields": "ssn,age"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"ssn": "123", "age": 42, "name": "ann"})).value
    {'ssn': '', 'age': 0, 'name': 'ann'}
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, NonEmptyString, Type
from connect_magics.api.data import Schema, SchemaType, Struct
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    NonEmptyListValidator,
    class_name,
    field_value,
    require_map,
    require_struct,
    variants,
)

__all__ = ["MaskField", "MaskFieldKey", "MaskFieldValue"]

_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_JAVA_NAMES = {8: "Byte", 16: "Short", 32: "Integer", 64: "Long"}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _empty(value: Any) -> Any:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, str):
        return ""
    if isinstance(value, _dt.datetime):
        return _EPOCH
    if isinstance(value, _dt.date):
        return _EPOCH.date()
    if isinstance(value, _dt.time):
        return _dt.time(0)
    if isinstance(value, list):
        return []
    if isinstance(value, Mapping):
        return {}
    raise DataException(f"Cannot mask value of type: {class_name(value)}")


def _replacement(value: Any, schema: Schema | None, replacement: str) -> Any:
    if isinstance(value, str):
        return replacement
    if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal)):
        raise DataException(f"Cannot mask value of type {class_name(value)} with custom replacement.")
    try:
        number = decimal.Decimal(replacement.strip())
        if not number.is_finite():
            raise decimal.InvalidOperation
    except decimal.InvalidOperation as e:
        raise DataException(f"Unable to convert {replacement} (java.lang.String) to number") from e
    if isinstance(value, decimal.Decimal):
        return number
    if isinstance(value, float):
        return float(number)
    bits = _INT_BITS.get(schema.type, 64) if schema is not None else 64
    integral = int(number)
    if not -(1 << (bits - 1)) <= integral < (1 << (bits - 1)):
        raise DataException(f"Unable to convert {replacement} (java.lang.String) to {_JAVA_NAMES[bits]}")
    return integral


class MaskField(KeyOrValue):
    """Masks ``fields`` with the empty value of their type, or with ``replacement`` (numbers and strings only)."""

    CONFIG_DEF = (ConfigDef()
                  .define("fields", Type.LIST, NO_DEFAULT, NonEmptyListValidator(), Importance.HIGH,
                          "Names of fields to mask.")
                  .define("replacement", Type.STRING, None, NonEmptyString(), Importance.LOW,
                          "Custom value replacement, that will be applied to all 'fields' values (numeric or "
                          "non-empty string values only).")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))
    _PURPOSE = "mask fields"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.fields: list[str] = list(dict.fromkeys(config.get("fields")))
        self.replacement: str | None = config.get("replacement")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def _masked(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        return _empty(value) if self.replacement is None else _replacement(value, schema, self.replacement)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value, schema = self.operating_value(record), self.operating_schema(record)
        if schema is None:
            mapping = require_map(value, self._PURPOSE)
            updated_map = dict(mapping)
            for name in self.fields:
                updated_map[name] = self._masked(mapping.get(name), None)
            return self.new_record(record, None, updated_map)
        struct = require_struct(value, self._PURPOSE)
        updated = Struct(struct.schema)
        for f in struct.schema.fields:
            original = field_value(struct, f, self.replace_null_with_default)
            updated.put(f, self._masked(original, f.schema) if f.name in self.fields else original)
        return self.new_record(record, schema, updated)


MaskFieldKey, MaskFieldValue = variants(MaskField)
