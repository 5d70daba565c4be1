"""Offsets as pandas DataFrames and back (no broker): lossless round trips, edits, resets, column roles;
and the pure parts of the offsets module (sink request parsing, messages, the connector's own store)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from connect_magics.errors import BadRequestError
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.offsets import (
    _java_string,
    _parse_request,
    _parse_sink_offsets,
    success_message,
)
from connect_magics.runtime.worker.offset_stores import connector_store_spec
from connect_magics.spark.offsets_frame import META_KEY, frame_to_request, offsets_to_frame

BIG = 2**63 - 1
SOURCE = {"offsets": [
    {"partition": {"db": "shop", "table": "orders"}, "offset": {"lsn": BIG, "txid": 10, "snapshot": False,
                                                                "ratio": 0.1, "note": "ünïcode ☃"}},
    {"partition": {"db": "shop", "table": "items"}, "offset": {"lsn": -(2**63), "txid": None, "snapshot": True,
                                                               "ratio": 1e300, "note": ""}},
    # different fields, and integers beyond 64 bits
    {"partition": {"db": "shop", "shard": 3}, "offset": {"lsn": 2**70, "extra": "x"}},
    {"partition": {}, "offset": {"lsn": 0}},
]}
SINK = {"offsets": [
    {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": BIG}},
    {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 0}},
    {"partition": {"kafka_topic": "u", "kafka_partition": 0}, "offset": {"kafka_offset": 42}},
]}


def same(a: dict, b: dict) -> bool:
    """Equal as JSON, types included (1 is not 1.0, True is not 1)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and a == b


def test_source_round_trip_is_lossless() -> None:
    frame = offsets_to_frame(SOURCE)
    assert list(frame.columns) == ["db", "table", "shard", "lsn", "txid", "snapshot", "ratio", "note", "extra"]
    assert len(frame) == 4
    back = frame_to_request(frame)
    for got, want in zip(back["offsets"], SOURCE["offsets"], strict=True):
        assert same(got, want)
        for value_got, value_want in zip(got["offset"].values(), want["offset"].values(), strict=True):
            assert type(value_got) is type(value_want)


def test_column_dtypes_keep_every_value_exact() -> None:
    frame = offsets_to_frame(SOURCE)
    assert str(frame["shard"].dtype) == "Int64"
    assert frame["lsn"].dtype == object  # 2**70 does not fit in 64 bits
    assert frame["txid"].dtype == object  # holds a JSON null next to an integer
    assert frame["ratio"].dtype == "float64" and str(frame["snapshot"].dtype) == "boolean"
    assert frame["lsn"][2] == 2**70 and frame["shard"][0] is pd.NA and frame["txid"][1] is None
    meta = frame.attrs[META_KEY]
    assert meta["type"] == "source" and meta["columns"]["lsn"] == ["offset", "lsn"]
    sink = offsets_to_frame(SINK)
    assert list(sink.columns) == ["kafka_topic", "kafka_partition", "kafka_offset"]
    assert str(sink["kafka_offset"].dtype) == "Int64" and sink["kafka_offset"][0] == BIG


def test_sink_round_trip_and_edits() -> None:
    frame = offsets_to_frame(SINK)
    assert frame_to_request(frame) == SINK
    frame.loc[0, "kafka_offset"] = 7
    frame.loc[1, "kafka_offset"] = None  # reset this partition
    frame = frame[frame["kafka_topic"] == "t"]
    assert frame_to_request(frame) == {"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 7}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": None}]}


def test_a_row_whose_offset_cells_are_all_null_is_a_reset() -> None:
    frame = offsets_to_frame(SOURCE)
    offset_columns = [c for c, (kind, _) in frame.attrs[META_KEY]["columns"].items() if kind == "offset"]
    frame.loc[0, offset_columns] = None
    frame.loc[2, "lsn"] = 5  # an edit in an object column
    back = frame_to_request(frame)["offsets"]
    assert back[0] == {"partition": {"db": "shop", "table": "orders"}, "offset": None}
    assert back[2]["offset"] == {"lsn": 5, "extra": "x"}
    assert same(back[1], SOURCE["offsets"][1])


def test_a_field_in_both_the_partition_and_the_offset_gets_prefixed_columns() -> None:
    offsets = {"offsets": [{"partition": {"file": "a", "n": 1}, "offset": {"file": "a.1", "pos": 3}}]}
    frame = offsets_to_frame(offsets)
    assert list(frame.columns) == ["partition.file", "n", "offset.file", "pos"]
    assert frame_to_request(frame) == offsets


