"""SourceRecords: a poll() batch kept as columns reads as the list of its records, made once, on first read."""

from __future__ import annotations

import pytest

from connect_magics.api.data import STRING_SCHEMA
from connect_magics.api.records import SourceRecord, SourceRecords

PARTITION = {"filename": "/data/in.txt"}


def batch() -> SourceRecords:
    return SourceRecords(PARTITION, [{"position": 2}, {"position": 5}, {"position": 9}], "lines", STRING_SCHEMA,
                         ["a", "bc", "def"], 1_700_000_000_000)


def expected() -> list[SourceRecord]:
    return [SourceRecord(PARTITION, {"position": p}, "lines", None, None, None, STRING_SCHEMA, v, 1_700_000_000_000)
            for p, v in ((2, "a"), (5, "bc"), (9, "def"))]


def test_it_reads_as_the_list_of_its_records() -> None:
    records = batch()
    assert len(records) == 3 and not records.built  # the length needs no record
    assert records == expected() and list(records) == expected() and records.built
    assert records[1].value == "bc" and records[-1].source_offset == {"position": 9}
    assert records[1:] == expected()[1:] and records + [] == expected() and [] + records == expected()
    assert repr(records) == repr(expected())


def test_its_records_are_made_once() -> None:
    """A task may name a record it returned (a transaction boundary asked for after it): every read gives the same
    objects, and a field changed on one is what the runtime sends."""
    records = batch()
    first = records[0]
    assert records[0] is first and next(iter(records)) is first
    first.value = "changed"
    assert [r.value for r in records] == ["changed", "bc", "def"]


def test_one_record_is_made_alone_for_the_offsets() -> None:
    records = batch()
    assert records.record(2) == expected()[2] and not records.built


def test_one_offset_per_value() -> None:
    with pytest.raises(ValueError, match=r"source_offsets: one offset per value \(2\), not 1"):
        SourceRecords(PARTITION, [{"position": 1}], "lines", None, ["a", "b"])
