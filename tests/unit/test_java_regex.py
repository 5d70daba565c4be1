"""Tests for the Java → Python regex translation (connect_magics.java_regex).

The match and error vectors were recorded by running ``Pattern.compile(p).matcher(s).matches()`` on
OpenJDK 17 and 25; the Python translation must give the same answers.
"""

from __future__ import annotations

import re

import pytest

from connect_magics import java_regex
from connect_magics.java_regex import JavaRegexError, compile_java_regex, translate_java_regex

pytestmark = pytest.mark.unit

needs_311 = pytest.mark.skipif(not java_regex._HAS_POSSESSIVE, reason="possessive/atomic need Python 3.11")

# (Java pattern, [(input, Matcher.matches() result)]), results recorded from OpenJDK 17 and 25
MATCH_CASES = [
    ("a*+a", [("aaa", False), ("", False)]),
    ("a++b", [("aab", True), ("b", False)]),
    ("a?+a", [("a", False), ("aa", True)]),
    ("a{1,3}+a", [("aaaa", True), ("aaa", False)]),
    ("(?>a|ab)c", [("abc", False), ("ac", True)]),
    ("(?:ab)*+ab", [("abab", False)]),
    ("\\p{Alpha}+", [("abcXYZ", True), ("ab1", False), ("é", False)]),
    ("\\p{Digit}{2}", [("42", True), ("٤٢", False)]),
    ("\\p{Alnum}*", [("a1B2", True), ("a_1", False)]),
    ("\\p{Upper}\\p{Lower}+", [("Hello", True), ("hello", False)]),
    ("\\p{Punct}", [("!", True), ("_", True), ("a", False), ("«", False)]),
    ("\\p{Space}", [(" ", True), ("\x0b", True), ("\xa0", False)]),
    ("\\p{XDigit}+", [("cafeBABE", True), ("xyz", False)]),
    ("\\p{L}+", [("héllo", True), ("h3llo", False)]),
    ("\\p{IsAlphabetic}", [("a", True), ("Ⓐ", True), ("1", False)]),
    ("\\P{Digit}", [("a", True), ("5", False)]),
    ("\\PL", [("1", True), ("a", False)]),
    ("\\p{Lu}", [("É", True), ("é", False)]),
    ("\\p{IsLu}", [("É", True)]),
    ("\\p{gc=Nd}", [("٣", True)]),
    ("\\p{javaLowerCase}", [("ß", True), ("A", False)]),
    ("\\p{IsWhite_Space}", [("\u2003", True), ("a", False)]),
    ("[\\p{Alpha}_][\\p{Alnum}_]*", [("_x1", True), ("1x", False)]),
    ("[^\\P{Upper}]", [("A", True), ("a", False)]),
    ("[\\P{L}a]", [("a", True), ("b", False), ("1", True)]),
    ("\\Qa.b\\E", [("a.b", True), ("axb", False)]),
    ("\\Qa.b", [("a.b", True)]),
    ("x\\Q*+?\\Ey", [("x*+?y", True)]),
    ("[\\Q]-\\E]+", [("]-]", True), ("a", False)]),
    ("\\Q\\\\E", [("\\", True)]),
    ("\\Q1\\E\\0101", [("1A", True)]),
    ("a\\z", [("a", True), ("a\n", False)]),
    ("a\\Z", [("a", True), ("a\n", False), ("a\r\n", False), ("a\u2028", False)]),
    ("a$\\n?", [("a\n", True), ("a", True)]),
    ("a$\\r\\n", [("a\r\n", True)]),
    ("a$[\\r\\n]+", [("a\n\n", False)]),
    ("(?m)a$\\n^b", [("a\nb", True)]),
    ("(?m)^a$\\r\\n^b$", [("a\r\nb", True)]),
    ("(?m)(?:^x\\n?)*", [("x\nx\n", True), ("x\nx", True)]),
    ("(?d)a$\\r", [("a\r", False)]),
    ("(?d)a.b", [("a\rb", True), ("a\nb", False)]),
    ("a.b", [("a\rb", False), ("a\x85b", False), ("a\u2028b", False), ("a\tb", True)]),
    ("(?s)a.b", [("a\nb", True)]),
    ("\\Aab", [("ab", True)]),
    ("\\Ga", [("a", True)]),
    ("^a", [("a", True)]),
    ("\\R", [("\r\n", True), ("\n", True), ("\u2029", True), ("\r\r", False)]),
    ("\\R\\n", [("\r\n", True)]),
    ("\\h\\v", [("\t\n", True), (" \u2028", True)]),
    ("\\V\\H", [("ab", True), ("\n ", False)]),
    ("\\bfoo\\b", [("foo", True)]),
    ("a\\Bb", [("ab", True)]),
    ("\\B", [("", True)]),
    ("\\b", [("", False)]),
    ("a\\b.", [("a-", True), ("ab", False)]),
    ("(?<word>[a-z]+)-\\k<word>", [("ab-ab", True), ("ab-cd", False)]),
    ("(a)(b)\\2\\1", [("abba", True)]),
    ("(a)\\11", [("aa1", True)]),
    ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)\\11", [("abcdefghijkk", True), ("abcdefghijka1", False)]),
    ("(a)|\\2", [("a", True), ("", False)]),
    ("(?i)(a)\\1", [("aA", True)]),
    ("(?iu)(é)\\1", [("éÉ", True)]),
    ("(?i)(é)\\1", [("éÉ", False)]),
    ("(?i)orders", [("ORDERS", True), ("Orders", True)]),
    ("a(?i)b", [("aB", True), ("AB", False)]),
    ("a(?i)b|c", [("C", True)]),
    ("(?:a(?i)b)c", [("aBc", True), ("aBC", False)]),
    ("(?i:a)b", [("Ab", True), ("AB", False)]),
    ("(?i)é", [("É", False)]),
    ("(?iu)é", [("É", True)]),
    ("(?i)[a-c]", [("B", True), ("K", False)]),
    ("(?i)[^a]", [("A", False), ("b", True)]),
    ("(?iu)k", [("K", True)]),
    ("(?i)\\p{Lower}", [("A", True)]),
    ("(?x) a b # comment", [("ab", True), ("a b", False)]),
    ("(?x)[a b]", [(" ", False), ("b", True)]),
    ("(?x)a\\ b", [("a b", True)]),
    ("(?x)a{1, 2}", [("aa", True)]),
    ("(?i-i)a", [("A", False)]),
    ("(?s-s:.)", [("\n", False)]),
    ("[]a]", [("]", True), ("a", True)]),
    ("[^]a]", [("]", False), ("b", True)]),
    ("[a-]", [("-", True)]),
    ("[a-z-0]", [("-", True), ("0", True)]),
    ("[a[b-d]]", [("c", True), ("e", False)]),
    ("[^a[b]]", [("b", False), ("c", True)]),
    ("[\\d-z]", [("-", True), ("y", False)]),
    ("[&a]", [("&", True)]),
    ("a{2}{3}", [("aa", True), ("aaaaaa", False)]),
    ("^*a", [("a", True)]),
    ("(?=a)*a", [("a", True)]),
    ("x{0}", [("", True)]),
    ("a{1,}?", [("aaa", True)]),
    ("]", [("]", True)]),
    ("}", [("}", True)]),
    ("a|", [("", True), ("a", True)]),
    ("(?<=a|bc)x", []),
    ("\\x41\\u0042\\x{43}\\0104\\cE\\e\\N{LATIN SMALL LETTER A}", [("ABCD\x05\x1ba", True)]),
    ("\\uD83D\\uDE00", [("😀", True)]),
    ("\\t\\n\\r\\f\\a", [("\t\n\r\x0c\x07", True)]),
    ("orders\\..*", [("orders.eu", True), ("orders", False), ("ordersX", False)]),
    (".*foo.*|.*bar.*", [("foo-topic", True), ("bar-topic", True), ("baz", False)]),
    ("status", [("status", True), ("status2", False)]),
    ("another\\.compacted\\.topic", [("another.compacted.topic", True), ("anotherXcompacted.topic", False)]),
    ("(?!_).*", [("_internal", False), ("public", True)]),
    (".*(?<!\\.dlq)", [("a.dlq", False), ("a.dlq2", True)]),
]

