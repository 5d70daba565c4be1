"""The JDBC source and sink against bare SQLAlchemy/psycopg loops, in the same run on the same PostgreSQL.

Run:  python bench/bench_jdbc.py [--rows 200000] [--bootstrap HOST:PORT]

A PostgreSQL (Debian's package, :class:`connect_magics.local.postgres.PostgresServer`) and, unless
``--bootstrap`` is given, the embedded broker are started. A table of ``--rows`` rows (id, customer,
amount NUMERIC(12,2), note, updated_at) is

* read by the JDBC source in incrementing mode (``batch.max.rows`` 1000, JsonConverter with schemas) into a
  fresh topic: rows/s from the connector's creation until the topic holds every row; beside a bare loop
  streaming the same query with SQLAlchemy (``yield_per`` 1000) and building a dict per row (the issue's
  baseline), and that loop writing each dict with ``json.dumps`` to a topic through an idempotent producer
  (what a hand-written pipeline does, without schemas, offsets or delivery tracking);
* written by the JDBC sink (``insert.mode`` insert, ``pk.mode`` record_value) from that topic into an empty
  table: rows/s from the connector's creation until the table holds every row; beside a bare loop inserting
  the same rows with ``executemany`` in batches of 3000 (the sink's ``batch.size``), a bare ``COPY`` loop
  (psycopg ``write_row``), which is what the sink uses on PostgreSQL, and the hand-written sink: the bare
  source's topic consumed, ``json.loads`` and ``COPY``, 3000 rows a transaction.

The bare loops run with the garbage collector's first threshold the runtime's tasks set
(runtime/worker/gc_threshold.py), so that the loops, not the interpreter's settings, are compared.

Prints one table with the ratios; for the source and the sink also their rate after the first rows were seen (the
steady state: without the connector's start-up, the consumer group join, the table's creation).
"""

from __future__ import annotations

import argparse
import decimal
import json
import time
import uuid
from collections.abc import Callable

import sqlalchemy as sa
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.local.postgres import PostgresServer
from connect_magics.runtime.worker import gc_threshold

JSON = {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter"}


def fill(engine: sa.Engine, rows: int) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(12, 2), "
                             "note TEXT, updated_at TIMESTAMP(3) NOT NULL)"))
        conn.execute(sa.text("INSERT INTO orders SELECT i, 'customer ' || (i % 97), (i % 10000) / 4.0, "
                             "CASE WHEN i % 5 = 0 THEN NULL ELSE 'note ' || i END, "
                             "TIMESTAMP '2025-01-01' + i * INTERVAL '1 millisecond' FROM generate_series(1, :n) i"),
                     {"n": rows})


def bare_read(engine: sa.Engine) -> tuple[float, list[dict]]:
    start = time.perf_counter()
    out = []
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=1000).execute(
            sa.text("SELECT * FROM orders WHERE id > :last ORDER BY id"), {"last": -1})
        for row in result:
            out.append(dict(row._mapping))
    return time.perf_counter() - start, out


