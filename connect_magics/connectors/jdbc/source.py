"""Confluent's JDBC source on SQLAlchemy: tables (or one query) polled into topics, in Confluent's modes
and with Confluent's source partitions and offsets.

* ``bulk``: every poll reads the whole table; records carry no offset.
* ``incrementing``: rows whose ``incrementing.column.name`` is above the last one read (new rows only);
  offset ``{"incrementing": n}``.
* ``timestamp``: rows whose ``timestamp.column.name`` (the first non-null of several) is after the last
  one read and before the database's clock minus ``timestamp.delay.interval.ms``; offset
  ``{"timestamp": epoch ms, "timestamp_nanos": nanoseconds of the second}``. A record whose timestamp is
  shared by the rows after it carries the offset of the timestamp before, until the last row of the
  tie: a restart never skips the rest of a tie.
* ``timestamp+incrementing``: both, ``(timestamp, incrementing)`` ordered; both offset keys.

Source partitions are Confluent's: ``{"protocol": "1", "table": "schema.table"}`` (SQLite: no schema) for
a table, ``{"query": "query"}`` for a query. Offsets written by Confluent's older protocol
(``{"table": "name"}``) are read too. Altering an offset through KIP-875 makes the next query start after
it: ``{"incrementing": 999}`` re-reads the rows from id 1000.

Example::

    rt.create_connector("orders-src", {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": "jdbc:postgresql://127.0.0.1:5432/shop", "connection.user": "ann",
        "connection.password": "${file:/secrets.properties:pg.password}",
        "mode": "incrementing", "incrementing.column.name": "id", "table.whitelist": "orders",
        "topic.prefix": "pg-"})
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from connect_magics.api.config import ConfigDef, ConfigValue
from connect_magics.api.connector import SourceConnector, SourceTask, Task
from connect_magics.api.data import Field, Schema, SchemaBuilder, Struct
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SourceRecord
from connect_magics.connectors.jdbc import config as c
from connect_magics.connectors.jdbc.dialect import create_engine, current_time, is_sqlite, sqlalchemy_url
from connect_magics.connectors.jdbc.schema import (
    UTC,
    _identity,
    column_schema,
    row_values,
    timestamp_of,
    timestamp_parts,
    value_schema_of,
)

__all__ = ["JdbcSourceConnector", "JdbcSourceTask"]

log = logging.getLogger(__name__)

TABLE_KEY, QUERY_KEY, PROTOCOL_KEY = "table", "query", "protocol"
INCREMENTING_FIELD, TIMESTAMP_FIELD, TIMESTAMP_NANOS_FIELD = "incrementing", "timestamp", "timestamp_nanos"


def _plugin_version() -> str:
    from connect_magics.connectors import version

    return version()


def _engine(parsed: Mapping[str, Any]) -> Engine:
    return create_engine(sqlalchemy_url(parsed[c.CONNECTION_URL], parsed[c.CONNECTION_USER],
                                        c.password(parsed[c.CONNECTION_PASSWORD])))


def qualified_name(engine: Engine, schema: str | None, name: str) -> str:
    """How Confluent names a table in its source partition: ``schema.table``; SQLite has no schema."""
    if is_sqlite(engine) or not schema:
        return name
    return f"{schema}.{name}"


def list_tables(engine: Engine, parsed: Mapping[str, Any]) -> list[str]:
    """The qualified names of the tables to copy: of the types asked for, whitelisted or not blacklisted."""
    inspector = sa.inspect(engine)
    schema = parsed.get(c.SCHEMA_PATTERN) or (None if is_sqlite(engine) else inspector.default_schema_name)
    types = {t.strip().upper() for t in parsed.get(c.TABLE_TYPES) or ["TABLE"]}
    names: list[str] = []
    if "TABLE" in types:
        names += inspector.get_table_names(schema=schema)
    if "VIEW" in types:
        names += inspector.get_view_names(schema=schema)
    white, black = set(parsed.get(c.TABLE_WHITELIST) or ()), set(parsed.get(c.TABLE_BLACKLIST) or ())
    chosen = []
    for name in sorted(set(names)):
        fqn = qualified_name(engine, schema, name)
        if white and not ({name, fqn} & white):
            continue
        if black and {name, fqn} & black:
            continue
        chosen.append(fqn)
    return chosen


def _split(fqn: str) -> tuple[str | None, str]:
    schema, _, name = fqn.rpartition(".")
    return (schema or None), name


def _groups(items: list[str], count: int) -> list[list[str]]:
    """Kafka's ``ConnectorUtils.groupPartitions``: ``count`` contiguous groups, the first ones one longer."""
    size, extra = divmod(len(items), count)
    groups, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        groups.append(items[start:end])
        start = end
    return groups


