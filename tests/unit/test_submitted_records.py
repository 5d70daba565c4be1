"""SubmittedRecords: an offset becomes committable only when every earlier record of its partition was acked."""

from connect_magics.api.records import SourceRecord
from connect_magics.runtime.worker.source_runner import SubmittedBatch, SubmittedRecords


def rec(partition: dict | None, offset: dict | None) -> SourceRecord:
    return SourceRecord(partition, offset, "t")


def ack(batch: SubmittedBatch, times: int = 1) -> None:
    for _ in range(times):
        batch.ack(None, None)


def test_a_batch_is_committable_only_once_fully_acknowledged() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, [rec({"p": "a"}, {"n": 0}), rec({"p": "a"}, {"n": 1}), rec({"p": "b"}, {"n": 0})], sent=3)
    ack(b, 2)
    assert s.committable() == [] and s.outstanding == 1
    ack(b)
    assert s.committable() == [({"p": "a"}, {"n": 1}), ({"p": "b"}, {"n": 0})]
    assert s.committable() == [] and s.outstanding == 0


def test_an_unacknowledged_batch_blocks_only_its_own_partitions() -> None:
    s = SubmittedRecords()
    first, second, third = s.batch(), s.batch(), s.batch()
    s.submit(first, [rec({"p": "a"}, {"n": 0})], sent=1)
    s.submit(second, [rec({"p": "a"}, {"n": 1}), rec({"p": "b"}, {"n": 0})], sent=2)
    s.submit(third, [rec({"p": "b"}, {"n": 1})], sent=1)
    ack(second, 2)
    ack(third)
    # a waits for the first batch; b's prefix (second, third) is acknowledged.
    assert s.committable() == [({"p": "b"}, {"n": 1})]
    ack(first)
    assert s.committable() == [({"p": "a"}, {"n": 1})]
    assert s.committable() == [] and s.outstanding == 0


def test_later_records_wait_behind_an_earlier_unacknowledged_batch() -> None:
    s = SubmittedRecords()
    first, second = s.batch(), s.batch()
    s.submit(first, [rec({"p": "a"}, {"n": 0})], sent=1)
    s.submit(second, [rec({"p": "a"}, {"n": 1})], sent=1)
    ack(second)
    assert s.committable() == []
    ack(first)
    assert s.committable() == [({"p": "a"}, {"n": 1})]


def test_partitions_equal_but_differently_ordered_are_one_partition() -> None:
    s = SubmittedRecords()
    first, second = s.batch(), s.batch()
    s.submit(first, [rec({"x": 1, "y": 2}, {"n": 0})], sent=1)
    s.submit(second, [rec({"y": 2, "x": 1}, {"n": 1})], sent=1)
    ack(second)
    assert s.committable() == []
    ack(first)
    assert s.committable() == [({"y": 2, "x": 1}, {"n": 1})]


def test_dropped_records_are_committable_with_their_batch() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, [rec({"p": "a"}, {"n": 0}), rec({"p": "a"}, {"n": 1})], sent=1)  # the second was filtered out
    assert s.committable() == [] and s.outstanding == 1
    ack(b)
    assert s.committable() == [({"p": "a"}, {"n": 1})]


def test_acknowledgements_before_the_batch_closes_are_counted() -> None:
    """Delivery reports served while the batch is still being sent (the producer queue was full)."""
    s, done = SubmittedRecords(), []
    b = s.batch(done.append)
    ack(b, 2)
    assert done == [] and s.committable() == []  # not closed: nothing of it is known yet
    s.submit(b, [rec({"p": "a"}, {"n": 0}), rec({"p": "a"}, {"n": 1}), rec({"p": "a"}, {"n": 2})], sent=3)
    assert done == [] and s.outstanding == 1
    ack(b)
    assert done == [b] and s.committable() == [({"p": "a"}, {"n": 2})]


def test_a_batch_acknowledged_while_it_was_sent_is_done_when_it_closes() -> None:
    s, done = SubmittedRecords(), []
    b = s.batch(done.append)
    ack(b)
    s.submit(b, [rec({"p": "a"}, {"n": 0})], sent=1)
    assert done == [b] and s.outstanding == 0


def test_the_first_delivery_error_is_kept() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, [rec({"p": "a"}, {"n": 0}), rec({"p": "a"}, {"n": 1})], sent=2)
    b.ack("first error", None)  # type: ignore[arg-type]
    b.ack("second error", None)  # type: ignore[arg-type]
    assert s.error == "first error" and s.outstanding == 2 and s.committable() == []


def test_records_without_partition_or_offset_are_tracked_but_never_committed() -> None:
    s = SubmittedRecords()
    b = s.batch()
    s.submit(b, [rec(None, None), rec({"p": "a"}, None)], sent=2)
    ack(b, 2)
    assert s.committable() == [] and s.outstanding == 0
