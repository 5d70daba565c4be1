"""The JDBC source and sink (Confluent's class and config names) on a real PostgreSQL and on SQLite, through the
real broker: a table copied PostgreSQL -> Kafka -> PostgreSQL in each source mode while rows are inserted and
updated, the copy equal to the source row for row; offsets altered through KIP-875 re-read the intended rows;
bad configurations refused naming their setting."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from helpers import wait_until
from raw_topics import read_records

from connect_magics import ConnectRestError, ConnectRuntime

JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {"key.converter": JSON, "value.converter": JSON, "value.converter.schemas.enable": "true"}
TOPIC_CREATION = {"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1"}
ALTERED = {"message": "The offsets for this connector have been altered successfully"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[[], ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make() -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"jdbc-{unique}", {"offset.flush.interval.ms": "200"})
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


@pytest.fixture
def databases(postgres, unique: str) -> Iterator[tuple[sa.Engine, sa.Engine, str, str]]:
    """A source and a target database of their own: engines and SQLAlchemy URLs."""
    source_url = postgres.create_database(f"src_{unique}")
    target_url = postgres.create_database(f"dst_{unique}")
    source, target = sa.create_engine(source_url), sa.create_engine(target_url)
    yield source, target, source_url, target_url
    source.dispose()
    target.dispose()


def rows(engine: sa.Engine, table: str = "orders") -> list[tuple]:
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(table):
            return []
        return [tuple(r) for r in conn.execute(sa.text(f"SELECT id, customer, amount, note, updated_at FROM {table} "
                                                        "ORDER BY id"))]


def topic_ids(bootstrap: str, topic: str) -> list[int]:
    return [json.loads(value)["payload"]["id"] for _, value in read_records(bootstrap, topic)]


def stopped(rt: ConnectRuntime, name: str) -> None:
    rt.stop_connector(name)
    wait_until(lambda: rt.connector_status(name)["connector"]["state"] == "STOPPED", 60, message="STOPPED")


def source_config(mode: str, url: str, prefix: str, **extra: str) -> dict[str, str]:
    config = {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "connection.url": url,
              "mode": mode, "table.whitelist": "orders", "topic.prefix": prefix, "poll.interval.ms": "200",
              "batch.max.rows": "37", **CONVERTERS, **TOPIC_CREATION}
    if mode in ("incrementing", "timestamp+incrementing"):
        config["incrementing.column.name"] = "id"
    if mode == "bulk":
        config["poll.interval.ms"] = "1000"  # every poll reads the whole table
    if mode in ("timestamp", "timestamp+incrementing"):
        # PostgreSQL's now() is the transaction's start: a row may commit after rows with later timestamps.
        config.update({"timestamp.column.name": "updated_at", "timestamp.delay.interval.ms": "1000"})
    return {**config, **extra}


def sink_config(url: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "connection.url": url,
            "topics": topic, "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id",
            "auto.create": "true", "table.name.format": "orders", "batch.size": "50", **CONVERTERS, **extra}


class Writer:
    """Inserts and updates rows of ``orders`` from one thread, one autocommitted statement at a time."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.next_id = 1

    def insert(self, count: int) -> None:
        with self.engine.begin() as conn:
            for _ in range(count):
                conn.execute(sa.text("INSERT INTO orders (customer, amount, note) VALUES (:c, :a, :n)"),
                             {"c": f"c{self.next_id % 7}", "a": decimal.Decimal(self.next_id) / 4,
                              "n": None if self.next_id % 5 == 0 else f"note {self.next_id}"})
                self.next_id += 1

    def update(self, ids: range, step: int) -> None:
        with self.engine.begin() as conn:
            for i in ids[::step]:
                conn.execute(sa.text("UPDATE orders SET amount = amount + 1, note = :n, updated_at = clock_timestamp() "
                                     "WHERE id = :i"), {"i": i, "n": f"updated {i}"})


def jdbc_parts(url: str) -> tuple[str, str, str]:
    """``postgresql+psycopg://user:password@host:port/db`` as Confluent's config has it: a jdbc: URL, user and
    password."""
    credentials, address = url.split("//", 1)[1].split("@", 1)
    user, password = credentials.split(":", 1)
    return f"jdbc:postgresql://{address}", user, password