class JdbcSourceConnector(SourceConnector):
    """Reads database tables (``table.whitelist`` / ``table.blacklist``, all by default) or one ``query``
    into topics named ``topic.prefix`` + table name (the query: ``topic.prefix``). ``tasks.max`` tasks
    split the tables; a thread lists the tables every ``table.poll.interval.ms`` and reconfigures the tasks
    when they change.
    """

    ALIASES: tuple[str, ...] = ("io.confluent.connect.jdbc.JdbcSourceConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._parsed: dict[str, Any] = {}
        self._engine: Engine | None = None
        self._tables: list[str] = []
        self._stopping = threading.Event()
        self._monitor: threading.Thread | None = None

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return c.source_config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        return c.with_problems(values, c.source_problems({v.name: v.value for v in values}))

    def start(self, props: dict[str, str]) -> None:
        self._parsed = c.source_config(props)
        self._props = dict(props)
        self._stopping.clear()
        if self._parsed[c.QUERY]:
            return
        self._engine = _engine(self._parsed)
        try:
            self._tables = list_tables(self._engine, self._parsed)
        except sa.exc.SQLAlchemyError as e:
            raise ConnectException(f"Could not list the tables of {self._engine.url!r}: {e}") from e
        self._monitor = threading.Thread(target=self._watch_tables, name="jdbc-table-monitor", daemon=True)
        self._monitor.start()

    def _watch_tables(self) -> None:
        interval = self._parsed[c.TABLE_POLL_INTERVAL_MS] / 1000
        while not self._stopping.wait(interval):
            try:
                tables = list_tables(self._engine, self._parsed)  # type: ignore[arg-type]
            except Exception as e:  # noqa: BLE001 - the next round tries again
                log.warning("Could not list the tables: %s", e)
                continue
            if tables != self._tables:
                log.info("The tables to copy changed from %s to %s", self._tables, tables)
                self._tables = tables
                if self.context is not None:
                    self.context.request_task_reconfiguration()

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._parsed.get(c.QUERY):
            return [dict(self._props)]
        if not self._tables:
            log.warning("No tasks will be run because no tables were found")
            return []
        groups = _groups(self._tables, min(max_tasks, len(self._tables)))
        return [{**self._props, c.TASK_TABLES: ",".join(group)} for group in groups]

    def stop(self) -> None:
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join(5)
            self._monitor = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[Any, dict[str, Any] | None]) -> bool:
        """KIP-875: partitions must name a ``table`` or a ``query``; offsets are null or hold ``incrementing``
        (a Long), ``timestamp`` (a non-negative Long, epoch ms) and ``timestamp_nanos`` (0..999999999)."""
        for frozen, offset in offsets.items():
            partition = dict(frozen) if frozen is not None else None
            if partition is None:
                raise ConnectException("Partition objects cannot be null")
            if TABLE_KEY not in partition and QUERY_KEY not in partition:
                raise ConnectException(f"Partition objects should contain the key '{TABLE_KEY}' or '{QUERY_KEY}'")
            if offset is None:
                continue
            unknown = set(offset) - {INCREMENTING_FIELD, TIMESTAMP_FIELD, TIMESTAMP_NANOS_FIELD}
            if unknown or not offset:
                raise ConnectException(
                    f"Offset objects should either be null or contain the keys '{INCREMENTING_FIELD}', "
                    f"'{TIMESTAMP_FIELD}' and/or '{TIMESTAMP_NANOS_FIELD}'"
                    + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else ""))
            for key in offset:
                value = offset[key]
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ConnectException(f"The value for the '{key}' key in the offset is expected to be a Long value")
            if offset.get(TIMESTAMP_FIELD, 0) < 0:
                raise ConnectException(f"The value for the '{TIMESTAMP_FIELD}' key in the offset should be a "
                                       "non-negative value")
            if not 0 <= offset.get(TIMESTAMP_NANOS_FIELD, 0) <= 999_999_999:
                raise ConnectException(f"The value for the '{TIMESTAMP_NANOS_FIELD}' key in the offset should be "
                                       "between 0 and 999999999")
            if TIMESTAMP_NANOS_FIELD in offset and TIMESTAMP_FIELD not in offset:
                raise ConnectException(f"An offset with '{TIMESTAMP_NANOS_FIELD}' needs '{TIMESTAMP_FIELD}'")
        return True


