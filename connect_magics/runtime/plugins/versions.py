"""Plugin versions and version ranges, as Kafka Connect understands them (KIP-891).

Kafka Connect compares plugin versions with Apache Maven's ``ComparableVersion`` and parses the
``connector.version`` / ``*.plugin.version`` requirements with Maven's ``VersionRange``
(maven-artifact 3.9.6).  This module re-implements both, faithfully, in Python:

* :class:`ComparableVersion` -- Maven's version ordering: ``1.0-alpha < 1.0-beta < 1.0-rc1 <
  1.0-SNAPSHOT < 1.0 == 1.0.0 < 1.0-sp < 1.0.1``, case-insensitive, any number of components.
* :class:`VersionRange` / :class:`Restriction` -- range specs such as ``[1.0,2.0)``, ``(,1.0],[1.2,)``,
  ``[1.5]`` (exactly 1.5) or ``1.5`` (a soft, "recommended" version that matches anything).
* :func:`connector_version_requirement` -- Kafka Connect's rule turning a configured version into a
  range (``None`` or ``"latest"`` means no requirement; a bare version is a hard requirement).
* :func:`newest_matching`, :func:`sort_versions`, :func:`compare_versions` -- small helpers.

Example::

    >>> sort_versions(["1.0", "1.0-SNAPSHOT", "1.0.1", "1.0-rc1", "1.0-alpha"])
    ['1.0-alpha', '1.0-rc1', '1.0-SNAPSHOT', '1.0', '1.0.1']
    >>> str(connector_version_requirement("1.2"))
    '[1.2,1.2]'
    >>> newest_matching(["0.9", "1.5", "2.0"], connector_version_requirement("[1.0,2.0)"))
    '1.5'
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import zip_longest

__all__ = [
    "EVERYTHING",
    "ComparableVersion",
    "InvalidVersionSpecificationError",
    "Restriction",
    "VersionRange",
    "compare_versions",
    "connector_version_requirement",
    "newest_matching",
    "sort_versions",
]


class InvalidVersionSpecificationError(ValueError):
    """A version range spec that Maven rejects (``InvalidVersionSpecificationException``)."""


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _java_trim(s: str) -> str:
    """``String.trim()``: strips ASCII control characters and spaces (``<= ' '``) only."""
    start, end = 0, len(s)
    while start < end and s[start] <= " ":
        start += 1
    while end > start and s[end - 1] <= " ":
        end -= 1
    return s[start:end]


def _is_digit(c: str) -> bool:
    # Character.isDigit(char): Unicode decimal digits of the BMP (Java iterates UTF-16 units).
    return c.isdecimal() and c <= "\uffff"


# ---------------------------------------------------------------------------------------------------------
# Items of a parsed version: numbers, qualifiers and sub-lists (Maven's IntItem/LongItem/BigIntegerItem,
# StringItem and ListItem).  ``compare(None)`` compares an item with "nothing" (a missing component).


class _Num:
    """A numeric component.  Maven keeps int (<= 9 digits), long (<= 18) and BigInteger items apart:
    any wider kind sorts above any narrower kind, which (after leading zeroes are stripped) matches
    numeric order for ASCII digits."""

    __slots__ = ("rank", "value")

    def __init__(self, digits: str) -> None:
        stripped = digits.lstrip("0") or digits  # all zeroes: kept as is (Maven's stripLeadingZeroes)
        self.rank = 0 if len(stripped) <= 9 else 1 if len(stripped) <= 18 else 2
        self.value = int(stripped)

    def is_null(self) -> bool:
        return self.value == 0

    def compare(self, other: _Item | None) -> int:
        if other is None:
            return 0 if self.value == 0 else 1  # 1.0 == 1, 1.1 > 1
        if isinstance(other, _Num):
            return _cmp((self.rank, self.value), (other.rank, other.value))
        return 1  # 1.1 > 1-sp, 1.1 > 1-1

    def key(self) -> tuple:
        return ("n", self.rank, self.value)

    def __str__(self) -> str:
        return str(self.value)


_QUALIFIERS = ("alpha", "beta", "milestone", "rc", "snapshot", "", "sp")
_ALIASES = {"ga": "", "final": "", "release": "", "cr": "rc"}
_SHORT_ALIASES = {"a": "alpha", "b": "beta", "m": "milestone"}  # only when followed by a digit: a1 = alpha-1


@functools.lru_cache(maxsize=1024)
def _comparable_qualifier(qualifier: str) -> bytes:
    """Known qualifiers by rank ("0".."6"), unknown ones after them ("7-xyz"), compared lexically.

    Encoded as UTF-16-BE so that byte order equals Java's ``String.compareTo`` (UTF-16 code units)."""
    rank = (
        str(_QUALIFIERS.index(qualifier)) if qualifier in _QUALIFIERS else f"{len(_QUALIFIERS)}-{qualifier}"
    )
    return rank.encode("utf-16-be")


