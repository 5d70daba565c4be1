"""SinkRecords: the batch a sink task's put receives, built on first access."""

from __future__ import annotations

import pickle

import pytest

from connect_magics.api import SinkRecord, SinkRecords

pytestmark = pytest.mark.unit


def records(n: int) -> list[SinkRecord]:
    return [SinkRecord("t", 0, None, f"k{i}", None, f"v{i}", kafka_offset=i) for i in range(n)]


class Deferred:
    """A deferred batch with counters for what the runtime was asked to build."""

    def __init__(self, n: int) -> None:
        self.built = 0
        self.columns: list[str] = []
        self.batch = SinkRecords.deferred(n, self._build, self._column)
        self.n = n

    def _build(self) -> list[SinkRecord]:
        self.built += 1
        return records(self.n)

    def _column(self, name: str) -> list[str]:
        self.columns.append(name)
        return [getattr(r, name) for r in records(self.n)]


def test_eager_batch_is_a_sequence_of_its_records() -> None:
    batch = SinkRecords(records(3))
    assert len(batch) == 3 and bool(batch)
    assert [r.kafka_offset for r in batch] == [0, 1, 2]
    assert batch[-1].value == "v2" and [r.key for r in batch[1:]] == ["k1", "k2"]
    assert batch.keys() == ["k0", "k1", "k2"] and batch.values() == ["v0", "v1", "v2"]
    assert batch == records(3) and batch == SinkRecords(records(3)) and batch != records(2)
    assert not SinkRecords() and list(SinkRecords()) == []


def test_length_and_columns_need_no_records() -> None:
    d = Deferred(4)
    assert len(d.batch) == 4
    assert d.batch.values() == ["v0", "v1", "v2", "v3"] and d.batch.keys() == ["k0", "k1", "k2", "k3"]
    assert d.built == 0 and d.columns == ["value", "key"]


def test_records_are_built_once_on_first_access() -> None:
    d = Deferred(3)
    assert d.batch[1].value == "v1"
    assert [r.value for r in d.batch] == ["v0", "v1", "v2"]
    assert d.batch.values() == ["v0", "v1", "v2"]  # now read from the records built
    assert d.built == 1 and d.columns == []


def test_a_deferred_batch_pickles_as_its_records() -> None:
    d = Deferred(2)
    copy = pickle.loads(pickle.dumps(d.batch))
    assert copy == records(2) and type(copy) is SinkRecords


def test_a_batch_is_read_only() -> None:
    batch = SinkRecords(records(1))
    with pytest.raises(TypeError):
        batch[0] = records(1)[0]  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(batch)


def test_every_column_and_the_data_frame() -> None:
    d = Deferred(2)
    frame = d.batch.to_pandas()
    assert list(frame.columns) == list(SinkRecords.COLUMNS)
    assert frame.to_dict("list") == {"topic": ["t", "t"], "kafka_partition": [0, 0], "kafka_offset": [0, 1],
                                     "timestamp": [None, None], "key": ["k0", "k1"], "value": ["v0", "v1"]}
    assert d.built == 0 and d.columns == list(SinkRecords.COLUMNS)
    assert SinkRecords(records(2)).to_pandas().equals(frame)


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="field: 'headers' is not a column of SinkRecords; use one of topic, "):
        SinkRecords(records(1)).column("headers")


def test_original_columns_are_where_records_were_consumed() -> None:
    d = Deferred(2)
    assert d.batch.column("original_kafka_offset") == [0, 1] and d.batch.column("original_topic") == ["t", "t"]
    assert d.built == 0 and d.columns == ["kafka_offset", "topic"]  # untransformed: their own coordinates
    moved = SinkRecords([r.new_record(topic="elsewhere") for r in records(2)])
    assert moved.column("topic") == ["elsewhere"] * 2 and moved.column("original_topic") == ["t", "t"]
