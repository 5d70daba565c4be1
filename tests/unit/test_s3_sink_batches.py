"""The S3 sink's batch paths give what record by record gave: ParquetFormat builds each column straight from
the values (not a row dict per value), and ``put`` looks a writer up once per run of records of one partition.

Parquet objects are compared byte for byte with a table made from rows (``arrow_value`` of each value, then
``Table.from_pylist``), and their errors with the row path's; ``put`` with a model of Confluent's rules.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord, SinkRecords, TopicPartition
from connect_magics.connectors.s3 import S3SinkTask
from connect_magics.connectors.s3.formats import ParquetFormat
from connect_magics.connectors.spark_table.arrow_types import arrow_type, arrow_value

pytestmark = pytest.mark.unit
UTC = dt.timezone.utc

INNER = SchemaBuilder.struct().name("inner").field("x", INT32_SCHEMA).field("s", OPTIONAL_STRING_SCHEMA).build()
KINDS = (SchemaBuilder.struct().name("kinds")
         .field("b", BOOLEAN_SCHEMA).field("i8", INT8_SCHEMA).field("i16", INT16_SCHEMA).field("i32", INT32_SCHEMA)
         .field("i64", INT64_SCHEMA).field("f32", FLOAT32_SCHEMA).field("f64", FLOAT64_SCHEMA)
         .field("s", STRING_SCHEMA).field("os", OPTIONAL_STRING_SCHEMA).field("y", BYTES_SCHEMA)
         .field("oy", SchemaBuilder.bytes().optional().build())
         .field("dflt", SchemaBuilder.string().optional().default_value("d").build())
         .field("dec", Decimal.builder(2).optional().build()).field("date", Date.builder().optional().build())
         .field("time", Time.builder().optional().build()).field("ts", Timestamp.builder().optional().build())
         .field("ints", SchemaBuilder.array(SchemaBuilder.int64().optional().build()).optional().build())
         .field("map", SchemaBuilder.map(STRING_SCHEMA, OPTIONAL_INT32_SCHEMA).optional().build())
         .field("imap", SchemaBuilder.map(INT32_SCHEMA, Time.builder().optional().build()).optional().build())
         .field("inner", SchemaBuilder.struct().name("oinner").field("x", INT32_SCHEMA)
                .field("s", OPTIONAL_STRING_SCHEMA).optional().build())
         .field("structs", SchemaBuilder.array(INNER).optional().build())
         .field("smap", SchemaBuilder.map(STRING_SCHEMA, INNER).optional().build())
         .build())


def _kinds(i: int, nulls: bool) -> Struct:
    """A value of KINDS: every optional field null when ``nulls``, else each kind filled (varied by ``i``)."""
    v = (Struct(KINDS).put("b", i % 2 == 0).put("i8", -128 + i).put("i16", 32767 - i).put("i32", -(2 ** 31) + i)
         .put("i64", 2 ** 63 - 1 - i).put("f32", 1.5 * i).put("f64", -1e300 / (i + 1)).put("s", f"é{i}")
         .put("y", bytes([i % 256, 0, 255])))
    if nulls:
        return v
    inner = Struct(INNER).put("x", i).put("s", None if i % 2 else "s")
    oinner = Struct(KINDS.field("inner").schema).put("x", -i).put("s", "t")
    return (v.put("os", "o").put("oy", b"").put("dflt", "set").put("dec", decimal.Decimal(i) / 100)
            .put("date", dt.date(1969, 12, 31) + dt.timedelta(days=i)).put("time", dt.time(23, 59, 59, 999000))
            .put("ts", dt.datetime(2024, 2, 29, 12, 0, i % 60, 1000, tzinfo=UTC)).put("ints", [i, None, -i])
            .put("map", {"a": i, "n": None}).put("imap", {1: dt.time(0, 0, 1), 2: None}).put("inner", oinner)
            .put("structs", [inner, inner]).put("smap", {"k": inner}))


def _records(values: list[Any], schema: Any = KINDS) -> list[SinkRecord]:
    return [SinkRecord("t", 0, value_schema=schema, value=v, kafka_offset=i) for i, v in enumerate(values)]


def _rows_parquet(records: list[SinkRecord], codec: str) -> bytes:
    """What ParquetFormat wrote before: a row per value (``arrow_value``), then ``Table.from_pylist``."""
    schema = records[0].value_schema
    rows = [arrow_value(schema)(r.value) for r in records]  # type: ignore[misc]
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(list(arrow_type(schema)))), out,
                   compression=codec if codec != "none" else None)
    return out.getvalue()


def _outcome(encode: Any, records: list[SinkRecord], codec: str) -> Any:
    """The bytes written, or the type and message of what was raised."""
    try:
        return encode(records, codec)
    except Exception as e:  # noqa: BLE001 - compared with what the other path raises
        return f"{type(e).__name__}: {e}"


def _columns_parquet(records: list[SinkRecord], codec: str) -> bytes:
    return ParquetFormat(codec).encode(records)


@pytest.mark.parametrize("codec", ["none", "snappy", "gzip", "zstd"])
def test_parquet_columns_are_the_rows_byte_for_byte(codec: str) -> None:
    records = _records([_kinds(i, nulls=i % 3 == 0) for i in range(40)])
    written = _columns_parquet(records, codec)
    assert written == _rows_parquet(records, codec)
    table = pq.read_table(io.BytesIO(written))
    assert table.column("dflt").to_pylist()[:2] == ["d", "set"]  # a null field is written as its default
    assert table.column("time").to_pylist()[1] == 86_399_999  # Time as Connect stores it, milliseconds


def _bad(value: Struct, field: str, bad: Any) -> Struct:
    """``value`` with ``field`` set past Struct.put's checks, as a buggy transformation could."""
    copy = Struct.of(value.schema, list(value._values))
    copy._values[value.schema.field(field).index] = bad
    return copy