_RELEASE = _comparable_qualifier("")


class _Str:
    """A qualifier such as ``alpha``, ``rc``, ``sp`` or any other word."""

    __slots__ = ("value",)

    def __init__(self, value: str, followed_by_digit: bool) -> None:
        if followed_by_digit:
            value = _SHORT_ALIASES.get(value, value)
        self.value = _ALIASES.get(value, value)

    def is_null(self) -> bool:
        return _comparable_qualifier(self.value) == _RELEASE

    def compare(self, other: _Item | None) -> int:
        if other is None:
            return _cmp(_comparable_qualifier(self.value), _RELEASE)  # 1-rc < 1, 1-sp > 1
        if isinstance(other, _Str):
            return _cmp(_comparable_qualifier(self.value), _comparable_qualifier(other.value))
        return -1  # 1.any < 1.1, 1.any < 1-1

    def key(self) -> tuple:
        return ("s", self.value)

    def __str__(self) -> str:
        return self.value


class _List(list):
    """A list of items; a ``-`` (or a letter/digit transition) opens a nested sub-list."""

    def is_null(self) -> bool:
        return not self

    def normalize(self) -> None:
        """Drop trailing null items (0, "", empty lists), looking through trailing sub-lists."""
        for i in range(len(self) - 1, -1, -1):
            if self[i].is_null():
                del self[i]
            elif not isinstance(self[i], _List):
                break

    def compare(self, other: _Item | None) -> int:
        if other is None:
            # compare every item with "nothing", not only the first one (MNG-6964)
            return next((r for r in (item.compare(None) for item in self) if r), 0)
        if isinstance(other, _Num):
            return -1  # 1-1 < 1.0.x
        if isinstance(other, _Str):
            return 1  # 1-1 > 1-sp
        for left, right in zip_longest(self, other):
            result = -right.compare(None) if left is None else left.compare(right)
            if result:
                return result
        return 0

    def key(self) -> tuple:
        return ("l", tuple(item.key() for item in self))

    def __str__(self) -> str:
        out = ""
        for item in self:
            if out:  # like Maven: no separator while the text so far is empty (e.g. after "ga")
                out += "-" if isinstance(item, _List) else "."
            out += str(item)
        return out


_Item = _Num | _Str | _List


def _parse_item(is_digit: bool, text: str) -> _Item:
    return _Num(text) if is_digit else _Str(text, False)


def _parse(version: str) -> _List:
    version = version.lower()
    root = current = _List()
    lists = [root]

    def open_sublist() -> _List:
        sub = _List()
        current.append(sub)
        lists.append(sub)
        return sub

    is_digit = False
    start = 0
    for i, c in enumerate(version):
        if c in ".-":
            current.append(_Num("0") if i == start else _parse_item(is_digit, version[start:i]))
            start = i + 1
            if c == "-":
                current = open_sublist()
        elif _is_digit(c):
            if not is_digit and i > start:
                # a letter -> digit transition: "1.0.0.X1" is treated like "1.0.0-X1" (MNG-7644)
                if current:
                    current = open_sublist()
                current.append(_Str(version[start:i], True))
                start = i
                current = open_sublist()
            is_digit = True
        else:
            if is_digit and i > start:
                current.append(_parse_item(True, version[start:i]))
                start = i
                current = open_sublist()
            is_digit = False
    if len(version) > start:
        if not is_digit and current:
            current = open_sublist()
        current.append(_parse_item(is_digit, version[start:]))
    for lst in reversed(lists):  # innermost first
        lst.normalize()
    return root


@functools.total_ordering
class ComparableVersion:
    """A version string with Maven's ordering (``org.apache.maven.artifact.versioning.ComparableVersion``).

    Components are separated by ``.``, ``-`` or a letter/digit transition; numbers compare numerically,
    qualifiers by ``alpha < beta < milestone < rc == cr < snapshot < "" == ga == final == release < sp``
    (``a1``/``b1``/``m1`` mean alpha/beta/milestone 1), then unknown qualifiers alphabetically.
    Trailing zeroes and release qualifiers are ignored.  ``str()`` gives the original text.

    >>> ComparableVersion("1.0-alpha") < ComparableVersion("1.0-beta") < ComparableVersion("1.0-rc1")
    True
    >>> ComparableVersion("1.0-SNAPSHOT") < ComparableVersion("1.0") == ComparableVersion("1.0.0.GA")
    True
    >>> ComparableVersion("1.0.0-FINAL").canonical, str(ComparableVersion("1.0.0-FINAL"))
    ('1', '1.0.0-FINAL')
    """

    __slots__ = ("_value", "_items", "_key")

    def __init__(self, version: str) -> None:
        self._value = version
        self._items = _parse(version)
        self._key = self._items.key()

    @property
    def canonical(self) -> str:
        """The normalized form, e.g. ``1-alpha-1`` for ``1.0a1``."""
        return str(self._items)

    def compare_to(self, other: ComparableVersion) -> int:
        """-1, 0 or 1 as in Java's ``compareTo``."""
        return self._items.compare(other._items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ComparableVersion):
            return NotImplemented
        return self._key == other._key

    def __lt__(self, other: ComparableVersion) -> bool:
        if not isinstance(other, ComparableVersion):
            return NotImplemented
        return self.compare_to(other) < 0

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"ComparableVersion({self._value!r})"


