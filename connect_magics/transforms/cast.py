"""``Cast``: cast fields, or the whole key or value, to another primitive type, as Java casts them
(integers wrap to the narrower width, floats truncate toward zero, binary becomes base64 text).

Example::

    >>> t = Cast.Value(); t.configure({"spec": "age:int8,score:string"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value={"age": 300, "score": 1.5, "x": 1})).value
    {'age': 44, 'score': '1.5', 'x': 1}
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigException,
    Importance,
    LambdaValidator,
    Type,
    java_double_str,
)
from connect_magics.api.data import (
    Date,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    copy_schema_basics,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    class_name,
    field_value,
    require_map,
    require_struct,
    variants,
)

__all__ = ["Cast", "CastKey", "CastValue", "cast_value"]

_INPUT = [SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT32,
          SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING, SchemaType.BYTES]
_OUTPUT = _INPUT[:-1]
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_WHOLE_VALUE = None  # the spec's key for a cast of the whole key or value
_JAVA_INT = re.compile(r"[+-]?\d+")
_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")


def _type_list(types: list[SchemaType]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _output_type(name: str) -> SchemaType:
    try:
        schema_type = SchemaType[name.strip().upper()]
    except KeyError as e:  # Kafka passes the enum's exception as the ConfigException's value: the same text
        raise ConfigException(f"Invalid type found in casting spec: {name.strip()}",
                              "java.lang.IllegalArgumentException: No enum constant "
                              f"org.apache.kafka.connect.data.Schema.Type.{name.strip().upper()}") from e
    if schema_type not in _OUTPUT:
        raise ConfigException(f"Cast transformation does not support casting to {schema_type.name}; supported types "
                              f"are {_type_list(_OUTPUT)}")
    return schema_type


def parse_spec(mappings: list[str]) -> dict[str | None, SchemaType]:
    """``field:type`` pairs, or a single ``type`` for the whole value."""
    casts: dict[str | None, SchemaType] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) > 2:
            raise ConfigException("renames", mappings, f"Invalid rename mapping: {mapping}")
        if len(parts) == 1:
            casts[_WHOLE_VALUE] = _output_type(parts[0])
            whole = True
        else:
            casts[parts[0].strip()] = _output_type(parts[1])
    if whole and len(mappings) > 1:
        raise ConfigException("Cast transformations that specify a type to cast the entire value to may only specify "
                              "a single cast in their spec")
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigException("Must specify at least one field to cast.")
    parse_spec(value)


def _inferred_type(value: Any) -> SchemaType | None:
    """Kafka's ``ConnectSchema.schemaType(value.getClass())`` for a schemaless value."""
    if isinstance(value, bool):
        return SchemaType.BOOLEAN
    if isinstance(value, int):
        return SchemaType.INT64
    if isinstance(value, float):
        return SchemaType.FLOAT64
    if isinstance(value, str):
        return SchemaType.STRING
    if isinstance(value, (bytes, bytearray)):
        return SchemaType.BYTES
    if isinstance(value, list):
        return SchemaType.ARRAY
    if isinstance(value, Mapping):
        return SchemaType.MAP
    if isinstance(value, Struct):
        return SchemaType.STRUCT
    return None


def _float32(value: float) -> float:
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _java_int(value: float | decimal.Decimal, bits: int) -> int:
    """Java's narrowing of a floating-point number: NaN is 0, truncation toward zero, saturation at the
    int (or long) range, then the two's-complement wrap of ``(byte)`` / ``(short)``."""
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        saturate = 64 if bits == 64 else 32
        lo, hi = -(1 << (saturate - 1)), (1 << (saturate - 1)) - 1
        if math.isinf(value):
            n = hi if value > 0 else lo
        else:
            n = max(lo, min(hi, int(value)))
    else:  # BigDecimal.intValue(): the low bits of the integral part
        n = int(value)
    return _wrap(n, bits)


def _wrap(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def _parse_int(text: str, bits: int) -> int:
    if not _JAVA_INT.fullmatch(text):
        raise ValueError(text)
    n = int(text)
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise ValueError(text)
    return n


def _parse_float(text: str) -> float:
    stripped = text.strip()
    if not _JAVA_FLOAT.fullmatch(stripped):
        raise ValueError(text)
    return float(stripped[:-1] if stripped[-1] in "fFdD" else stripped)  # Java's 2.5f, 2.5d


def _date_string(value: _dt.date | _dt.time) -> str:
    """Kafka's ``Values.dateFormatFor``, in UTC: before the epoch's second day a time (``HH:mm:ss.SSS'Z'``, even
    for earlier dates, as Kafka), at midnight a date, else an ISO timestamp."""
    if isinstance(value, _dt.datetime):
        millis = Timestamp.from_logical(Timestamp.SCHEMA, value)
    elif isinstance(value, _dt.date):
        millis = Date.from_logical(Date.SCHEMA, value) * 86_400_000
    else:
        millis = Time.from_logical(Time.SCHEMA, value)
    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=millis)
    if millis < 86_400_000:
        return t.strftime("%H:%M:%S.") + f"{millis % 1000:03d}Z"
    if millis % 86_400_000 == 0:
        return t.strftime("%Y-%m-%d")
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def _to_string(value: Any, schema_type: SchemaType | None) -> str:
    if isinstance(value, (_dt.date, _dt.time)):
        return _date_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value, float32=schema_type is SchemaType.FLOAT32)
    if isinstance(value, decimal.Decimal):
        return _big_decimal_str(value)
    return str(value)


