"""Confluent's JDBC sink on SQLAlchemy: records of topics into tables, one row per record.

* ``insert.mode``: ``insert`` (INSERT), ``upsert`` (INSERT ... ON CONFLICT DO UPDATE on PostgreSQL and
  SQLite, ON DUPLICATE KEY UPDATE on MySQL: a redelivered record rewrites its row, so redelivery after a
  crash is idempotent), ``update`` (UPDATE ... WHERE key).
* ``pk.mode``: ``none``; ``kafka`` (columns ``__connect_topic``, ``__connect_partition``,
  ``__connect_offset``, or the three names of ``pk.fields``); ``record_key`` (a primitive key: the one
  column named in ``pk.fields``, ``__connect_key`` by default; a struct key: its fields, or those of
  ``pk.fields``); ``record_value`` (the value's fields of ``pk.fields``, all of them by default).
* ``auto.create`` creates a missing table from the record's schema (the primary key from ``pk.mode``);
  ``auto.evolve`` adds columns for new optional fields (or fields with a default).
* ``delete.enabled`` (with ``pk.mode=record_key``): a tombstone deletes the row of its key.
* ``table.name.format``: the table of a topic, ``${topic}`` replaced (``schema.table`` is accepted).

Values are Connect structs (a schema'd converter such as JsonConverter with schemas, Avro, Protobuf) or,
beyond Confluent's sink, schemaless maps (JSON without schemas), whose columns ``auto.create`` types from
the first record's values.

Each ``put`` is written in one transaction, ``batch.size`` rows per statement; database errors are retried
``max.retries`` times ``retry.backoff.ms`` apart (a :class:`RetriableException`), then fail the task.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from connect_magics.api.config import ConfigDef, ConfigValue
from connect_magics.api.connector import SinkConnector, SinkTask, Task
from connect_magics.api.data import Schema, SchemaType, Struct
from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.api.records import SinkRecord, SinkRecords, TopicPartition
from connect_magics.connectors.jdbc import config as c
from connect_magics.connectors.jdbc.dialect import create_engine, sqlalchemy_url, upsert_statement
from connect_magics.connectors.jdbc.schema import sink_value, sql_type, value_schema_of

__all__ = ["JdbcSinkConnector", "JdbcSinkTask"]

log = logging.getLogger(__name__)

KAFKA_PK_DEFAULT = ["__connect_topic", "__connect_partition", "__connect_offset"]
KEY_PK_DEFAULT = "__connect_key"


def _plugin_version() -> str:
    from connect_magics.connectors import version

    return version()


class JdbcSinkConnector(SinkConnector):
    """Writes records to tables (see the module documentation); every task gets the same settings."""

    ALIASES: tuple[str, ...] = ("io.confluent.connect.jdbc.JdbcSinkConnector",)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return c.sink_config_def()

    def validate(self, connector_configs: dict[str, str]) -> list[ConfigValue]:
        values = super().validate(connector_configs)
        return c.with_problems(values, c.sink_problems({v.name: v.value for v in values}))

    def start(self, props: dict[str, str]) -> None:
        c.sink_config(props)
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        return True  # the consumer group's offsets are all there is


class _Fields:
    """The columns of one batch of one table: key columns and value columns with their schemas."""

    def __init__(self, keys: dict[str, Schema], values: dict[str, Schema]) -> None:
        self.keys, self.values = keys, values

    @property
    def all(self) -> dict[str, Schema]:
        return {**self.keys, **{k: v for k, v in self.values.items() if k not in self.keys}}


class JdbcSinkTask(SinkTask):
    ALIASES: tuple[str, ...] = ("io.confluent.connect.jdbc.sink.JdbcSinkTask",)

    def __init__(self) -> None:
        self.parsed: dict[str, Any] = {}
        self.engine: Engine | None = None
        self._tables: dict[str, sa.Table] = {}
        self._retries_left = 0
        self._stages = 0

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        self.parsed = p = c.sink_config(props)
        self.engine = create_engine(sqlalchemy_url(p[c.CONNECTION_URL], p[c.CONNECTION_USER],
                                                   c.password(p[c.CONNECTION_PASSWORD])))
        self._retries_left = p[c.MAX_RETRIES]
        self._tables = {}

    def stop(self) -> None:
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None

    # -- put
    def put(self, records: SinkRecords) -> None:
        if not len(records):
            return
        by_table: dict[str, list[SinkRecord]] = {}
        for record in records:
            by_table.setdefault(self._table_name(record.topic), []).append(record)
        assert self.engine is not None
        try:
            with self.engine.begin() as conn:
                for name, batch in by_table.items():
                    self._write(conn, name, batch)
        except sa.exc.DBAPIError as e:
            self._tables.clear()  # the table may have changed under us; reflect again
            if self._retries_left <= 0 or not _retriable(e):
                raise ConnectException(f"Writing {len(records)} records failed: {e}") from e
            self._retries_left -= 1
            log.warning("Writing %s records failed, %s retries left: %s", len(records), self._retries_left, e)
            context = getattr(self, "context", None)
            if context is not None:
                context.timeout(self.parsed[c.RETRY_BACKOFF_MS])
            raise RetriableException(str(e)) from e
        self._retries_left = self.parsed[c.MAX_RETRIES]

    def _table_name(self, topic: str) -> str:
        return self.parsed[c.TABLE_NAME_FORMAT].replace("${topic}", topic)

    def _write(self, conn: sa.Connection, name: str, records: list[SinkRecord]) -> None:
        """Runs of records of one shape (upserts/inserts of one value schema, or deletes), in record order."""
        run: list[SinkRecord] = []
        shape: Any = None
        for record in records:
            is_delete = record.value is None
            if is_delete and not self.parsed[c.DELETE_ENABLED]:
                raise ConnectException(f"Sink connector's record with a null value (topic {record.topic}, partition "
                                       f"{record.kafka_partition}, offset {record.kafka_offset}) needs "
                                       "delete.enabled=true")
            value = record.value
            this = ("delete", _key_shape(record)) if is_delete else (
                value.schema if isinstance(value, Struct) else tuple(value) if isinstance(value, Mapping) else None,
                _key_shape(record))
            if run and not _same(this, shape):
                self._write_run(conn, name, run, shape[0] == "delete")
                run = []
            shape = this
            run.append(record)
        if run:
            self._write_run(conn, name, run, shape[0] == "delete")

    def _write_run(self, conn: sa.Connection, name: str, records: list[SinkRecord], deleting: bool) -> None:
        fields = self._fields(records[0], deleting)
        table = self._table(conn, name, fields, records[0])
        rows = self._rows(records, fields, deleting)
        keys = list(fields.keys)
        mode = self.parsed[c.INSERT_MODE]
        if keys and (deleting or mode != "insert"):  # the last write of a key wins: one row per key per statement
            unique: dict[tuple, dict[str, Any]] = {}
            for row in rows:
                unique.pop(tuple(row[k] for k in keys), None)
                unique[tuple(row[k] for k in keys)] = row
            rows = list(unique.values())
        for column in rows[0] if rows else ():
            if column not in table.c:
                raise ConnectException(f"Table {name} has no column {column}; set auto.evolve=true to add it")
        if rows:
            converters = {k: _column_converter(table.c[k].type, isinstance(records[0].value, Struct))
                          for k in rows[0]}
            converting = {k: f for k, f in converters.items() if f is not None}
            if converting:
                for row in rows:
                    for k, f in converting.items():
                        row[k] = f(row[k])
        if not deleting and mode in ("insert", "upsert") and rows and _copies(conn):
            self._copy(conn, table, keys, rows, upsert=mode == "upsert")
            return
        if deleting:
            stmt = table.delete().where(*(table.c[k] == sa.bindparam(f"k_{k}") for k in keys))
            params = [{f"k_{k}": row[k] for k in keys} for row in rows]
        elif mode == "upsert":
            stmt = upsert_statement(conn.dialect.name, table, keys, list(rows[0]))
            params = rows
        elif mode == "update":
            others = [k for k in rows[0] if k not in keys]
            stmt = table.update().where(*(table.c[k] == sa.bindparam(f"k_{k}") for k in keys)).values(
                {k: sa.bindparam(f"v_{k}") for k in others})
            params = [{**{f"k_{k}": row[k] for k in keys}, **{f"v_{k}": row[k] for k in others}} for row in rows]
        else:
            stmt = table.insert()
            params = rows
        size = self.parsed[c.BATCH_SIZE] or len(params)
        for start in range(0, len(params), size):
            conn.execute(stmt, params[start:start + size])

    def _copy(self, conn: sa.Connection, table: sa.Table, keys: list[str], rows: list[dict[str, Any]],
              upsert: bool) -> None:
        """PostgreSQL through psycopg: ``COPY`` into the table (insert), or into a temporary table dropped at
        commit and then ``INSERT ... SELECT ... ON CONFLICT DO UPDATE`` (upsert): several times faster than
        ``executemany``, in the same transaction."""
        preparer = conn.dialect.identifier_preparer
        columns = list(rows[0])
        names = ", ".join(preparer.quote(col) for col in columns)
        target = preparer.format_table(table)
        self._stages += 1
        stage = preparer.quote(f"connect_stage_{self._stages}")
        raw = conn.connection.driver_connection
        if upsert:
            conn.exec_driver_sql(f"CREATE TEMPORARY TABLE {stage} ON COMMIT DROP AS "
                                 f"SELECT {names} FROM {target} WITH NO DATA")
        with raw.cursor() as cursor, cursor.copy(f"COPY {stage if upsert else target} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[col] for col in columns])
        if upsert:
            updates = [col for col in columns if col not in keys]
            conflict = ", ".join(preparer.quote(k) for k in keys)
            action = ("DO UPDATE SET " + ", ".join(f"{preparer.quote(col)} = EXCLUDED.{preparer.quote(col)}"
                                                   for col in updates)) if updates else "DO NOTHING"
            conn.exec_driver_sql(f"INSERT INTO {target} ({names}) SELECT {names} FROM {stage} "
                                 f"ON CONFLICT ({conflict}) {action}")
            conn.exec_driver_sql(f"DROP TABLE {stage}")

    # -- fields and rows
    def _fields(self, record: SinkRecord, deleting: bool) -> _Fields:
        p = self.parsed
        mode, pk_fields = p[c.PK_MODE], list(p[c.PK_FIELDS] or [])
        keys: dict[str, Schema] = {}
        if mode == "kafka":
            names = pk_fields or KAFKA_PK_DEFAULT
            keys = {names[0]: sa_schema(SchemaType.STRING), names[1]: sa_schema(SchemaType.INT32),
                    names[2]: sa_schema(SchemaType.INT64)}
        elif mode == "record_key":
            if record.key is None:
                raise ConnectException(f"Sink connector's record with a null key (topic {record.topic}, offset "
                                       f"{record.kafka_offset}) cannot be written with pk.mode=record_key")
            key_fields = _struct_fields(record.key, record.key_schema)
            if key_fields is None:  # a primitive key
                if len(pk_fields) > 1:
                    raise ConnectException("Need exactly one PK column defined since the key schema for records "
                                           f"is a primitive type, defined columns are: {pk_fields}")
                name = pk_fields[0] if pk_fields else KEY_PK_DEFAULT
                schema = record.key_schema if isinstance(record.key_schema, Schema) else value_schema_of(record.key)
                keys = {name: schema}
            else:
                for name in pk_fields:
                    if name not in key_fields:
                        raise ConnectException(f"PK mode for table is RECORD_KEY with configured PK fields "
                                               f"{pk_fields}, but record key schema does not contain field: {name}")
                keys = {n: s for n, s in key_fields.items() if not pk_fields or n in pk_fields}
        values: dict[str, Schema] = {}
        if not deleting:
            value_fields = _struct_fields(record.value, record.value_schema)
            if value_fields is None:
                raise ConnectException(f"Sink connector's record value (topic {record.topic}, offset "
                                       f"{record.kafka_offset}) is not a struct or a map: a schema'd converter "
                                       "(or JSON without schemas giving objects) is needed")
            whitelist = set(p[c.FIELDS_WHITELIST] or ())
            values = {n: s for n, s in value_fields.items() if not whitelist or n in whitelist}
            if mode == "record_value":
                for name in pk_fields:
                    if name not in value_fields:
                        raise ConnectException(f"PK mode for table is RECORD_VALUE with configured PK fields "
                                               f"{pk_fields}, but record value schema does not contain field: "
                                               f"{name}")
                keys = {n: value_fields[n] for n in (pk_fields or list(value_fields))}
        return _Fields(keys, values)

    def _rows(self, records: list[SinkRecord], fields: _Fields, deleting: bool) -> list[dict[str, Any]]:
        """The rows of a run of records of one shape: key columns, then value columns."""
        mode = self.parsed[c.PK_MODE]
        first = records[0]
        key_names = list(fields.keys)
        value_names = [] if deleting else [n for n in fields.values if n not in fields.keys or mode == "record_value"]
        if isinstance(first.value, Struct):
            value_fields = [first.value.schema.field(n) for n in value_names]
        else:
            value_fields = value_names
        rows = []
        for record in records:
            row: dict[str, Any] = {}
            if mode == "kafka":
                row = dict(zip(key_names, (record.topic, record.kafka_partition, record.kafka_offset), strict=True))
            elif mode == "record_key":
                key = record.key
                if isinstance(key, (Struct, Mapping)):
                    row = {n: _get(key, n) for n in key_names}
                else:
                    row = {key_names[0]: key}
            value = record.value
            if value is not None:
                get = value.get
                for name, field in zip(value_names, value_fields, strict=True):
                    row[name] = get(field)
            rows.append(row)
        return rows

    # -- tables
    def _table(self, conn: sa.Connection, name: str, fields: _Fields, record: SinkRecord) -> sa.Table:
        table = self._tables.get(name)
        schema_name, _, table_name = name.rpartition(".")
        if table is None:
            table = self._reflect(conn, schema_name or None, table_name)
            if table is None:
                if not self.parsed[c.AUTO_CREATE]:
                    raise ConnectException(f"Table \"{name}\" is missing and auto-creation is disabled")
                table = self._create(conn, schema_name or None, table_name, fields)
            self._tables[name] = table
        missing = [n for n in fields.all if n not in table.c]
        if missing:
            if not self.parsed[c.AUTO_EVOLVE]:
                raise ConnectException(f"Table \"{name}\" is missing fields ({', '.join(missing)}) and "
                                       "auto-evolution is disabled")
            for column in missing:
                schema = fields.all[column]
                if not schema.optional and schema.default_value is None:
                    raise ConnectException(f"Cannot ALTER TABLE \"{name}\" to add missing field {column}, as the "
                                           "field is not optional and does not have a default value")
                compiled = sql_type(schema).compile(dialect=conn.dialect)
                preparer = conn.dialect.identifier_preparer
                target = preparer.format_table(table)
                default = f" DEFAULT {_literal(schema.default_value)}" if schema.default_value is not None else ""
                conn.execute(sa.text(f"ALTER TABLE {target} ADD COLUMN {preparer.quote(column)} {compiled}{default}"))
            table = self._reflect(conn, schema_name or None, table_name)
            assert table is not None
            self._tables[name] = table
        return table

    def _reflect(self, conn: sa.Connection, schema: str | None, name: str) -> sa.Table | None:
        if not sa.inspect(conn).has_table(name, schema=schema):
            return None
        return sa.Table(name, sa.MetaData(), schema=schema, autoload_with=conn)

    def _create(self, conn: sa.Connection, schema: str | None, name: str, fields: _Fields) -> sa.Table:
        columns = []
        for column, field_schema in fields.all.items():
            is_key = column in fields.keys
            columns.append(sa.Column(column, sql_type(field_schema), primary_key=is_key, autoincrement=False,
                                     nullable=not is_key and field_schema.optional,
                                     server_default=None if field_schema.default_value is None
                                     else sa.text(_literal(field_schema.default_value))))
        table = sa.Table(name, sa.MetaData(), *columns, schema=schema)
        table.create(conn, checkfirst=True)
        log.info("Created table %s with columns %s", name, list(fields.all))
        reflected = self._reflect(conn, schema, name)
        return table if reflected is None else reflected


def _copies(conn: sa.Connection) -> bool:
    """Whether the connection is PostgreSQL through psycopg 3 (whose ``COPY`` the sink uses)."""
    return conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg"


def _key_shape(record: SinkRecord) -> Any:
    key = record.key
    return key.schema if isinstance(key, Struct) else tuple(key) if isinstance(key, Mapping) else type(key)


def _same(a: tuple[Any, Any], b: tuple[Any, Any] | None) -> bool:
    """Whether two (value, key) shapes are equal; a run's records mostly share the very same schemas."""
    if b is None:
        return False
    (value, key), (other_value, other_key) = a, b
    return (value is other_value or value == other_value) and (key is other_key or key == other_key)


