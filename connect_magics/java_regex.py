r"""Translate ``java.util.regex`` patterns into equivalent Python :mod:`re` patterns.

Kafka Connect configuration values such as ``topic.creation.<group>.include`` hold *Java* regular
expressions. This module parses a pattern with a port of OpenJDK's ``java.util.regex.Pattern`` parser,
so it accepts and rejects the same patterns (with Java's error descriptions), and emits an equivalent
Python pattern. Where Python has no equivalent, :class:`JavaRegexError` names the construct instead of
silently matching something else. Use ``Pattern.fullmatch`` to reproduce Java's ``Matcher.matches()``;
the translation is exact for one match attempt from the start of the input. The emitted pattern needs no
compile flags: Java's flags are applied while translating.

Translations (Java construct → what the Python pattern does); ``docs/regex-dialect.md`` has the same
table for users:

* Escapes ``\t \n \r \f \a \e \cX \0ooo \xhh \x{h..h} \uhhhh \N{NAME}`` → the code point (an escaped
  surrogate pair ``\uD83D\uDE00`` is one code point, as in Java).
* ``\Q...\E`` → the quoted text, escaped (an unterminated ``\Q`` quotes to the end, as in Java).
* ``.`` → ``[^\n\r\x85\u2028\u2029]`` (Java's line terminators); ``(?s)`` any character; ``(?d)``
  (UNIX_LINES) ``[^\n]``.
* ``\d \D \w \W \s \S`` → ASCII classes, as in Java (Python's are Unicode); ``\h \H`` → Java's horizontal
  whitespace; ``\v \V`` → Java 8+ vertical whitespace (Python's ``\v`` is only VT); ``\R`` →
  ``(?:\r\n|[\n\x0b\x0c\r\x85\u2028\u2029])``.
* ``\p{..}``, ``\P{..}``, ``\pL`` → explicit character classes: POSIX classes (ASCII-only, as in Java),
  general categories (``L``, ``Lu``, ``IsL``, ``gc=Lu``, ``general_category=Lu``, ``LC``, ``LD``,
  ``L1``, ``all``), binary properties (``IsAlphabetic``, ``IsLetter``, ``IsLowercase``, ``IsWhite_Space``,
  ``IsHex_Digit``, ``IsIdeographic``, ``IsWord``, ...) and ``java.lang.Character`` properties
  (``javaLowerCase``, ...). Unicode scripts and blocks (``IsLatin``, ``InGreek``, ``sc=``, ``blk=``),
  emoji properties and unknown names → rejected, naming the property.
* Character classes: ranges, unions, nested classes ``[a[b-d]]`` and negation (covering nested classes,
  as in Java 9+) → one flat Python class, computed exactly. Intersection ``[a-z&&[^aeiou]]`` → rejected.
* ``(?i)`` → case variants are added to the emitted classes (ASCII-only, as in Java; Unicode simple case
  mappings with ``(?iu)``); a back-reference under ``(?i)`` → ``(?a:(?i:\N))`` (``(?i:\N)`` with ``u``).
* ``^`` → ``\A``; ``(?m)^`` → after a Java line terminator (``\r\n`` counts once), never at the very end;
  ``$`` and ``\Z`` → end of input or before a final line terminator,
  ``(?=(?:\r\n|(?<!\r)\n|[\r\x85\u2028\u2029])?\Z)``; ``(?m)$`` → before any line terminator; ``(?d)``
  restricts them to ``\n`` (``$`` → ``(?=\n?\Z)``); ``\z`` → ``\Z``; ``\A`` → ``\A``.
* ``\b \B`` → ASCII word boundaries written as lookarounds (Java 19+; Java 17 also counts non-ASCII
  letters, and Python's own ``\B`` never matches an empty input). ``\G`` → ``\A`` (the same for one
  match attempt from the start). ``\b{g}`` and ``\X`` → rejected.
* ``(?x)`` → whitespace and ``#`` comments are dropped while translating, inside character classes too,
  as Java does (Python's verbose mode keeps them inside classes).
* Inline flags ``(?imsdux-imsdux)`` anywhere (they last to the end of the enclosing group, as in Java;
  Python only accepts global flags at the start) and ``(?flags:...)`` → applied while translating.
  ``(?U)`` (UNICODE_CHARACTER_CLASS) and ``(?c)`` (CANON_EQ) → rejected.
* ``(?<name>...)`` → ``(?P<name>...)``; ``\k<name>`` and ``\N`` → numbered back-references ``(?:\N)``
  with Java's digit rule (``\11`` is group 11 only if 11 groups exist at that point). A reference to a
  group that does not exist never matches (``(?!)``), as in Java; a reference to a group that is not
  closed yet (``(a\1)``, ``\1(a)``) or to a group above 99 → rejected.
* Quantifiers ``? * + {n} {n,} {n,m}``, their lazy (``?``) and possessive (``+``) forms, and atomic
  groups ``(?>...)`` → the same (possessive and atomic need Python 3.11+, else rejected). ``{,m}``, a
  stray ``{`` and ``x{a}`` are Java errors ("Illegal repetition"). A quantified assertion (``^*``) is
  wrapped in ``(?:...)``; Java's repetition of an empty atom (``a{2}{3}``) → ``(?:){3}``.
* Look-ahead → the same. Look-behind: Python requires a fixed width, so a top-level alternation is split,
  ``(?<=a|bc)`` → ``(?:(?<=a)|(?<=bc))``; other variable-length look-behinds → rejected.

Unicode properties use Python's :mod:`unicodedata` (Java 17 uses Unicode 13); the ``Other_Alphabetic``
and ``Ideographic`` tables, which :mod:`unicodedata` lacks, are Java 17's.

Example::

    >>> rx = compile_java_regex(r"(?i)orders\.\p{Digit}++")
    >>> bool(rx.fullmatch("ORDERS.42"))
    True
    >>> translate_java_regex(r"\Qa.b\E\d")
    'a\\.b[0-9]'
"""

from __future__ import annotations

import bisect
import functools
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["JavaRegexError", "compile_java_regex", "translate_java_regex"]

_HAS_POSSESSIVE = sys.version_info >= (3, 11)
_MAX_CP = 0x10FFFF
_MAX_REPS = 0x7FFFFFFF


class JavaRegexError(ValueError):
    """A Java regular expression that is invalid in Java, or that connect_magics cannot translate.

    ``str(error)`` has the layout of Java's ``PatternSyntaxException.getMessage()``: the description,
    ``near index N``, the pattern and a caret under the position. ``unsupported`` is true when Java would
    accept the pattern but Python's :mod:`re` has no equivalent.

    Example::

        >>> try:
        ...     compile_java_regex("a{,3}")
        ... except JavaRegexError as e:
        ...     print(e.description, e.index)
        Illegal repetition 2
    """

    def __init__(self, description: str, pattern: str, index: int = -1, *, unsupported: bool = False):
        self.description = description
        self.pattern = pattern
        self.index = index
        self.unsupported = unsupported
        super().__init__(self._java_message())

    def _java_message(self) -> str:
        text = self.description
        if self.index >= 0:
            text += f" near index {self.index}"
        text += "\n" + self.pattern
        if 0 <= self.index < len(self.pattern):
            pad = "".join("\t" if c == "\t" else " " for c in self.pattern[: self.index])
            text += "\n" + pad + "^"
        return text


# --------------------------------------------------------------------------------------------------
# Sets of code points