# ---------------------------------------------------------------------------------------------- querier


class _Querier:
    """One table or query: builds the next query from its offset, streams its rows as records."""

    def __init__(self, task: JdbcSourceTask, fqn: str | None, offset: dict[str, Any] | None) -> None:
        p = task.parsed
        self.mode: str = p[c.MODE]
        self.engine = task.engine
        self.batch = p[c.BATCH_MAX_ROWS]
        self.delay = dt.timedelta(milliseconds=p[c.TIMESTAMP_DELAY_MS])
        self.zone = ZoneInfo(p[c.DB_TIMEZONE])
        self.query_text: str = p[c.QUERY]
        self.suffix: str = p[c.QUERY_SUFFIX] or ""
        self.next_time = 0.0
        self.result: sa.CursorResult | None = None
        self._held: Any = None
        self._values_of: Callable[[Sequence[Any]], list[Any]] | None = None  # compiled on the first row
        self._ts_at: list[int] = []  # where the timestamp columns are in a row (timestamp mode)
        self.uses_ts = self.mode in (c.MODE_TIMESTAMP, c.MODE_TIMESTAMP_INCREMENTING)
        self.uses_inc = self.mode in (c.MODE_INCREMENTING, c.MODE_TIMESTAMP_INCREMENTING)
        self.ts_names: list[str] = list(p[c.TIMESTAMP_COLUMN] or [])
        self.inc_name: str = p[c.INCREMENTING_COLUMN] or ""
        if fqn is None:
            self.partition: dict[str, Any] = {QUERY_KEY: QUERY_KEY}
            self.topic = p[c.TOPIC_PREFIX]
            self.table: sa.Table | None = None
            self.schema: Schema | None = None
            self.converters: list[Any] = []
            self.names: list[str] = []
            self.ts_tz = False
        else:
            self.partition = {PROTOCOL_KEY: "1", TABLE_KEY: fqn}
            schema_name, name = _split(fqn)
            self.topic = p[c.TOPIC_PREFIX] + name
            try:
                self.table = sa.Table(name, sa.MetaData(), schema=schema_name, autoload_with=self.engine)
            except sa.exc.NoSuchTableError:
                raise ConnectException(f"Table {fqn} does not exist") from None
            self._columns(p, name)
        # The offset: the last incrementing value and timestamp read (Confluent's defaults: -1 and epoch 0).
        offset = offset or {}
        self.inc: int = offset.get(INCREMENTING_FIELD, -1)
        if TIMESTAMP_FIELD in offset:
            self.ts = timestamp_of(offset[TIMESTAMP_FIELD], offset.get(TIMESTAMP_NANOS_FIELD))
        elif p[c.TIMESTAMP_INITIAL] is not None:
            initial = p[c.TIMESTAMP_INITIAL]
            self.ts = dt.datetime.now(UTC) if initial == -1 else timestamp_of(initial, None)
        else:
            self.ts = timestamp_of(0, 0)
        self.complete_offset = self._offset()

    def _columns(self, p: Mapping[str, Any], name: str) -> None:
        table = self.table
        assert table is not None
        numeric = p[c.NUMERIC_MAPPING] or "none"
        builder = SchemaBuilder.struct().name(name)
        self.names, self.converters = [], []
        for column in table.columns:
            mapped = column_schema(column, numeric, self.zone)
            if mapped is None:
                log.warning("Column %s of %s has type %s, which has no Connect mapping: left out",
                            column.name, name, column.type)
                continue
            builder.field(column.name, mapped[0])
            self.names.append(column.name)
            self.converters.append(mapped[1])
        self.schema = builder.build()
        if self.uses_inc and not self.inc_name:
            auto = table.autoincrement_column
            if auto is None:
                raise ConnectException(f"Cannot make incremental queries using incrementing column on table "
                                       f"{name}: no auto-incrementing column found; set incrementing.column.name")
            self.inc_name = auto.name
        for needed in ([self.inc_name] if self.uses_inc else []) + (self.ts_names if self.uses_ts else []):
            if needed not in table.c:
                raise ConnectException(f"Column {needed} not found in table {table.fullname}")
            if p[c.VALIDATE_NON_NULL] and table.c[needed].nullable and not table.c[needed].primary_key \
                    and not (needed in self.ts_names and len(self.ts_names) > 1):
                raise ConnectException(f"Cannot make incremental queries using column {needed} on {table.fullname} "
                                       "because this column is nullable.")
        self.ts_tz = bool(self.ts_names) and all(
            getattr(table.c[n].type, "timezone", False) for n in self.ts_names if n in table.c)

    # -- offsets
    def _offset(self) -> dict[str, Any] | None:
        if self.mode == c.MODE_BULK:
            return None
        offset: dict[str, Any] = {}
        if self.uses_inc:
            offset[INCREMENTING_FIELD] = self.inc
        if self.uses_ts:
            ms, nanos = timestamp_parts(self.ts)
            offset[TIMESTAMP_FIELD], offset[TIMESTAMP_NANOS_FIELD] = ms, nanos
        return offset

    def _bind_ts(self, value: dt.datetime) -> dt.datetime:
        return value if self.ts_tz else value.astimezone(self.zone).replace(tzinfo=None)

    # -- queries
    def _statement(self, conn: sa.Connection) -> Any:
        if self.table is not None:
            source: Any = self.table
            col = self.table.c.__getitem__
            stmt = sa.select(self.table)
        else:
            source = sa.text(f"({self.query_text}) AS connect_query")
            stmt = sa.select(sa.text("*")).select_from(source)

            def col(name: str) -> Any:
                return sa.column(name, sa.BigInteger if name == self.inc_name else sa.DateTime(timezone=self.ts_tz))
        if self.mode == c.MODE_BULK:
            return stmt if self.table is not None or self.suffix else sa.text(self.query_text)
        conditions, order = [], []
        if self.uses_ts:
            ts = col(self.ts_names[0]) if len(self.ts_names) == 1 else sa.func.coalesce(*map(col, self.ts_names))
            end = self._bind_ts(current_time(conn) - self.delay)
            last = self._bind_ts(self.ts)
            conditions.append(ts < sa.bindparam("end_ts", end, type_=sa.DateTime(timezone=self.ts_tz)))
            last_ts = sa.bindparam("last_ts", last, type_=sa.DateTime(timezone=self.ts_tz))
            if self.uses_inc:
                inc = col(self.inc_name)
                conditions.append(sa.or_(sa.and_(ts == last_ts, inc > sa.bindparam("last_inc", self.inc)),
                                         ts > last_ts))
                order += [ts, inc]
            else:
                conditions.append(ts > last_ts)
                order.append(ts)
        else:
            inc = col(self.inc_name)
            conditions.append(inc > sa.bindparam("last_inc", self.inc, type_=sa.BigInteger))
            order.append(inc)
        return stmt.where(*conditions).order_by(*order)

    def start(self, conn: sa.Connection) -> None:
        stmt = self._statement(conn)
        if self.suffix:
            compiled = stmt.compile(conn, compile_kwargs={"literal_binds": True}) \
                if not isinstance(stmt, sa.TextClause) else stmt
            stmt = sa.text(f"{compiled} {self.suffix}")
        self.result = conn.execution_options(stream_results=True, yield_per=self.batch).execute(stmt)
        self._held = None

    def read(self) -> tuple[list[SourceRecord], bool]:
        """The next records of the open query, and whether it is exhausted."""
        assert self.result is not None
        rows = list(self.result.fetchmany(self.batch))
        exhausted = len(rows) < self.batch
        if self._held is not None:
            rows.insert(0, self._held)
            self._held = None
        if self.mode == c.MODE_TIMESTAMP and not exhausted and rows:
            self._held = rows.pop()  # its tie may go on in the next rows
        if not rows:
            return [], exhausted
        if self.table is None and self.schema is None:
            self._infer_schema(rows[0])
        if self._values_of is None:
            self._compile(rows[0])
        return self._records(rows), exhausted

    def _compile(self, row: Any) -> None:
        """From the first row's columns: how to take a row's values, and where its timestamps are."""
        keys = list(row._mapping.keys())
        self._values_of = row_values([keys.index(name) for name in self.names], self.converters, len(keys))
        if self.mode == c.MODE_TIMESTAMP:  # (the query filters on every timestamp column: each is among them)
            self._ts_at = [keys.index(name) for name in self.ts_names]

    def _records(self, rows: list[Any]) -> list[SourceRecord]:
        """A record per row, each with the offset that resumes after it."""
        schema, partition, topic, of = self.schema, self.partition, self.topic, Struct.of
        values_of = self._values_of
        assert values_of is not None
        if self.mode == c.MODE_BULK:
            return [SourceRecord(partition, None, topic, None, None, None, schema, of(schema, values_of(row)))
                    for row in rows]
        inc_field = self._field(self.inc_name) if self.uses_inc else None
        if self.mode == c.MODE_INCREMENTING and inc_field.__class__ is Field:  # the common case, in one pass
            at = inc_field.index  # type: ignore[union-attr]
            records = [SourceRecord(partition, {INCREMENTING_FIELD: int(values[at])}, topic, None, None, None, schema,
                                    of(schema, values)) for values in map(values_of, rows)]
            self.inc = records[-1].source_offset[INCREMENTING_FIELD]  # type: ignore[index]
            return records
        records = []
        n = len(rows)
        ts_fields = [self._field(name) for name in self.ts_names] if self.uses_ts else []
        for i, row in enumerate(rows):
            struct = of(schema, values_of(row))
            if inc_field is not None:
                self.inc = int(struct.get(inc_field))
            if self.mode == c.MODE_INCREMENTING:
                offset: dict[str, Any] | None = {INCREMENTING_FIELD: self.inc}
            else:
                self.ts = self._row_ts(struct, ts_fields)
                offset = self._offset()
                if self.mode == c.MODE_TIMESTAMP:
                    following = rows[i + 1] if i + 1 < n else self._held
                    if following is not None and self._row_ts_raw(following) == self._row_ts_raw(row):
                        offset = self.complete_offset  # the tie goes on: resuming must re-read it
                    else:
                        self.complete_offset = offset
            records.append(SourceRecord(partition, offset, topic, None, None, None, schema, struct))
        return records

    def _field(self, name: str) -> Field | str:
        """The schema's field of a column, found once for the rows' ``Struct.get``; a name the schema lacks stays
        a name, for which ``Struct.get`` raises as it does for any unknown field."""
        assert self.schema is not None
        return self.schema.field(name) or name

    def _row_ts_raw(self, row: Any) -> Any:
        return next((value for j in self._ts_at if (value := row[j]) is not None), None)

    def _row_ts(self, struct: Struct, fields: list[Field | str]) -> dt.datetime:
        get = struct.get
        value = next((value for field in fields if (value := get(field)) is not None), None)
        if value is None:
            return self.ts
        return value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value)).replace(tzinfo=UTC)

    def _infer_schema(self, row: Any) -> None:
        """Query mode: the schema from the first row's values (the query's columns have no declared types)."""
        from connect_magics.connectors.jdbc.schema import _timestamp

        builder = SchemaBuilder.struct()
        self.names, self.converters = [], []
        for name, value in row._mapping.items():
            schema = value_schema_of(value)
            builder.field(name, schema)
            self.names.append(name)
            self.converters.append(_timestamp(self.zone) if isinstance(value, dt.datetime) else _identity)
        self.schema = builder.build()

    def close(self) -> None:
        if self.result is not None:
            try:
                self.result.close()
            except Exception:  # noqa: BLE001
                pass
            self.result = None


