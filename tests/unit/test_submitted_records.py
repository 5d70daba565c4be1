"""SubmittedRecords: an offset becomes committable only when every earlier record of its partition was acked."""

from connect_magics.runtime.source_runner import SubmittedRecords


def test_only_the_acknowledged_prefix_is_committable() -> None:
    s = SubmittedRecords()
    a0 = s.submit({"p": "a"}, {"n": 0})
    a1 = s.submit({"p": "a"}, {"n": 1})
    b0 = s.submit({"p": "b"}, {"n": 0})
    a2 = s.submit({"p": "a"}, {"n": 2})
    s.ack(a1)
    s.ack(b0)
    assert s.committable() == [({"p": "b"}, {"n": 0})]  # a1 waits for a0
    s.ack(a0)
    assert s.committable() == [({"p": "a"}, {"n": 1})]  # a2 not acked yet
    assert s.outstanding == 1
    s.ack(a2)
    assert s.committable() == [({"p": "a"}, {"n": 2})]
    assert s.committable() == [] and s.outstanding == 0


def test_partitions_equal_but_differently_ordered_share_a_queue() -> None:
    s = SubmittedRecords()
    first = s.submit({"x": 1, "y": 2}, {"n": 0})
    second = s.submit({"y": 2, "x": 1}, {"n": 1})
    s.ack(second)
    assert s.committable() == []
    s.ack(first)
    assert s.committable() == [({"y": 2, "x": 1}, {"n": 1})]


def test_records_without_partition_or_offset_are_tracked_but_never_committed() -> None:
    s = SubmittedRecords()
    s.ack(s.submit(None, None))
    assert s.committable() == [] and s.outstanding == 0