class _CharSet:
    """An immutable set of code points, as sorted, disjoint, non-adjacent inclusive ranges."""

    __slots__ = ("ranges", "_starts")

    def __init__(self, ranges: Iterable[tuple[int, int]] = (), *, normalized: bool = False):
        if normalized:
            merged = list(ranges)
        else:
            merged = []
            for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
                if merged and lo <= merged[-1][1] + 1:
                    if hi > merged[-1][1]:
                        merged[-1] = (merged[-1][0], hi)
                else:
                    merged.append((lo, hi))
        self.ranges: tuple[tuple[int, int], ...] = tuple(merged)
        self._starts = [lo for lo, _ in self.ranges]

    @classmethod
    def of(cls, *cps: int) -> _CharSet:
        return cls((c, c) for c in cps)

    @classmethod
    def span(cls, lo: int, hi: int) -> _CharSet:
        return cls(((lo, hi),))

    @classmethod
    def parse(cls, text: str) -> _CharSet:
        """Parse ``"41-5a 61"`` (hex code points and ranges)."""
        out = []
        for item in text.split():
            lo, _, hi = item.partition("-")
            out.append((int(lo, 16), int(hi or lo, 16)))
        return cls(out)

    def __or__(self, other: _CharSet) -> _CharSet:
        return _CharSet(self.ranges + other.ranges)

    def __invert__(self) -> _CharSet:
        out = []
        nxt = 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= _MAX_CP:
            out.append((nxt, _MAX_CP))
        return _CharSet(out, normalized=True)

    def __and__(self, other: _CharSet) -> _CharSet:
        return ~(~self | ~other)

    def __sub__(self, other: _CharSet) -> _CharSet:
        return self & ~other

    def __contains__(self, cp: int) -> bool:
        i = bisect.bisect_right(self._starts, cp) - 1
        return i >= 0 and cp <= self.ranges[i][1]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CharSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        return hash(self.ranges)


def _union(*sets: _CharSet) -> _CharSet:
    return _CharSet(r for s in sets for r in s.ranges)


def _scan(pred: Callable[[int], bool], limit: int = _MAX_CP) -> _CharSet:
    """The code points ``0..limit`` for which ``pred`` holds."""
    out = []
    start = -1
    for cp in range(limit + 2):
        inside = cp <= limit and pred(cp)
        if inside and start < 0:
            start = cp
        elif not inside and start >= 0:
            out.append((start, cp - 1))
            start = -1
    return _CharSet(out, normalized=True)


# ASCII classes (java.util.regex.ASCII)
_ASCII_DIGIT = _CharSet.span(0x30, 0x39)
_ASCII_UPPER = _CharSet.span(0x41, 0x5A)
_ASCII_LOWER = _CharSet.span(0x61, 0x7A)
_ASCII_ALPHA = _ASCII_UPPER | _ASCII_LOWER
_ASCII_ALNUM = _ASCII_ALPHA | _ASCII_DIGIT
_ASCII_WORD = _ASCII_ALNUM | _CharSet.of(0x5F)
_ASCII_SPACE = _CharSet(((0x09, 0x0D), (0x20, 0x20)))
_ASCII_BLANK = _CharSet.of(0x09, 0x20)
_ASCII_CNTRL = _CharSet(((0x00, 0x1F), (0x7F, 0x7F)))
_ASCII_GRAPH = _CharSet.span(0x21, 0x7E)
_ASCII_PUNCT = _ASCII_GRAPH - _ASCII_ALNUM
_ASCII_XDIGIT = _ASCII_DIGIT | _CharSet(((0x41, 0x46), (0x61, 0x66)))
_HORIZ_WS = _CharSet.parse("9 20 a0 1680 180e 2000-200a 202f 205f 3000")
_VERT_WS = _CharSet.parse("a-d 85 2028 2029")
_LINE_TERMINATORS = _CharSet.parse("a d 85 2028 2029")
_ALL = _CharSet.span(0, _MAX_CP)

# Java 17 (Unicode 13) tables for what unicodedata lacks: Other_Alphabetic (Character.isAlphabetic minus
# letters and letter numbers) and Ideographic (Character.isIdeographic).
_OTHER_ALPHABETIC = (
    "345 5b0-5bd 5bf 5c1-5c2 5c4-5c5 5c7 610-61a 64b-657 659-65f 670 6d6-6dc 6e1-6e4 6e7-6e8 6ed 711 "
    "730-73f 7a6-7b0 816-817 81b-823 825-827 829-82c 8d4-8df 8e3-8e9 8f0-903 93a-93b 93e-94c 94e-94f "
    "955-957 962-963 981-983 9be-9c4 9c7-9c8 9cb-9cc 9d7 9e2-9e3 a01-a03 a3e-a42 a47-a48 a4b-a4c a51 "
    "a70-a71 a75 a81-a83 abe-ac5 ac7-ac9 acb-acc ae2-ae3 afa-afc b01-b03 b3e-b44 b47-b48 b4b-b4c "
    "b56-b57 b62-b63 b82 bbe-bc2 bc6-bc8 bca-bcc bd7 c00-c03 c3e-c44 c46-c48 c4a-c4c c55-c56 c62-c63 "
    "c81-c83 cbe-cc4 cc6-cc8 cca-ccc cd5-cd6 ce2-ce3 d00-d03 d3e-d44 d46-d48 d4a-d4c d57 d62-d63 "
    "d81-d83 dcf-dd4 dd6 dd8-ddf df2-df3 e31 e34-e3a e4d eb1 eb4-eb9 ebb-ebc ecd f71-f81 f8d-f97 "
    "f99-fbc 102b-1036 1038 103b-103e 1056-1059 105e-1060 1062-1064 1067-106d 1071-1074 1082-108d "
    "108f 109a-109d 1712-1713 1732-1733 1752-1753 1772-1773 17b6-17c8 1885-1886 18a9 1920-192b "
    "1930-1938 1a17-1a1b 1a55-1a5e 1a61-1a74 1abf-1ac0 1b00-1b04 1b35-1b43 1b80-1b82 1ba1-1ba9 "
    "1bac-1bad 1be7-1bf1 1c24-1c36 1de7-1df4 24b6-24e9 2de0-2dff a674-a67b a69e-a69f a802 a80b "
    "a823-a827 a880-a881 a8b4-a8c3 a8c5 a8ff a926-a92a a947-a952 a980-a983 a9b4-a9bf a9e5 aa29-aa36 "
    "aa43 aa4c-aa4d aa7b-aa7d aab0 aab2-aab4 aab7-aab8 aabe aaeb-aaef aaf5 abe3-abea fb1e 10376-1037a "
    "10a01-10a03 10a05-10a06 10a0c-10a0f 10d24-10d27 10eab-10eac 11000-11002 11038-11045 11082 "
    "110b0-110b8 11100-11102 11127-11132 11145-11146 11180-11182 111b3-111bf 111ce-111cf 1122c-11234 "
    "11237 1123e 112df-112e8 11300-11303 1133e-11344 11347-11348 1134b-1134c 11357 11362-11363 "
    "11435-11441 11443-11445 114b0-114c1 115af-115b5 115b8-115be 115dc-115dd 11630-1163e 11640 "
    "116ab-116b5 1171d-1172a 1182c-11838 11930-11935 11937-11938 1193b-1193c 11940 11942 119d1-119d7 "
    "119da-119df 119e4 11a01-11a0a 11a35-11a39 11a3b-11a3e 11a51-11a5b 11a8a-11a97 11c2f-11c36 "
    "11c38-11c3e 11c92-11ca7 11ca9-11cb6 11d31-11d36 11d3a 11d3c-11d3d 11d3f-11d41 11d43 11d47 "
    "11d8a-11d8e 11d90-11d91 11d93-11d96 11ef3-11ef6 16f4f 16f51-16f87 16f8f-16f92 16ff0-16ff1 1bc9e "
    "1e000-1e006 1e008-1e018 1e01b-1e021 1e023-1e024 1e026-1e02a 1e947 1f130-1f149 1f150-1f169 "
    "1f170-1f189"
)
_IDEOGRAPHIC = (
    "3006-3007 3021-3029 3038-303a 3400-4dbf 4e00-9ffc f900-fa6d fa70-fad9 16fe4 17000-187f7 "
    "18800-18cd5 18d00-18d08 1b170-1b2fb 20000-2a6dd 2a700-2b734 2b740-2b81d 2b820-2cea1 2ceb0-2ebe0 "
    "2f800-2fa1d 30000-3134a"
)
# Every code point with a case mapping lies below this bound.
_CASED_LIMIT = 0x1FFFF


@functools.cache
def _category_sets() -> dict[str, _CharSet]:
    """General category → code points, from one scan of :mod:`unicodedata`."""
    runs: dict[str, list[tuple[int, int]]] = {}
    category = unicodedata.category
    start, current = 0, category("\0")
    for cp in range(1, _MAX_CP + 2):
        cat = category(chr(cp)) if cp <= _MAX_CP else ""
        if cat != current:
            runs.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    return {k: _CharSet(v, normalized=True) for k, v in runs.items()}


