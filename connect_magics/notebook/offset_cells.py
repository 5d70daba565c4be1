"""Offsets-table cells as text and back: what the offsets editor shows in a cell, and what a typed text
means for a column of an offsets DataFrame (``connect_magics.spark.offsets_frame``). Pure, no widgets.

A column's kind comes from its dtype and values: ``int`` (``Int64``, or Python ints beyond 64 bits),
``float``, ``bool``, ``str``, or ``json`` (mixed values: the text is read as a JSON literal). An empty text
is a missing value; a row whose offset cells are all empty resets that partition.

>>> kinds = column_kinds(pd.DataFrame({"position": pd.array([7], dtype="Int64")}))
>>> parse_cell("12", kinds["position"], "position"), cell_text(pd.NA)
(12, '')
>>> parse_cell("-1", "int", "position")
Traceback (most recent call last):
...
ValueError: position: -1 is negative; offsets and partitions must be 0 or more
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CellKind", "cell_text", "column_kinds", "parse_cell"]

CellKind = str
"""One of ``int``, ``float``, ``bool``, ``str``, ``json``."""

_BOOLS = {"true": True, "false": False}


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def cell_text(value: Any) -> str:
    """How a cell shows ``value``: JSON spelling for booleans and nested values, empty when missing.

    >>> cell_text(True), cell_text(3), cell_text("a"), cell_text({"k": 1}), cell_text(None)
    ('true', '3', 'a', '{"k": 1}', '')
    """
    if _is_missing(value):
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value)


def _kind_of_values(values: list[Any]) -> CellKind:
    present = [v.item() if isinstance(v, np.generic) else v for v in values if not _is_missing(v)]
    for kind, test in (("bool", lambda v: isinstance(v, bool)),
                       ("int", lambda v: isinstance(v, int) and not isinstance(v, bool)),
                       ("float", lambda v: isinstance(v, float)), ("str", lambda v: isinstance(v, str))):
        if present and all(test(v) for v in present):
            return kind
    return "json"


def column_kinds(frame: pd.DataFrame) -> dict[str, CellKind]:
    """The kind of every column of an offsets frame (from its dtype, else from its values).

    >>> column_kinds(pd.DataFrame({"a": ["x"], "b": pd.array([True], dtype="boolean"), "c": [1.5]}))
    {'a': 'str', 'b': 'bool', 'c': 'float'}
    """
    kinds = {}
    for column in frame.columns:
        dtype = frame[column].dtype
        if pd.api.types.is_bool_dtype(dtype):
            kinds[str(column)] = "bool"
        elif pd.api.types.is_integer_dtype(dtype):
            kinds[str(column)] = "int"
        elif pd.api.types.is_float_dtype(dtype):
            kinds[str(column)] = "float"
        else:
            kinds[str(column)] = _kind_of_values(list(frame[column].array))
    return kinds


def _non_negative(number: int | float, column: str) -> int | float:
    if number < 0:
        raise ValueError(f"{column}: {number} is negative; offsets and partitions must be 0 or more")
    return number


def parse_cell(text: str, kind: CellKind, column: str) -> Any:
    """The value a typed ``text`` stands for in a column of ``kind``; ``None`` for an empty text.

    Raises ``ValueError`` naming the column and the reason (not a number, negative, not true/false,
    not JSON). Numbers must be 0 or more: offsets and partitions are positions.

    >>> parse_cell(" 5 ", "int", "kafka_offset"), parse_cell("", "int", "kafka_offset"), parse_cell("x", "str", "f")
    (5, None, 'x')
    >>> parse_cell("5.5", "int", "kafka_offset")
    Traceback (most recent call last):
    ...
    ValueError: kafka_offset: '5.5' is not an integer
    """
    if kind != "str":
        text = text.strip()
    if text == "":
        return None
    if kind == "int":
        try:
            return _non_negative(int(text), column)
        except ValueError as e:
            if "negative" in str(e):
                raise
            raise ValueError(f"{column}: {text!r} is not an integer") from None
    if kind == "float":
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{column}: {text!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{column}: {text!r} is not a finite number")
        return _non_negative(number, column)
    if kind == "bool":
        if text.lower() not in _BOOLS:
            raise ValueError(f"{column}: {text!r} is not true or false")
        return _BOOLS[text.lower()]
    if kind == "json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"{column}: {text!r} is not a JSON value (quote strings: \"...\")") from None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            _non_negative(value, column)
        return value
    return text