def create_orders(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, customer TEXT NOT NULL, "
                             "amount NUMERIC(12, 2), note TEXT, updated_at TIMESTAMP(3) NOT NULL DEFAULT clock_timestamp())"))


@pytest.mark.parametrize("mode", ["bulk", "incrementing", "timestamp", "timestamp+incrementing"])
def test_postgres_to_kafka_to_postgres(mode: str, databases, runtime_factory, bootstrap: str, unique: str) -> None:
    source, target, source_url, target_url = databases
    create_orders(source)
    writer = Writer(source)
    writer.insert(150)
    prefix = f"pg-{mode.replace('+', '-')}-{unique}-"
    topic = prefix + "orders"
    jdbc_url, user, password = jdbc_parts(source_url)
    rt = runtime_factory()
    rt.create_connector("src", source_config(mode, jdbc_url, prefix, **{"connection.user": user,
                                                                        "connection.password": password}))
    rt.create_connector("dst", sink_config(target_url, topic))

    updates = mode != "incrementing"  # incrementing mode sees new rows only, as Confluent's
    for round_ in range(4):  # rows arriving while it runs
        least = 100 + 30 * round_
        wait_until(lambda least=least: len(rows(target)) >= least, 120, interval=0.2,
                   message=lambda least=least: f"{least} rows copied, have {len(rows(target))}")
        writer.insert(30)
        if updates:
            writer.update(range(1 + round_, writer.next_id), 9)
    wait_until(lambda: rows(target) == rows(source), 180, interval=0.3,
               message=lambda: f"the copy equal to the source ({len(rows(target))}/{len(rows(source))} rows)")
    expected = rows(source)
    assert len(expected) == 270 and expected[0][0] == 1

    ids = topic_ids(bootstrap, topic)
    assert set(ids) == {r[0] for r in expected}  # no row missing from the topic
    if mode == "incrementing":
        assert Counter(ids) == Counter(range(1, 271))  # and none twice
    if mode == "bulk":
        return

    # KIP-875: re-read the rows after row 200 by altering the offset to row 200's.
    stopped(rt, "src")
    (offset,) = rt.get_offsets("src")["offsets"]
    assert offset["partition"] == {"protocol": "1", "table": "public.orders"}
    row200 = next(r for r in expected if r[0] == 200)
    ms = (row200[4].replace(tzinfo=dt.timezone.utc) - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) \
        // dt.timedelta(milliseconds=1)
    altered = {"incrementing": 200} if mode == "incrementing" else {"timestamp": ms, "timestamp_nanos": (ms % 1000) * 10**6}
    if mode == "timestamp+incrementing":
        altered["incrementing"] = 200
    assert set(offset["offset"]) == set(altered)
    if mode == "incrementing":
        assert offset["offset"] == {"incrementing": 270}
    assert rt.alter_offsets("src", {"offsets": [{"partition": offset["partition"], "offset": altered}]}) == ALTERED
    assert rt.get_offsets("src")["offsets"] == [{"partition": offset["partition"], "offset": altered}]

    def after_row_200(r: tuple) -> bool:
        if mode == "incrementing":
            return r[0] > 200
        if mode == "timestamp":
            return r[4] > row200[4]
        return (r[4], r[0]) > (row200[4], 200)
    intended = {r[0] for r in expected if after_row_200(r)}
    assert 0 < len(intended) < len(expected)
    before = len(ids)
    rt.resume_connector("src")
    wait_until(lambda: set(topic_ids(bootstrap, topic)[before:]) >= intended, 120, interval=0.3,
               message="the rows after row 200 re-read")
    assert set(topic_ids(bootstrap, topic)[before:]) == intended
    assert rows(target) == expected