def bare_pipeline(engine: sa.Engine, bootstrap: str, topic: str) -> float:
    """The read loop, each row's dict written as JSON to ``topic``; the seconds until the producer delivered all."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer.list_topics(topic, timeout=30)  # connected, as the task's producer is when its first record comes
    start = time.perf_counter()
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=1000).execute(
            sa.text("SELECT * FROM orders WHERE id > :last ORDER BY id"), {"last": -1})
        for row in result:
            value = json.dumps(dict(row._mapping), default=str, separators=(",", ":")).encode()
            while True:
                try:
                    producer.produce(topic, value)
                    break
                except BufferError:
                    producer.poll(0.01)
            producer.poll(0)
    assert producer.flush(120) == 0
    return time.perf_counter() - start


def bare_sink_pipeline(engine: sa.Engine, bootstrap: str, topic: str, rows: int) -> float:
    """The hand-written sink beside the hand-written source: ``topic``'s JSON rows consumed, parsed with
    ``json.loads`` and written with ``COPY``, 3000 a transaction (the sink's ``batch.size``); the seconds until all
    ``rows`` are in the table."""
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE piped_orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, "
                             "amount NUMERIC, note TEXT, updated_at TIMESTAMP NOT NULL)"))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bare-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])  # no group join: the loop's own pace
    columns = ["id", "customer", "amount", "note", "updated_at"]
    start, written = time.perf_counter(), 0
    try:
        while written < rows:
            batch: list[list] = []
            while len(batch) < 3000 and written + len(batch) < rows:
                for message in consumer.consume(500, 1.0):
                    if message.error() is None:
                        row = json.loads(message.value())
                        batch.append([row[c] for c in columns])
            with engine.begin() as conn:
                raw = conn.connection.driver_connection
                with raw.cursor() as cursor, cursor.copy(f"COPY piped_orders ({', '.join(columns)}) FROM STDIN") as copy:
                    for row in batch:
                        copy.write_row(row)
            consumer.commit(asynchronous=False)
            written += len(batch)
    finally:
        consumer.close()
    return time.perf_counter() - start


def bare_write(engine: sa.Engine, rows: list[dict]) -> float:
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE bare_orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, "
                             "amount NUMERIC, note TEXT, updated_at TIMESTAMP NOT NULL)"))
    table = sa.Table("bare_orders", sa.MetaData(), autoload_with=engine)
    start = time.perf_counter()
    with engine.begin() as conn:
        for i in range(0, len(rows), 3000):
            conn.execute(table.insert(), rows[i:i + 3000])
    return time.perf_counter() - start


def bare_copy(engine: sa.Engine, rows: list[dict]) -> float:
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE copy_orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, "
                             "amount NUMERIC, note TEXT, updated_at TIMESTAMP NOT NULL)"))
    columns = list(rows[0])
    start = time.perf_counter()
    with engine.begin() as conn:
        raw = conn.connection.driver_connection
        with raw.cursor() as cursor, cursor.copy(f"COPY copy_orders ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[c] for c in columns])
    return time.perf_counter() - start


def topic_size(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "jdbc-bench"})
    try:
        md = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if md is None or md.error is not None:
            return 0
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
    finally:
        consumer.close()


def written(engine: sa.Engine, table: str, rows: int) -> int:
    """How many of the ids 1..rows ``table`` holds, cheap to poll while the sink writes (one partition: in id order):
    its largest id (a look-up in the primary key), then, once that is the last, a count (which scans the table and,
    polled every 50 ms, takes about a quarter of a core of PostgreSQL's by the end of 200,000 rows)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(table):
            return 0
        last = conn.execute(sa.text(f"SELECT coalesce(max(id), 0) FROM {table}")).scalar_one()
    return last if last < rows else count(engine, table)


def count(engine: sa.Engine, table: str) -> int:
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(table):
            return 0
        return conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()


def wait_for(size: Callable[[], int], rows: int, start: float) -> tuple[float, float]:
    """Poll ``size()`` every 50 ms until it reaches ``rows``: the seconds since ``start`` at the end, and the rows per
    second after the first rows were seen (the steady state, without the start-up)."""
    first: tuple[float, int] | None = None
    while (seen := size()) < rows:
        if first is None and seen:
            first = (time.perf_counter(), seen)
        time.sleep(0.05)
    end = time.perf_counter()
    steady = (rows - first[1]) / (end - first[0]) if first is not None else float("nan")
    return end - start, steady


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--bootstrap")
    args = ap.parse_args()
    broker = None
    gc_threshold.raise_once()  # the bare loops too run with the collector's threshold that tasks set: like for like
    if args.bootstrap is None:
        broker = EmbeddedBroker()
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers
    pg = PostgresServer().start()
    try:
        source = sa.create_engine(pg.sqlalchemy_url)
        target = sa.create_engine(pg.create_database("target"))
        fill(source, args.rows)
        bare_read_s, rows = bare_read(source)
        bare_topic = f"bench-bare-{uuid.uuid4().hex[:8]}"
        bare_pipeline_s = bare_pipeline(source, bootstrap, bare_topic)
        for row in rows:
            row["amount"] = decimal.Decimal(row["amount"]) if row["amount"] is not None else None
        bare_write_s = bare_write(target, rows)
        bare_copy_s = bare_copy(target, rows)
        bare_sink_s = bare_sink_pipeline(target, bootstrap, bare_topic, len(rows))

        run = uuid.uuid4().hex[:8]
        topic_prefix = f"bench-{run}-"
        topic = topic_prefix + "orders"
        with ConnectRuntime(bootstrap, f"jdbc-bench-{run}") as rt:
            start = time.perf_counter()
            rt.create_connector("src", {
                "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "connection.url": pg.jdbc_url,
                "connection.user": pg.user, "connection.password": pg.password, "mode": "incrementing",
                "incrementing.column.name": "id", "table.whitelist": "orders", "topic.prefix": topic_prefix,
                "batch.max.rows": "1000", "topic.creation.default.replication.factor": "1",
                "topic.creation.default.partitions": "1", **JSON})
            source_s, source_steady = wait_for(lambda: topic_size(bootstrap, topic), args.rows, start)
            start = time.perf_counter()
            rt.create_connector("dst", {
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "connection.url": pg.jdbc_url.rsplit("/", 1)[0] + "/target", "connection.user": pg.user,
                "connection.password": pg.password, "topics": topic, "insert.mode": "insert",
                "pk.mode": "record_value", "pk.fields": "id", "auto.create": "true", "table.name.format": "orders",
                **JSON})  # polls of 500 records (max.poll.records), as the figures in docs/jdbc.md were measured
            sink_s, sink_steady = wait_for(lambda: written(target, "orders", args.rows), args.rows, start)
        source.dispose()
        target.dispose()
    finally:
        pg.stop()
        if broker is not None:
            broker.stop()
    n = args.rows
    print(f"{n} rows, PostgreSQL {pg.bin.parent.name}")
    print(f"{'':52} {'rows/s':>10} {'ratio':>7}")
    print(f"{'bare SQLAlchemy read loop (yield_per 1000)':52} {n / bare_read_s:>10,.0f} {'1.00':>7}")
    print(f"{'bare read loop + json.dumps + produce':52} {n / bare_pipeline_s:>10,.0f} "
          f"{bare_read_s / bare_pipeline_s:>7.2f}")
    print(f"{'JDBC source, incrementing, into a topic (JSON)':52} {n / source_s:>10,.0f} "
          f"{bare_read_s / source_s:>7.2f}  ({bare_pipeline_s / source_s:.2f} of read + produce)")
    print(f"{'  after its first rows (no start-up)':52} {source_steady:>10,.0f} {source_steady * bare_read_s / n:>7.2f}"
          f"  ({source_steady * bare_pipeline_s / n:.2f} of read + produce)")
    print(f"{'bare executemany loop (3000 rows a statement)':52} {n / bare_write_s:>10,.0f} {'1.00':>7}")
    print(f"{'bare COPY loop (write_row)':52} {n / bare_copy_s:>10,.0f} {bare_write_s / bare_copy_s:>7.2f}")
    print(f"{'bare consume + json.loads + COPY loop':52} {n / bare_sink_s:>10,.0f} {bare_write_s / bare_sink_s:>7.2f}")
    print(f"{'JDBC sink, insert, from the topic (JSON; COPY)':52} {n / sink_s:>10,.0f} {bare_write_s / sink_s:>7.2f}"
          f"  ({bare_copy_s / sink_s:.2f} of COPY, {bare_sink_s / sink_s:.2f} of consume + COPY)")
    print(f"{'  after its first rows (no start-up)':52} {sink_steady:>10,.0f} {sink_steady * bare_write_s / n:>7.2f}"
          f"  ({sink_steady * bare_copy_s / n:.2f} of COPY, {sink_steady * bare_sink_s / n:.2f} of consume + COPY)")


if __name__ == "__main__":
    main()
