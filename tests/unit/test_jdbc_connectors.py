"""The JDBC connectors' pure parts: URL translation, type mapping, table splitting across tasks (on SQLite
files), and their modules' examples."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import sqlalchemy as sa

from connect_magics.api.config import ConfigException
from connect_magics.api.data import Date, Decimal, SchemaType, Time, Timestamp
from connect_magics.connectors.jdbc import JdbcSinkConnector, JdbcSourceConnector
from connect_magics.connectors.jdbc.dialect import sqlalchemy_url
from connect_magics.connectors.jdbc.schema import column_schema, sql_type, timestamp_of, timestamp_parts


@pytest.mark.parametrize(("url", "user", "password", "expected"), [
    ("jdbc:postgresql://db:5433/shop", None, None, "postgresql+psycopg://db:5433/shop"),
    ("jdbc:postgresql://db/shop?user=ann&password=pw&sslmode=require", None, None,
     "postgresql+psycopg://ann:pw@db/shop?sslmode=require"),
    ("jdbc:postgresql://db:5432/shop", "bob", "s e/cret", "postgresql+psycopg://bob:s e%2Fcret@db:5432/shop"),
    ("jdbc:postgresql:shop", None, None, "postgresql+psycopg://localhost/shop"),
    ("jdbc:sqlite:/tmp/a.db", None, None, "sqlite:////tmp/a.db"),
    ("jdbc:sqlite:relative.db", None, None, "sqlite:///relative.db"),
    ("jdbc:sqlite::memory:", None, None, "sqlite://"),
    ("jdbc:mysql://h:3306/d", "u", None, "mysql+pymysql://u@h:3306/d"),
    ("postgresql://u@h/d", None, None, "postgresql+psycopg://u@h/d"),
    ("sqlite:///x.db", None, None, "sqlite:///x.db"),
])
def test_connection_urls(url: str, user: str | None, password: str | None, expected: str) -> None:
    assert sqlalchemy_url(url, user, password).render_as_string(hide_password=False) == expected


@pytest.mark.parametrize("url", ["", "jdbc:db2://h/x", "not a url"])
def test_bad_urls_name_connection_url(url: str) -> None:
    with pytest.raises(ConfigException) as e:
        sqlalchemy_url(url, None, None)
    assert e.value.name == "connection.url"


def test_sql_types_map_to_connect_schemas_and_back() -> None:
    def schema(type_: sa.types.TypeEngine, nullable: bool = True):
        return column_schema(sa.Column("c", type_, nullable=nullable), "none")[0]
    assert schema(sa.SmallInteger()).type is SchemaType.INT16
    assert schema(sa.Integer(), False).type is SchemaType.INT32 and not schema(sa.Integer(), False).optional
    assert schema(sa.BigInteger()).type is SchemaType.INT64 and schema(sa.BigInteger()).optional
    assert schema(sa.REAL()).type is SchemaType.FLOAT32
    assert schema(sa.Double()).type is SchemaType.FLOAT64
    assert schema(sa.Boolean()).type is SchemaType.BOOLEAN
    assert schema(sa.Text()).type is SchemaType.STRING and schema(sa.Uuid()).type is SchemaType.STRING
    assert schema(sa.LargeBinary()).type is SchemaType.BYTES
    assert schema(sa.Date()).name == Date.LOGICAL_NAME and schema(sa.Time()).name == Time.LOGICAL_NAME
    assert schema(sa.DateTime()).name == Timestamp.LOGICAL_NAME
    decimal_schema = schema(sa.Numeric(12, 3))
    assert decimal_schema.name == Decimal.LOGICAL_NAME and Decimal.scale(decimal_schema) == 3
    best_fit = column_schema(sa.Column("c", sa.Numeric(9, 0)), "best_fit")[0]
    assert best_fit.type is SchemaType.INT32
    assert column_schema(sa.Column("c", sa.Interval()), "none") is None  # left out, as Confluent's
    for type_ in (sa.SmallInteger(), sa.Integer(), sa.BigInteger(), sa.Boolean(), sa.Text(), sa.Date(),
                  sa.DateTime(), sa.Numeric(10, 2)):
        assert type(sql_type(schema(type_))) is type(type_)


def test_timestamp_offsets_are_confluents() -> None:
    value = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone.utc)
    ms, nanos = timestamp_parts(value)
    assert ms == 1714979289123 and nanos == 123456000  # java.sql.Timestamp's getTime() and getNanos()
    assert timestamp_of(ms, nanos) == value
    assert timestamp_of(ms, None) == value.replace(microsecond=123000)


def test_tables_are_split_across_tasks(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    meta = sa.MetaData()
    for name in ("a", "b", "c", "d", "e"):
        sa.Table(name, meta, sa.Column("id", sa.Integer, primary_key=True))
    meta.create_all(engine)
    engine.dispose()
    base = {"connection.url": f"jdbc:sqlite:{db}", "mode": "bulk", "topic.prefix": "p-",
            "table.poll.interval.ms": "600000"}
    cases = [({}, 2, ["a,b,c", "d,e"]), ({}, 9, ["a", "b", "c", "d", "e"]),
             ({"table.whitelist": "b,d"}, 4, ["b", "d"]), ({"table.blacklist": "a,e"}, 1, ["b,c,d"])]
    for extra, max_tasks, expected in cases:
        connector = JdbcSourceConnector()
        connector.start({**base, **extra})
        try:
            configs = connector.task_configs(max_tasks)
        finally:
            connector.stop()
        assert [c["tables"] for c in configs] == expected
        assert all(c["topic.prefix"] == "p-" for c in configs)
    query = JdbcSourceConnector()
    query.start({**base, "query": "SELECT * FROM a"})
    assert len(query.task_configs(3)) == 1


def test_validation_names_the_field() -> None:
    values = JdbcSinkConnector().validate({"connection.url": "jdbc:sqlite::memory:", "insert.mode": "upsert"})
    errors = {v.name: v.errors for v in values if v.errors}
    assert list(errors) == ["pk.mode"]
    values = JdbcSourceConnector().validate({"connection.url": "jdbc:sqlite::memory:", "topic.prefix": "p",
                                             "mode": "timestamp+incrementing", "query": "SELECT 1",
                                             "timestamp.column.name": "ts"})
    errors = {v.name: v.errors for v in values if v.errors}
    assert list(errors) == ["incrementing.column.name"]


def _records(schema, values, topic="t", start=0):
    from connect_magics.api.data import Struct
    from connect_magics.api.records import SinkRecord, SinkRecords

    out = []
    for i, value in enumerate(values):
        struct = None
        if value is not None:
            struct = Struct(schema)
            for k, v in value.items():
                struct.put(k, v)
        out.append(SinkRecord(topic, 0, None, None, schema, struct, kafka_offset=start + i))
    return SinkRecords(out)


def _sink(db: Path, **config: str):
    from connect_magics.connectors.jdbc import JdbcSinkTask

    task = JdbcSinkTask()
    task.start({"connection.url": f"jdbc:sqlite:{db}", "auto.create": "true", **config})
    return task


def _table(db: Path, name: str = "t") -> list[tuple]:
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{name}" ORDER BY 1, 2'))]
    finally:
        engine.dispose()


def test_sink_modes_on_sqlite(tmp_path: Path) -> None:
    from connect_magics.api.data import SchemaBuilder
    from connect_magics.api.errors import ConnectException

    v1 = SchemaBuilder.struct().name("r").field("id", SchemaBuilder.int64().build()) \
        .field("name", SchemaBuilder.string().optional().build()).build()
    v2 = SchemaBuilder.struct().name("r").field("id", SchemaBuilder.int64().build()) \
        .field("name", SchemaBuilder.string().optional().build()) \
        .field("qty", SchemaBuilder.int32().optional().build()).build()
    db = tmp_path / "s.db"

    # insert with pk.mode=kafka: the coordinates are the key; a redelivery under upsert rewrites the same rows
    kafka = _sink(db, **{"pk.mode": "kafka", "insert.mode": "upsert", "table.name.format": "k_${topic}"})
    kafka.put(_records(v1, [{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]))
    kafka.put(_records(v1, [{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]))
    assert _table(db, "k_t") == [("t", 0, 0, 1, "a"), ("t", 0, 1, 1, "b")]
    kafka.stop()

    # record_value upserts: the last value of a key wins, also inside one batch
    upsert = _sink(db, **{"pk.mode": "record_value", "pk.fields": "id", "insert.mode": "upsert"})
    upsert.put(_records(v1, [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 1, "name": "c"}]))
    assert _table(db) == [(1, "c"), (2, "b")]
    # a new optional field without auto.evolve is refused, with it the column is added
    with pytest.raises(ConnectException, match="auto-evolution is disabled"):
        upsert.put(_records(v2, [{"id": 3, "name": "x", "qty": 5}]))
    upsert.stop()
    evolving = _sink(db, **{"pk.mode": "record_value", "pk.fields": "id", "insert.mode": "upsert",
                            "auto.evolve": "true"})
    from connect_magics.api.records import SinkRecords

    mixed = [*_records(v1, [{"id": 10, "name": "old"}]), *_records(v2, [{"id": 3, "name": "x", "qty": 5}])]
    evolving.put(SinkRecords(mixed))  # the schema changes inside one batch: written in two runs
    assert _table(db) == [(1, "c", None), (2, "b", None), (3, "x", 5), (10, "old", None)]
    with sa.create_engine(f"sqlite:///{db}").begin() as conn:
        conn.execute(sa.text("DELETE FROM t WHERE id = 10"))
    evolving.stop()

    # update touches existing rows only
    update = _sink(db, **{"pk.mode": "record_value", "pk.fields": "id", "insert.mode": "update"})
    update.put(_records(v2, [{"id": 2, "name": "B", "qty": 7}, {"id": 9, "name": "nine", "qty": 1}]))
    assert _table(db) == [(1, "c", None), (2, "B", 7), (3, "x", 5)]
    update.stop()

    # plain insert of an existing key fails the batch (nothing of it is written)
    insert = _sink(db, **{"pk.mode": "record_value", "pk.fields": "id", "max.retries": "0"})
    with pytest.raises(ConnectException):
        insert.put(_records(v2, [{"id": 4, "name": "d", "qty": 0}, {"id": 1, "name": "dup", "qty": 0}]))
    assert [r[0] for r in _table(db)] == [1, 2, 3]
    insert.stop()

    # a missing table without auto.create is refused, naming it
    strict = _sink(db, **{"auto.create": "false", "table.name.format": "absent"})
    with pytest.raises(ConnectException, match='Table "absent" is missing and auto-creation is disabled'):
        strict.put(_records(v1, [{"id": 1, "name": "a"}]))
    strict.stop()


def _poll_all(task) -> list:
    out = []
    while True:
        records = task.poll()
        if not records:
            return out
        out += records


def test_source_query_mode_and_timestamp_ties(tmp_path: Path) -> None:
    """A query in incrementing mode; in timestamp mode a record inside a tie of timestamps carries the offset
    before the tie, so that a restart from it re-reads the whole tie."""
    from connect_magics.connectors.jdbc import JdbcSourceTask

    db = tmp_path / "q.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    meta = sa.MetaData()
    t = sa.Table("t", meta, sa.Column("id", sa.Integer, primary_key=True), sa.Column("v", sa.Text),
                 sa.Column("ts", sa.DateTime, nullable=False))
    meta.create_all(engine)
    base = dt.datetime(2025, 1, 1)
    with engine.begin() as conn:  # timestamps 0, 1, 1, 1, 2 seconds
        conn.execute(t.insert(), [{"id": i, "v": f"v{i}", "ts": base + dt.timedelta(seconds=s)}
                                  for i, s in [(1, 0), (2, 1), (3, 1), (4, 1), (5, 2)]])
    engine.dispose()
    common = {"connection.url": f"jdbc:sqlite:{db}", "topic.prefix": "q", "poll.interval.ms": "60000",
              "batch.max.rows": "2"}
    query = JdbcSourceTask()
    query.start({**common, "mode": "incrementing", "incrementing.column.name": "id",
                 "query": "SELECT id, v FROM t WHERE id > 1"})
    records = _poll_all(query)
    query.stop()
    assert [(r.topic, r.source_partition, r.source_offset, r.value.get("v")) for r in records] == [
        ("q", {"query": "query"}, {"incrementing": i}, f"v{i}") for i in range(2, 6)]

    ts = JdbcSourceTask()
    ts.start({**common, "mode": "timestamp", "timestamp.column.name": "ts", "tables": "t"})
    records = _poll_all(ts)
    ts.stop()
    ms0 = int((base.replace(tzinfo=dt.timezone.utc).timestamp()) * 1000)
    assert [r.value.get("id") for r in records] == [1, 2, 3, 4, 5]
    assert [r.source_offset["timestamp"] - ms0 for r in records] == [0, 0, 0, 1000, 2000]
    assert records[0].source_partition == {"protocol": "1", "table": "t"}


def _typed_table(db: Path, rows: int) -> list[dict]:
    """A SQLite table with a column of each kind the source maps, NULLs in every nullable one; its rows."""
    import decimal

    engine = sa.create_engine(f"sqlite:///{db}")
    meta = sa.MetaData()
    t = sa.Table("kinds", meta, sa.Column("id", sa.Integer, primary_key=True),
                 sa.Column("small", sa.SmallInteger), sa.Column("big", sa.BigInteger), sa.Column("flag", sa.Boolean),
                 sa.Column("amount", sa.Numeric(12, 3)), sa.Column("ratio", sa.REAL), sa.Column("wide", sa.Double),
                 sa.Column("name", sa.Text), sa.Column("blob", sa.LargeBinary), sa.Column("day", sa.Date),
                 sa.Column("at", sa.Time), sa.Column("ts", sa.DateTime, nullable=False), sa.Column("other_ts", sa.DateTime))
    meta.create_all(engine)
    base = dt.datetime(2025, 10, 26, 0, 30)  # an hour of it is repeated in Europe/Paris
    values = []
    for i in range(1, rows + 1):
        null = i % 4 == 0
        values.append({
            "id": i, "small": None if null else -i, "big": None if null else i * 10**12, "flag": None if null else i % 2 == 0,
            "amount": None if null else decimal.Decimal(i) / 8, "ratio": None if null else i / 3, "wide": None if null else i / 7,
            "name": None if null else f"name {i} é", "blob": None if null else bytes([i % 256, 0, 255]),
            "day": None if null else dt.date(2025, 1, 1) + dt.timedelta(days=i),
            "at": None if null else dt.time(i % 24, 5, 6, 7000),
            "ts": base + dt.timedelta(minutes=10 * (i // 3), microseconds=i % 3),  # ties of one to three rows
            "other_ts": None if null else base + dt.timedelta(seconds=i)})
    with engine.begin() as conn:
        conn.execute(t.insert(), values)
    engine.dispose()
    return values


def _expected_records(db: Path, mode: str, zone: str) -> list:
    """The records of the general path: a validated Struct per row (put field by field, each value through its
    column's converter) and the offset built from the struct, as the source did before its fast path."""
    from zoneinfo import ZoneInfo

    from connect_magics.api.data import SchemaBuilder, Struct
    from connect_magics.api.records import SourceRecord

    engine = sa.create_engine(f"sqlite:///{db}")
    table = sa.Table("kinds", sa.MetaData(), autoload_with=engine)
    mapped = [(col.name, *column_schema(col, "none", ZoneInfo(zone))) for col in table.columns]
    builder = SchemaBuilder.struct().name("kinds")
    for name, schema, _ in mapped:
        builder.field(name, schema)
    schema = builder.build()
    with engine.connect() as conn:
        rows = list(conn.execute(sa.select(table).order_by(table.c.ts, table.c.id)
                                 if mode.startswith("timestamp") else sa.select(table).order_by(table.c.id)))
    engine.dispose()
    records = []
    for row in rows:
        struct = Struct(schema)
        for name, _, convert in mapped:
            struct.put(name, convert(row._mapping[name]))
        ts = struct.get("ts")
        micros = int((ts - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds()) * 10**6 + ts.microsecond
        offset = None if mode == "bulk" else {"incrementing": row.id} if mode == "incrementing" else \
            {"incrementing": row.id, "timestamp": micros // 1000, "timestamp_nanos": micros % 10**6 * 1000} \
            if mode == "timestamp+incrementing" else {"timestamp": micros // 1000, "timestamp_nanos": micros % 10**6 * 1000}
        records.append(SourceRecord({"protocol": "1", "table": "kinds"}, offset, "p-kinds", value_schema=schema,
                                    value=struct))
    if mode == "timestamp":  # inside a tie of timestamps a record carries the offset before the tie
        for i in range(len(records) - 2, -1, -1):
            if records[i + 1].value.get("ts") == records[i].value.get("ts"):
                records[i].source_offset = records[i - 1].source_offset if i else \
                    {"timestamp": 0, "timestamp_nanos": 0}
    return records


@pytest.mark.parametrize("mode", ["bulk", "incrementing", "timestamp+incrementing", "timestamp"])
@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris"])
def test_source_records_equal_the_general_path(tmp_path: Path, mode: str, zone: str) -> None:
    """Every kind of column, NULLs, ties of timestamps split across batches: the records the source polls are the
    validated structs and offsets of the general path, byte for byte once converted."""
    from connect_magics.api.converters import JsonConverter
    from connect_magics.connectors.jdbc import JdbcSourceTask

    db = tmp_path / "k.db"
    _typed_table(db, 40)
    task = JdbcSourceTask()
    task.start({"connection.url": f"jdbc:sqlite:{db}", "topic.prefix": "p-", "tables": "kinds", "mode": mode,
                "incrementing.column.name": "id", "timestamp.column.name": "ts", "batch.max.rows": "7",
                "db.timezone": zone, "timestamp.delay.interval.ms": "0", "poll.interval.ms": "60000"})
    records = _poll_all(task)
    task.stop()
    expected = _expected_records(db, mode, zone)
    assert records == expected
    json = JsonConverter()
    json.configure({"schemas.enable": "true"}, False)
    assert [json.from_connect_data("t", r.value_schema, r.value) for r in records] == \
        [json.from_connect_data("t", r.value_schema, r.value) for r in expected]


def test_source_errors_equal_the_general_path(tmp_path: Path) -> None:
    """An incrementing column the schema lacks, or a NULL in it: the errors Struct.get and int() give."""
    from connect_magics.api.errors import DataException
    from connect_magics.connectors.jdbc import JdbcSourceTask

    db = tmp_path / "k.db"
    _typed_table(db, 5)
    common = {"connection.url": f"jdbc:sqlite:{db}", "topic.prefix": "p", "mode": "incrementing",
              "poll.interval.ms": "60000"}
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:  # a column without a type has no Connect mapping: left out of the schema
        conn.execute(sa.text("CREATE TABLE odd (id NOT NULL, name TEXT)"))
        conn.execute(sa.text("INSERT INTO odd VALUES (1, 'a')"))
    engine.dispose()
    lacking = JdbcSourceTask()
    lacking.start({**common, "incrementing.column.name": "id", "tables": "odd"})
    with pytest.raises(DataException, match="^id is not a valid field name$"):
        lacking.poll()
    lacking.stop()
    nulls = JdbcSourceTask()
    nulls.start({**common, "mode": "timestamp+incrementing", "incrementing.column.name": "big", "tables": "kinds",
                 "timestamp.column.name": "ts", "validate.non.null": "false"})
    with pytest.raises(TypeError, match="int\\(\\) argument must be .* not 'NoneType'"):
        _poll_all(nulls)
    nulls.stop()


def test_row_values_and_time_helpers_equal_their_plain_forms() -> None:
    """The compiled row reader against a comprehension over converters; ``_in_zone`` and ``sink_value`` against
    ``replace``; ``timestamp_parts`` against timedelta arithmetic."""
    import random
    from zoneinfo import ZoneInfo

    from connect_magics.connectors.jdbc.schema import (
        _float,
        _identity,
        _in_zone,
        _int,
        _str,
        row_values,
        sink_value,
    )

    converters = [_str, _identity, _float]
    for indexes, width in [([0, 1, 2], 3), ([2, 0, 1], 3), ([0, 1, 2], 4), ([3, 1, 0], 4)]:
        values = row_values(indexes, converters, width)
        for row in [(1, None, 2, "x"), ("1.5", 2.5, None, b"b"), (None, None, None, None)]:
            row = row[:width]
            assert values(row) == [convert(row[j]) for j, convert in zip(indexes, converters, strict=True)]
    assert row_values([0, 1], [_identity, _identity], 2) is list
    mixed = row_values([1, 0, 1, 2], [_int, _str, _identity, _float], 3)
    for row in [(7, 8, 9.5), ("s", 1.5, 2), (None, None, None), (b"b", True, "1e3")]:
        assert mixed(row) == [_int(row[1]), _str(row[0]), row[1], _float(row[2])]

    class Sub(dt.datetime):
        pass
    rng = random.Random(7)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    for _ in range(2000):
        naive = dt.datetime(1, 1, 1) + dt.timedelta(microseconds=rng.randrange(315_537_897_600_000_000))
        for value in (naive, naive.replace(fold=1), Sub.combine(naive, naive.time())):
            for zone in (dt.timezone.utc, ZoneInfo("Europe/Paris")):
                got, want = _in_zone(value, zone), value.replace(tzinfo=zone)
                assert (type(got), got, got.fold, repr(got)) == (type(want), want, want.fold, repr(want))
        aware = naive.replace(tzinfo=dt.timezone.utc)
        for value in (aware, aware.astimezone(ZoneInfo("Europe/Paris")) if naive.year > 1 else aware, naive):
            for column_type in (sa.DateTime(), sa.DateTime(timezone=True)):
                got = sink_value(value, column_type)
                want = (value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo is not None
                        and not column_type.timezone else value.replace(tzinfo=dt.timezone.utc)
                        if value.tzinfo is None and column_type.timezone else value)
                assert (type(got), got, got.fold, repr(got)) == (type(want), want, want.fold, repr(want))
        delta = aware - epoch
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        assert timestamp_parts(aware) == (micros // 1000, micros % 1_000_000 * 1000)