def _as_version(version: str | ComparableVersion) -> ComparableVersion:
    return version if isinstance(version, ComparableVersion) else ComparableVersion(version)


@dataclass(frozen=True)
class Restriction:
    """One interval of a :class:`VersionRange`; a missing bound is unbounded.

    >>> r = Restriction(ComparableVersion("1.0"), True, ComparableVersion("2.0"), False)
    >>> str(r), r.contains_version("1.5"), r.contains_version("2.0")
    ('[1.0,2.0)', True, False)
    """

    lower_bound: ComparableVersion | None
    lower_bound_inclusive: bool
    upper_bound: ComparableVersion | None
    upper_bound_inclusive: bool

    def contains_version(self, version: str | ComparableVersion) -> bool:
        version = _as_version(version)
        if self.lower_bound is not None:
            c = self.lower_bound.compare_to(version)
            if c > 0 or (c == 0 and not self.lower_bound_inclusive):
                return False
        if self.upper_bound is not None:
            c = self.upper_bound.compare_to(version)
            if c < 0 or (c == 0 and not self.upper_bound_inclusive):
                return False
        return True

    def __str__(self) -> str:
        return "".join(
            (
                "[" if self.lower_bound_inclusive else "(",
                "" if self.lower_bound is None else str(self.lower_bound),
                ",",
                "" if self.upper_bound is None else str(self.upper_bound),
                "]" if self.upper_bound_inclusive else ")",
            )
        )


EVERYTHING = Restriction(None, False, None, False)


@dataclass(frozen=True)
class VersionRange:
    """A Maven version range (``org.apache.maven.artifact.versioning.VersionRange``).

    A spec is either a soft version (``1.0``: a recommendation, every version matches) or one or more
    comma-separated intervals: ``[1.0]`` (exactly 1.0), ``[1.0,2.0)``, ``[1.5,)``, ``(,1.0],[1.2,)``.

    >>> r = VersionRange.create_from_version_spec("(,1.0],[1.2,)")
    >>> r.contains_version("1.1"), r.contains_version("1.2"), r.has_restrictions(), str(r)
    (False, True, True, '(,1.0],[1.2,)')
    >>> soft = VersionRange.create_from_version_spec("1.2")
    >>> str(soft), soft.has_restrictions(), soft.contains_version("0.1")
    ('1.2', False, True)
    >>> str(VersionRange.create_from_version_spec("[1.2]"))
    '[1.2,1.2]'
    """

    recommended_version: ComparableVersion | None
    restrictions: tuple[Restriction, ...]

    @classmethod
    def create_from_version_spec(cls, spec: str) -> VersionRange:
        """Parse a spec; raises :class:`InvalidVersionSpecificationError` with Maven's messages.

        >>> VersionRange.create_from_version_spec("[1.0,1.2),(1.1,1.3]")
        Traceback (most recent call last):
        ...
        connect_magics.runtime.plugins.versions.InvalidVersionSpecificationError: Ranges overlap: [1.0,1.2),(1.1,1.3]
        """
        return _create_from_version_spec(spec)

    def contains_version(self, version: str | ComparableVersion) -> bool:
        """True if any restriction contains ``version`` (always true for a soft version)."""
        version = _as_version(version)
        return any(r.contains_version(version) for r in self.restrictions)

    def has_restrictions(self) -> bool:
        """True for real ranges; False for a soft version (and for an empty spec)."""
        return bool(self.restrictions) and self.recommended_version is None

    def match_version(self, versions: Iterable[str | ComparableVersion]) -> ComparableVersion | None:
        """The highest contained version (the first of equal ones), like Maven's ``matchVersion``."""
        matched: ComparableVersion | None = None
        for v in map(_as_version, versions):
            if self.contains_version(v) and (matched is None or v > matched):
                matched = v
        return matched

    def __str__(self) -> str:
        if self.recommended_version is not None:
            return str(self.recommended_version)
        return ",".join(map(str, self.restrictions))