def test_sqlite_both_ways_with_deletes(runtime_factory, bootstrap: str, unique: str, tmp_path: Path) -> None:
    """SQLite -> Kafka -> SQLite in timestamp+incrementing mode; a sink keyed by the record key deletes on
    tombstones."""
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    source = sa.create_engine(f"sqlite:///{src}")
    target = sa.create_engine(f"sqlite:///{dst}")
    meta = sa.MetaData()
    orders = sa.Table("orders", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("customer", sa.Text, nullable=False), sa.Column("amount", sa.Numeric(10, 2)),
                      sa.Column("note", sa.Text), sa.Column("updated_at", sa.DateTime, nullable=False))
    meta.create_all(source)
    clock = [dt.datetime(2025, 1, 1)]

    def tick() -> dt.datetime:
        clock[0] += dt.timedelta(milliseconds=7)
        return clock[0]

    def insert(ids: range) -> None:
        with source.begin() as conn:
            conn.execute(orders.insert(), [{"id": i, "customer": f"c{i}", "amount": decimal.Decimal(i) / 2,
                                            "note": None if i % 3 == 0 else "n", "updated_at": tick()} for i in ids])
    insert(range(1, 41))
    prefix = f"lite-{unique}-"
    rt = runtime_factory()
    rt.create_connector("lite-src", source_config("timestamp+incrementing", f"jdbc:sqlite:{src}", prefix,
                                                  **{"timestamp.delay.interval.ms": "0"}))
    rt.create_connector("lite-dst", sink_config(f"jdbc:sqlite:{dst}", prefix + "orders"))
    wait_until(lambda: rows(target) == rows(source), 120, interval=0.2, message="40 rows copied")
    insert(range(41, 61))
    with source.begin() as conn:
        conn.execute(orders.update().where(orders.c.id <= 10).values(note="updated", updated_at=tick()))
    wait_until(lambda: rows(target) == rows(source), 120, interval=0.2, message="inserts and updates copied")
    assert len(rows(target)) == 60 and rows(target)[0][3] == "updated"

    # A keyed topic into SQLite with deletes: tombstones remove rows.
    from confluent_kafka import Producer
    from raw_topics import create_topics

    keyed = f"keyed-{unique}"
    create_topics(bootstrap, keyed)
    producer = Producer({"bootstrap.servers": bootstrap})
    value_schema = {"type": "struct", "fields": [{"field": "name", "type": "string", "optional": False}]}
    for i in range(10):
        producer.produce(keyed, key=json.dumps(i).encode(),
                         value=json.dumps({"schema": value_schema, "payload": {"name": f"n{i}"}}).encode())
    for i in range(0, 10, 2):
        producer.produce(keyed, key=json.dumps(i).encode(), value=None)
    producer.produce(keyed, key=json.dumps(3).encode(),
                     value=json.dumps({"schema": value_schema, "payload": {"name": "three"}}).encode())
    assert producer.flush(30) == 0
    rt.create_connector("keyed", {"connector.class": "JdbcSink", "connection.url": f"sqlite:///{dst}",
                                  "topics": keyed, "insert.mode": "upsert", "pk.mode": "record_key",
                                  "pk.fields": "k", "delete.enabled": "true", "auto.create": "true",
                                  "table.name.format": "people",
                                  "key.converter": JSON, "key.converter.schemas.enable": "false",
                                  "value.converter": JSON})

    def people() -> list[tuple]:
        with target.connect() as conn:
            if not sa.inspect(conn).has_table("people"):
                return []
            return [tuple(r) for r in conn.execute(sa.text("SELECT k, name FROM people ORDER BY k"))]
    wait_until(lambda: people() == [(1, "n1"), (3, "three"), (5, "n5"), (7, "n7"), (9, "n9")], 120, interval=0.2,
               message=lambda: f"the keyed rows, tombstones applied (have {people()})")
    source.dispose()
    target.dispose()


@pytest.mark.parametrize(("config", "field", "words"), [
    ({"mode": "fast"}, "mode", "String must be one of"),
    ({"mode": ""}, "mode", "mode"),
    ({"mode": "timestamp"}, "timestamp.column.name", "must be provided"),
    ({"table.blacklist": "b"}, "table.blacklist", "exclusive"),
    ({"connection.url": "jdbc:db2://host/x"}, "connection.url", "db2"),
    ({"query": "SELECT 1"}, "query", "Do not specify table filtering"),
    ({"batch.max.rows": "0"}, "batch.max.rows", "at least 1"),
    ({"topic.prefix": None}, "topic.prefix", "Missing required configuration"),
])
def test_bad_source_configs_are_rejected_naming_the_field(config: dict, field: str, words: str,
                                                          runtime_factory, tmp_path: Path) -> None:
    base = source_config("incrementing", f"jdbc:sqlite:{tmp_path / 'x.db'}", "p-")
    merged = {k: v for k, v in {**base, "name": "bad", **config}.items() if v is not None}
    rt = runtime_factory()
    infos = rt.validate_connector_config(merged)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert list(errors) == [field] and words in errors[field][0], errors
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", merged)
    assert e.value.status == 400 and field in e.value.message