@pytest.mark.parametrize("values", [
    pytest.param([_kinds(0, False), _bad(_kinds(1, False), "imap", 5), _bad(_kinds(2, False), "time", "noon")],
                 id="the first bad row's bad field comes after the second's"),
    pytest.param([_kinds(0, False), _bad(_kinds(1, False), "dec", decimal.Decimal("1e40"))], id="decimal too big"),
    pytest.param([_kinds(0, False), _bad(_kinds(1, False), "i8", "x")], id="a string for an int8"),
    pytest.param([_kinds(0, False), {"b": True}], id="a map value with a struct schema"),
    pytest.param([_kinds(0, False), "text"], id="a string value with a struct schema"),
    pytest.param([_kinds(0, False), _kinds(1, True)], id="no error"),
])
def test_parquet_errors_are_the_rows(values: list[Any]) -> None:
    records = _records(values)
    assert _outcome(_columns_parquet, records, "snappy") == _outcome(_rows_parquet, records, "snappy")


def test_parquet_values_of_another_schema_are_read_as_rows_read_them() -> None:
    """Every value is read with the first record's fields (by position), as row by row."""
    other = SchemaBuilder.struct().field("s", OPTIONAL_STRING_SCHEMA).field("x", INT32_SCHEMA).build()
    records = [*_records([Struct(INNER).put("x", 1)]),
               SinkRecord("t", 0, value_schema=other, value=Struct(other).put("x", 2).put("s", "a"), kafka_offset=1)]
    assert _outcome(_columns_parquet, records, "none") == _outcome(_rows_parquet, records, "none")


def test_parquet_schemaless_values_are_refused_naming_the_record() -> None:
    with pytest.raises(ConnectException, match="needs values with a STRUCT schema; record t-0@0 has none"):
        ParquetFormat("snappy").encode([SinkRecord("t", 0, value={"a": 1}, kafka_offset=0)])


# -------------------------------------------------------------------------------------------- put, in runs

