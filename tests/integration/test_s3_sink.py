"""S3SinkConnector against the real broker and an S3 API server (moto's, in this process): objects named and
filled as Confluent's S3 sink names and fills them, refused configs naming their key, and every record exactly
once across the objects after the runtime's process is killed (SIGKILL) mid-stream and started again."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from helpers import wait_until
from raw_topics import create_topics
from s3_server import MotoS3

from connect_magics import ConnectRestError, ConnectRuntime

CRASH_HOST = Path(__file__).with_name("crash_host.py")
JSON_PLAIN = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false",
              "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
FAST = {"offset.flush.interval.ms": "200"}


@pytest.fixture(scope="module")
def s3() -> Iterator[MotoS3]:
    with MotoS3() as server:
        yield server


@pytest.fixture
def bucket(s3: MotoS3, unique: str) -> str:
    name = f"landing-{unique}".lower().replace("_", "-")[:63]
    s3.client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def runtime(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    rt = ConnectRuntime(bootstrap, f"s3-{unique}", FAST)
    yield rt
    rt.close()


def s3_config(s3: MotoS3, bucket: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": topic, "tasks.max": "1",
            "s3.bucket.name": bucket, "store.url": s3.url, "flush.size": "3",
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat", **s3.credentials, **JSON_PLAIN,
            **extra}


def produce(bootstrap: str, topic: str, values: Callable[[int], dict], count: int,
            partitions: int = 2, timestamps: Callable[[int], int] | None = None) -> None:
    """``count`` JSON values, record i to partition i % partitions (at ``timestamps(i)`` if given)."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    for i in range(count):
        producer.produce(topic, json.dumps(values(i)).encode(), str(i).encode(), partition=i % partitions,
                         timestamp=timestamps(i) if timestamps else 0)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


def committed(bootstrap: str, group: str, topic: str, partitions: int = 2) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        parts = consumer.committed([KafkaTopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return [p.offset for p in parts]
    finally:
        consumer.close()


def lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]


def test_objects_are_named_and_filled_as_confluents(s3: MotoS3, bucket: str, bootstrap: str, unique: str,
                                                    runtime: ConnectRuntime) -> None:
    topic = f"orders-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, lambda i: {"id": i, "region": "eu" if i % 4 < 2 else "us"}, 20)  # 10 each
    runtime.create_connector("s3", s3_config(s3, bucket, topic))
    expected = [f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json"
                for p in (0, 1) for start in (0, 3, 6)]
    wait_until(lambda: s3.keys(bucket) == expected, 60,
               message=lambda: f"the objects (have {s3.keys(bucket)})")
    objects = s3.objects(bucket)
    # partition p holds ids p, p+2, p+4, ... at offsets 0, 1, 2, ...: object at offset s has offsets s..s+2
    for p in (0, 1):
        for start in (0, 3, 6):
            key = f"topics/{topic}/partition={p}/{topic}+{p}+{start:010d}.json"
            ids = [row["id"] for row in lines(objects[key])]
            assert ids == [p + 2 * offset for offset in range(start, start + 3)]
    # the 10th record of each partition is buffered, not in an object: its offset is not committed
    wait_until(lambda: committed(bootstrap, "connect-s3", topic) == [9, 9], 30,
               message=lambda: f"offsets 9 committed (have {committed(bootstrap, 'connect-s3', topic)})")
    assert runtime.connector_status("s3")["tasks"][0]["state"] == "RUNNING"


def test_field_partitioner_topics_dir_delims_and_gzip(s3: MotoS3, bucket: str, bootstrap: str, unique: str,
                                                      runtime: ConnectRuntime) -> None:
    topic = f"events-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, lambda i: {"id": i, "region": "eu" if i % 4 < 2 else "us"}, 8)  # 4 each
    runtime.create_connector("s3f", s3_config(
        s3, bucket, topic, **{"partitioner.class": "FieldPartitioner", "partition.field.name": "region",
                              "topics.dir": "raw/kafka", "file.delim": "-", "s3.compression.type": "gzip",
                              "filename.offset.zero.pad.width": "4", "flush.size": "4"}))
    # partition 0: ids 0 (eu), 2 (us), 4 (eu), 6 (us); partition 1: ids 1 (eu), 3 (us), 5 (eu), 7 (us)
    expected = sorted(f"raw/kafka/{topic}/region={region}/{topic}-{p}-{start:04d}.json.gz"
                      for p in (0, 1) for region, start in (("eu", 0), ("us", 1)))
    wait_until(lambda: s3.keys(bucket) == expected, 60,
               message=lambda: f"the objects (have {s3.keys(bucket)})")
    objects = s3.objects(bucket)
    data = gzip.decompress(objects[f"raw/kafka/{topic}/region=us/{topic}-1-0001.json.gz"])
    assert [r["id"] for r in lines(data)] == [3, 7]


def test_hourly_partitioner_rotating_by_record_time(s3: MotoS3, bucket: str, bootstrap: str, unique: str,
                                                    runtime: ConnectRuntime) -> None:
    topic = f"clicks-{unique}"
    create_topics(bootstrap, topic, partitions=1)
    hour, start = 3_600_000, 1_700_000_000_000  # 2023-11-14T22:13:20Z
    # records 0-2 in the 22h bucket, 3-5 one hour later (23h), 6 two hours later (2023-11-15 00h)
    produce(bootstrap, topic, lambda i: {"id": i}, 7, partitions=1,
            timestamps=lambda i: start + (i // 3) * hour)
    runtime.create_connector("s3h", s3_config(s3, bucket, topic, **{
        "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en-US",
        "timezone": "UTC", "timestamp.extractor": "Record", "rotate.interval.ms": "600000",
        "flush.size": "1000"}))
    prefix = f"topics/{topic}/year=2023/month=11"
    expected = [f"{prefix}/day=14/hour=22/{topic}+0+0000000000.json",
                f"{prefix}/day=14/hour=23/{topic}+0+0000000003.json"]
    wait_until(lambda: s3.keys(bucket) == expected, 60,
               message=lambda: f"the objects (have {s3.keys(bucket)})")
    assert [r["id"] for r in lines(s3.objects(bucket)[expected[1]])] == [3, 4, 5]
    wait_until(lambda: committed(bootstrap, "connect-s3h", topic, 1) == [6], 30, message="offset 6 committed")


def test_parquet_objects_from_schemad_json(s3: MotoS3, bucket: str, bootstrap: str, unique: str,
                                           runtime: ConnectRuntime) -> None:
    import io

    import pyarrow.parquet as pq

    topic = f"typed-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    schema = {"type": "struct", "optional": False, "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "name", "type": "string", "optional": True}]}
    produce(bootstrap, topic, lambda i: {"schema": schema, "payload": {"id": i, "name": f"n{i}"}}, 4)
    runtime.create_connector("s3p", s3_config(
        s3, bucket, topic, **{"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                              "flush.size": "2", "value.converter.schemas.enable": "true"}))
    expected = [f"topics/{topic}/partition={p}/{topic}+{p}+0000000000.snappy.parquet" for p in (0, 1)]
    wait_until(lambda: s3.keys(bucket) == expected, 60,
               message=lambda: f"the objects (have {s3.keys(bucket)})")
    table = pq.read_table(io.BytesIO(s3.objects(bucket)[expected[1]]))
    assert table.to_pylist() == [{"id": 1, "name": "n1"}, {"id": 3, "name": "n3"}]


def test_a_missing_bucket_fails_the_task_naming_it(s3: MotoS3, bootstrap: str, unique: str,
                                                   runtime: ConnectRuntime) -> None:
    topic = f"nowhere-{unique}"
    create_topics(bootstrap, topic, partitions=1)
    runtime.create_connector("s3m", s3_config(s3, "no-such-bucket", topic))

    def trace() -> str | None:
        tasks = runtime.connector_status("s3m")["tasks"]
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None
    assert "Non-existent S3 bucket: no-such-bucket" in wait_until(trace, 60, message="the task FAILED")


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"flush.size": "0"}, "flush.size", "Value must be at least 1"),
    ({"flush.size": None}, "flush.size", "Missing required configuration"),
    ({"s3.bucket.name": None}, "s3.bucket.name", "Missing required configuration"),
    ({"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"}, "format.class", "not supported yet"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner"},
     "partition.field.name", "requires at least one field name"),
    ({"rotate.schedule.interval.ms": "1000"}, "rotate.schedule.interval.ms", "not supported"),
])
def test_bad_configs_are_refused_naming_the_key(change: dict, key: str, words: str, s3: MotoS3,
                                                runtime: ConnectRuntime) -> None:
    config = {k: v for k, v in {**s3_config(s3, "b", "t"), "name": "bad", **change}.items() if v is not None}
    infos = runtime.validate_connector_config(config)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert list(errors) == [key] and words in errors[key][0], errors
    with pytest.raises(ConnectRestError) as e:
        runtime.create_connector("bad", config)
    assert e.value.status == 400 and key in e.value.message


