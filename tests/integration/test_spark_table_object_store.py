"""SparkTableSink and SparkTableSource on an object store (issue 27): a table at ``s3://`` on an S3 API server
(moto's, in this process), Parquet and Delta, with the secret key from a config provider. The sink's task
process is killed (SIGKILL) mid-batch and every record is in the table exactly once; SparkTableSource reads
the table back into a topic, every row once."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from helpers import wait_until
from raw_topics import create_topics
from s3_server import MotoS3

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.connectors.spark_table.store import TableStore, s3_options

JSON_PLAIN = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
# the killed sink's consumer holds its partitions until its session times out (Kafka's default: 45 s)
WORKER = {"offset.flush.interval.ms": "300", "consumer.session.timeout.ms": "6000",
          "config.providers": "file",
          "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider"}
TOTAL = 12_000


@pytest.fixture(scope="module")
def s3() -> Iterator[MotoS3]:
    with MotoS3() as server:
        yield server


@pytest.fixture
def lake(s3: MotoS3, unique: str, tmp_path: Path) -> dict[str, str]:
    """A new bucket, and the table settings that reach it; the secret key is read from a file by the
    worker's FileConfigProvider, so the connector's config holds only a reference to it."""
    bucket = f"lake-{unique}".lower().replace("_", "-")[:63]
    s3.client.create_bucket(Bucket=bucket)
    secrets = tmp_path / "aws.properties"
    secrets.write_text("secret=s3cr3t-from-a-file\n")  # moto takes any key
    return {"bucket": bucket, "store.url": s3.url, "aws.access.key.id": "testing", "s3.region": "us-east-1",
            "aws.secret.access.key": f"${{file:{secrets}:secret}}"}


def table_rows(location: str, table_format: str, s3: MotoS3) -> list[dict]:
    """The table's rows, read with pyarrow or delta-rs straight from the S3 API server."""
    store = TableStore(location, s3_options(s3.url, "testing", "testing", "us-east-1"))
    if table_format == "delta":
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError
        try:
            return DeltaTable(store.uri, storage_options=dict(store.options)).to_pyarrow_table().to_pylist()
        except TableNotFoundError:
            return []
    return store.dataset().to_table().to_pylist() if store.data_files() else []


def consume_all(bootstrap: str, topic: str, count: int) -> list[dict]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[dict] = []
    try:
        def enough() -> bool:
            got.extend(json.loads(m.value()) for m in consumer.consume(1000, 0.5) if m.error() is None)
            return len(got) >= count
        wait_until(enough, 120, interval=0, message=lambda: f"{count} records in {topic} (got {len(got)})")
        got.extend(json.loads(m.value()) for m in consumer.consume(1000, 1.0) if m.error() is None)  # no more
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("table_format", ["parquet", "delta"])
def test_a_killed_sink_task_leaves_every_record_once_in_an_s3_table_which_the_source_reads_back(
        bootstrap: str, unique: str, s3: MotoS3, lake: dict[str, str], table_format: str) -> None:
    topic, back, sink = f"orders-{unique}", f"orders-back-{unique}", f"lake-{unique}"
    location = f"s3://{lake['bucket']}/tables/orders"
    create_topics(bootstrap, topic, partitions=2)
    create_topics(bootstrap, back)
    store = {k: v for k, v in lake.items() if k != "bucket"}
    with ConnectRuntime(bootstrap, f"g-{unique}", dict(WORKER), executor="processes") as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": str(TOTAL),
                                    "rate": "3000", **JSON_PLAIN})
        rt.create_connector(sink, {"connector.class": "SparkTableSink", "topics": topic, "path": location,
                                   "format": table_format, "flush.size": "500", "kafka.coordinates": "true",
                                   **store, **JSON_PLAIN})
        assert "s3cr3t" not in json.dumps(rt.connector_config(sink))  # only the reference is stored
        wait_until(lambda: len(table_rows(location, table_format, s3)) >= 2000, 120,
                   message="rows flowing into the s3 table")
        handle = rt.herder.task_handle(sink, 0)
        first = handle.generation
        pid = wait_until(lambda: (handle.published() or {}).get("pid"), 60, message="the sink's task process")
        os.kill(pid, signal.SIGKILL)  # mid-batch: records consumed and buffered, some written, offsets behind
        assert len(table_rows(location, table_format, s3)) < TOTAL, "all was written before the kill: it proves nothing"
        wait_until(lambda: handle.generation > first and rt.task_status(sink, 0)["state"] == "RUNNING", 120,
                   message="the sink task running again in a new process")
        wait_until(lambda: len(table_rows(location, table_format, s3)) >= TOTAL, 180,
                   message=lambda: f"{TOTAL} rows (have {len(table_rows(location, table_format, s3))})")
        rows = table_rows(location, table_format, s3)
        assert len(rows) == TOTAL and {r["seq"] for r in rows} == set(range(TOTAL))  # every record exactly once
        assert len({(r["kafka_partition"], r["kafka_offset"]) for r in rows}) == TOTAL  # no offset twice
        rt.create_connector("back", {"connector.class": "SparkTableSource", "path": location, "topic": back,
                                     "format": table_format, "batch.size": "2000", **store, **JSON_PLAIN})
        got = consume_all(bootstrap, back, TOTAL)
    assert sorted(r["seq"] for r in got) == list(range(TOTAL))  # the source read every row once


def test_a_table_on_an_unsupported_store_or_without_its_secret_is_refused(bootstrap: str, unique: str) -> None:
    with ConnectRuntime(bootstrap, f"g-{unique}", dict(WORKER)) as rt:
        with pytest.raises(ConnectRestError) as e:
            rt.create_connector("bad", {"connector.class": "SparkTableSink", "topics": "t", "path": "hdfs://nn/t"})
        assert e.value.status == 400 and "path" in str(e.value) and "s3://" in str(e.value)
        with pytest.raises(ConnectRestError) as e:
            rt.create_connector("bad", {"connector.class": "SparkTableSink", "topics": "t", "path": "s3://lake/t",
                                        "aws.access.key.id": "AK"})
        assert e.value.status == 400 and "aws.secret.access.key" in str(e.value)
        assert "bad" not in rt.connectors()