def _big_decimal_str(value: decimal.Decimal) -> str:
    """``BigDecimal.toString``: plain unless the exponent is positive or the adjusted exponent below -6."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = "".join(map(str, digits))
    adjusted = len(unscaled) - 1 + exponent
    if exponent <= 0 and adjusted >= -6:
        return str(value) if "E" not in str(value) else format(value, "f")
    text = unscaled[0] + ("." + unscaled[1:] if len(unscaled) > 1 else "")
    return ("-" if sign else "") + text + "E" + ("+" if adjusted > 0 else "") + str(adjusted)


def _encode_logical(schema: Schema, value: Any) -> Any:
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """``value`` (of ``schema``, or schemaless) cast to ``target`` as Kafka's ``Cast`` casts it.

    >>> cast_value(None, "42", SchemaType.INT16), cast_value(None, 3.9, SchemaType.INT8)
    (42, 3)
    """
    if value is None:
        return None
    source = _inferred_type(value) if schema is None else schema.type
    if source is None:
        raise DataException(f"Cast transformation was passed a value of type {class_name(value)} which is not "
                            "supported by Connect's data API")
    if source not in _INPUT:
        raise DataException(f"Cast transformation does not support casting from {source.name}; supported types are "
                            f"{_type_list(_INPUT)}")
    if schema is not None and schema.name is not None and target is not SchemaType.STRING:
        value = _encode_logical(schema, value)
    try:
        if target is SchemaType.STRING:
            return _to_string(value, source)
        number = isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)
        if target in _INT_BITS:
            bits = _INT_BITS[target]
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, int):
                return _wrap(value, bits)
            if number:
                return _java_int(value, bits)
            if isinstance(value, str):
                return _parse_int(value, bits)
        elif target in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            if isinstance(value, bool):
                return 1.0 if value else 0.0
            if number or isinstance(value, str):
                result = _parse_float(value) if isinstance(value, str) else float(value)
                return _float32(result) if target is SchemaType.FLOAT32 else result
        elif target is SchemaType.BOOLEAN:
            if isinstance(value, bool):
                return value
            if number:  # Number.longValue() != 0
                return (value if isinstance(value, int) else _java_int(value, 64)) != 0
            if isinstance(value, str):
                return value.lower() == "true"
    except ValueError as e:
        raise DataException(f"Value ({value}) was out of range for requested data type") from e
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def _builder(target: SchemaType) -> SchemaBuilder:
    return SchemaBuilder.of_type(target)


class Cast(KeyOrValue):
    """Casts fields (``spec``: ``field:type,...``) or the whole key or value (``spec``: ``type``) to
    int8, int16, int32, int64, float32, float64, boolean or string."""

    CONFIG_DEF = (ConfigDef()
                  .define("spec", Type.LIST, NO_DEFAULT,
                          LambdaValidator(_validate_spec,
                                          "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                          Importance.HIGH,
                          "List of fields and the type to cast them to of the form field1:type,field2:type to cast "
                          "fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, "
                          "int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can "
                          "only be cast to string.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC))
    _PURPOSE = "cast types"

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.casts = parse_spec(config.get("spec"))
        self.whole = self.casts.get(_WHOLE_VALUE)
        self.replace_null_with_default: bool = config.get("replace.null.with.default")

    def _make_schema(self, schema: Schema) -> Schema:
        if self.whole is not None:
            builder = copy_schema_basics(schema, _builder(self.whole))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for f in schema.fields:
                target = self.casts.get(f.name)
                if target is None:
                    builder.field(f.name, f.schema)
                    continue
                field_builder = _builder(target)
                if f.schema.optional:
                    field_builder.optional()
                if f.schema.default_value is not None:
                    field_builder.default_value(cast_value(f.schema, f.schema.default_value, target))
                builder.field(f.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, builder.type))
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self.whole is not None:
                return self.new_record(record, None, cast_value(None, value, self.whole))
            mapping = require_map(value, self._PURPOSE)
            updated_map = dict(mapping)
            for name, target in self.casts.items():
                assert name is not None
                updated_map[name] = cast_value(None, mapping.get(name), target)
            return self.new_record(record, None, updated_map)
        updated_schema = self._updated_schema(schema, self._make_schema)
        if self.whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self.whole))
        struct = require_struct(value, self._PURPOSE)
        updated = Struct(updated_schema)
        for f in struct.schema.fields:
            original = field_value(struct, f, self.replace_null_with_default)
            target = self.casts.get(f.name)
            updated.put(f.name, original if target is None else cast_value(f.schema, original, target))
        return self.new_record(record, updated_schema, updated)


CastKey, CastValue = variants(Cast)