@pytest.mark.parametrize(("config", "field", "words"), [
    ({"insert.mode": "merge"}, "insert.mode", "String must be one of"),
    ({"pk.mode": "none"}, "pk.mode", "needs the primary key"),
    ({"delete.enabled": "true"}, "delete.enabled", "must be 'record_key'"),
    ({"pk.mode": "kafka", "pk.fields": "a,b"}, "pk.fields", "exactly 3 fields"),
    ({"connection.url": "not a url"}, "connection.url", "Not a JDBC or SQLAlchemy URL"),
])
def test_bad_sink_configs_are_rejected_naming_the_field(config: dict, field: str, words: str,
                                                        runtime_factory, tmp_path: Path) -> None:
    merged = {**sink_config(f"jdbc:sqlite:{tmp_path / 'x.db'}", "t"), "name": "bad", **config}
    rt = runtime_factory()
    infos = rt.validate_connector_config(merged)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert list(errors) == [field] and words in errors[field][0], errors


def test_altered_offsets_are_checked_and_used_by_two_tasks(runtime_factory, bootstrap: str, unique: str,
                                                           tmp_path: Path) -> None:
    """Bad offsets are refused naming the key; an offset in Confluent's older shape (``{"table": name}``, no
    protocol) is read; ``tasks.max`` splits the tables."""
    db = tmp_path / "x.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    meta = sa.MetaData()
    tables = {name: sa.Table(name, meta, sa.Column("id", sa.Integer, primary_key=True), sa.Column("v", sa.Text))
              for name in ("orders", "items")}
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(tables["orders"].insert(), [{"id": i, "v": f"o{i}"} for i in range(1, 41)])
        conn.execute(tables["items"].insert(), [{"id": i, "v": f"i{i}"} for i in range(1, 11)])
    engine.dispose()
    prefix = f"two-{unique}-"
    rt = runtime_factory()
    rt.create_connector("checked", source_config("incrementing", f"jdbc:sqlite:{db}", prefix,
                                                 **{"table.whitelist": "", "tasks.max": "2"}),
                        initial_state="STOPPED")
    table = {"protocol": "1", "table": "orders"}
    for partition, offset, message in [
        ({"path": "x"}, {"incrementing": 1}, "Partition objects should contain the key 'table' or 'query'"),
        (table, {"incrementing": "1"}, "The value for the 'incrementing' key in the offset is expected to be a Long"),
        (table, {"timestamp": -1}, "The value for the 'timestamp' key in the offset should be a non-negative"),
        (table, {"position": 1}, "Offset objects should either be null or contain the keys 'incrementing'"),
    ]:
        with pytest.raises(ConnectRestError) as e:
            rt.alter_offsets("checked", {"offsets": [{"partition": partition, "offset": offset}]})
        assert e.value.message.startswith(message), e.value.message
    assert rt.get_offsets("checked")["offsets"] == []
    assert rt.alter_offsets("checked", {"offsets": [{"partition": {"table": "orders"},
                                                     "offset": {"incrementing": 30}}]}) == ALTERED
    rt.resume_connector("checked")
    wait_until(lambda: len(rt.connector_status("checked")["tasks"]) == 2, 60, message="two tasks")
    wait_until(lambda: len(topic_ids(bootstrap, prefix + "items")) >= 10, 60, message="the items")
    wait_until(lambda: len(topic_ids(bootstrap, prefix + "orders")) >= 10, 60, message="the orders after 30")
    assert topic_ids(bootstrap, prefix + "orders") == list(range(31, 41))
    assert topic_ids(bootstrap, prefix + "items") == list(range(1, 11))


HOST = Path(__file__).with_name("jdbc_crash_host.py")


