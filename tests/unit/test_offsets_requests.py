"""The one-pass check of plain alter requests (runtime/offsets.py ``_plain_entries``) agrees with the full
checks: what it accepts, the full path accepts with the same result; anything unusual is left to the full path."""

from __future__ import annotations

from typing import Any

import pytest

from connect_magics.api.connector import partition_key
from connect_magics.runtime.offsets import _normalized_source_offsets, _parse_request, _plain_entries


def test_plain_requests_give_what_the_full_checks_give() -> None:
    body = {"offsets": [{"partition": {"file": f"f{i}", "shard": i % 3, "live": i % 2 == 0, "none": None},
                         "offset": None if i % 5 == 0 else {"position": i, "line": str(i)}} for i in range(200)]
            + [{"partition": {"shard": 1, "file": "f1", "none": None, "live": False}, "offset": {"position": -7}},
               {"partition": {"file": "only-partition"}}]}
    plain = _plain_entries(body)
    assert plain is not None
    assert [(p, o) for _, p, o in plain] == _parse_request(body)
    assert [key for key, p, _ in plain] == [partition_key(p) for _, p, _ in plain]
    assert {key: (p, o) for key, p, o in plain} == _normalized_source_offsets(_parse_request(body))


@pytest.mark.parametrize("body", [
    None, [], {"offsets": []}, {"offsets": None}, {"offsets": ({"partition": {"a": 1}},)},
    {"offsets": [{"partition": {"a": 1}}], "extra": 1},
    {"offsets": [{"partition": {"a": 1}, "offset": {"b": 1}, "extra": 1}]},
    {"offsets": [{"partition": {"a": 1}, "extra": 1}]},
    {"offsets": [{"offset": {"b": 1}}]},
    {"offsets": [{"partition": None, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {"a": 1.5}, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {"a": 1}, "offset": {"b": float("nan")}}]},
    {"offsets": [{"partition": {"a": [1]}, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {"a": {"n": 1}}, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {"a": b"x"}, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {1: "a"}, "offset": {"b": 1}}]},
    {"offsets": [{"partition": {"a": 1}, "offset": {2: 1}}]},
    {"offsets": [{"partition": {"a": 1}, "offset": [1]}]},
    {"offsets": ["not an object"]},
])
def test_anything_unusual_is_left_to_the_full_checks(body: Any) -> None:
    assert _plain_entries(body) is None
