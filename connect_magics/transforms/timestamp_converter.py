"""``TimestampConverter``: convert a timestamp field, or the whole key or value, between Unix epoch numbers,
strings (a ``java.text.SimpleDateFormat`` pattern, UTC) and Connect's Date, Time and Timestamp types.

Example::

    >>> t = TimestampConverter.Value()
    >>> t.configure({"field": "at", "target.type": "string", "format": "yyyy-MM-dd HH:mm"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"at": 1_700_000_000_000})).value
    {'at': '2023-11-14 22:13'}
"""

from __future__ import annotations

import datetime as _dt
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
from connect_magics.api.data import (
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    copy_schema_basics,
)
from connect_magics.api.errors import ConnectException, DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.date_format import SimpleDateFormat
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    class_name,
    field_value,
    require_map,
    require_struct_or_null,
    variants,
)

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

_STRING, _UNIX, _DATE, _TIME, _TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_DAY = 86_400_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_OPTIONAL_DATE = Date.builder().optional().build()
_OPTIONAL_TIME = Time.builder().optional().build()
_OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()
_SCHEMAS = {_STRING: (STRING_SCHEMA, OPTIONAL_STRING_SCHEMA), _UNIX: (INT64_SCHEMA, OPTIONAL_INT64_SCHEMA),
            _DATE: (Date.SCHEMA, _OPTIONAL_DATE), _TIME: (Time.SCHEMA, _OPTIONAL_TIME),
            _TIMESTAMP: (Timestamp.SCHEMA, _OPTIONAL_TIMESTAMP)}
_PER_MILLI = {"seconds": (1000, 1), "milliseconds": (1, 1), "microseconds": (1, 1000), "nanoseconds": (1, 1_000_000)}


