"""The configuration of the JDBC source and sink: Confluent's names, defaults and documentation, and the
checks between settings (each error names its setting).

>>> source_config({"connection.url": "jdbc:sqlite::memory:", "mode": "incrementing",
...                "incrementing.column.name": "id", "topic.prefix": "db-"})["batch.max.rows"]
1000
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    ConfigDef,
    ConfigException,
    ConfigValue,
    Importance,
    Password,
    Range,
    Type,
    ValidString,
)

# -- shared
CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF_MS = "connection.backoff.ms"
DIALECT_NAME = "dialect.name"
DB_TIMEZONE = "db.timezone"

# -- source
MODE = "mode"
MODE_BULK, MODE_TIMESTAMP, MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING = (
    "bulk", "timestamp", "incrementing", "timestamp+incrementing")
INCREMENTING_COLUMN = "incrementing.column.name"
TIMESTAMP_COLUMN = "timestamp.column.name"
TIMESTAMP_INITIAL = "timestamp.initial"
TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
TABLE_TYPES = "table.types"
SCHEMA_PATTERN = "schema.pattern"
QUERY = "query"
QUERY_SUFFIX = "query.suffix"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
TOPIC_PREFIX = "topic.prefix"
TIMESTAMP_DELAY_MS = "timestamp.delay.interval.ms"
VALIDATE_NON_NULL = "validate.non.null"
NUMERIC_MAPPING = "numeric.mapping"
#: The tables of one task (Confluent's ``JdbcSourceTaskConfig.TABLES_CONFIG``).
TASK_TABLES = "tables"

# -- sink
INSERT_MODE = "insert.mode"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
FIELDS_WHITELIST = "fields.whitelist"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
DELETE_ENABLED = "delete.enabled"
BATCH_SIZE = "batch.size"
TABLE_NAME_FORMAT = "table.name.format"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"

SOURCE_MODES = ("", MODE_BULK, MODE_TIMESTAMP, MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING)


def _connection(cd: ConfigDef) -> ConfigDef:
    return (cd
            .define(CONNECTION_URL, Type.STRING, importance=Importance.HIGH, group="Database",
                    documentation="JDBC connection URL (jdbc:postgresql://host:port/db, jdbc:sqlite:path, ...) "
                                  "or a SQLAlchemy URL (postgresql+psycopg://..., sqlite:///...)")
            .define(CONNECTION_USER, Type.STRING, None, importance=Importance.HIGH, group="Database",
                    documentation="JDBC connection user.")
            .define(CONNECTION_PASSWORD, Type.PASSWORD, None, importance=Importance.HIGH, group="Database",
                    documentation="JDBC connection password.")
            .define(CONNECTION_ATTEMPTS, Type.INT, 3, Range.at_least(1), Importance.LOW,
                    "Maximum number of attempts to retrieve a valid JDBC connection.", group="Database")
            .define(CONNECTION_BACKOFF_MS, Type.LONG, 10000, None, Importance.LOW,
                    "Backoff time in milliseconds between connection attempts.", group="Database")
            .define(DIALECT_NAME, Type.STRING, "", None, Importance.LOW,
                    "Accepted for compatibility; the SQLAlchemy dialect follows from the URL.", group="Database")
            .define(DB_TIMEZONE, Type.STRING, "UTC", _time_zone, Importance.MEDIUM,
                    "Name of the time zone of timestamps without a time zone in the database.", group="Database"))


def _time_zone(name: str, value: Any) -> None:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(value)
    except Exception:  # noqa: BLE001
        raise ConfigException(name, value, "Invalid time zone identifier") from None


def source_config_def() -> ConfigDef:
    return (_connection(ConfigDef())
            .define(TABLE_WHITELIST, Type.LIST, "", None, Importance.MEDIUM,
                    "List of tables to include in copying. Use a comma-separated list to specify multiple "
                    "tables. If specified, table.blacklist may not be set.", group="Database")
            .define(TABLE_BLACKLIST, Type.LIST, "", None, Importance.MEDIUM,
                    "List of tables to exclude from copying. If specified, table.whitelist may not be set.",
                    group="Database")
            .define(SCHEMA_PATTERN, Type.STRING, None, None, Importance.MEDIUM,
                    "Schema to read tables from (null: the connection's default schema).", group="Database")
            .define(TABLE_TYPES, Type.LIST, "TABLE", None, Importance.LOW,
                    "By default, the JDBC connector will only detect tables with type TABLE from the source "
                    "Database. This config allows a command separated list of table types to extract "
                    "(TABLE, VIEW).", group="Database")
            .define(NUMERIC_MAPPING, Type.STRING, None, _numeric_mapping, Importance.LOW,
                    "Map NUMERIC values by precision and optionally scale to integral or decimal types "
                    "(none, best_fit).", group="Database")
            .define(MODE, Type.STRING, "", ValidString(SOURCE_MODES), Importance.HIGH,
                    "The mode for updating a table each time it is polled: bulk, timestamp, incrementing, "
                    "timestamp+incrementing.", group="Mode")
            .define(INCREMENTING_COLUMN, Type.STRING, "", None, Importance.MEDIUM,
                    "The name of the strictly incrementing column to use to detect new rows. An empty value "
                    "indicates the column should be autodetected by looking for an auto-incrementing column.",
                    group="Mode")
            .define(TIMESTAMP_COLUMN, Type.LIST, "", None, Importance.MEDIUM,
                    "Comma separated list of one or more timestamp columns to detect new or modified rows "
                    "using the COALESCE SQL function.", group="Mode")
            .define(TIMESTAMP_INITIAL, Type.LONG, None, None, Importance.LOW,
                    "The epoch timestamp used for initial queries that use timestamp criteria. Use -1 to use "
                    "the current time. If not specified, all data will be retrieved.", group="Mode")
            .define(VALIDATE_NON_NULL, Type.BOOLEAN, True, None, Importance.LOW,
                    "By default, the JDBC connector will validate that all incrementing and timestamp tables "
                    "have NOT NULL set for the columns being used as their ID/timestamp.", group="Mode")
            .define(QUERY, Type.STRING, "", None, Importance.MEDIUM,
                    "If specified, the query to perform to select new or updated rows.", group="Mode")
            .define(QUERY_SUFFIX, Type.STRING, "", None, Importance.LOW,
                    "Suffix to append at the end of the generated query.", group="Mode")
            .define(POLL_INTERVAL_MS, Type.INT, 5000, Range.at_least(0), Importance.HIGH,
                    "Frequency in ms to poll for new data in each table.", group="Connector")
            .define(BATCH_MAX_ROWS, Type.INT, 1000, Range.at_least(1), Importance.LOW,
                    "Maximum number of rows to include in a single batch when polling for new data.",
                    group="Connector")
            .define(TABLE_POLL_INTERVAL_MS, Type.LONG, 60000, Range.at_least(0), Importance.LOW,
                    "Frequency in ms to poll for new or removed tables.", group="Connector")
            .define(TOPIC_PREFIX, Type.STRING, importance=Importance.HIGH, group="Connector",
                    documentation="Prefix to prepend to table names to generate the name of the Kafka topic "
                                  "to publish data to, or in the case of a custom query, the full name of the "
                                  "topic to publish to.")
            .define(TIMESTAMP_DELAY_MS, Type.LONG, 0, Range.at_least(0), Importance.HIGH,
                    "How long to wait after a row with certain timestamp appears before we include it in the "
                    "result.", group="Connector"))


def _numeric_mapping(name: str, value: Any) -> None:
    if value not in (None, "none", "best_fit", "precision_only"):
        raise ConfigException(name, value, "String must be one of: none, best_fit, precision_only")


def source_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """The checks between settings: ``(key, value, reason)`` for each problem."""
    problems: list[tuple[str, Any, str]] = []
    mode = parsed.get(MODE)
    if mode == "":
        problems.append((MODE, mode, "Missing required configuration \"mode\": one of bulk, timestamp, "
                                     "incrementing, timestamp+incrementing"))
    if parsed.get(TABLE_WHITELIST) and parsed.get(TABLE_BLACKLIST):
        problems.append((TABLE_BLACKLIST, ",".join(parsed[TABLE_BLACKLIST]),
                         "table.whitelist and table.blacklist are exclusive."))
    query = parsed.get(QUERY) or ""
    if query and (parsed.get(TABLE_WHITELIST) or parsed.get(TABLE_BLACKLIST)):
        problems.append((QUERY, query, "Do not specify table filtering configs with 'query'. Remove "
                                       "table.whitelist / table.blacklist when using query mode or 'query' "
                                       "when using table filtering mode."))
    if mode in (MODE_TIMESTAMP, MODE_TIMESTAMP_INCREMENTING) and not parsed.get(TIMESTAMP_COLUMN):
        problems.append((TIMESTAMP_COLUMN, "", f"'{TIMESTAMP_COLUMN}' must be provided when using mode '{mode}'"))
    if query and mode in (MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING) and not parsed.get(INCREMENTING_COLUMN):
        problems.append((INCREMENTING_COLUMN, "",
                         f"'{INCREMENTING_COLUMN}' must be provided when using mode '{MODE_INCREMENTING}' or "
                         f"'{MODE_TIMESTAMP_INCREMENTING}' with a custom query."))
    url = parsed.get(CONNECTION_URL)
    if url is not None:
        from connect_magics.connectors.jdbc.dialect import sqlalchemy_url

        try:
            sqlalchemy_url(url, None, None)
        except ConfigException as e:
            problems.append((CONNECTION_URL, url, e.reason or str(e)))
    return problems


def sink_config_def() -> ConfigDef:
    return (_connection(ConfigDef())
            .define(INSERT_MODE, Type.STRING, "insert", ValidString(("insert", "upsert", "update")),
                    Importance.HIGH, "The insertion mode to use: insert, upsert or update.", group="Writes")
            .define(BATCH_SIZE, Type.INT, 3000, Range.at_least(0), Importance.MEDIUM,
                    "Specifies how many records to attempt to batch together for insertion into the "
                    "destination table, when possible.", group="Writes")
            .define(DELETE_ENABLED, Type.BOOLEAN, False, None, Importance.MEDIUM,
                    "Whether to treat null record values as deletes. Requires pk.mode to be record_key.",
                    group="Writes")
            .define(TABLE_NAME_FORMAT, Type.STRING, "${topic}", None, Importance.MEDIUM,
                    "A format string for the destination table name, which may contain '${topic}' as a "
                    "placeholder for the originating topic name.", group="Data Mapping")
            .define(PK_MODE, Type.STRING, "none", ValidString(("none", "kafka", "record_key", "record_value")),
                    Importance.HIGH, "The primary key mode: none, kafka, record_key, record_value.",
                    group="Data Mapping")
            .define(PK_FIELDS, Type.LIST, "", None, Importance.MEDIUM,
                    "List of comma-separated primary key field names. The runtime interpretation of this "
                    "config depends on the pk.mode.", group="Data Mapping")
            .define(FIELDS_WHITELIST, Type.LIST, "", None, Importance.MEDIUM,
                    "List of comma-separated record value field names. If empty, all fields from the record "
                    "value are utilized, otherwise used to filter to the desired fields.", group="Data Mapping")
            .define(AUTO_CREATE, Type.BOOLEAN, False, None, Importance.MEDIUM,
                    "Whether to automatically create the destination table based on record schema if it is "
                    "found to be missing by issuing CREATE.", group="DDL Support")
            .define(AUTO_EVOLVE, Type.BOOLEAN, False, None, Importance.MEDIUM,
                    "Whether to automatically add columns in the table schema when found to be missing "
                    "relative to the record schema by issuing ALTER.", group="DDL Support")
            .define(MAX_RETRIES, Type.INT, 10, Range.at_least(0), Importance.MEDIUM,
                    "The maximum number of times to retry on errors before failing the task.", group="Retries")
            .define(RETRY_BACKOFF_MS, Type.INT, 3000, Range.at_least(0), Importance.MEDIUM,
                    "The time in milliseconds to wait following an error before a retry attempt is made.",
                    group="Retries"))


def sink_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    problems: list[tuple[str, Any, str]] = []
    pk_mode, pk_fields = parsed.get(PK_MODE), parsed.get(PK_FIELDS) or []
    if parsed.get(DELETE_ENABLED) and pk_mode != "record_key":
        problems.append((DELETE_ENABLED, True, "Primary key mode must be 'record_key' when delete support is "
                                               "enabled"))
    if parsed.get(INSERT_MODE) in ("upsert", "update") and pk_mode == "none":
        problems.append((PK_MODE, pk_mode, f"insert.mode={parsed.get(INSERT_MODE)} needs the primary key: "
                                           "set pk.mode to kafka, record_key or record_value"))
    if pk_mode == "kafka" and pk_fields and len(pk_fields) != 3:
        problems.append((PK_FIELDS, ",".join(pk_fields), "PK mode for table is KAFKA so there should be exactly "
                                                         "3 fields (topic, partition, offset)"))
    if "${topic}" not in (parsed.get(TABLE_NAME_FORMAT) or "${topic}") and not parsed.get(TABLE_NAME_FORMAT):
        problems.append((TABLE_NAME_FORMAT, "", "String must be non-empty"))
    url = parsed.get(CONNECTION_URL)
    if url is not None:
        from connect_magics.connectors.jdbc.dialect import sqlalchemy_url

        try:
            sqlalchemy_url(url, None, None)
        except ConfigException as e:
            problems.append((CONNECTION_URL, url, e.reason or str(e)))
    return problems


def _parse(cd: ConfigDef, problems: Any, props: Mapping[str, Any]) -> dict[str, Any]:
    parsed = cd.parse(props)
    for key, value, reason in problems(parsed):
        raise ConfigException(key, value, reason)
    return parsed


def source_config(props: Mapping[str, Any]) -> dict[str, Any]:
    """The parsed source settings; the first problem raises a :class:`ConfigException` naming its key."""
    return _parse(source_config_def(), source_problems, props)


def sink_config(props: Mapping[str, Any]) -> dict[str, Any]:
    return _parse(sink_config_def(), sink_problems, props)


def with_problems(values: list[ConfigValue], problems: list[tuple[str, Any, str]]) -> list[ConfigValue]:
    """Add each problem to its key's ConfigValue (unless the key already has an error)."""
    by_name = {v.name: v for v in values}
    for key, value, reason in problems:
        if key in by_name and not by_name[key].errors:
            by_name[key].add_error_message(str(ConfigException(key, value, reason)))
    return values


def password(value: Any) -> str | None:
    if value is None:
        return None
    return value.value if isinstance(value, Password) else str(value)