def _cats(*names: str) -> _CharSet:
    table = _category_sets()
    return _union(*(table.get(n, _CharSet()) for n in names))


def _java_upper(cp: int) -> int:
    """``Character.toUpperCase(int)`` (simple case mapping)."""
    if cp > _CASED_LIMIT:
        return cp
    c = chr(cp)
    up = c.upper()
    if len(up) == 1:
        return ord(up)
    title = c.title()  # e.g. U+1F80 maps to its titlecase form U+1F88
    return ord(title) if len(title) == 1 else cp


def _java_lower(cp: int) -> int:
    """``Character.toLowerCase(int)`` (simple case mapping)."""
    if cp > _CASED_LIMIT:
        return cp
    if cp == 0x130:  # full mapping is "i" + COMBINING DOT ABOVE; the simple one is "i"
        return 0x69
    low = chr(cp).lower()
    return ord(low) if len(low) == 1 else cp


def _ascii_lower(cp: int) -> int:
    return cp + 32 if 0x41 <= cp <= 0x5A else cp


def _ascii_upper(cp: int) -> int:
    return cp - 32 if 0x61 <= cp <= 0x7A else cp


@dataclass(frozen=True)
class _CaseTables:
    cased: tuple[tuple[int, int, int], ...]  # (cp, upper(cp), lower(upper(cp))) where either differs
    fold_inverse: dict[int, tuple[int, ...]]  # lower(upper(cp)) → every cp with that fold
    lowercase: _CharSet  # Character.isLowerCase
    uppercase: _CharSet  # Character.isUpperCase


@functools.cache
def _case_tables() -> _CaseTables:
    cased = []
    inverse: dict[int, list[int]] = {}
    for cp in range(_CASED_LIMIT + 1):
        up = _java_upper(cp)
        fold = _java_lower(up)
        if up != cp or fold != cp:
            cased.append((cp, up, fold))
            inverse.setdefault(fold, []).append(cp)
    # For a single character, str.islower()/isupper() are the Unicode Lowercase/Uppercase properties.
    lower = _scan(lambda cp: chr(cp).islower(), _CASED_LIMIT)
    upper = _scan(lambda cp: chr(cp).isupper(), _CASED_LIMIT)
    return _CaseTables(tuple(cased), {k: tuple(v) for k, v in inverse.items()}, lower, upper)


# --------------------------------------------------------------------------------------------------
# Character properties (java.util.regex.CharPredicates)


def _alphabetic() -> _CharSet:
    return _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Nl") | _CharSet.parse(_OTHER_ALPHABETIC)


def _white_space() -> _CharSet:
    return _cats("Zs", "Zl", "Zp") | _CharSet(((0x09, 0x0D), (0x85, 0x85)))


def _punctuation() -> _CharSet:
    return _cats("Pc", "Pd", "Ps", "Pe", "Po", "Pi", "Pf")


def _hex_digit() -> _CharSet:
    return _cats("Nd") | _CharSet.parse("30-39 41-46 61-66 ff10-ff19 ff21-ff26 ff41-ff46")


def _noncharacter() -> _CharSet:
    return _CharSet([(0xFDD0, 0xFDEF)] + [((p << 16) | 0xFFFE, (p << 16) | 0xFFFF) for p in range(17)])


def _blank() -> _CharSet:
    return _cats("Zs") | _CharSet.of(0x09)


def _graph() -> _CharSet:
    return ~_cats("Zs", "Zl", "Zp", "Cc", "Cs", "Cn")


def _print() -> _CharSet:
    return (_graph() | _blank()) - _cats("Cc")


def _word() -> _CharSet:
    return _alphabetic() | _cats("Mn", "Me", "Mc", "Nd", "Pc") | _CharSet.of(0x200C, 0x200D)


def _any_case() -> _CharSet:
    t = _case_tables()
    return t.lowercase | t.uppercase | _cats("Lt")


def _identifier_ignorable() -> _CharSet:
    return _CharSet(((0x00, 0x08), (0x0E, 0x1B), (0x7F, 0x9F))) | _cats("Cf")


_OTHER_ID_START = "1885-1886 2118 212e 309b-309c"
_OTHER_ID_CONTINUE = "b7 387 1369-1371 19da"

# Unicode binary properties for \p{IsXxx} (CharPredicates.getUnicodePredicate), keyed by upper-case name;
# the value takes the case-insensitive flag.
_BINARY_PROPERTIES: dict[str, Callable[[bool], _CharSet]] = {
    "ALPHABETIC": lambda ci: _alphabetic(),
    "ASSIGNED": lambda ci: ~_cats("Cn"),
    "CONTROL": lambda ci: _cats("Cc"),
    "HEXDIGIT": lambda ci: _hex_digit(),
    "HEX_DIGIT": lambda ci: _hex_digit(),
    "IDEOGRAPHIC": lambda ci: _CharSet.parse(_IDEOGRAPHIC),
    "JOINCONTROL": lambda ci: _CharSet.of(0x200C, 0x200D),
    "JOIN_CONTROL": lambda ci: _CharSet.of(0x200C, 0x200D),
    "LETTER": lambda ci: _cats("Lu", "Ll", "Lt", "Lm", "Lo"),
    "LOWERCASE": lambda ci: _any_case() if ci else _case_tables().lowercase,
    "NONCHARACTERCODEPOINT": lambda ci: _noncharacter(),
    "NONCHARACTER_CODE_POINT": lambda ci: _noncharacter(),
    "TITLECASE": lambda ci: _any_case() if ci else _cats("Lt"),
    "PUNCTUATION": lambda ci: _punctuation(),
    "UPPERCASE": lambda ci: _any_case() if ci else _case_tables().uppercase,
    "WHITESPACE": lambda ci: _white_space(),
    "WHITE_SPACE": lambda ci: _white_space(),
    "WORD": lambda ci: _word(),
    # POSIX names with Unicode meaning (CharPredicates.getPosixPredicate)
    "ALPHA": lambda ci: _alphabetic(),
    "LOWER": lambda ci: _any_case() if ci else _case_tables().lowercase,
    "UPPER": lambda ci: _any_case() if ci else _case_tables().uppercase,
    "SPACE": lambda ci: _white_space(),
    "PUNCT": lambda ci: _punctuation(),
    "XDIGIT": lambda ci: _hex_digit(),
    "ALNUM": lambda ci: _alphabetic() | _cats("Nd"),
    "CNTRL": lambda ci: _cats("Cc"),
    "DIGIT": lambda ci: _cats("Nd"),
    "BLANK": lambda ci: _blank(),
    "GRAPH": lambda ci: _graph(),
    "PRINT": lambda ci: _print(),
}

_CATEGORY_GROUPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "M": ("Mn", "Me", "Mc"),
    "N": ("Nd", "Nl", "No"),
    "Z": ("Zs", "Zl", "Zp"),
    "C": ("Cc", "Cf", "Co", "Cs", "Cn"),
    "P": ("Pd", "Ps", "Pe", "Pc", "Po", "Pi", "Pf"),
    "S": ("Sm", "Sc", "Sk", "So"),
    "LC": ("Lu", "Ll", "Lt"),
    "LD": ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd"),
}
_CATEGORIES = frozenset(
    "Cn Lu Ll Lt Lm Lo Mn Me Mc Nd Nl No Zs Zl Zp Cc Cf Co Cs Pd Ps Pe Pc Po Sm Sc Sk So Pi Pf".split()
)