class JdbcSourceTask(SourceTask):
    """Polls its tables (``tables``) or the query; each at most every ``poll.interval.ms``, a query's rows
    streamed ``batch.max.rows`` at a time."""

    ALIASES: tuple[str, ...] = ("io.confluent.connect.jdbc.source.JdbcSourceTask",)

    IDLE_WAIT_S = 0.5

    def __init__(self) -> None:
        self.parsed: dict[str, Any] = {}
        self.engine: Engine | None = None
        self._conn: sa.Connection | None = None
        self._queriers: list[_Querier] = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self.parsed = c.source_config(props)
        self.engine = _engine(self.parsed)
        self._stopping.clear()
        if self.parsed[c.QUERY]:
            partitions = [{QUERY_KEY: QUERY_KEY}]
            tables: list[str | None] = [None]
        else:
            tables = [t for t in (props.get(c.TASK_TABLES) or "").split(",") if t]
            partitions = []
            for fqn in tables:
                partitions += [{PROTOCOL_KEY: "1", TABLE_KEY: fqn}, {TABLE_KEY: _split(fqn)[1]}]
        reader = self.context.offset_storage_reader() if getattr(self, "context", None) is not None else None
        stored = reader.offsets(partitions) if reader is not None else {}

        def offset_of(fqn: str | None) -> dict[str, Any] | None:
            candidates = [{QUERY_KEY: QUERY_KEY}] if fqn is None else [
                {PROTOCOL_KEY: "1", TABLE_KEY: fqn}, {TABLE_KEY: _split(fqn)[1]}]
            for partition in candidates:
                found = stored.get(tuple(sorted(partition.items())))
                if found:
                    return found
            return None
        self._queriers = [_Querier(self, fqn, offset_of(fqn)) for fqn in tables]

    def _connection(self) -> sa.Connection:
        if self._conn is None or self._conn.closed:
            assert self.engine is not None
            self._conn = self.engine.connect()
        return self._conn

    def poll(self) -> list[SourceRecord] | None:
        with self._lock:
            try:
                return self._poll()
            finally:
                if self._stopping.is_set():
                    self._close()

    def _poll(self) -> list[SourceRecord] | None:
        if not self._queriers:
            self._stopping.wait(self.IDLE_WAIT_S)
            return None
        interval = self.parsed[c.POLL_INTERVAL_MS] / 1000
        for _ in range(len(self._queriers)):
            if self._stopping.is_set():
                return None
            querier = min(self._queriers, key=lambda q: (q.result is None, q.next_time))
            try:
                if querier.result is None:
                    wait = querier.next_time - time.monotonic()
                    if wait > 0:
                        self._stopping.wait(min(wait, self.IDLE_WAIT_S))
                        return None
                    querier.start(self._connection())
                records, exhausted = querier.read()
            except sa.exc.DBAPIError as e:
                log.warning("Query of %s failed, retried after poll.interval.ms: %s", querier.partition, e)
                self._reset_connection()
                querier.next_time = time.monotonic() + interval
                return None
            if exhausted:
                querier.close()
                querier.next_time = time.monotonic() + interval
                self._end_transaction()
            if records:
                return records
        return None

    def _end_transaction(self) -> None:
        if self._conn is not None and all(q.result is None for q in self._queriers):
            try:
                self._conn.commit()
            except sa.exc.DBAPIError:
                self._reset_connection()

    def _reset_connection(self) -> None:
        for q in self._queriers:
            q.close()
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
            self._conn = None

    def stop(self) -> None:
        """Called from another thread than :meth:`poll`: closes now when no poll is running, else the poll
        closes as it returns."""
        self._stopping.set()
        if self._lock.acquire(blocking=False):
            try:
                self._close()
            finally:
                self._lock.release()

    def _close(self) -> None:
        self._reset_connection()
        if self.engine is not None:
            self.engine.dispose()
