"""TimestampConverter, after Kafka's TimestampConverterTest."""

from __future__ import annotations

import datetime as dt

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.data import (
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    STRING_SCHEMA,
    Date,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import SourceRecord
from connect_magics.transforms import TimestampConverter

pytestmark = pytest.mark.unit

UTC = dt.timezone.utc
MILLIS = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z
STAMP = dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
FORMAT = "yyyy MM dd HH mm ss SSS z"
TEXT = "2023 11 14 22 13 20 123 UTC"


def converter(key: bool = False, **settings: str) -> TimestampConverter:
    t = (TimestampConverter.Key if key else TimestampConverter.Value)()
    t.configure({k.replace("_", "."): v for k, v in settings.items()})
    return t


def test_config_errors() -> None:
    with pytest.raises(ConfigException, match="String must be one of: string, unix, Date, Time, Timestamp"):
        converter(target_type="bogus")
    with pytest.raises(ConfigException, match="requires format option to be specified when using string"):
        converter(target_type="string")
    with pytest.raises(ConfigException, match="SimpleDateFormat-compatible pattern for string timestamps: bad"):
        converter(target_type="string", format="bad")


@pytest.mark.parametrize("target, expected", [
    ("Timestamp", STAMP), ("unix", MILLIS), ("string", TEXT), ("Date", dt.date(2023, 11, 14)),
    ("Time", dt.time(22, 13, 20, 123000)),
])
def test_schemaless_from_each_source(target: str, expected: object) -> None:
    for source in (MILLIS, STAMP, TEXT):
        t = converter(target_type=target, format=FORMAT)
        assert t.apply(SourceRecord(None, None, "t", value=source)).value == expected


@pytest.mark.parametrize("precision, unix", [("seconds", 1_700_000_000), ("milliseconds", MILLIS),
                                             ("microseconds", MILLIS * 1000), ("nanoseconds", MILLIS * 1_000_000)])
def test_unix_precision(precision: str, unix: int) -> None:
    assert converter(target_type="unix", unix_precision=precision).apply(
        SourceRecord(None, None, "t", value=STAMP)).value == unix
    back = converter(target_type="Timestamp", unix_precision=precision).apply(SourceRecord(None, None, "t", value=unix))
    expected = STAMP.replace(microsecond=0) if precision == "seconds" else STAMP
    assert back.value == expected


def test_negative_unix_seconds_truncate_toward_zero() -> None:
    t = converter(target_type="unix", unix_precision="seconds")
    assert t.apply(SourceRecord(None, None, "t", value=dt.datetime(1969, 12, 31, 23, 59, 58, 500000,
                                                                  tzinfo=UTC))).value == -1


def test_with_schema_whole_value_and_field() -> None:
    out = converter(target_type="Date").apply(SourceRecord(None, None, "t", value_schema=Timestamp.SCHEMA,
                                                           value=STAMP))
    assert out.value_schema == Date.SCHEMA and out.value == dt.date(2023, 11, 14)
    out = converter(key=True, target_type="Time").apply(SourceRecord(None, None, "t", key_schema=OPTIONAL_INT64_SCHEMA,
                                                                     key=MILLIS))
    assert out.key_schema == Time.builder().optional().build() and out.key == dt.time(22, 13, 20, 123000)
    schema = SchemaBuilder.struct().field("ts", STRING_SCHEMA).field("other", INT64_SCHEMA).build()
    out = converter(field="ts", target_type="unix", format=FORMAT).apply(
        SourceRecord(None, None, "t", value_schema=schema, value=Struct(schema).put("ts", TEXT).put("other", 1)))
    assert out.value.get("ts") == MILLIS and out.value.get("other") == 1
    assert out.value_schema.field("ts").schema == INT64_SCHEMA


def test_errors() -> None:
    with pytest.raises(DataException, match=r"Could not parse timestamp: value \(x\) does not match pattern"):
        converter(target_type="unix", format=FORMAT).apply(SourceRecord(None, None, "t", value="x"))
    with pytest.raises(DataException, match="TimestampConverter does not support builtins.float objects"):
        converter(target_type="unix").apply(SourceRecord(None, None, "t", value=1.5))


def test_null_values() -> None:
    assert converter(target_type="unix").apply(SourceRecord(None, None, "t", value=None)).value is None
    schema = SchemaBuilder.struct().field("ts", Timestamp.builder().optional().build()).optional().build()
    out = converter(field="ts", target_type="unix").apply(SourceRecord(None, None, "t", value_schema=schema,
                                                                       value=None))
    assert out.value is None and out.value_schema.field("ts").schema == OPTIONAL_INT64_SCHEMA
