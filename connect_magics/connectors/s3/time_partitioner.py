"""Confluent's TimeBasedPartitioner (and its Hourly and Daily presets): the encoded partition is the record's
timestamp, floored to ``partition.duration.ms`` in ``timezone``, printed with a Joda-Time ``path.format``.

>>> p = TimeBasedPartitioner("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000, "UTC", "en")
>>> p.encode(1_700_000_000_000)
'year=2023/month=11/day=14/hour=22'
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from connect_magics.api.data import Struct
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord

__all__ = ["TimeBasedPartitioner", "joda_formatter", "timestamp_extractor"]

HOURLY = ("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", 3_600_000)
DAILY = ("'year'=YYYY/'month'=MM/'day'=dd", 86_400_000)

_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _number(get: Callable[[dt.datetime], int], width: int) -> Callable[[dt.datetime], str]:
    return lambda t: f"{get(t):0{width}d}"


def _field(letter: str, width: int) -> Callable[[dt.datetime], str]:
    if letter in "Yyx":
        return (lambda t: f"{t.year % 100:02d}") if width == 2 else _number(lambda t: t.year, width)
    if letter == "M":
        if width >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if width == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return _number(lambda t: t.month, width)
    if letter == "E":
        return (lambda t: _DAYS[t.weekday()]) if width >= 4 else (lambda t: _DAYS[t.weekday()][:3])
    numbers: dict[str, Callable[[dt.datetime], int]] = {
        "d": lambda t: t.day, "H": lambda t: t.hour, "m": lambda t: t.minute, "s": lambda t: t.second,
        "D": lambda t: t.timetuple().tm_yday, "S": lambda t: t.microsecond // 1000,
        "h": lambda t: (t.hour % 12) or 12, "k": lambda t: t.hour or 24, "K": lambda t: t.hour % 12,
        "w": lambda t: t.isocalendar()[1], "e": lambda t: t.isoweekday()}
    if letter not in numbers:
        raise ValueError(f"pattern letter '{letter}' is not supported")
    return _number(numbers[letter], width)


def joda_formatter(pattern: str) -> Callable[[dt.datetime], str]:
    """A function printing a datetime as Joda-Time's ``DateTimeFormat.forPattern(pattern)`` does (English
    month and day names; the numeric fields and quoted literals); ValueError for letters not supported.

    >>> joda_formatter("YYYY-MM-dd'T'HH 'o''clock'")(dt.datetime(2024, 3, 5, 7))
    "2024-03-05T07 o'clock"
    """
    parts: list[Callable[[dt.datetime], str] | str] = []
    for match in _TOKEN.finditer(pattern):
        text = match.group(0)
        if text.startswith("'"):
            parts.append("'" if text == "''" else text[1:-1].replace("''", "'"))
        elif match.group(1):
            parts.append(_field(text[0], len(text)))
        else:
            parts.append(text)
    return lambda t: "".join(p if isinstance(p, str) else p(t) for p in parts)


class TimeBasedPartitioner:
    """``encode(timestamp_ms)``: the path of the time bucket holding that instant."""

    def __init__(self, path_format: str, duration_ms: int, timezone: str, locale: str) -> None:
        try:
            self.zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError) as e:
            raise ValueError(f"Unknown timezone {timezone}") from e
        self.format = joda_formatter(path_format)
        self.duration_ms = duration_ms
        self.locale = locale

    def encode(self, timestamp_ms: int) -> str:
        instant = dt.datetime.fromtimestamp(timestamp_ms / 1000, self.zone)
        offset_ms = int(instant.utcoffset().total_seconds() * 1000)  # type: ignore[union-attr]
        local = timestamp_ms + offset_ms
        if self.duration_ms > 0:
            local -= local % self.duration_ms
        naive = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=local)
        return self.format(naive)


def timestamp_extractor(name: str, field: str, now: Callable[[], int]) -> Callable[[SinkRecord], int]:
    """Confluent's ``timestamp.extractor``: Wallclock (now), Record (the record's timestamp) or RecordField
    (``timestamp.field`` of the value: epoch milliseconds, a datetime or an ISO-8601 string)."""
    def where(record: SinkRecord) -> str:
        return f"record {record.topic}-{record.kafka_partition}@{record.kafka_offset}"

    if name == "Wallclock":
        return lambda record: now()
    if name == "Record":
        def record_time(record: SinkRecord) -> int:
            if record.timestamp is None:
                raise ConnectException(f"timestamp.extractor=Record: {where(record)} has no timestamp")
            return record.timestamp
        return record_time

    def field_time(record: SinkRecord) -> int:
        value: Any = record.value
        for name_part in field.split("."):
            if isinstance(value, Struct) and value.schema.field(name_part) is not None:
                value = value.get(name_part)
            elif isinstance(value, Mapping) and name_part in value:
                value = value[name_part]
            else:
                raise ConnectException(
                    f"timestamp.field: the value of {where(record)} has no field '{field}'")
        if isinstance(value, dt.datetime):
            return int(value.timestamp() * 1000)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
            except ValueError:
                pass
        raise ConnectException(f"timestamp.field: field '{field}' of {where(record)} is not a timestamp: "
                               f"{value!r}")
    return field_time