# \p{Name} without a prefix (CharPredicates.forProperty), besides the general categories.
_NAMED_PROPERTIES: dict[str, Callable[[bool], _CharSet]] = {
    "L1": lambda ci: _CharSet.span(0x00, 0xFF),
    "all": lambda ci: _ALL,
    "ASCII": lambda ci: _CharSet.span(0x00, 0x7F),
    "Alnum": lambda ci: _ASCII_ALNUM,
    "Alpha": lambda ci: _ASCII_ALPHA,
    "Blank": lambda ci: _ASCII_BLANK,
    "Cntrl": lambda ci: _ASCII_CNTRL,
    "Digit": lambda ci: _ASCII_DIGIT,
    "Graph": lambda ci: _ASCII_GRAPH,
    "Lower": lambda ci: _ASCII_ALPHA if ci else _ASCII_LOWER,
    "Print": lambda ci: _CharSet.span(0x20, 0x7E),
    "Punct": lambda ci: _ASCII_PUNCT,
    "Space": lambda ci: _ASCII_SPACE,
    "Upper": lambda ci: _ASCII_ALPHA if ci else _ASCII_UPPER,
    "XDigit": lambda ci: _ASCII_XDIGIT,
    "javaLowerCase": lambda ci: _any_case() if ci else _case_tables().lowercase,
    "javaUpperCase": lambda ci: _any_case() if ci else _case_tables().uppercase,
    "javaAlphabetic": lambda ci: _alphabetic(),
    "javaIdeographic": lambda ci: _CharSet.parse(_IDEOGRAPHIC),
    "javaTitleCase": lambda ci: _any_case() if ci else _cats("Lt"),
    "javaDigit": lambda ci: _cats("Nd"),
    "javaDefined": lambda ci: ~_cats("Cn"),
    "javaLetter": lambda ci: _cats("Lu", "Ll", "Lt", "Lm", "Lo"),
    "javaLetterOrDigit": lambda ci: _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Nd"),
    "javaJavaIdentifierStart": lambda ci: _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"),
    "javaJavaIdentifierPart": lambda ci: (
        _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Sc", "Pc", "Nd", "Nl", "Mc", "Mn") | _identifier_ignorable()
    ),
    "javaUnicodeIdentifierStart": lambda ci: (
        _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Nl") | _CharSet.parse(_OTHER_ID_START)
    ),
    "javaUnicodeIdentifierPart": lambda ci: (
        _cats("Lu", "Ll", "Lt", "Lm", "Lo", "Pc", "Nd", "Nl", "Mc", "Mn")
        | _identifier_ignorable()
        | _CharSet.parse(_OTHER_ID_START + " " + _OTHER_ID_CONTINUE)
    ),
    "javaIdentifierIgnorable": lambda ci: _identifier_ignorable(),
    "javaSpaceChar": lambda ci: _cats("Zs", "Zl", "Zp"),
    "javaWhitespace": lambda ci: (
        (_cats("Zs", "Zl", "Zp") - _CharSet.of(0xA0, 0x2007, 0x202F)) | _CharSet(((0x09, 0x0D), (0x1C, 0x1F)))
    ),
    "javaISOControl": lambda ci: _CharSet(((0x00, 0x1F), (0x7F, 0x9F))),
    "javaMirrored": lambda ci: _scan(lambda cp: unicodedata.mirrored(chr(cp)) == 1),
}


@functools.cache
def _for_property(name: str, ci: bool) -> _CharSet | None:
    """``CharPredicates.forProperty``: categories, POSIX (ASCII) classes and ``java*`` properties."""
    if name in ("Lu", "Ll", "Lt") and ci:
        return _cats("Lu", "Ll", "Lt")
    if name in _CATEGORIES:
        return _cats(name)
    if name in _CATEGORY_GROUPS:
        return _cats(*_CATEGORY_GROUPS[name])
    make = _NAMED_PROPERTIES.get(name)
    return make(ci) if make else None


@functools.cache
def _for_unicode_property(name: str, ci: bool) -> _CharSet | None:
    """``CharPredicates.forUnicodeProperty``: binary properties, case-insensitive names."""
    make = _BINARY_PROPERTIES.get(name.upper())
    return make(ci) if make else None


# --------------------------------------------------------------------------------------------------
# Case-insensitive leaves (Pattern.single, BitClass.add, CIRange, CIRangeU, newSlice)

_I = 0x02  # CASE_INSENSITIVE
_X = 0x04  # COMMENTS
_M = 0x08  # MULTILINE
_S = 0x20  # DOTALL
_U = 0x40  # UNICODE_CASE
_C = 0x80  # CANON_EQ
_D = 0x01  # UNIX_LINES
_UCC = 0x100  # UNICODE_CHARACTER_CLASS


def _single_u(lower: int) -> _CharSet:
    """``SingleU``: ``ch == lower`` or ``toLowerCase(toUpperCase(ch)) == lower``."""
    return _CharSet.of(lower, *_case_tables().fold_inverse.get(lower, ()))


def _single(cp: int, flags: int) -> _CharSet:
    if flags & _I:
        if flags & _U:
            upper = _java_upper(cp)
            lower = _java_lower(upper)
            if upper != lower:
                return _single_u(lower)
        elif cp < 0x80:
            lower, upper = _ascii_lower(cp), _ascii_upper(cp)
            if lower != upper:
                return _CharSet.of(lower, upper)
    return _CharSet.of(cp)


def _slice_char(cp: int, flags: int) -> _CharSet:
    """One character of a literal run (``SliceI`` / ``SliceU``)."""
    if flags & _I:
        if flags & _U:
            return _single_u(_java_lower(_java_upper(cp)))
        return _CharSet.of(cp) | _CharSet.of(*(c for c in range(0x80) if _ascii_lower(c) == _ascii_lower(cp)))
    return _CharSet.of(cp)


def _bits_add(cp: int, flags: int) -> _CharSet:
    """``BitClass.add`` for a code point below 256."""
    out = [cp]
    if flags & _I:
        if cp < 0x80:
            out += [_ascii_upper(cp), _ascii_lower(cp)]
        elif flags & _U:
            out += [_java_lower(cp), _java_upper(cp)]
    return _CharSet.of(*out)


def _range(lo: int, hi: int, flags: int) -> _CharSet:
    """``Range`` / ``CIRange`` / ``CIRangeU``."""
    base = _CharSet.span(lo, hi)
    if not flags & _I:
        return base
    if flags & _U:
        extra = [cp for cp, up, fold in _case_tables().cased if lo <= up <= hi or lo <= fold <= hi]
    else:
        extra = [c for c in range(0x80) if lo <= _ascii_upper(c) <= hi or lo <= _ascii_lower(c) <= hi]
    return base | _CharSet.of(*extra)


# --------------------------------------------------------------------------------------------------
# Syntax tree


@dataclass
class _Chars:
    """Matches one code point from a set."""

    cs: _CharSet


@dataclass
class _Seq:
    items: list[object]


@dataclass
class _Alt:
    items: list[object]


@dataclass
class _Group:
    kind: str  # "cap", "noncap", "ahead", "not-ahead", "behind", "not-behind", "atomic"
    body: object
    name: str | None = None
    index: int = -1


@dataclass
class _Quant:
    node: object
    cmin: int
    cmax: int | None  # None = unbounded
    kind: str  # "", "?" (lazy), "+" (possessive)


@dataclass
class _Raw:
    """A zero-width (or fixed) construct emitted verbatim."""

    src: str


@dataclass
class _BackRef:
    number: int
    flags: int
    closed: bool
    index: int


_W = "[0-9A-Z_a-z]"
_BEGIN = r"\A"
_END = r"\Z"
_CARET_M = r"(?!\Z)(?:\A|(?<=[\n\x85\u2028\u2029])|(?<=\r)(?!\n))"
_UNIX_CARET_M = r"(?!\Z)(?:\A|(?<=\n))"
_DOLLAR = r"(?=(?:\r\n|(?<!\r)\n|[\r\x85\u2028\u2029])?\Z)"
_DOLLAR_M = r"(?=[\r\x85\u2028\u2029]|(?<!\r)\n|\Z)"
_UNIX_DOLLAR = r"(?=\n?\Z)"
_UNIX_DOLLAR_M = r"(?=\n|\Z)"
_LINE_ENDING = r"(?:\r\n|[\n\x0b\x0c\r\x85\u2028\u2029])"
_BOUND = rf"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"
_NOT_BOUND = rf"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))"


# Java's TreeInfo study of a look-behind body: a back-reference or a repeated group whose body can match
# in several ways has no "obvious maximum length", which Java rejects. Java's int arithmetic is kept.


def _i32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass
class _Info:
    max: int = 0
    valid: bool = True
    deterministic: bool = True