def _parse_restriction(spec: str) -> Restriction:
    lower_inclusive = spec.startswith("[")
    upper_inclusive = spec.endswith("]")
    process = _java_trim(spec[1:-1])
    comma = process.find(",")
    if comma < 0:
        if not (lower_inclusive and upper_inclusive):
            raise InvalidVersionSpecificationError("Single version must be surrounded by []: " + spec)
        version = ComparableVersion(process)
        return Restriction(version, True, version, True)
    # Maven splits at the first comma only: "[1,2,3]" has the upper bound "2,3"
    lower_text, upper_text = _java_trim(process[:comma]), _java_trim(process[comma + 1 :])
    lower = ComparableVersion(lower_text) if lower_text else None
    upper = ComparableVersion(upper_text) if upper_text else None
    if lower is not None and upper is not None:
        c = upper.compare_to(lower)
        if c < 0 or (c == 0 and not (lower_inclusive and upper_inclusive)):
            raise InvalidVersionSpecificationError("Range defies version ordering: " + spec)
    return Restriction(lower, lower_inclusive, upper, upper_inclusive)


def _create_fields(spec: str) -> tuple[ComparableVersion | None, tuple[Restriction, ...]]:
    restrictions: list[Restriction] = []
    process = spec
    upper: ComparableVersion | None = None
    while process.startswith(("[", "(")):
        close_paren, close_bracket = process.find(")"), process.find("]")
        index = close_bracket
        if (close_bracket < 0 or close_paren < close_bracket) and close_paren >= 0:
            index = close_paren
        if index < 0:
            raise InvalidVersionSpecificationError("Unbounded range: " + spec)
        restriction = _parse_restriction(process[: index + 1])
        if upper is not None and (restriction.lower_bound is None or restriction.lower_bound < upper):
            raise InvalidVersionSpecificationError("Ranges overlap: " + spec)
        restrictions.append(restriction)
        upper = restriction.upper_bound
        process = _java_trim(process[index + 1 :])
        if process.startswith(","):
            process = _java_trim(process[1:])
    if not process:
        return None, tuple(restrictions)
    if restrictions:
        raise InvalidVersionSpecificationError(
            "Only fully-qualified sets allowed in multiple set scenario: " + spec
        )
    return ComparableVersion(process), (EVERYTHING,)


@functools.lru_cache(maxsize=512)
def _create_from_version_spec(spec: str) -> VersionRange:
    return VersionRange(*_create_fields(spec))


def connector_version_requirement(version: str | None) -> VersionRange | None:
    """Kafka Connect's ``PluginVersionUtils.connectorVersionRequirement``.

    ``None`` or exactly ``"latest"`` mean "no requirement" (``None``); otherwise the trimmed text is
    parsed, and a soft version becomes a hard one (``1.2`` -> ``[1.2]``).

    >>> connector_version_requirement("latest") is None
    True
    >>> str(connector_version_requirement(" 1.2 ")), str(connector_version_requirement("[1.0,2.0)"))
    ('[1.2,1.2]', '[1.0,2.0)')
    """
    if version is None or version == "latest":
        return None
    version = _java_trim(version)
    rng = VersionRange.create_from_version_spec(version)
    if rng.has_restrictions():
        return rng
    return VersionRange.create_from_version_spec("[" + version + "]")


def compare_versions(a: str | ComparableVersion, b: str | ComparableVersion) -> int:
    """-1, 0 or 1 by Maven ordering.

    >>> compare_versions("1.0", "1.0.0"), compare_versions("1.0-rc1", "1.0"), compare_versions("1.10", "1.9")
    (0, -1, 1)
    """
    return _as_version(a).compare_to(_as_version(b))


def sort_versions(versions: Iterable[str], *, reverse: bool = False) -> list[str]:
    """Sort version strings by Maven ordering (stable; equal versions keep their order).

    >>> sort_versions(["2.0", "10.0", "1.0-SNAPSHOT", "1.0"], reverse=True)
    ['10.0', '2.0', '1.0', '1.0-SNAPSHOT']
    """
    return sorted(versions, key=ComparableVersion, reverse=reverse)


def newest_matching(available: Iterable[str], rng: VersionRange | None) -> str | None:
    """The highest of ``available`` within ``rng`` (``None``: the highest overall), or ``None``.

    >>> newest_matching(["1.0", "1.1", "2.0"], connector_version_requirement("[1.0,2.0)"))
    '1.1'
    >>> newest_matching(["1.0", "2.0-SNAPSHOT"], None), newest_matching(["1.0"], connector_version_requirement("3"))
    ('2.0-SNAPSHOT', None)
    """
    best: tuple[ComparableVersion, str] | None = None
    for text in available:
        v = ComparableVersion(text)
        if (rng is None or rng.contains_version(v)) and (best is None or v > best[0]):
            best = (v, text)
    return None if best is None else best[1]
