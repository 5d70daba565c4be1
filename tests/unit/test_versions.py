"""Tests for connect_magics.runtime.plugins.versions.

Most vectors are ported from Apache Maven 3.9.6 (maven-artifact ``ComparableVersionTest`` and
``VersionRangeTest``); the remaining ones pin Maven 3.9.6 behaviour checked against the real Java classes,
and Kafka Connect's ``PluginVersionUtils.connectorVersionRequirement`` rule.
"""

from __future__ import annotations

import itertools

import pytest

from connect_magics.runtime.plugins import versions
from connect_magics.runtime.plugins.versions import (
    ComparableVersion,
    InvalidVersionSpecificationError,
    Restriction,
    VersionRange,
    compare_versions,
    connector_version_requirement,
    newest_matching,
    sort_versions,
)

pytestmark = pytest.mark.unit

V = ComparableVersion
create = VersionRange.create_from_version_spec


def new_comparable(version: str) -> ComparableVersion:
    """Like Maven's ``newComparable``: the canonical form must be stable when parsed again."""
    v = V(version)
    assert V(v.canonical).canonical == v.canonical, version
    return v


def check_order(low: str, high: str) -> None:
    a, b = new_comparable(low), new_comparable(high)
    assert a.compare_to(b) < 0 and b.compare_to(a) > 0, f"expected {low} < {high}"
    assert a < b and b > a and a <= b and a != b


def check_orders(ordered: list[str]) -> None:
    for low, high in itertools.combinations(ordered, 2):
        check_order(low, high)


def check_equal(v1: str, v2: str) -> None:
    a, b = new_comparable(v1), new_comparable(v2)
    assert a.compare_to(b) == 0 and b.compare_to(a) == 0, f"expected {v1} == {v2}"
    assert a == b and b == a and hash(a) == hash(b)
    assert a <= b and a >= b and not a < b


# ---------------------------------------------------------------------------------------------------------
# ComparableVersionTest

VERSIONS_QUALIFIER = [
    "1-alpha2snapshot", "1-alpha2", "1-alpha-123", "1-beta-2", "1-beta123", "1-m2", "1-m11", "1-rc", "1-cr2",
    "1-rc123", "1-SNAPSHOT", "1", "1-sp", "1-sp2", "1-sp123", "1-abc", "1-def", "1-pom-1", "1-1-snapshot",
    "1-1", "1-2", "1-123",
]  # fmt: skip

VERSIONS_NUMBER = [
    "2.0", "2.0.a", "2-1", "2.0.2", "2.0.123", "2.1.0", "2.1-a", "2.1b", "2.1-c", "2.1-1", "2.1.0.1", "2.2",
    "2.123", "11.a2", "11.a11", "11.b2", "11.b11", "11.m2", "11.m11", "11", "11.a", "11b", "11c", "11m",
]  # fmt: skip


def test_versions_qualifier():
    check_orders(VERSIONS_QUALIFIER)


def test_versions_number():
    check_orders(VERSIONS_NUMBER)


@pytest.mark.parametrize(
    "v1, v2",
    [
        ("1", "1"), ("1", "1.0"), ("1", "1.0.0"), ("1.0", "1.0.0"), ("1", "1-0"), ("1", "1.0-0"), ("1.0", "1.0-0"),
        # no separator between number and character
        ("1a", "1-a"), ("1a", "1.0-a"), ("1a", "1.0.0-a"), ("1.0a", "1-a"), ("1.0.0a", "1-a"),
        ("1x", "1-x"), ("1x", "1.0-x"), ("1x", "1.0.0-x"), ("1.0x", "1-x"), ("1.0.0x", "1-x"),
        # aliases
        ("1ga", "1"), ("1release", "1"), ("1final", "1"), ("1cr", "1rc"),
        # special "aliases" a, b and m for alpha, beta and milestone
        ("1a1", "1-alpha-1"), ("1b2", "1-beta-2"), ("1m3", "1-milestone-3"),
        # case insensitive
        ("1X", "1x"), ("1A", "1a"), ("1B", "1b"), ("1M", "1m"), ("1Ga", "1"), ("1GA", "1"), ("1RELEASE", "1"),
        ("1release", "1"), ("1RELeaSE", "1"), ("1Final", "1"), ("1FinaL", "1"), ("1FINAL", "1"),
        ("1Cr", "1Rc"), ("1cR", "1rC"), ("1m3", "1Milestone3"), ("1m3", "1MileStone3"), ("1m3", "1MILESTONE3"),
    ],
)  # fmt: skip
def test_versions_equal(v1, v2):
    new_comparable("1.0-alpha")
    check_equal(v1, v2)