def _div(a: int, b: int) -> int:
    """Java's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _millis(value: _dt.date | _dt.time) -> int:
    if isinstance(value, _dt.datetime):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, _dt.date):
        return Date.from_logical(Date.SCHEMA, value) * _DAY
    return Time.from_logical(Time.SCHEMA, value)


class TimestampConverter(KeyOrValue):
    """Converts ``field`` (or, when empty, the whole key or value) to ``target.type``: string, unix, Date,
    Time or Timestamp."""

    CONFIG_DEF = (ConfigDef()
                  .define("field", Type.STRING, "", None, Importance.HIGH,
                          "The field containing the timestamp, or empty if the entire value is a timestamp")
                  .define("target.type", Type.STRING, NO_DEFAULT,
                          ValidString.in_(_STRING, _UNIX, _DATE, _TIME, _TIMESTAMP), Importance.HIGH,
                          "The desired timestamp representation: string, unix, Date, Time, or Timestamp")
                  .define("format", Type.STRING, "", None, Importance.MEDIUM,
                          "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
                          "type=string or used to parse the input if the input is a string.")
                  .define("unix.precision", Type.STRING, "milliseconds",
                          ValidString.in_("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance.LOW,
                          "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
                          "nanoseconds. Used to generate the output when type=unix or used to parse the input if the "
                          "input is a Long.Note: This SMT will cause precision loss during conversions from, and to, "
                          "values with sub-millisecond components.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))
    _PURPOSE = "converting timestamp formats"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.field: str = config.get("field")
        self.target: str = config.get("target.type")
        pattern: str | None = config.get("format")
        self.precision: str = config.get("unix.precision")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        blank = pattern is None or not pattern.strip()
        if self.target == _STRING and blank:
            raise ConfigException("TimestampConverter requires format option to be specified when using string "
                                  "timestamps")
        self.format: SimpleDateFormat | None = None
        if not blank:
            try:
                self.format = SimpleDateFormat(pattern)  # type: ignore[arg-type]
            except ValueError as e:
                raise ConfigException("TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
                                      f"timestamps: {pattern}") from e

    # ------------------------------------------------------------------------------------ conversions
    def _to_raw(self, kind: str, value: Any) -> int:
        if kind == _STRING:
            if not isinstance(value, str):
                raise DataException(f"Expected string timestamp to be a String, but found {class_name(value)}")
            assert self.format is not None
            try:
                return self.format.parse(value)
            except ValueError as e:
                raise DataException(f"Could not parse timestamp: value ({value}) does not match pattern "
                                    f"({self.format.to_pattern()})") from e
        if kind == _UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataException(f"Expected Unix timestamp to be a Long, but found {class_name(value)}")
            per, div = _PER_MILLI[self.precision]
            return value * per if per > 1 else _div(value, div)
        if not isinstance(value, (_dt.date, _dt.time)):
            raise DataException(f"Expected {kind} to be a java.util.Date, but found {class_name(value)}")
        return _millis(value)

    def _to_type(self, millis: int) -> Any:
        if self.target == _STRING:
            if self.format is None:
                raise ConfigException("TimestampConverter requires format option to be specified when using string "
                                      "timestamps")
            return self.format.format(millis)
        if self.target == _UNIX:
            per, div = _PER_MILLI[self.precision]
            return _div(millis, per) if per > 1 else millis * div
        if self.target == _DATE:
            return Date.to_logical(Date.SCHEMA, millis // _DAY)
        if self.target == _TIME:
            return Time.to_logical(Time.SCHEMA, millis % _DAY)
        return Timestamp.to_logical(Timestamp.SCHEMA, millis)

    def _convert(self, value: Any, kind: str | None = None) -> Any:
        if value is None:
            return None
        if kind is None:
            if isinstance(value, (_dt.date, _dt.time)):
                kind = _TIMESTAMP
            elif isinstance(value, int) and not isinstance(value, bool):
                kind = _UNIX
            elif isinstance(value, str):
                kind = _STRING
            else:
                raise DataException(f"TimestampConverter does not support {class_name(value)} objects as timestamps")
        return self._to_type(self._to_raw(kind, value))

    @staticmethod
    def _kind(schema: Schema) -> str:
        if schema.name == Timestamp.LOGICAL_NAME:
            return _TIMESTAMP
        if schema.name == Date.LOGICAL_NAME:
            return _DATE
        if schema.name == Time.LOGICAL_NAME:
            return _TIME
        if schema.type is SchemaType.STRING:
            return _STRING
        if schema.type is SchemaType.INT64:
            return _UNIX
        raise ConnectException(f"Schema {schema} does not correspond to a known timestamp type format")

    def _target_schema(self, optional: bool) -> Schema:
        return _SCHEMAS[self.target][1 if optional else 0]

    # ---------------------------------------------------------------------------------------- apply
    def _struct(self, value: Struct | None, schema: Schema) -> Struct | None:
        if value is None:
            return None
        updated = Struct(schema)
        for f in value.schema.fields:
            v = field_value(value, f, self.replace_null_with_default)
            updated.put(f.name, self._convert(v, self._kind(f.schema)) if f.name == self.field else v)
        return updated

    def _make_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            builder.field(f.name, self._target_schema(f.schema.optional) if f.name == self.field else f.schema)
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(self._struct(schema.default_value, builder.build()))
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            if value is None or not self.field:
                return self.new_record(record, None, self._convert(value))
            updated_map = dict(require_map(value, self._PURPOSE))
            updated_map[self.field] = self._convert(updated_map.get(self.field))
            return self.new_record(record, None, updated_map)
        if not self.field:
            return self.new_record(record, self._target_schema(schema.optional), self._convert(value, self._kind(schema)))
        struct = require_struct_or_null(value, self._PURPOSE)
        updated_schema = self._updated_schema(schema, self._make_schema)
        return self.new_record(record, updated_schema, self._struct(struct, updated_schema))


TimestampConverterKey, TimestampConverterValue = variants(TimestampConverter)
