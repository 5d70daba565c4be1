"""SubmittedRecords: an offset becomes committable only when every earlier record of its partition was acked."""

from connect_magics.api.records import SourceRecord
from connect_magics.runtime.source_runner import SubmittedRecords


def rec(partition: dict | None, offset: dict | None) -> SourceRecord:
    return SourceRecord(partition, offset, "t")


def test_a_batch_is_committable_only_once_fully_acknowledged() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, rec({"p": "a"}, {"n": 0}))
    s.submit(b, rec({"p": "a"}, {"n": 1}))
    s.submit(b, rec({"p": "b"}, {"n": 0}))
    s.ack(b)
    s.ack(b)
    assert s.committable() == [] and s.outstanding == 1
    s.ack(b)
    assert s.committable() == [({"p": "a"}, {"n": 1}), ({"p": "b"}, {"n": 0})]
    assert s.committable() == [] and s.outstanding == 0


def test_an_unacknowledged_batch_blocks_only_its_own_partitions() -> None:
    s = SubmittedRecords()
    first, second, third = s.batch(), s.batch(), s.batch()
    s.submit(first, rec({"p": "a"}, {"n": 0}))
    s.submit(second, rec({"p": "a"}, {"n": 1}))
    s.submit(second, rec({"p": "b"}, {"n": 0}))
    s.submit(third, rec({"p": "b"}, {"n": 1}))
    s.ack(second)
    s.ack(second)
    s.ack(third)
    # a waits for the first batch; b's prefix (second, third) is acknowledged.
    assert s.committable() == [({"p": "b"}, {"n": 1})]
    s.ack(first)
    assert s.committable() == [({"p": "a"}, {"n": 1})]
    assert s.committable() == [] and s.outstanding == 0


def test_later_records_wait_behind_an_earlier_unacknowledged_batch() -> None:
    s = SubmittedRecords()
    first, second = s.batch(), s.batch()
    s.submit(first, rec({"p": "a"}, {"n": 0}))
    s.submit(second, rec({"p": "a"}, {"n": 1}))
    s.ack(second)
    assert s.committable() == []
    s.ack(first)
    assert s.committable() == [({"p": "a"}, {"n": 1})]


def test_partitions_equal_but_differently_ordered_are_one_partition() -> None:
    s = SubmittedRecords()
    first, second = s.batch(), s.batch()
    s.submit(first, rec({"x": 1, "y": 2}, {"n": 0}))
    s.submit(second, rec({"y": 2, "x": 1}, {"n": 1}))
    s.ack(second)
    assert s.committable() == []
    s.ack(first)
    assert s.committable() == [({"y": 2, "x": 1}, {"n": 1})]


def test_dropped_records_are_committable_with_their_batch() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, rec({"p": "a"}, {"n": 0}))
    s.submit(b, rec({"p": "a"}, {"n": 1}), acked=True)  # filtered out by a transformation
    assert s.committable() == [] and s.outstanding == 1
    s.ack(b)
    assert s.committable() == [({"p": "a"}, {"n": 1})]


def test_records_without_partition_or_offset_are_tracked_but_never_committed() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, rec(None, None))
    s.submit(b, rec({"p": "a"}, None))
    s.ack(b)
    s.ack(b)
    assert s.committable() == [] and s.outstanding == 0
