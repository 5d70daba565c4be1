"""Java SimpleDateFormat patterns (UTC), as TimestampConverter and TimestampRouter use them."""

from __future__ import annotations

import pytest

from connect_magics.transforms.date_format import SimpleDateFormat

pytestmark = pytest.mark.unit

MILLIS = 1_700_000_000_123  # Tuesday 2023-11-14T22:13:20.123Z


@pytest.mark.parametrize("pattern, text", [
    ("yyyyMMdd", "20231114"), ("yy-M-d H:m:s.S", "23-11-14 22:13:20.123"), ("yyyy-MM-dd'T'HH:mm:ss.SSSX",
                                                                           "2023-11-14T22:13:20.123Z"),
    ("EEE, d MMM yyyy hh:mm:ss a z", "Tue, 14 Nov 2023 10:13:20 PM UTC"), ("EEEE MMMM", "Tuesday November"),
    ("'at' HH 'o''clock'", "at 22 o'clock"), ("D Z XXX", "318 +0000 Z"), ("k K h", "22 10 10"),
])
def test_format(pattern: str, text: str) -> None:
    assert SimpleDateFormat(pattern).format(MILLIS) == text


@pytest.mark.parametrize("pattern, text, millis", [
    ("yyyy-MM-dd HH:mm:ss.SSS", "2023-11-14 22:13:20.123", MILLIS),
    ("yyyyMMddHHmmss", "20231114221320", MILLIS - 123),
    ("dd MMM yyyy hh:mm a", "14 Nov 2023 10:13 PM", MILLIS - 20_123),
    ("yyyy-MM-dd'T'HH:mm:ssXXX", "2023-11-15T00:13:20+02:00", MILLIS - 123),
    ("yyyy-MM-dd", "2023-11-14 and more", MILLIS - 80_000_123),
    ("yyyy-MM-dd", "1969-12-31", -86_400_000),
])
def test_parse(pattern: str, text: str, millis: int) -> None:
    assert SimpleDateFormat(pattern).parse(text) == millis


def test_errors() -> None:
    with pytest.raises(ValueError, match="Illegal pattern character 'b'"):
        SimpleDateFormat("yyyy-bb")
    with pytest.raises(ValueError, match='Unparseable date: "nope"'):
        SimpleDateFormat("yyyy").parse("nope")