@pytest.mark.parametrize("mode", ["bulk", "incrementing", "timestamp", "timestamp+incrementing"])
def test_killed_mid_stream_the_copy_still_equals_the_source(mode: str, databases, bootstrap: str,
                                                            unique: str) -> None:
    """The process hosting the runtime is killed (SIGKILL) while rows stream; rows are inserted and updated
    while it is dead; a new runtime restores both connectors and the copy ends equal to the source."""
    source, target, source_url, target_url = databases
    create_orders(source)
    writer = Writer(source)
    writer.insert(20_000)  # enough that the kill comes mid-stream on a fast, quiet machine too
    jdbc_url, user, password = jdbc_parts(source_url)
    prefix = f"crash-{mode.replace('+', '-')}-{unique}-"
    topic, group = prefix + "orders", f"jdbc-crash-{unique}"
    connectors = {
        "src": source_config(mode, jdbc_url, prefix, **{"connection.user": user, "connection.password": password,
                                                       "batch.max.rows": "20"}),
        "dst": sink_config(target_url, topic, **{"consumer.override.max.poll.records": "40"}),
    }
    host = subprocess.Popen([sys.executable, str(HOST), bootstrap, group, json.dumps(connectors)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "ready"
        wait_until(lambda: len(rows(target)) >= 300, 180, interval=0.1, message="300 rows copied")
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait(30)
    copied = len(rows(target))
    assert copied < 20_000, "the copy finished before the kill; the test proves nothing"
    writer.insert(100)
    if mode != "incrementing":
        writer.update(range(1, writer.next_id), 13)
    with ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "200"}) as rt:
        assert sorted(rt.connectors()) == ["dst", "src"]
        wait_until(lambda: rows(target) == rows(source), 300, interval=0.5,
                   message=lambda: f"the copy equal to the source ({len(rows(target))}/{len(rows(source))} rows)")
    if mode == "incrementing":
        assert set(topic_ids(bootstrap, topic)) == set(range(1, writer.next_id))  # no row missing


def test_postgres_sink_copy_paths(postgres, unique: str) -> None:
    """The sink's COPY paths on PostgreSQL: plain inserts, upserts through a staging table (a redelivered batch
    rewrites the same rows), a table whose columns are all key (ON CONFLICT DO NOTHING)."""
    from connect_magics.api.data import SchemaBuilder, Struct, Timestamp
    from connect_magics.api.records import SinkRecord, SinkRecords
    from connect_magics.connectors.jdbc import JdbcSinkTask

    url = postgres.create_database(f"copy_{unique}")
    jdbc_url, user, password = jdbc_parts(url)
    schema = SchemaBuilder.struct().name("r").field("id", SchemaBuilder.int64().build()) \
        .field("name", SchemaBuilder.string().optional().build()) \
        .field("at", Timestamp.builder().optional().build()).build()
    at = dt.datetime(2025, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)

    def batch(values: list[tuple[int, str]]) -> SinkRecords:
        return SinkRecords([SinkRecord("t", 0, None, None, schema,
                                       Struct(schema).put("id", i).put("name", n).put("at", at), kafka_offset=i)
                            for i, n in values])

    def task(**config: str) -> JdbcSinkTask:
        t = JdbcSinkTask()
        t.start({"connection.url": jdbc_url, "connection.user": user, "connection.password": password,
                 "auto.create": "true", "pk.mode": "record_value", "pk.fields": "id", **config})
        return t

    def table(name: str) -> list[tuple]:
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                return [tuple(r) for r in conn.execute(sa.text(f"SELECT * FROM {name} ORDER BY 1"))]
        finally:
            engine.dispose()

    inserts = task(**{"table.name.format": "plain"})
    inserts.put(batch([(1, "a"), (2, "b")]))
    inserts.stop()
    assert table("plain") == [(1, "a", at.replace(tzinfo=None)), (2, "b", at.replace(tzinfo=None))]

    upserts = task(**{"table.name.format": "upserted", "insert.mode": "upsert"})
    upserts.put(batch([(1, "a"), (2, "b"), (1, "c")]))
    upserts.put(batch([(1, "c"), (2, "b"), (3, "d")]))  # a redelivery and a new row
    upserts.stop()
    assert [r[:2] for r in table("upserted")] == [(1, "c"), (2, "b"), (3, "d")]

    keys_only = task(**{"table.name.format": "keys_only", "insert.mode": "upsert", "pk.fields": "id,name,at"})
    keys_only.put(batch([(1, "a")]))
    keys_only.put(batch([(1, "a"), (2, "b")]))
    keys_only.stop()
    assert [r[:2] for r in table("keys_only")] == [(1, "a"), (2, "b")]