def _objects(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _model(records: list[SinkRecord], flush: int) -> tuple[dict[str, bytes], dict[TopicPartition, int]]:
    """Confluent's rules for the DefaultPartitioner and JsonFormat, record by record: each partition's records
    from the offset after the last seen on, nulls ignored, an object every ``flush`` records, named after the
    offset of its first; the committable offset after the last record in an object."""
    seen: dict[TopicPartition, int] = {}
    buffers: dict[TopicPartition, list[SinkRecord]] = {}
    objects, committed = {}, {}
    for r in records:
        tp = TopicPartition(r.original_topic, r.original_kafka_partition)  # type: ignore[arg-type]
        if r.original_kafka_offset < seen.get(tp, -1):
            continue
        seen[tp] = r.original_kafka_offset + 1
        if r.value is None:
            continue
        buffer = buffers.setdefault(tp, [])
        buffer.append(r)
        if len(buffer) == flush:
            key = f"topics/{tp.topic}/partition={tp.partition}/{tp.topic}+{tp.partition}+" \
                  f"{buffer[0].original_kafka_offset:010d}.json"
            objects[key] = b"".join(b'{"i":%d}\n' % v.value["i"] for v in buffer)
            committed[tp] = buffer[-1].original_kafka_offset + 1
            buffers[tp] = []
    return dict(sorted(objects.items())), committed


def _shuffled_partitions(seed: int) -> list[SinkRecord]:
    """Records of two topics and partitions interleaved in runs, with rewinds (offsets again), nulls and
    records whose topic and partition a transformation changed (their originals name where they were read)."""
    rng = random.Random(seed)
    next_offset: dict[tuple[str, int], int] = {}
    records = []
    while len(records) < 200:
        topic, partition = rng.choice([("a", 0), ("a", 1), ("b", 0)])
        start = next_offset.get((topic, partition), 0)
        if rng.random() < 0.2:
            start = max(0, start - rng.randint(1, 5))  # a rewind: consumed again
        for offset in range(start, start + rng.randint(1, 12)):
            value = None if rng.random() < 0.1 else {"i": offset}
            if rng.random() < 0.3:
                records.append(SinkRecord("renamed", 9, value=value, kafka_offset=offset, original_topic=topic,
                                          original_kafka_partition=partition, original_kafka_offset=offset))
            else:
                records.append(SinkRecord(topic, partition, value=value, kafka_offset=offset))
        next_offset[(topic, partition)] = max(next_offset.get((topic, partition), 0), start + 12)
    return records


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("batch", [1, 7, 200])
def test_put_in_runs_of_partitions_writes_what_record_by_record_writes(tmp_path: Path, seed: int,
                                                                        batch: int) -> None:
    records = _shuffled_partitions(seed)
    task = S3SinkTask()
    task.start({"s3.bucket.name": "bucket", "store.url": tmp_path.as_uri(), "format.class": "JsonFormat",
                "flush.size": "4", "behavior.on.null.values": "ignore"})
    for start in range(0, len(records), batch):
        task.put(SinkRecords(records[start:start + batch]))
    objects, committed = _model(records, 4)
    assert _objects(tmp_path / "bucket") == objects
    everything = {TopicPartition(t, p): 10_000 for t, p in [("a", 0), ("a", 1), ("b", 0)]}
    assert task.pre_commit(everything) == committed


def test_a_null_fails_naming_where_it_was_read(tmp_path: Path) -> None:
    task = S3SinkTask()
    task.start({"s3.bucket.name": "bucket", "store.url": tmp_path.as_uri(), "format.class": "JsonFormat",
                "flush.size": "4"})
    records = [SinkRecord("a", 0, value={"i": 0}, kafka_offset=0),
               SinkRecord("x", 5, value=None, kafka_offset=1, original_topic="a", original_kafka_partition=0,
                          original_kafka_offset=1)]
    with pytest.raises(ConnectException, match=r"Null valued records .* \(record a-0@1\)"):
        task.put(SinkRecords(records))