@pytest.mark.parametrize(
    "low, high",
    [
        ("1", "2"), ("1.5", "2"), ("1", "2.5"), ("1.0", "1.1"), ("1.1", "1.2"), ("1.0.0", "1.1"), ("1.0.1", "1.1"),
        ("1.1", "1.2.0"),
        ("1.0-alpha-1", "1.0"), ("1.0-alpha-1", "1.0-alpha-2"), ("1.0-alpha-1", "1.0-beta-1"),
        ("1.0-beta-1", "1.0-SNAPSHOT"), ("1.0-SNAPSHOT", "1.0"), ("1.0-alpha-1-SNAPSHOT", "1.0-alpha-1"),
        ("1.0", "1.0-1"), ("1.0-1", "1.0-2"), ("1.0.0", "1.0-1"),
        ("2.0-1", "2.0.1"), ("2.0.1-klm", "2.0.1-lmn"), ("2.0.1", "2.0.1-xyz"),
        ("2.0.1", "2.0.1-123"), ("2.0.1-xyz", "2.0.1-123"),
    ],
)  # fmt: skip
def test_version_comparing(low, high):
    check_order(low, high)


def test_leading_zeroes():  # from Maven 4's suite; holds in 3.9.6 too
    check_order("0.7", "2")
    check_order("0.2", "1.0.7")


def test_mng5568():
    a, b, c = "6.1.0", "6.1.0rc3", "6.1H.5-beta"  # c: the unusual version string, with 'H' in the middle
    check_order(b, a)  # classical
    check_order(b, c)  # now b < c, but before MNG-5568, we had b > c
    check_order(a, c)


def test_mng6572():
    a = "20190126.230843"  # resembles a SNAPSHOT
    b = "1234567890.12345"  # 10 digit number
    c = "123456789012345.1H.5-beta"  # 15 digit number
    d = "12345678901234567890.1H.5-beta"  # 20 digit number
    for low, high in [(a, b), (b, c), (a, c), (c, d), (b, d), (a, d)]:
        check_order(low, high)


@pytest.mark.parametrize("digit", ["1", "0"])
def test_version_equal_with_leading_zeroes(digit):
    # string lengths from 1 to 19 (MNG-6572 int/long/BigInteger items)
    arr = ["0" * n + digit for n in range(18, -1, -1)]
    for i, j in itertools.combinations_with_replacement(range(len(arr)), 2):
        check_equal(arr[i], arr[j])


def test_mng6964():
    a, b, c = "1-0.alpha", "1-0.beta", "1"
    check_order(a, c)  # now a < c, but before MNG-6964 they were equal
    check_order(b, c)
    check_order(a, b)