def _study(node: object, info: _Info) -> None:
    if isinstance(node, _Chars):
        info.max = _i32(info.max + 1)
    elif isinstance(node, _Seq):
        for item in node.items:
            _study(item, info)
    elif isinstance(node, _Raw):
        if node.src == _LINE_ENDING:
            info.max = _i32(info.max + 2)
    elif isinstance(node, _BackRef):
        info.valid = False
    elif isinstance(node, _Alt):
        longest = -1
        for item in node.items:
            sub = _Info()
            _study(item, sub)
            longest = max(longest, sub.max)
            info.valid &= sub.valid
        info.max = _i32(info.max + longest)
        info.deterministic = False
    elif isinstance(node, _Group):
        if node.kind in ("cap", "noncap", "atomic"):
            _study(node.body, info)
    elif isinstance(node, _Quant):
        _study_quant(node, info)


def _study_quant(node: _Quant, info: _Info) -> None:
    atom = node.node
    cmax = _MAX_REPS if node.cmax is None else node.cmax
    if (node.cmin, cmax) == (0, 1):  # Ques, or a Branch for a group
        _study(atom, info)
        info.deterministic = False
        return
    if isinstance(atom, _Chars) and node.kind == "" and node.cmax is None:  # CharPropertyGreedy
        if info.valid:
            info.max = _i32(info.max + _MAX_REPS)
        info.deterministic = False
        return
    if isinstance(atom, _Group) and atom.kind in ("cap", "noncap") and node.kind != "+":
        body = _Info()
        _study(atom.body, body)
        if not body.deterministic:  # a Loop
            info.valid = info.deterministic = False
            return
    saved_max, saved_valid, saved_det = info.max, info.valid, info.deterministic  # Curly / GroupCurly
    sub = _Info()
    _study(atom, sub)
    if saved_valid and sub.valid:
        info.max = _i32(sub.max * cmax + saved_max)
        info.valid = info.max >= saved_max
    else:
        info.valid = False
    info.deterministic = saved_det if sub.deterministic and node.cmin == cmax else False


def _is_space(ch: int) -> bool:
    return ch == 0x20 or 0x09 <= ch <= 0x0D


def _is_digit(ch: int) -> bool:
    return 0x30 <= ch <= 0x39


def _is_hex(ch: int) -> bool:
    return _is_digit(ch) or 0x41 <= ch <= 0x46 or 0x61 <= ch <= 0x66


def _is_alpha(ch: int) -> bool:
    return 0x41 <= ch <= 0x5A or 0x61 <= ch <= 0x7A


# --------------------------------------------------------------------------------------------------
# Parser: a port of java.util.regex.Pattern's recursive descent (JDK 17-25), building the tree above.


