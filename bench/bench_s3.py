"""The S3 sink against a bare pyarrow writer loop, in the same run, on the same topic and S3 API server.

Run:  python bench/bench_s3.py [--records 100000] [--flush-size 5000] [--bootstrap HOST:PORT]

moto's S3 server runs in this process (as tests/s3_server.py starts it) and, unless ``--bootstrap`` is given,
the embedded broker is started. ``--records`` JSON-with-schema records (id, customer, amount, note) are
produced to a one-partition topic, then

* a bare loop consumes them with confluent-kafka, decodes each value with ``json.loads``, and writes every
  ``--flush-size`` rows as one Parquet object with pyarrow (``Table.from_pylist``, ``pq.write_table``) through
  s3fs: records/s from the first poll to the last object written;
* the S3 sink (``io.confluent.connect.s3.format.parquet.ParquetFormat``, ``flush.size`` the same) reads the
  topic into the same bucket: records/s from the connector's creation until every object exists.

The bare loop runs with the garbage collector's first threshold the runtime's tasks set
(runtime/worker/gc_threshold.py), so that the loops, not the interpreter's settings, are compared.

Prints one table with the ratio (aim in issue 28: >= 0.7): overall, which for the sink includes its start-up
(the task's start, the consumer group's join), and in the steady state, from the first object to the last
(the records of all objects but the first, over that time); and the CPU time of this process per record in
each, which other work on the machine moves less than the wall-clock figures. The sink's objects are looked
for every 10 ms in moto's store, in this process: listing the bucket through the S3 API took about 9 ms of
this process's CPU a call, which the sink's task thread then lacked.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import time
import uuid

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
import s3fs
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends
from moto.server import ThreadedMotoServer

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.runtime.worker import gc_threshold

KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False}, {"field": "customer", "type": "string", "optional": False},
    {"field": "amount", "type": "double", "optional": False}, {"field": "note", "type": "string", "optional": True}]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def produce(bootstrap: str, topic: str, n: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(n):
        value = {"schema": SCHEMA, "payload": {"id": i, "customer": f"c{i % 97}", "amount": i * 0.5,
                                               "note": None if i % 3 else f"note {i}"}}
        while True:
            try:
                producer.produce(topic, json.dumps(value).encode())
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0


def bare_loop(bootstrap: str, topic: str, n: int, flush: int, fs: s3fs.S3FileSystem,
              bucket: str) -> tuple[float, float]:
    """(seconds from the first poll to the last object, seconds from the first object to the last)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bare-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    rows: list[dict] = []
    seen, start, first = 0, time.perf_counter(), 0.0
    while seen < n:
        for m in consumer.consume(10_000, timeout=1.0):
            if m.error() is None:
                rows.append(json.loads(m.value())["payload"])
                seen += 1
                if len(rows) == flush:
                    with fs.open(f"{bucket}/bare/{topic}+0+{seen - flush:010d}.snappy.parquet", "wb") as f:
                        pq.write_table(pa.Table.from_pylist(rows), f)
                    rows = []
                    first = first or time.perf_counter()
    end = time.perf_counter()
    consumer.close()
    return end - start, end - first


def row(name: str, records: int, seconds: float, bare_seconds: float) -> str:
    return f"{name:56} {records / seconds:>10,.0f} {bare_seconds / seconds:>7.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--flush-size", type=int, default=5_000)
    ap.add_argument("--bootstrap")
    args = ap.parse_args()
    n, flush = args.records, args.flush_size
    gc_threshold.raise_once()  # the bare loops too run with the collector's threshold that tasks set: like for like
    broker = None
    if args.bootstrap is None:
        broker = EmbeddedBroker()
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client("s3", endpoint_url=url, region_name="us-east-1", **KEYS)
        bucket = "bench"
        client.create_bucket(Bucket=bucket)
        fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": url})
        run = uuid.uuid4().hex[:8]
        topic = f"s3-bench-{run}"
        produce(bootstrap, topic, n)
        cpu = time.process_time()
        bare_s, bare_steady_s = bare_loop(bootstrap, topic, n, flush, fs, bucket)
        bare_cpu = time.process_time() - cpu

        names = [f"topics/{topic}/partition=0/{topic}+0+{offset:010d}.snappy.parquet"
                 for offset in range(0, n - flush + 1, flush)]

        def sink_objects() -> int:
            """How many of the sink's objects moto's store holds (dict look-ups: no S3 API call)."""
            stored = s3_backends[DEFAULT_ACCOUNT_ID]["global"].buckets[bucket].keys
            return sum(name in stored for name in names)

        with ConnectRuntime(bootstrap, f"s3-bench-{run}") as rt:
            start, cpu = time.perf_counter(), time.process_time()
            rt.create_connector("s3", {
                "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": topic,
                "s3.bucket.name": bucket, "store.url": url, "s3.region": "us-east-1",
                "aws.access.key.id": "testing", "aws.secret.access.key": "testing", "flush.size": str(flush),
                "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter"})  # polls of 500 (max.poll.records)
            first = 0.0
            while (objects := sink_objects()) < len(names):
                if objects and not first:
                    first = time.perf_counter()
                time.sleep(0.01)  # the benchmark's polling interval
            end = time.perf_counter()
            sink_s, sink_steady_s, sink_cpu = end - start, end - (first or end), time.process_time() - cpu
    finally:
        server.stop()
        if broker is not None:
            broker.stop()
    bare, sink = "bare loop: consume, json.loads, pyarrow Parquet via s3fs", \
        "S3 sink, ParquetFormat (JsonConverter with schemas)"
    print(f"{n} records, flush.size {flush} (Parquet, snappy), moto S3 API")
    print(f"{'overall (the sink from its creation)':56} {'records/s':>10} {'ratio':>7}")
    print(row(bare, n, bare_s, bare_s))
    print(row(sink, n, sink_s, bare_s))
    print(f"{'steady state (first object to last)':56} {'records/s':>10} {'ratio':>7}")
    print(row(bare, n - flush, bare_steady_s, bare_steady_s))
    print(row(sink, n - flush, sink_steady_s, bare_steady_s) if sink_steady_s else f"{sink:56} (one object only)")
    print(f"the sink's first object after {sink_s - sink_steady_s:.2f}s, the bare loop's after "
          f"{bare_s - bare_steady_s:.2f}s")
    print(f"this process's CPU per record (all its threads, moto's server too): bare loop "
          f"{bare_cpu / n * 1e6:.1f} us, sink {sink_cpu / n * 1e6:.1f} us (ratio {bare_cpu / sink_cpu:.2f})")


if __name__ == "__main__":
    main()
