"""Java ``SimpleDateFormat`` patterns in UTC, for ``TimestampConverter`` and ``TimestampRouter``.

Supported letters: ``G y Y M L d D E u a H k K h m s S z Z X`` and ``'quoted'`` text; any other ASCII letter
is refused as Java refuses it ("Illegal pattern character"). Formatting and parsing are in UTC, in English.
Parsing reads from the start of the text and ignores what follows a complete match, as
``SimpleDateFormat.parse(String)`` does.

Example::

    >>> f = SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSX")
    >>> f.format(1_700_000_000_123)
    '2023-11-14T22:13:20.123Z'
    >>> f.parse("2023-11-14T22:13:20.123Z")
    1700000000123
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re

__all__ = ["SimpleDateFormat"]

_MONTHS = list(calendar.month_name)[1:]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_LETTERS = set("GyYMLdDEuaHkKhmsSzZXwWF")
_NUMERIC = set("yYMLdDuHkKhmsSwWF")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _tokens(pattern: str) -> list[tuple[str, int | str]]:
    """(letter, count) for pattern letters, ("'", text) for literal text."""
    out: list[tuple[str, int | str]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            end = i + 1
            text = ""
            while True:
                if end >= n:
                    raise ValueError("Unterminated quote")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text += "'"
                        end += 2
                        continue
                    break
                text += pattern[end]
                end += 1
            out.append(("'", text if end > i + 1 else "'"))
            i = end + 1
        elif c.isascii() and c.isalpha():
            if c not in _LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            out.append((c, j - i))
            i = j
        else:
            out.append(("'", c))
            i += 1
    return out


class SimpleDateFormat:
    """A ``java.text.SimpleDateFormat`` in UTC: :meth:`format` epoch milliseconds, :meth:`parse` text back.

    A bad pattern raises ``ValueError`` (Java's ``IllegalArgumentException``) with Java's message.

    >>> SimpleDateFormat("yyyyMMdd").format(0)
    '19700101'
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokens(pattern)
        self._regex: re.Pattern[str] | None = None

    def to_pattern(self) -> str:
        return self.pattern

    # ------------------------------------------------------------------------------------------- format
    def format(self, millis: int) -> str:
        t = _EPOCH + _dt.timedelta(milliseconds=millis)
        return "".join(text if letter == "'" else self._field(letter, int(text), t, millis)
                       for letter, text in self._tokens)  # type: ignore[arg-type]

    @staticmethod
    def _field(c: str, count: int, t: _dt.datetime, millis: int) -> str:
        def num(v: int) -> str:
            return str(v).zfill(count) if v >= 0 else "-" + str(-v).zfill(count)
        if c == "G":
            return "AD" if t.year > 0 else "BC"
        if c in "yY":
            return str(t.year % 100).zfill(2) if count == 2 else num(t.year)
        if c in "ML":
            if count >= 4:
                return _MONTHS[t.month - 1]
            return _MONTHS[t.month - 1][:3] if count == 3 else num(t.month)
        if c == "d":
            return num(t.day)
        if c == "D":
            return num(t.timetuple().tm_yday)
        if c == "E":
            return _DAYS[t.weekday()] if count >= 4 else _DAYS[t.weekday()][:3]
        if c == "u":
            return num(t.isoweekday())
        if c == "a":
            return "AM" if t.hour < 12 else "PM"
        if c == "H":
            return num(t.hour)
        if c == "k":
            return num(t.hour or 24)
        if c == "K":
            return num(t.hour % 12)
        if c == "h":
            return num(t.hour % 12 or 12)
        if c == "m":
            return num(t.minute)
        if c == "s":
            return num(t.second)
        if c == "S":
            return num(millis % 1000)
        if c == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        if c == "Z":
            return "+0000"
        if c == "X":
            return "Z"
        if c == "w":
            return num(t.isocalendar()[1])
        if c == "W":
            return num((t.day + _dt.date(t.year, t.month, 1).weekday()) // 7 + 1)
        return num((t.day - 1) // 7 + 1)  # F

    # -------------------------------------------------------------------------------------------- parse
    def _compiled(self) -> re.Pattern[str]:
        if self._regex is None:
            parts = []
            for k, (letter, text) in enumerate(self._tokens):
                if letter == "'":
                    parts.append(re.escape(str(text)))
                    continue
                count = int(text)
                nxt = self._tokens[k + 1][0] if k + 1 < len(self._tokens) else None
                abutting = nxt is not None and nxt in _NUMERIC
                if letter in _NUMERIC and not (letter in "ML" and count >= 3):
                    digits = rf"\d{{{count}}}" if abutting else r"\d+"
                    if letter in "yY" and not abutting:
                        digits = r"[+-]?\d+"
                    parts.append(f"(?P<{letter}{k}>{digits})")
                elif letter in "ML":
                    parts.append(f"(?P<{letter}{k}>[A-Za-z]+)")
                elif letter == "E":
                    parts.append(r"(?:[A-Za-z]+)")
                elif letter == "G":
                    parts.append(r"(?:AD|BC)")
                elif letter == "a":
                    parts.append(f"(?P<a{k}>[AaPp][Mm])")
                else:  # z Z X: zones
                    parts.append(f"(?P<zone{k}>Z|[+-]\\d{{2}}:?(?:\\d{{2}})?|UTC|GMT(?:[+-]\\d{{1,2}}:?\\d{{2}})?"
                                 "|Coordinated Universal Time)")
            self._regex = re.compile("".join(parts), re.IGNORECASE)
        return self._regex

    def parse(self, text: str) -> int:
        """Epoch milliseconds of ``text``; ``ValueError`` ('Unparseable date: "..."') when it does not match."""
        match = self._compiled().match(text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        year, month, day, hour, minute, second, milli, yday = 1970, 1, 1, 0, 0, 0, 0, None
        pm, hour12, offset = None, None, 0
        for name, value in match.groupdict().items():
            if value is None:
                continue
            letter = name.rstrip("0123456789")
            if letter in "yY":
                year = int(value)
                if len(value) <= 2 and self._count(name) <= 2:
                    now = _dt.datetime.now(_dt.timezone.utc).year
                    year += (now - 80) // 100 * 100
                    if year < now - 80:
                        year += 100
            elif letter in "ML":
                if value.isdigit():
                    month = int(value)
                else:
                    names = [m.lower() for m in _MONTHS]
                    hits = [i for i, m in enumerate(names) if m == value.lower() or m[:3] == value.lower()]
                    if not hits:
                        raise ValueError(f'Unparseable date: "{text}"')
                    month = hits[0] + 1
            elif letter == "d":
                day = int(value)
            elif letter == "D":
                yday = int(value)
            elif letter in "Hk":
                hour = int(value) % 24 if letter == "k" else int(value)
            elif letter in "hK":
                hour12 = int(value) % 12
            elif letter == "m":
                minute = int(value)
            elif letter == "s":
                second = int(value)
            elif letter == "S":
                milli = int(value)
            elif letter == "a":
                pm = value.lower() == "pm"
            elif letter == "zone":
                offset = self._offset(value)
        if hour12 is not None:
            hour = hour12 + (12 if pm else 0)
        elif pm is not None and hour < 12 and pm:
            hour += 12
        # Lenient, as SimpleDateFormat: out-of-range fields roll over into the next ones.
        try:
            start = _dt.datetime(year, 1, 1, tzinfo=_dt.timezone.utc)
        except ValueError as e:
            raise ValueError(f'Unparseable date: "{text}"') from e
        years, months = divmod(month - 1, 12)
        try:
            start = start.replace(year=year + years, month=months + 1)
        except ValueError as e:
            raise ValueError(f'Unparseable date: "{text}"') from e
        days = (yday - 1) if yday is not None else (day - 1)
        if yday is not None:
            start = start.replace(month=1)
        t = start + _dt.timedelta(days=days, hours=hour, minutes=minute, seconds=second, milliseconds=milli)
        return (t - _EPOCH) // _dt.timedelta(milliseconds=1) - offset * 60_000

    def _count(self, group: str) -> int:
        index = int(group.lstrip("yY"))
        return int(self._tokens[index][1])

    @staticmethod
    def _offset(zone: str) -> int:
        """Minutes east of UTC."""
        z = zone.upper()
        if z in ("Z", "UTC", "GMT", "COORDINATED UNIVERSAL TIME"):
            return 0
        m = re.fullmatch(r"(?:GMT)?([+-])(\d{1,2}):?(\d{2})?", z)
        if m is None:
            return 0
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return minutes if m.group(1) == "+" else -minutes