# (Java pattern, PatternSyntaxException description, index), from OpenJDK 25
JAVA_ERROR_CASES = [
    ("a{,3}", "Illegal repetition", 2),
    ("{", "Illegal repetition", 1),
    ("x{a}", "Illegal repetition", 2),
    ("a{", "Illegal repetition", 2),
    ("*a", "Dangling meta character '*'", 0),
    ("a**", "Dangling meta character '*'", 2),
    ("+", "Dangling meta character '+'", 0),
    ("(a", "Unclosed group", 2),
    ("a)", "Unmatched closing ')'", 0),
    ("[]", "Unclosed character class", 1),
    ("[^]", "Unclosed character class", 2),
    ("[a", "Unclosed character class", 1),
    ("\\", "Unescaped trailing backslash", 1),
    ("a\\", "Unescaped trailing backslash", 2),
    ("\\E", "Illegal/unsupported escape sequence", 1),
    ("\\y", "Illegal/unsupported escape sequence", 1),
    ("\\0", "Illegal octal escape sequence", 2),
    ("\\08", "Illegal octal escape sequence", 2),
    ("\\x4", "Illegal hexadecimal escape sequence", 3),
    ("\\u12", "Illegal Unicode escape sequence", 4),
    ("\\x{110000}", "Hexadecimal codepoint is too big", 8),
    ("\\cA\\c", "Illegal control escape sequence", 4),
    ("(?<my_name>x)", "named capturing group is missing trailing '>'", 5),
    ("(?<1a>x)", "capturing group name does not start with a Latin letter", 3),
    ("(?<a>x)(?<a>y)", "Named capturing group <a> is already defined", 11),
    ("\\k<nope>", "named capturing group <nope> does not exist", 7),
    ("\\ka", "\\k is not followed by '<' for named capturing group", 2),
    ("(?@a)", "Unknown group type", 2),
    ("(?$a)", "Unknown group type", 2),
    ("(?z)", "Unknown inline modifier", 2),
    ("(?i", "Unknown inline modifier", 3),
    ("[z-a]", "Illegal character range", 3),
    ("a{3,2}", "Illegal repetition range", 5),
    ("a{99999999999}", "Illegal repetition range", 11),
    ("\\p{Alphabetic}", "Unknown character property name {Alphabetic}", 13),
    ("\\p{}", "Empty character family", 3),
    ("\\p{Foo", "Unclosed character family", 6),
    ("\\p{foo=bar}", "Unknown Unicode property {name=<foo>, value=<bar>}", 10),
    ("\\p{gc=Foo}", "Unknown Unicode property {name=<gc>, value=<Foo>}", 9),
    ("\\N{NO SUCH CHARACTER NAME}", "Unknown character name [NO SUCH CHARACTER NAME]", 25),
    ("\\N", "Illegal character name escape sequence", 2),
    ("(?<=a\\1)(a)", "Look-behind group does not have an obvious maximum length", 6),
    ("(?<=(a|bc)*)", "Look-behind group does not have an obvious maximum length", 10),
    ("[a-\\d]", "Illegal character range", 4),
    ("\\1[\\1]", "Illegal/unsupported escape sequence", 4),
    ("a{1", "Unclosed counted closure", 3),
    ("(?x)a{1,2", "Unclosed counted closure", 9),
]