def _column_converter(column_type: Any, structs: bool) -> Any:
    """What a column's values need before the driver takes them, or None: timestamps to the column's time
    zone convention; for schemaless values, maps and lists to JSON text."""
    if isinstance(column_type, sa.DateTime):
        return lambda v: sink_value(v, column_type)
    if not structs:
        return lambda v: sink_value(v, column_type)
    return None


def sa_schema(type_: SchemaType) -> Schema:
    return Schema(type_, optional=False)


def _struct_fields(value: Any, schema: Any) -> dict[str, Schema] | None:
    if isinstance(value, Struct):
        return {f.name: f.schema for f in value.schema.fields}
    if isinstance(schema, Schema) and schema.type is SchemaType.STRUCT:
        return {f.name: f.schema for f in schema.fields}
    if isinstance(value, Mapping):
        return {str(k): value_schema_of(v) for k, v in value.items()}
    return None


def _get(container: Any, name: str) -> Any:
    if isinstance(container, Struct):
        return container.get(name)
    if isinstance(container, Mapping):
        return container.get(name)
    return None


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _retriable(error: sa.exc.DBAPIError) -> bool:
    """Connection losses, lock timeouts, serialization failures: worth another try; not bad SQL or data."""
    return isinstance(error, (sa.exc.OperationalError, sa.exc.InternalError)) or error.connection_invalidated