class _Parser:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.temp = [ord(c) for c in pattern] + [0, 0]
        self.plen = len(pattern)
        self.cursor = 0
        self.flags = 0
        self.group_count = 1  # Java's capturingGroupCount: group 0 plus every group opened so far
        self.named: dict[str, int] = {}
        self.closed: set[int] = set()
        self.root: object = None
        self.predicate: _CharSet | None = None
        self.lookbehind_index = -1
        self._bits = _CharSet()
        self._remove_qe_quoting()

    # -- errors ------------------------------------------------------------------------------------

    def error(self, desc: str) -> JavaRegexError:
        return JavaRegexError(desc, self.pattern, self.cursor - 1)

    def unsupported(self, desc: str) -> JavaRegexError:
        return JavaRegexError(desc, self.pattern, self.cursor - 1, unsupported=True)

    # -- cursor primitives (Pattern.peek/read/next/skip/accept, COMMENTS-aware) ----------------------

    def at(self, i: int) -> int:
        return self.temp[i] if 0 <= i < len(self.temp) else 0

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)

    def peek(self) -> int:
        ch = self.at(self.cursor)
        if self.has(_X):
            ch = self.peek_past_whitespace(ch)
        return ch

    def read(self) -> int:
        ch = self.at(self.cursor)
        self.cursor += 1
        if self.has(_X):
            ch = self.parse_past_whitespace(ch)
        return ch

    def read_escaped(self) -> int:
        ch = self.at(self.cursor)
        self.cursor += 1
        return ch

    def next(self) -> int:
        self.cursor += 1
        ch = self.at(self.cursor)
        if self.has(_X):
            ch = self.peek_past_whitespace(ch)
        return ch

    def next_escaped(self) -> int:
        self.cursor += 1
        return self.at(self.cursor)

    def skip(self) -> int:
        ch = self.at(self.cursor + 1)
        self.cursor += 2
        return ch

    def unread(self) -> None:
        self.cursor -= 1

    def accept(self, ch: int, desc: str) -> None:
        test = self.at(self.cursor)
        self.cursor += 1
        if self.has(_X):
            test = self.parse_past_whitespace(test)
        if test != ch:
            raise self.error(desc)

    def mark(self, c: int) -> None:
        self.temp[self.plen] = c

    def is_line_separator(self, ch: int) -> bool:
        if self.has(_D):
            return ch == 0x0A
        return ch in (0x0A, 0x0D, 0x85, 0x2028, 0x2029)

    def peek_past_whitespace(self, ch: int) -> int:
        while _is_space(ch) or ch == 0x23:
            while _is_space(ch):
                self.cursor += 1
                ch = self.at(self.cursor)
            if ch == 0x23:
                ch = self.peek_past_line()
        return ch

    def parse_past_whitespace(self, ch: int) -> int:
        while _is_space(ch) or ch == 0x23:
            while _is_space(ch):
                ch = self.at(self.cursor)
                self.cursor += 1
            if ch == 0x23:
                ch = self.parse_past_line()
        return ch

    def parse_past_line(self) -> int:
        ch = self.at(self.cursor)
        self.cursor += 1
        while ch != 0 and not self.is_line_separator(ch):
            ch = self.at(self.cursor)
            self.cursor += 1
        if ch == 0 and self.cursor > self.plen:
            self.cursor = self.plen
            ch = self.at(self.cursor)
            self.cursor += 1
        return ch

    def peek_past_line(self) -> int:
        self.cursor += 1
        ch = self.at(self.cursor)
        while ch != 0 and not self.is_line_separator(ch):
            self.cursor += 1
            ch = self.at(self.cursor)
        if ch == 0 and self.cursor > self.plen:
            self.cursor = self.plen
            ch = self.at(self.cursor)
        return ch

    # -- \Q...\E (Pattern.RemoveQEQuoting) ------------------------------------------------------

    def _remove_qe_quoting(self) -> None:
        temp, plen = self.temp, self.plen
        i = 0
        while i < plen - 1:
            if temp[i] != 0x5C:
                i += 1
            elif temp[i + 1] != 0x51:
                i += 2
            else:
                break
        if i >= plen - 1:
            return
        out = temp[:i]
        i += 2
        in_quote = begin_quote = True
        while i < plen:
            c = temp[i]
            i += 1
            if c >= 0x80 or _is_alpha(c):
                out.append(c)
            elif _is_digit(c):
                if begin_quote:  # keep a preceding escape from absorbing this digit
                    out += [0x5C, 0x78, 0x33]
                out.append(c)
            elif c != 0x5C:
                if in_quote:
                    out.append(0x5C)
                out.append(c)
            elif in_quote:
                if temp[i] == 0x45:
                    i += 1
                    in_quote = False
                else:
                    out += [0x5C, 0x5C]
            else:
                if temp[i] == 0x51:
                    i += 1
                    in_quote = begin_quote = True
                    continue
                out.append(c)
                if i != plen:
                    out.append(temp[i])
                    i += 1
            begin_quote = False
        self.plen = len(out)
        self.temp = out + [0, 0]

    # -- grammar ------------------------------------------------------------------------------

    def compile(self) -> object:
        tree = self.expr()
        if self.plen != self.cursor:
            if self.peek() == 0x29:
                raise self.error("Unmatched closing ')'")
            if self.cursor == self.plen + 1 and self.at(self.plen - 1) == 0x5C:
                raise self.error("Unescaped trailing backslash")
            raise self.error("Unexpected internal error")
        return tree

    def expr(self) -> object:
        alternatives = []
        while True:
            alternatives.append(self.sequence())
            if self.peek() != 0x7C:
                break
            self.next()
        return alternatives[0] if len(alternatives) == 1 else _Alt(alternatives)

    def sequence(self) -> _Seq:
        items: list[object] = []
        while True:
            ch = self.peek()
            if ch == 0x28:  # (
                node = self.group0()
                if node is not None:
                    items.append(node)
                continue
            if ch == 0x5B:  # [
                node = _Chars(self.clazz(True))
            elif ch == 0x5C:  # backslash
                ch = self.next_escaped()
                if ch in (0x70, 0x50):  # p, P
                    complement = ch == 0x50
                    one_letter = True
                    if self.next() != 0x7B:
                        self.unread()
                    else:
                        one_letter = False
                    node = _Chars(self.family(one_letter, complement))
                else:
                    self.unread()
                    node = self.atom()
            elif ch == 0x5E:  # ^
                self.next()
                if self.has(_M):
                    node = _Raw(_UNIX_CARET_M if self.has(_D) else _CARET_M)
                else:
                    node = _Raw(_BEGIN)
            elif ch == 0x24:  # $
                self.next()
                multiline = self.has(_M)
                if self.has(_D):
                    node = _Raw(_UNIX_DOLLAR_M if multiline else _UNIX_DOLLAR)
                else:
                    node = _Raw(_DOLLAR_M if multiline else _DOLLAR)
            elif ch == 0x2E:  # .
                self.next()
                if self.has(_S):
                    node = _Chars(_ALL)
                elif self.has(_D):
                    node = _Chars(~_CharSet.of(0x0A))
                else:
                    node = _Chars(~_LINE_TERMINATORS)
            elif ch in (0x7C, 0x29):  # | )
                break
            elif ch in (0x3F, 0x2A, 0x2B):  # ? * +
                self.next()
                raise self.error(f"Dangling meta character '{chr(ch)}'")
            elif ch == 0 and self.cursor >= self.plen:
                break
            else:
                node = self.atom()
            items.append(self.closure(node))
        return _Seq(items)

    def atom(self) -> object:
        first = 0
        prev = -1
        buf: list[int] = []
        ch = self.peek()
        while True:
            if ch in (0x2A, 0x2B, 0x3F, 0x7B):  # * + ? {
                if first > 1:
                    self.cursor = prev  # the quantifier applies to the last character only
                    first -= 1
                    buf.pop()
                break
            if ch in (0x24, 0x2E, 0x5E, 0x28, 0x5B, 0x7C, 0x29):  # $ . ^ ( [ | )
                break
            if ch == 0x5C:
                ch = self.next_escaped()
                if ch in (0x70, 0x50):  # property
                    if first > 0:
                        self.unread()
                        break
                    complement = ch == 0x50
                    one_letter = True
                    if self.next() != 0x7B:
                        self.unread()
                    else:
                        one_letter = False
                    return _Chars(self.family(one_letter, complement))
                self.unread()
                prev = self.cursor
                ch = self.escape(False, first == 0, False)
                if ch >= 0:
                    buf.append(ch)
                    first += 1
                    ch = self.peek()
                    continue
                if first == 0:
                    return self.root
                self.cursor = prev  # re-read the meta escape as the next atom
                break
            if ch == 0 and self.cursor >= self.plen:
                break
            prev = self.cursor
            buf.append(ch)
            first += 1
            ch = self.next()
        if first == 1:
            return _Chars(_single(buf[0], self.flags))
        return _Seq([_Chars(_slice_char(c, self.flags)) for c in buf])

    def ref(self, number: int) -> _BackRef:
        index = self.cursor - 1
        while True:
            ch = self.peek()
            if not _is_digit(ch):
                break
            candidate = number * 10 + (ch - 0x30)
            if self.group_count - 1 < candidate:
                break
            number = candidate
            self.read()
        return _BackRef(number, self.flags, number in self.closed, index)

    def escape(self, inclass: bool, create: bool, isrange: bool) -> int:
        ch = self.skip()
        c = chr(ch)
        predicate: _CharSet | None = None
        if c == "0":
            return self.octal()
        if c in "123456789":
            if not inclass:
                if create:
                    self.root = self.ref(ch - 0x30)
                return -1
        elif c == "A":
            if not inclass:
                if create:
                    self.root = _Raw(_BEGIN)
                return -1
        elif c == "B":
            if not inclass:
                if create:
                    self.root = _Raw(_NOT_BOUND)
                return -1
        elif c == "G":
            if not inclass:
                if create:
                    self.root = _Raw(_BEGIN)
                return -1
        elif c == "N":
            return self.named_char()
        elif c == "R":
            if not inclass:
                if create:
                    self.root = _Raw(_LINE_ENDING)
                return -1
        elif c == "X":
            if not inclass:
                if create:
                    raise self.unsupported(r"\X (grapheme cluster) is not supported by Python's re")
                return -1
        elif c == "Z":
            if not inclass:
                if create:
                    self.root = _Raw(_UNIX_DOLLAR if self.has(_D) else _DOLLAR)
                return -1
        elif c == "a":
            return 0x07
        elif c == "b":
            if not inclass:
                if create:
                    if self.peek() == 0x7B:
                        if self.skip() == 0x67:
                            if self.read() == 0x7D:
                                raise self.unsupported(
                                    r"\b{g} (grapheme cluster boundary) is not supported by Python's re"
                                )
                            raise self.error("Illegal/unsupported escape sequence")
                        self.unread()
                        self.unread()
                    self.root = _Raw(_BOUND)
                return -1
        elif c == "c":
            if self.cursor < self.plen:
                return self.read() ^ 64
            raise self.error("Illegal control escape sequence")
        elif c == "e":
            return 0x1B
        elif c == "f":
            return 0x0C
        elif c == "k":
            if not inclass:
                if self.read() != 0x3C:
                    raise self.error("\\k is not followed by '<' for named capturing group")
                name = self.groupname(self.read())
                number = self.named.get(name)
                if number is None:
                    raise self.error(f"named capturing group <{name}> does not exist")
                if create:
                    self.root = _BackRef(number, self.flags, number in self.closed, self.cursor - 1)
                return -1
        elif c == "n":
            return 0x0A
        elif c == "r":
            return 0x0D
        elif c == "t":
            return 0x09
        elif c == "u":
            return self.unicode_escape()
        elif c == "x":
            return self.hex_escape()
        elif c == "z":
            if not inclass:
                if create:
                    self.root = _Raw(_END)
                return -1
        elif c == "v" and isrange:
            return 0x0B
        elif c in "dDhHsSvVwW":
            predicate = {
                "d": _ASCII_DIGIT,
                "h": _HORIZ_WS,
                "s": _ASCII_SPACE,
                "v": _VERT_WS,
                "w": _ASCII_WORD,
            }[c.lower()]
            if c.isupper():
                predicate = ~predicate
            if create:
                self.predicate = predicate
                if not inclass:
                    self.root = _Chars(predicate)
            return -1
        elif not _is_alpha(ch):
            return ch
        raise self.error("Illegal/unsupported escape sequence")

    def octal(self) -> int:
        n = self.read()
        if 0x30 <= n <= 0x37:
            m = self.read()
            if 0x30 <= m <= 0x37:
                o = self.read()
                if 0x30 <= o <= 0x37 and n <= 0x33:
                    return (n - 0x30) * 64 + (m - 0x30) * 8 + (o - 0x30)
                self.unread()
                return (n - 0x30) * 8 + (m - 0x30)
            self.unread()
            return n - 0x30
        raise self.error("Illegal octal escape sequence")

    def hex_escape(self) -> int:
        n = self.read()
        if _is_hex(n):
            m = self.read()
            if _is_hex(m):
                return int(chr(n) + chr(m), 16)
        elif n == 0x7B and _is_hex(self.peek()):
            value = 0
            n = self.read()
            while _is_hex(n):
                value = value * 16 + int(chr(n), 16)
                if value > _MAX_CP:
                    raise self.error("Hexadecimal codepoint is too big")
                n = self.read()
            if n != 0x7D:
                raise self.error("Unclosed hexadecimal escape sequence")
            return value
        raise self.error("Illegal hexadecimal escape sequence")

    def uxxxx(self) -> int:
        value = 0
        for _ in range(4):
            ch = self.read()
            if not _is_hex(ch):
                raise self.error("Illegal Unicode escape sequence")
            value = value * 16 + int(chr(ch), 16)
        return value

    def unicode_escape(self) -> int:
        n = self.uxxxx()
        if 0xD800 <= n <= 0xDBFF:
            saved = self.cursor
            if self.read() == 0x5C and self.read() == 0x75:
                n2 = self.uxxxx()
                if 0xDC00 <= n2 <= 0xDFFF:
                    return 0x10000 + ((n - 0xD800) << 10) + (n2 - 0xDC00)
            self.cursor = saved
        return n

    def named_char(self) -> int:
        if self.read() == 0x7B:
            start = self.cursor
            while self.read() != 0x7D:
                if self.cursor >= self.plen:
                    raise self.error("Unclosed character name escape sequence")
            name = "".join(map(chr, self.temp[start : self.cursor - 1]))
            try:
                char = unicodedata.lookup(name.strip())
            except KeyError:
                char = ""
            if len(char) != 1:
                raise self.error(f"Unknown character name [{name}]")
            return ord(char)
        raise self.error("Illegal character name escape sequence")

    def clazz(self, consume: bool) -> _CharSet:
        prev: _CharSet | None = None
        bits = _CharSet()
        has_bits = False
        negated = False
        ch = self.next()
        if ch == 0x5E and self.at(self.cursor - 1) == 0x5B:  # ^ right after [
            ch = self.next()
            negated = True
        while True:
            if ch == 0x5B:  # nested class: union
                current = self.clazz(True)
                prev = current if prev is None else prev | current
                ch = self.peek()
                continue
            if ch == 0x26:  # &
                ch = self.next()
                if ch == 0x26:
                    raise self.unsupported(
                        "Character class intersection (&&) is not supported by connect_magics; "
                        "list the wanted characters instead, e.g. [b-df-hj-np-tv-z] for [a-z&&[^aeiou]]"
                    )
                self.unread()
            elif ch == 0 and self.cursor >= self.plen:
                raise self.error("Unclosed character class")
            elif ch == 0x5D and (prev is not None or has_bits):  # ]
                if consume:
                    self.next()
                result = bits if prev is None else (prev | bits if has_bits else prev)
                return ~result if negated else result
            current = self.range(bits)
            if current is None:
                has_bits = True
                bits = self._bits
            else:
                prev = current if prev is None else prev | current
            ch = self.peek()

    def range(self, bits: _CharSet) -> _CharSet | None:
        ch = self.peek()
        if ch == 0x5C:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):
                complement = ch == 0x50
                one_letter = True
                if self.next() != 0x7B:
                    self.unread()
                else:
                    one_letter = False
                return self.family(one_letter, complement)
            is_range = self.at(self.cursor + 1) == 0x2D
            self.unread()
            ch = self.escape(True, True, is_range)
            if ch == -1:
                return self.predicate
        else:
            self.next()
        if ch >= 0:
            if self.peek() == 0x2D:  # -
                end_range = self.at(self.cursor + 1)
                if end_range == 0x5B:
                    return self.bits_or_single(bits, ch)
                if end_range != 0x5D:
                    self.next()
                    m = self.peek()
                    if m == 0x5C:
                        m = self.escape(True, False, True)
                    else:
                        self.next()
                    if m < ch:
                        raise self.error("Illegal character range")
                    return _range(ch, m, self.flags)
            return self.bits_or_single(bits, ch)
        raise self.error(f"Unexpected character '{chr(ch)}'")

    def bits_or_single(self, bits: _CharSet, ch: int) -> _CharSet | None:
        special = (0xFF, 0xB5, 0x49, 0x69, 0x53, 0x73, 0x4B, 0x6B, 0xC5, 0xE5)
        if ch < 256 and not (self.has(_I) and self.has(_U) and ch in special):
            self._bits = bits | _bits_add(ch, self.flags)
            return None
        return _single(ch, self.flags)

    def family(self, single_letter: bool, complement: bool) -> _CharSet:
        self.next()
        if single_letter:
            name = chr(self.at(self.cursor))
            self.read()
        else:
            start = self.cursor
            self.mark(0x7D)
            while self.read() != 0x7D:
                pass
            self.mark(0)
            end = self.cursor
            if end > self.plen:
                raise self.error("Unclosed character family")
            if start + 1 >= end:
                raise self.error("Empty character family")
            name = "".join(map(chr, self.temp[start : end - 1]))
        ci = self.has(_I)
        prop: _CharSet | None = None
        if "=" in name:
            key, _, value = name.partition("=")
            key = key.lower()
            if key in ("sc", "script", "blk", "block"):
                kind = "script" if key in ("sc", "script") else "block"
                raise self.unsupported(
                    f"Unicode {kind} property \\p{{{name}}} is not supported by connect_magics"
                )
            if key in ("gc", "general_category"):
                prop = _for_property(value, ci)
            if prop is None:
                raise self.error(f"Unknown Unicode property {{name=<{key}>, value=<{value}>}}")
        else:
            if name.startswith("In"):
                raise self.unsupported(
                    f"Unicode block property \\p{{{name}}} is not supported by connect_magics"
                )
            if name.startswith("Is"):
                short = name[2:]
                prop = _for_unicode_property(short, ci)
                if prop is None:
                    prop = _for_property(short, ci)
                if prop is None:
                    raise self.unsupported(
                        f"Unknown character property name {{{name}}}, or a Unicode script or emoji "
                        "property, which connect_magics does not support"
                    )
            else:
                prop = _for_property(name, ci)
            if prop is None:
                raise self.error(f"Unknown character property name {{{name}}}")
        return ~prop if complement else prop

    def groupname(self, ch: int) -> str:
        if not _is_alpha(ch):
            raise self.error("capturing group name does not start with a Latin letter")
        name = []
        while True:
            name.append(chr(ch))
            ch = self.read()
            if not (_is_alpha(ch) or _is_digit(ch)):
                break
        if ch != 0x3E:
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(name)

    def group0(self) -> object:
        saved_flags = self.flags
        self.root = None
        ch = self.next()
        number = -1
        if ch == 0x3F:  # ?
            ch = self.skip()
            if ch == 0x3A:  # :
                node = _Group("noncap", self.expr())
            elif ch in (0x3D, 0x21):  # = !
                node = _Group("ahead" if ch == 0x3D else "not-ahead", self.expr())
            elif ch == 0x3E:  # >
                if not _HAS_POSSESSIVE:
                    raise self.unsupported("Atomic groups (?>...) need Python 3.11 or newer")
                node = _Group("atomic", self.expr())
            elif ch == 0x3C:  # <
                ch = self.read()
                if ch not in (0x3D, 0x21):
                    name = self.groupname(ch)
                    if name in self.named:
                        raise self.error(f"Named capturing group <{name}> is already defined")
                    number = self.group_count
                    self.group_count += 1
                    self.named[name] = number
                    node = _Group("cap", self.expr(), name, number)
                else:
                    if self.lookbehind_index < 0:
                        self.lookbehind_index = self.cursor - 1
                    node = _Group("behind" if ch == 0x3D else "not-behind", self.expr())
                    info = _Info()
                    _study(node.body, info)
                    if not info.valid:
                        raise self.error("Look-behind group does not have an obvious maximum length")
            elif ch in (0x24, 0x40):  # $ @
                raise self.error("Unknown group type")
            else:
                self.unread()
                self.add_flag()
                ch = self.read()
                if ch == 0x29:
                    return None  # inline modifier only: flags last until the enclosing group ends
                if ch != 0x3A:
                    raise self.error("Unknown inline modifier")
                node = _Group("noncap", self.expr())
        else:
            number = self.group_count
            self.group_count += 1
            node = _Group("cap", self.expr(), None, number)
        self.accept(0x29, "Unclosed group")
        self.flags = saved_flags
        if number >= 0:
            self.closed.add(number)
        return self.closure(node)

    def add_flag(self) -> None:
        ch = self.peek()
        while True:
            c = chr(ch)
            if c == "i":
                self.flags |= _I
            elif c == "m":
                self.flags |= _M
            elif c == "s":
                self.flags |= _S
            elif c == "d":
                self.flags |= _D
            elif c == "u":
                self.flags |= _U
            elif c == "c":
                self.cursor += 1
                raise self.unsupported("The CANON_EQ flag (?c) is not supported by connect_magics")
            elif c == "x":
                self.flags |= _X
            elif c == "U":
                self.cursor += 1
                raise self.unsupported(
                    "The UNICODE_CHARACTER_CLASS flag (?U) is not supported by connect_magics; "
                    "use \\p{...} classes such as \\p{IsAlphabetic} instead"
                )
            elif c == "-":
                self.next()
                self.sub_flag()
                return
            else:
                return
            ch = self.next()

    def sub_flag(self) -> None:
        ch = self.peek()
        masks = {"i": _I, "m": _M, "s": _S, "d": _D, "u": _U, "c": _C, "x": _X, "U": _UCC | _U}
        while chr(ch) in masks:
            self.flags &= ~masks[chr(ch)]
            ch = self.next()

    def qtype(self) -> str:
        ch = self.next()
        if ch == 0x3F:
            self.next()
            return "?"
        if ch == 0x2B:
            if not _HAS_POSSESSIVE:
                raise self.unsupported("Possessive quantifiers need Python 3.11 or newer")
            self.next()
            return "+"
        return ""

    def closure(self, prev: object) -> object:
        ch = self.peek()
        if ch == 0x3F:
            return _Quant(prev, 0, 1, self.qtype())
        if ch == 0x2A:
            return _Quant(prev, 0, None, self.qtype())
        if ch == 0x2B:
            return _Quant(prev, 1, None, self.qtype())
        if ch == 0x7B:
            ch = self.skip()
            if not _is_digit(ch):
                raise self.error("Illegal repetition")
            cmin = 0
            while True:
                cmin = cmin * 10 + (ch - 0x30)
                if cmin > _MAX_REPS:
                    raise self.error("Illegal repetition range")
                ch = self.read()
                if not _is_digit(ch):
                    break
            if ch == 0x2C:  # ,
                ch = self.read()
                if ch == 0x7D:
                    self.unread()
                    return _Quant(prev, cmin, None, self.qtype())
                cmax = 0
                while _is_digit(ch):
                    cmax = cmax * 10 + (ch - 0x30)
                    if cmax > _MAX_REPS:
                        raise self.error("Illegal repetition range")
                    ch = self.read()
            else:
                cmax = cmin
            if ch != 0x7D:
                raise self.error("Unclosed counted closure")
            if cmax < cmin:
                raise self.error("Illegal repetition range")
            self.unread()
            return _Quant(prev, cmin, None if cmax == _MAX_REPS else cmax, self.qtype())
        return prev