@needs_311
@pytest.mark.parametrize(("pattern", "expectations"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES])
def test_matches_like_java(pattern: str, expectations: list[tuple[str, bool]]) -> None:
    rx = compile_java_regex(pattern)
    assert [(s, rx.fullmatch(s) is not None) for s, _ in expectations] == expectations


@pytest.mark.parametrize(
    ("pattern", "description", "index"), JAVA_ERROR_CASES, ids=[c[0] for c in JAVA_ERROR_CASES]
)
def test_rejects_like_java(pattern: str, description: str, index: int) -> None:
    with pytest.raises(JavaRegexError) as info:
        compile_java_regex(pattern)
    assert (info.value.description, info.value.index, info.value.unsupported) == (description, index, False)


def test_error_message_has_java_layout() -> None:
    with pytest.raises(JavaRegexError) as info:
        compile_java_regex("ab{,3}")
    assert str(info.value) == "Illegal repetition near index 3\nab{,3}\n   ^"
    assert isinstance(info.value, ValueError)
    assert info.value.pattern == "ab{,3}"


def test_error_message_without_caret_when_index_is_at_the_end() -> None:
    with pytest.raises(JavaRegexError) as info:
        compile_java_regex("a(")
    assert str(info.value) == "Unclosed group near index 2\na("


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("[a-z&&[^aeiou]]", "intersection (&&)"),
        (r"\p{IsLatin}", "{IsLatin}"),
        (r"\p{script=Latin}", r"\p{script=Latin}"),
        (r"\p{sc=Greek}", r"\p{sc=Greek}"),
        (r"\p{InGreek}", r"\p{InGreek}"),
        (r"\p{block=Greek}", r"\p{block=Greek}"),
        (r"\p{IsEmoji}", "{IsEmoji}"),
        ("(?U)\\w", "UNICODE_CHARACTER_CLASS"),
        ("(?c)a", "CANON_EQ"),
        (r"\X", r"\X"),
        (r"a\b{g}", r"\b{g}"),
        (r"(a\1)", r"\1"),
        (r"\1(a)", r"\1"),
        (r"(?<n>a\k<n>)", r"\1"),
        (r"(?<=a+)x", "Look-behind"),
        (r"(?<=x(?:a|bc))y", "Look-behind"),
    ],
)
def test_rejects_what_python_cannot_express(pattern: str, fragment: str) -> None:
    with pytest.raises(JavaRegexError) as info:
        compile_java_regex(pattern)
    assert info.value.unsupported
    assert fragment in info.value.description


