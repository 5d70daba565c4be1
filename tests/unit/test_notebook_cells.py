"""Offsets-table cells as text and back (the offsets editor's validation), and the widgets' HTML helpers."""

from __future__ import annotations

import pandas as pd
import pytest

from connect_magics.notebook.offset_cells import cell_text, column_kinds, parse_cell
from connect_magics.spark.offsets_frame import offsets_to_frame


def test_kinds_of_an_offsets_frame() -> None:
    frame = offsets_to_frame({"offsets": [
        {"partition": {"file": "a", "n": 1}, "offset": {"pos": 5, "done": True, "ratio": 0.5, "mixed": "x"}},
        {"partition": {"file": "b", "n": 2}, "offset": {"pos": 2 ** 70, "done": False, "ratio": 1.5, "mixed": 3}}]})
    assert column_kinds(frame) == {"file": "str", "n": "int", "pos": "int", "done": "bool", "ratio": "float",
                                   "mixed": "json"}
    assert [cell_text(v) for v in frame["pos"]] == ["5", str(2 ** 70)]


@pytest.mark.parametrize("text, kind, value", [
    ("7", "int", 7), (" 7 ", "int", 7), (str(2 ** 70), "int", 2 ** 70), ("", "int", None), ("0.25", "float", 0.25),
    ("TRUE", "bool", True), ("false", "bool", False), (" a b ", "str", " a b "), ('"x"', "json", "x"),
    ("3", "json", 3), ("null", "json", None), ("{\"k\": [1]}", "json", {"k": [1]}),
])
def test_parse_cell_values(text: str, kind: str, value: object) -> None:
    assert parse_cell(text, kind, "f") == value


@pytest.mark.parametrize("text, kind, message", [
    ("x", "int", "f: 'x' is not an integer"), ("1e3", "int", "f: '1e3' is not an integer"),
    ("-3", "int", "f: -3 is negative"), ("-0.5", "float", "f: -0.5 is negative"),
    ("nan", "float", "f: 'nan' is not a finite number"), ("yes", "bool", "f: 'yes' is not true or false"),
    ("x", "json", "f: 'x' is not a JSON value"), ("-1", "json", "f: -1 is negative"),
])
def test_parse_cell_refusals_name_the_column_and_reason(text: str, kind: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_cell(text, kind, "f")


def test_missing_values_show_empty() -> None:
    assert [cell_text(v) for v in (None, pd.NA, float("nan"))] == ["", "", ""]
