"""Offsets as Spark DataFrames and back: typed columns with role metadata, edits with Spark functions, resets."""

from __future__ import annotations

import pytest

from connect_magics.spark.offsets_frame import META_KEY, frame_to_request, offsets_to_frame, offsets_to_spark

BIG = 2**63 - 1
SOURCE = {"offsets": [
    {"partition": {"file": "a.txt", "shard": 0}, "offset": {"position": BIG, "ratio": 0.25, "done": False}},
    {"partition": {"file": "b.txt", "shard": 1}, "offset": {"position": 2**70, "ratio": 1e-300, "done": True}},
    {"partition": {"file": "c.txt", "shard": 2}, "offset": {"position": 0, "ratio": 2.0, "done": False,
                                                            "note": "ünïcode"}},
]}
SINK = {"offsets": [
    {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": BIG}},
    {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 3}},
]}


def test_source_offsets_round_trip_through_spark(spark) -> None:
    from pyspark.sql import types as T

    sdf = offsets_to_spark(spark, SOURCE)
    types = {f.name: f.dataType for f in sdf.schema.fields}
    assert types["file"] == T.StringType() and types["shard"] == T.LongType()
    assert types["position"] == T.DecimalType(38, 0)  # 2**70 does not fit in a long
    assert types["ratio"] == T.DoubleType() and types["done"] == T.BooleanType()
    assert sdf.schema["shard"].metadata[META_KEY]["columns"]["shard"] == ["partition", "shard"]
    back = frame_to_request(sdf)
    assert back == SOURCE
    assert [type(e["offset"]["position"]) for e in back["offsets"]] == [int, int, int]


def test_edits_made_with_spark_become_an_alter_request(spark) -> None:
    from pyspark.sql import functions as F

    sdf = offsets_to_spark(spark, offsets_to_frame(SINK))
    edited = (sdf.withColumn("kafka_offset", F.when(F.col("kafka_partition") == 0, F.lit(10))
                                              .otherwise(F.lit(None).cast("long")))
                 .orderBy("kafka_partition"))
    # The replaced column lost its metadata, but the other columns carry the roles of every column.
    assert frame_to_request(edited) == {"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 10}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": None}]}


def test_spark_frames_without_metadata(spark) -> None:
    sdf = spark.createDataFrame([("t", 0, 5), ("t", 1, None)], "kafka_topic string, kafka_partition int, "
                                                               "kafka_offset long")
    assert frame_to_request(sdf) == {"offsets": [
        {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}},
        {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": None}]}
    plain = spark.createDataFrame([(0, 7)], "task long, seq long")
    assert frame_to_request(plain, partition_columns=["task"]) == {"offsets": [
        {"partition": {"task": 0}, "offset": {"seq": 7}}]}


def test_mixed_type_columns_are_refused_for_spark(spark) -> None:
    mixed = {"offsets": [{"partition": {"k": 1}, "offset": {"v": 1}},
                         {"partition": {"k": "x"}, "offset": {"v": 2}}]}
    with pytest.raises(ValueError, match="Column 'k' holds values of several types"):
        offsets_to_spark(spark, mixed)