def test_new_fields_and_unknown_columns() -> None:
    frame = offsets_to_frame(SINK)
    frame["offset.kafka_metadata"] = "m"  # a new field needs its role in its name
    assert frame_to_request(frame)["offsets"][0]["offset"] == {"kafka_offset": BIG, "kafka_metadata": "m"}
    frame = offsets_to_frame(SINK)
    frame["comment"] = "?"
    with pytest.raises(ValueError, match="Column 'comment' is not a partition or offset field"):
        frame_to_request(frame)


def test_frames_without_metadata() -> None:
    plain = pd.DataFrame({"kafka_topic": ["t"], "kafka_partition": [np.int64(2)], "kafka_offset": [5.0]})
    assert frame_to_request(plain) == {"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": {"kafka_offset": 5}}]}
    prefixed = pd.DataFrame({"partition.task": [0], "offset.seq": [9]})
    assert frame_to_request(prefixed) == {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 9}}]}
    plain = pd.DataFrame({"task": [0, 1], "seq": [9, None]})
    with pytest.raises(ValueError, match="pass partition_columns / offset_columns"):
        frame_to_request(plain)
    assert frame_to_request(plain, partition_columns=["task"]) == {"offsets": [
        {"partition": {"task": 0}, "offset": {"seq": 9}}, {"partition": {"task": 1}, "offset": None}]}
    assert frame_to_request(plain, offset_columns=["seq"]) == frame_to_request(plain, partition_columns=["task"])
    known = {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 1}}]}
    assert frame_to_request(plain, known=lambda: known) == frame_to_request(plain, partition_columns=["task"])
    with pytest.raises(ValueError, match=r"Column\(s\) \['nope'\] are not in the frame"):
        frame_to_request(plain, partition_columns=["nope"])
    with pytest.raises(ValueError, match="Cannot tell whether column 'seq'"):
        frame_to_request(plain, known=lambda: {"offsets": [{"partition": {"task": 0}, "offset": {"x": 1}}]})


def test_empty_offsets() -> None:
    sink = offsets_to_frame({"offsets": []}, sink=True)
    assert list(sink.columns) == ["kafka_topic", "kafka_partition", "kafka_offset"] and len(sink) == 0
    source = offsets_to_frame({"offsets": []})
    assert len(source) == 0 and source.attrs[META_KEY]["type"] == "source"
    assert frame_to_request(sink) == {"offsets": []}


def test_frame_to_request_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match="Expected a pandas or Spark DataFrame, got dict"):
        frame_to_request({"offsets": []})


# -- the offsets module's pure parts ------------------------------------------------------------------------------


def test_sink_offsets_are_parsed_as_kafka_does() -> None:
    entries = _parse_request({"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": "1"}, "offset": {"kafka_offset": "10"}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": None},
        {"partition": {"kafka_topic": "t", "kafka_partition": "+3"}, "offset": {"kafka_offset": BIG}}]})
    assert _parse_sink_offsets(entries) == {("t", 1): 10, ("t", 2): None, ("t", 3): BIG}
    too_big = [({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": BIG + 1})]
    with pytest.raises(BadRequestError, match=f"'{BIG + 1}'. Offset values for sink connectors need to be integers"):
        _parse_sink_offsets(too_big)
    with pytest.raises(BadRequestError, match="'2147483648'. Partition values"):
        _parse_sink_offsets([({"kafka_topic": "t", "kafka_partition": 2**31}, None)])


def test_java_string_of_json_values() -> None:
    assert [_java_string(v) for v in (True, 10, 10.0, 1e20, 1.5e-5, "x", None, {"a": 1}, [1, 2])] == \
        ["true", "10", "10.0", "1.0E20", "1.5E-5", "x", "null", "{a=1}", "[1, 2]"]


def test_success_messages() -> None:
    assert success_message(True, reset=False) == "The offsets for this connector have been altered successfully"
    assert success_message(False, reset=True) == (
        "The Connect framework-managed offsets for this connector have been reset successfully. However, if this "
        "connector manages offsets externally, they will need to be manually reset in the system that the "
        "connector uses.")


def test_connector_store_spec_on_the_worker_cluster() -> None:
    wc = WorkerConfig("broker:9092", "nb", {"producer.linger.ms": "5"})
    assert connector_store_spec({}, wc) is None
    assert connector_store_spec({"offsets.storage.topic": "nb-offsets"}, wc) is None  # the worker's own topic
    topic, client = connector_store_spec({"offsets.storage.topic": " mine ", "producer.override.linger.ms": "9",
                                          "producer.override.security.protocol": "PLAINTEXT"}, wc)
    assert topic == "mine"
    assert client == {"bootstrap.servers": "broker:9092", "security.protocol": "PLAINTEXT"}