def test_locale_independent():
    # Maven lower-cases with Locale.ENGLISH: no Turkish dotless i
    check_equal("1-abcdefghijklmnopqrstuvwxyz", "1-ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def test_reuse():
    assert V("2") == new_comparable("2")


@pytest.mark.parametrize("x", ["abc", "alpha", "a", "beta", "b", "def", "milestone", "m", "RC"])
def test_mng7644(x):
    check_order(f"1.0.0.{x}1", f"1.0.0-{x}2")  # 1.0.0.X1 < 1.0.0-X2 for any string X
    check_equal(f"2-{x}", f"2.0.{x}")  # 2.0.X == 2-X == 2.0.0.X for any string X
    check_equal(f"2-{x}", f"2.0.0.{x}")
    check_equal(f"2.0.{x}", f"2.0.0.{x}")


# Maven 3.9.6 behaviour pinned against the Java implementation


@pytest.mark.parametrize(
    "version, canonical",
    [
        ("1.0.0-FINAL", "1"), ("0.x", "x"), ("1.0a1", "1-alpha-1"), ("2.0.1-xyz", "2.0.1-xyz"),
        ("1-1-SNAPSHOT", "1-1-snapshot"), ("1.0.RC2", "1-rc-2"), ("1..2", "1.0.2"), ("GA.20", "20"),
    ],
)  # fmt: skip
def test_canonical(version, canonical):
    v = V(version)
    assert v.canonical == canonical
    assert str(v) == version and repr(v) == f"ComparableVersion({version!r})"


def test_quirks_of_3_9_6():
    check_order("x", "0.x")  # same canonical text, different structure
    check_order("1", "\u0668")  # Unicode decimal digits (ARABIC-INDIC EIGHT) are numbers in 3.9.6 ...
    check_order("\U0001d7e4", "1")  # ... but not outside the BMP (Java sees two surrogate chars)
    check_order("1.0.RC2", "1.0-RC3")
    check_order("1.0-RC3", "1.0.1")
    check_order("1.9", "1.10")


def test_ordering_protocol():
    assert sorted(map(V, ["1.10", "1.9", "1.0-SNAPSHOT", "1"])) == [
        V("1.0-SNAPSHOT"),
        V("1"),
        V("1.9"),
        V("1.10"),
    ]
    assert len({V("1"), V("1.0"), V("1.0.0-ga"), V("1.1")}) == 2
    assert V("1") != "1"
    with pytest.raises(TypeError):
        _ = V("1") < "2"


# ---------------------------------------------------------------------------------------------------------
# VersionRangeTest


def bounds(rng: VersionRange) -> list[tuple[str | None, bool, str | None, bool]]:
    def text(v):
        return None if v is None else str(v)

    return [
        (text(r.lower_bound), r.lower_bound_inclusive, text(r.upper_bound), r.upper_bound_inclusive)
        for r in rng.restrictions
    ]


@pytest.mark.parametrize(
    "spec, recommended, expected",
    [
        ("(,1.0]", None, [(None, False, "1.0", True)]),
        ("1.0", "1.0", [(None, False, None, False)]),
        ("[1.0]", None, [("1.0", True, "1.0", True)]),
        ("[1.2,1.3]", None, [("1.2", True, "1.3", True)]),
        ("[1.0,2.0)", None, [("1.0", True, "2.0", False)]),
        ("[1.5,)", None, [("1.5", True, None, False)]),
        ("(,1.0],[1.2,)", None, [(None, False, "1.0", True), ("1.2", True, None, False)]),
    ],
)
def test_range(spec, recommended, expected):
    rng = create(spec)
    assert bounds(rng) == expected
    assert (None if rng.recommended_version is None else str(rng.recommended_version)) == recommended
    assert rng.has_restrictions() == (recommended is None)


@pytest.mark.parametrize(
    "spec, version, contained",
    [
        ("[1.0,)", "1.0-SNAPSHOT", False),
        ("[1.0,1.1-SNAPSHOT]", "1.1-SNAPSHOT", True),
        ("[5.0.9.0,5.0.10.0)", "5.0.9.0", True),
        # testReleaseRangeBoundsContainsSnapshots
        ("[1.0,1.2]", "1.1-SNAPSHOT", True),
        ("[1.0,1.2]", "1.2-SNAPSHOT", True),
        ("[1.0,1.2]", "1.0-SNAPSHOT", False),
        # testSnapshotRangeBoundsCanContainSnapshots
        ("[1.0,1.2-SNAPSHOT]", "1.1-SNAPSHOT", True),
        ("[1.0,1.2-SNAPSHOT]", "1.2-SNAPSHOT", True),
        ("[1.0-SNAPSHOT,1.2]", "1.0-SNAPSHOT", True),
        ("[1.0-SNAPSHOT,1.2]", "1.1-SNAPSHOT", True),
        # testSnapshotSoftVersionCanContainSnapshot
        ("1.0-SNAPSHOT", "1.0-SNAPSHOT", True),
        # testContains (actual version 2.0.5)
        ("2.0.5", "2.0.5", True),
        ("2.0.4", "2.0.5", True),
        ("[2.0.5]", "2.0.5", True),
        ("[2.0.6,)", "2.0.5", False),
        ("[2.0.6]", "2.0.5", False),
        ("[2.0,2.1]", "2.0.5", True),
        ("[2.0,2.0.3]", "2.0.5", False),
        ("[2.0,2.0.5]", "2.0.5", True),
        ("[2.0,2.0.5)", "2.0.5", False),
        # more: multiple sets, exclusive bounds, equal-but-different spellings
        ("(,1.0],[1.2,)", "1.1", False),
        ("(,1.0],[1.2,)", "1.0.0", True),
        ("(,1.0],[1.2,)", "1.2-rc1", False),
        ("(1.0,2.0)", "1.0", False),
        ("(1.0,2.0)", "1.0.0.1", True),
        ("[1.0]", "1.0.0-GA", True),
    ],
)
def test_contains(spec, version, contained):
    rng = create(spec)
    assert rng.contains_version(version) is contained
    assert rng.contains_version(V(version)) is contained


def test_same_upper_and_lower_bound_roundtrip():
    rng = create("[1.0]")
    assert str(rng) == "[1.0,1.0]"
    assert create(str(rng)) == rng


@pytest.mark.parametrize(
    "spec, message",
    [
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[1.0)", "Single version must be surrounded by []: [1.0)"),
        ("(1.0]", "Single version must be surrounded by []: (1.0]"),
        ("(1.0,1.0]", "Range defies version ordering: (1.0,1.0]"),
        ("[1.0,1.0)", "Range defies version ordering: [1.0,1.0)"),
        ("(1.0,1.0)", "Range defies version ordering: (1.0,1.0)"),
        ("[1.1,1.0]", "Range defies version ordering: [1.1,1.0]"),
        ("[1.0,1.2),1.3", "Only fully-qualified sets allowed in multiple set scenario: [1.0,1.2),1.3"),
        ("[1.0,1.2),(1.1,1.3]", "Ranges overlap: [1.0,1.2),(1.1,1.3]"),  # overlap
        ("[1.1,1.3),(1.0,1.2]", "Ranges overlap: [1.1,1.3),(1.0,1.2]"),  # overlap
        ("(1.1,1.2],[1.0,1.1)", "Ranges overlap: (1.1,1.2],[1.0,1.1)"),  # ordering
        # messages name the whole spec, except the two that name only the offending restriction
        ("[1.0,2.0", "Unbounded range: [1.0,2.0"),
        ("[1.0]x", "Only fully-qualified sets allowed in multiple set scenario: [1.0]x"),
        ("[1.0,2.0),(3.0)", "Single version must be surrounded by []: (3.0)"),
        ("[1.0,2.0),[4.0,3.0]", "Range defies version ordering: [4.0,3.0]"),
    ],
)
def test_invalid_ranges(spec, message):
    with pytest.raises(InvalidVersionSpecificationError) as exc:
        create(spec)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_ordering_of_restrictions():
    # restrictions keep spec order; each must start at or above the previous upper bound
    rng = create("(,1.0),[1.0,1.5],(1.5,2.0),[3.0]")
    assert [str(r) for r in rng.restrictions] == ["(,1.0)", "[1.0,1.5]", "(1.5,2.0)", "[3.0,3.0]"]
    assert [rng.contains_version(v) for v in ("0.1", "1.0", "1.5", "1.7", "2.0", "3.0", "3.1")] == [
        True, True, True, True, False, True, False,
    ]  # fmt: skip
    with pytest.raises(InvalidVersionSpecificationError, match="^Ranges overlap: "):
        create("[2.0,3.0],[1.0,1.5]")
    with pytest.raises(InvalidVersionSpecificationError, match="^Ranges overlap: "):
        create("[1.0,2.0],(,3.0]")  # an open lower bound overlaps anything before it


@pytest.mark.parametrize(
    "spec, text, has_restrictions, count",
    [
        ("[1.0]", "[1.0,1.0]", True, 1),
        ("1.0", "1.0", False, 1),
        ("[ 1.0 , 2.0 )", "[1.0,2.0)", True, 1),
        ("(,1.0] , [1.2,)", "(,1.0],[1.2,)", True, 2),
        ("[1.0] [2.0]", "[1.0,1.0],[2.0,2.0]", True, 2),
        ("(,)", "(,)", True, 1),
        ("[]", "[,]", True, 1),
        ("", "", False, 0),
        # Maven 3.9.6 quirks: the first comma splits, the rest belongs to the upper bound ...
        ("[1.0,2.0,3.0]", "[1.0,2.0,3.0]", True, 1),
        # ... and nothing is checked after a restriction without upper bound
        ("[1.0,),[0.5,0.6]", "[1.0,),[0.5,0.6]", True, 2),
    ],
)
def test_to_string(spec, text, has_restrictions, count):
    rng = create(spec)
    assert (str(rng), rng.has_restrictions(), len(rng.restrictions)) == (text, has_restrictions, count)


def test_quirks_contains():
    assert not create("[1.0,2.0,3.0]").contains_version("2.5")
    assert not create("").contains_version("1.0")
    assert create("[,]").contains_version("1.0")


def test_cache():
    assert create("[1.0,1.2]") is create("[1.0,1.2]")
    assert create("1.0") is create("1.0")


def test_restriction_and_match_version():
    r = Restriction(V("1.0"), False, None, False)
    assert str(r) == "(1.0,)" and r.contains_version("1.0.1") and not r.contains_version("1.0")
    assert str(versions.EVERYTHING) == "(,)"
    rng = create("[1.0,2.0)")
    assert rng.match_version(["0.9", "1.2", "1.10", "2.0"]) == V("1.10")
    assert rng.match_version(["2.0"]) is None


# ---------------------------------------------------------------------------------------------------------
# Kafka Connect: PluginVersionUtils.connectorVersionRequirement and helpers


def test_connector_version_requirement_no_requirement():
    assert connector_version_requirement(None) is None
    assert connector_version_requirement("latest") is None
    # "latest" is matched before trimming: " latest" becomes a hard requirement for version "latest"
    assert str(connector_version_requirement(" latest")) == "[latest,latest]"


@pytest.mark.parametrize(
    "version, text",
    [
        ("1.2", "[1.2,1.2]"),
        (" 1.2\t", "[1.2,1.2]"),
        ("1.2-SNAPSHOT", "[1.2-SNAPSHOT,1.2-SNAPSHOT]"),
        ("[1.0,2.0)", "[1.0,2.0)"),
        (" [1.0,2.0) ", "[1.0,2.0)"),
        ("(,1.0],[1.2,)", "(,1.0],[1.2,)"),
        ("[1.5]", "[1.5,1.5]"),
    ],
)
def test_connector_version_requirement(version, text):
    rng = connector_version_requirement(version)
    assert str(rng) == text
    assert rng.has_restrictions() and rng.recommended_version is None


def test_connector_version_requirement_is_hard():
    rng = connector_version_requirement("1.2")
    contained = [v for v in ("1.1", "1.2", "1.2.0", "1.2.1", "1.3") if rng.contains_version(v)]
    assert contained == ["1.2", "1.2.0"]
    assert connector_version_requirement("[1.0,2.0)") is create("[1.0,2.0)")


@pytest.mark.parametrize(
    "version, message",
    [
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
        ("[1.0,2.0", "Unbounded range: [1.0,2.0"),
        ("[1.0,1.2),(1.1,1.3]", "Ranges overlap: [1.0,1.2),(1.1,1.3]"),
        ("[1.0,1.2),1.3", "Only fully-qualified sets allowed in multiple set scenario: [1.0,1.2),1.3"),
        # a soft spec that only fails once wrapped in []
        ("1.0)", "Single version must be surrounded by []: [1.0)"),
        ("1.0,[1.2,)", "Range defies version ordering: [1.0,[1.2,)"),
    ],
)
def test_connector_version_requirement_invalid(version, message):
    with pytest.raises(InvalidVersionSpecificationError) as exc:
        connector_version_requirement(version)
    assert str(exc.value) == message


def test_newest_matching():
    available = ["1.0", "1.10", "1.9", "2.0-SNAPSHOT", "2.0", "1.10.0"]
    assert newest_matching(available, None) == "2.0"
    # 2.0-SNAPSHOT sorts below 2.0, so an exclusive upper bound 2.0 still admits it (as in Maven)
    assert newest_matching(available, connector_version_requirement("[1.0,2.0)")) == "2.0-SNAPSHOT"
    below_snapshot = connector_version_requirement("[1.0,2.0-SNAPSHOT)")
    assert newest_matching(available, below_snapshot) == "1.10"  # the first of 1.10 == 1.10.0
    assert newest_matching(available, connector_version_requirement("1.9")) == "1.9"
    assert newest_matching(available, connector_version_requirement("3.0")) is None
    assert newest_matching([], None) is None
    assert newest_matching(iter(["0.1", "0.2"]), create("0.1")) == "0.2"  # a soft range matches everything


def test_sort_and_compare_versions():
    shuffled = ["1.0.1", "1.0", "1.0-rc1", "1.0-SNAPSHOT", "1.0-alpha", "1.0-sp", "1.0-beta"]
    expected = ["1.0-alpha", "1.0-beta", "1.0-rc1", "1.0-SNAPSHOT", "1.0", "1.0-sp", "1.0.1"]
    assert sort_versions(shuffled) == expected
    assert sort_versions(shuffled, reverse=True) == expected[::-1]
    assert sort_versions(["1.0.0", "1", "1.0"]) == ["1.0.0", "1", "1.0"]  # stable for equal versions
    assert compare_versions("1.0", "1.0.0") == 0
    assert compare_versions("1.0-rc1", V("1.0")) == -1
    assert compare_versions("10", "2") == 1


