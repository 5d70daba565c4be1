"""Bad input that needs no broker: Java regexes, Maven version ranges and %connect magics. Also states
the size of the whole corpus (tests/bad_input/cases.py)."""

from __future__ import annotations

from collections import Counter

import pytest
from bad_input.cases import CASES, Case, ids, of
from IPython.core.error import UsageError

from connect_magics.java_regex import JavaRegexError, compile_java_regex
from connect_magics.notebook.parsing import parse_command, parse_config_body, peek_converter
from connect_magics.runtime.plugins.versions import (
    InvalidVersionSpecificationError,
    connector_version_requirement,
)


def test_the_corpus_has_at_least_200_cases() -> None:
    by_surface = Counter(c.surface for c in CASES)
    print(f"\nbad-input corpus: {len(CASES)} cases ({', '.join(f'{s} {n}' for s, n in by_surface.items())})")
    assert len(CASES) >= 200
    assert len({(c.surface, c.id) for c in CASES}) == len(CASES), "case ids must be unique per surface"
    assert all(c.expect for c in CASES), "every case names what its error must say"


def _assert_mentions(message: str, case: Case) -> None:
    missing = [f for f in case.expect if f not in message]
    assert not missing, f"{case.id}: {missing} not in {message!r}"


@pytest.mark.parametrize("case", of("regex"), ids=ids(of("regex")))
def test_java_regex(case: Case) -> None:
    with pytest.raises(JavaRegexError) as raised:
        compile_java_regex(case.input)
    _assert_mentions(str(raised.value), case)
    assert case.input in str(raised.value), "the message shows the pattern"


@pytest.mark.parametrize("case", of("version"), ids=ids(of("version")))
def test_version_range(case: Case) -> None:
    with pytest.raises(InvalidVersionSpecificationError) as raised:
        connector_version_requirement(case.input)
    _assert_mentions(str(raised.value), case)


@pytest.mark.parametrize("case", of("magics"), ids=ids(of("magics")))
def test_magics(case: Case) -> None:
    line, cell = case.input
    with pytest.raises(UsageError) as raised:
        args = parse_command(line, cell)
        if args.command == "peek":
            peek_converter(args)
        if cell is not None:
            parse_config_body(cell, getattr(args, "name", None))
    _assert_mentions(str(raised.value), case)