# --------------------------------------------------------------------------------------------------
# Emitting Python syntax


_CONTROL_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def _esc(cp: int) -> str:
    if cp in _CONTROL_ESCAPES:
        return _CONTROL_ESCAPES[cp]
    if cp < 0x80:
        c = chr(cp)
        if c.isalnum() or c == "_":
            return c
        if 0x20 <= cp < 0x7F:
            return "\\" + c
        return f"\\x{cp:02x}"
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _class_body(cs: _CharSet) -> str:
    parts = []
    for lo, hi in cs.ranges:
        if lo == hi:
            parts.append(_esc(lo))
        elif hi == lo + 1:
            parts.append(_esc(lo) + _esc(hi))
        else:
            parts.append(f"{_esc(lo)}-{_esc(hi)}")
    return "".join(parts)


def _emit_set(cs: _CharSet) -> str:
    ranges = cs.ranges
    if not ranges:
        return "(?!)"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _esc(ranges[0][0])
    complement = ~cs
    if not complement.ranges:
        return r"[\x00-\U0010ffff]"
    if len(complement.ranges) < len(ranges):
        return f"[^{_class_body(complement)}]"
    return f"[{_class_body(cs)}]"


class _Emitter:
    def __init__(self, parser: _Parser):
        self.parser = parser
        self.total_groups = parser.group_count

    def emit(self, node: object) -> str:
        if isinstance(node, _Chars):
            return _emit_set(node.cs)
        if isinstance(node, _Seq):
            return "".join(self.emit(n) for n in node.items)
        if isinstance(node, _Alt):
            return "|".join(self.emit(n) for n in node.items)
        if isinstance(node, _Raw):
            return node.src
        if isinstance(node, _BackRef):
            return self.backref(node)
        if isinstance(node, _Quant):
            inner = self.emit(node.node)
            if not self.is_atom(node.node):
                inner = f"(?:{inner})"
            return inner + self.quantifier(node) + node.kind
        if isinstance(node, _Group):
            return self.group(node)
        raise AssertionError(node)

    def is_atom(self, node: object) -> bool:
        if isinstance(node, _Seq):
            return len(node.items) == 1 and self.is_atom(node.items[0])
        return isinstance(node, (_Chars, _Group, _BackRef))

    @staticmethod
    def quantifier(node: _Quant) -> str:
        cmin, cmax = node.cmin, node.cmax
        if (cmin, cmax) == (0, 1):
            return "?"
        if (cmin, cmax) == (0, None):
            return "*"
        if (cmin, cmax) == (1, None):
            return "+"
        if cmax is None:
            return f"{{{cmin},}}"
        if cmin == cmax:
            return f"{{{cmin}}}"
        return f"{{{cmin},{cmax}}}"

    def backref(self, node: _BackRef) -> str:
        if node.number >= self.total_groups:
            return "(?!)"  # Java: a reference to a group that does not exist never matches
        if not node.closed:
            raise JavaRegexError(
                f"Back-reference \\{node.number} to a group that is not closed at that point is not "
                "supported by Python's re",
                self.parser.pattern,
                node.index,
                unsupported=True,
            )
        if node.number > 99:
            raise JavaRegexError(
                f"Back-reference \\{node.number} is not supported by Python's re (groups above 99)",
                self.parser.pattern,
                node.index,
                unsupported=True,
            )
        ref = f"\\{node.number}"
        if node.flags & _I:
            return f"(?i:{ref})" if node.flags & _U else f"(?a:(?i:{ref}))"
        return f"(?:{ref})"

    def group(self, node: _Group) -> str:
        kind = node.kind
        if kind in ("behind", "not-behind"):
            op = "(?<=" if kind == "behind" else "(?<!"
            alternatives = node.body.items if isinstance(node.body, _Alt) else [node.body]
            parts = [f"{op}{self.emit(a)})" for a in alternatives]
            if len(parts) == 1:
                return parts[0]
            return "(?:" + ("|" if kind == "behind" else "").join(parts) + ")"
        body = self.emit(node.body)
        if kind == "cap":
            return f"(?P<{node.name}>{body})" if node.name else f"({body})"
        prefix = {"noncap": "(?:", "ahead": "(?=", "not-ahead": "(?!", "atomic": "(?>"}[kind]
        return f"{prefix}{body})"