def test_every_record_exactly_once_after_sigkill(s3: MotoS3, bucket: str, bootstrap: str,
                                                 unique: str) -> None:
    total, flush = 40_000, 100  # 200 objects per partition, none left buffered at the end
    group, topic, name = f"s3-crash-{unique}", f"s3-crash-{unique}", "s3-crash"
    create_topics(bootstrap, topic, partitions=2)
    s3.client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    produce(bootstrap, topic, lambda i: {"seq": i}, total // 2)  # the rest after the kill
    config = {**s3_config(s3, bucket, topic, **{"flush.size": str(flush)}), "tasks.max": "2"}
    host = subprocess.Popen([sys.executable, str(CRASH_HOST), bootstrap, group, name, json.dumps(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "ready"
        wait_until(lambda: len(s3.keys(bucket)) >= total // flush // 8, 120,
                   message="an eighth of the objects")
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait(30)
    written = len(s3.keys(bucket))
    assert written < total // flush // 2, "the sink wrote all it could before the kill: it proves nothing"
    produce(bootstrap, topic, lambda i: {"seq": total // 2 + i}, total // 2)
    with ConnectRuntime(bootstrap, group, FAST) as rt:
        assert rt.connectors() == [name]
        wait_until(lambda: len(s3.keys(bucket)) >= total // flush, 240,
                   message=lambda: f"every object (have {len(s3.keys(bucket))} of {total // flush})")
    objects = s3.objects(bucket)
    assert len(objects) == total // flush
    seqs = [row["seq"] for data in objects.values() for row in lines(data)]
    assert len(seqs) == total and set(seqs) == set(range(total)), "a record missing or written twice"
    for key, data in objects.items():  # each object holds flush.size records from the offset in its name
        start = int(key.rsplit("+", 1)[1].split(".")[0])
        partition = int(key.split("+")[1])
        assert len(lines(data)) == flush and start % flush == 0 and f"partition={partition}/" in key
    overwritten = sum(1 for n in s3.versions(bucket).values() if n > 1)
    print(f"{written} objects before the kill; {overwritten} rewritten under the same name after the restart")