def test_unknown_property_is_named() -> None:
    with pytest.raises(JavaRegexError, match=r"Unknown character property name \{Alphabetic\}"):
        compile_java_regex(r"\p{Alphabetic}")


def test_python_310_rejects_possessive_and_atomic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(java_regex, "_HAS_POSSESSIVE", False)
    java_regex._translate.cache_clear()
    try:
        for pattern in ("a*+", "a{1,2}+", "(?>a)"):
            with pytest.raises(JavaRegexError, match="Python 3.11") as info:
                translate_java_regex(pattern)
            assert info.value.unsupported
        assert translate_java_regex("a*?") == "a*?"  # lazy quantifiers still work
    finally:
        java_regex._translate.cache_clear()


@needs_311
@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        (r"\Qa.b*\E", r"a\.b\*"),
        (r"a\z", r"a\Z"),
        (r"a\Z", r"a(?=(?:\r\n|(?<!\r)\n|[\r\x85\u2028\u2029])?\Z)"),
        (r"(?d)a$", r"a(?=\n?\Z)"),
        (r"(?<name>x)\k<name>", r"(?P<name>x)(?:\1)"),
        (r"a*+b++c?+d{1,2}+", "a*+b++c?+d{1,2}+"),
        (r"(?>a)", "(?>a)"),
        (r"\d\w\s", r"[0-9][0-9A-Z_a-z][\t-\r\ ]"),
        (r"\p{Alpha}\p{XDigit}", "[A-Za-z][0-9A-Fa-f]"),
        (r"\P{Digit}", "[^0-9]"),
        (".", r"[^\n\r\x85\u2028\u2029]"),
        ("(?i)ab", "[Aa][Bb]"),
        ("a(?i)b|c", "a[Bb]|[Cc]"),
        ("(?<=a|bc)x", "(?:(?<=a)|(?<=bc))x"),
        ("(?<!a|bc)x", "(?:(?<!a)(?<!bc))x"),
        ("^*a", r"(?:\A)*a"),
        ("a{2}{3}", "a{2}(?:){3}"),
        (r"(a)\2", "(a)(?!)"),
        ("(?i)(a)\\1", "([Aa])(?a:(?i:\\1))"),
        (r"[a[b-d]]", "[a-d]"),
        (r"(?x) a [ b c ] # note", "a[bc]"),
    ],
)
def test_translation(pattern: str, python: str) -> None:
    assert translate_java_regex(pattern) == python


def test_translation_needs_no_flags() -> None:
    source = translate_java_regex(r"(?ims)^a.b$")
    assert re.compile(source).fullmatch("A\nB")
    assert compile_java_regex(r"(?ims)^a.b$").flags == re.compile(source).flags


def test_unicode_properties() -> None:
    letters = compile_java_regex(r"\p{L}+")
    assert letters.fullmatch("héllo") and letters.fullmatch("日本") and not letters.fullmatch("h3")
    assert compile_java_regex(r"\p{IsAlphabetic}").fullmatch("\u0905")  # DEVANAGARI LETTER A
    assert compile_java_regex(r"\p{IsAlphabetic}").fullmatch("\u093e")  # a vowel sign: Other_Alphabetic
    assert compile_java_regex(r"\p{IsIdeographic}").fullmatch("\u4e00")
    assert compile_java_regex(r"\p{javaWhitespace}").fullmatch("\x1c")
    assert not compile_java_regex(r"\p{javaWhitespace}").fullmatch("\xa0")
    assert compile_java_regex(r"\p{Alpha}").fullmatch("é") is None  # POSIX classes are ASCII in Java
    assert compile_java_regex(r"\w").fullmatch("é") is None
    assert compile_java_regex(r"\d").fullmatch("\u0663") is None


def test_compiled_patterns_are_cached() -> None:
    assert compile_java_regex("orders.*") is compile_java_regex("orders.*")


def test_kafka_topic_creation_patterns() -> None:
    include = compile_java_regex(
        "|".join(["key_value_topic", r"another\.compacted\.topic", "configurations.*"])
    )
    assert include.fullmatch("configurations.users")
    assert include.fullmatch("another.compacted.topic")
    assert not include.fullmatch("anotherXcompacted.topic")
    assert not include.fullmatch("key_value_topic2")
    assert compile_java_regex("").fullmatch("") and not compile_java_regex("").fullmatch(" ")