# --------------------------------------------------------------------------------------------------
# Public API


@functools.lru_cache(maxsize=512)
def _translate(pattern: str) -> tuple[str, int]:
    parser = _Parser(pattern)
    tree = parser.compile()
    return _Emitter(parser).emit(tree), parser.lookbehind_index


def translate_java_regex(pattern: str) -> str:
    r"""Return Python :mod:`re` source equivalent to the Java regular expression ``pattern``.

    The result needs no compile flags. Raises :class:`JavaRegexError` if Java would reject the pattern
    or Python cannot express it.

    Example::

        >>> translate_java_regex(r"(?<id>\d+)-\k<id>")
        '(?P<id>[0-9]+)\\-(?:\\1)'
    """
    return _translate(pattern)[0]


@functools.lru_cache(maxsize=512)
def compile_java_regex(pattern: str) -> re.Pattern[str]:
    r"""Compile the Java regular expression ``pattern`` into an equivalent Python pattern.

    Use ``.fullmatch()`` for Java's ``Matcher.matches()``. Raises :class:`JavaRegexError` (a
    ``ValueError``) when Java would reject the pattern or Python's :mod:`re` cannot express it.

    Example::

        >>> rx = compile_java_regex(r"\p{Alpha}[\w.-]*+")
        >>> bool(rx.fullmatch("orders.v2")), bool(rx.fullmatch("2orders"))
        (True, False)
    """
    source, lookbehind_index = _translate(pattern)
    try:
        return re.compile(source)
    except re.error as exc:
        if "look-behind" in str(exc):
            raise JavaRegexError(
                "Look-behind with a variable length is not supported by Python's re (only a top-level "
                "alternation of fixed-length branches, such as (?<=a|bc), is translated)",
                pattern,
                lookbehind_index,
                unsupported=True,
            ) from None
        raise JavaRegexError(
            f"Python's re cannot compile the translated pattern {source!r}: {exc}", pattern, unsupported=True
        ) from None
