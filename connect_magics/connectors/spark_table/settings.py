"""Settings of the Spark table connectors: where the table is, its format, and what goes into it.

Both connectors name their table by ``path`` (a directory or an object store URI: ``s3://``, ``gs://``,
``abfss://``) or by ``table`` (a Spark table name, stored under ``warehouse.dir`` as Spark's default
warehouse lays it out: ``<warehouse>/<name>``, or ``<warehouse>/<db>.db/<name>``). The connector resolves
the location once, on the kernel, and hands its absolute path or URI to the tasks, which may run elsewhere
(a Spark executor has another working directory). S3 settings (``store.url``, ``aws.access.key.id``,
``aws.secret.access.key``, ``s3.region``) have the names of Confluent's S3 sink.

Example::

    >>> table_location({"table": "sales.orders", "warehouse.dir": "/data/wh"})
    '/data/wh/sales.db/orders'
    >>> table_location({"table": "orders", "warehouse.dir": "s3://lake/wh/"})
    's3://lake/wh/orders'
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigException, ConfigValue, Importance, Password, Type
from connect_magics.connectors.file import _at_least, _non_empty, _one_of
from connect_magics.connectors.spark_table.store import (
    OBJECT_STORE_SCHEMES,
    TableStore,
    is_object_store_uri,
    s3_options,
)

__all__ = [
    "FORMATS", "PATH_CONFIG", "TABLE_CONFIG", "WAREHOUSE_CONFIG", "FORMAT_CONFIG", "COORDINATE_COLUMNS",
    "location_problems", "sink_config_def", "sink_problems", "source_config_def", "source_problems",
    "table_location", "table_store", "add_problems", "parse_checked",
]

PATH_CONFIG = "path"
TABLE_CONFIG = "table"
WAREHOUSE_CONFIG = "warehouse.dir"
FORMAT_CONFIG = "format"
FORMATS = ("parquet", "delta")
DEFAULT_WAREHOUSE = "spark-warehouse"
STORE_URL_CONFIG = "store.url"
ACCESS_KEY_ID_CONFIG = "aws.access.key.id"
SECRET_ACCESS_KEY_CONFIG = "aws.secret.access.key"
REGION_CONFIG = "s3.region"

COORDINATES_CONFIG = "kafka.coordinates"
KEY_COLUMN_CONFIG = "key.column"
HEADERS_COLUMN_CONFIG = "headers.column"
FLUSH_SIZE_CONFIG = "flush.size"
FLUSH_IDLE_CONFIG = "flush.idle.ms"
NULL_VALUES_CONFIG = "behavior.on.null.values"
COORDINATE_COLUMNS = ("kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp")

TOPIC_CONFIG = "topic"
MODE_CONFIG = "mode"
MODES = ("files", "incrementing")
INCREMENTING_COLUMN_CONFIG = "incrementing.column"
BATCH_SIZE_CONFIG = "batch.size"
POLL_INTERVAL_CONFIG = "poll.interval.ms"

_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


def _location_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(PATH_CONFIG, Type.STRING, None, _non_empty, Importance.HIGH,
                "Where the table is: a directory (local or mounted on every machine running tasks, such as a "
                "Unity Catalog volume '/Volumes/...') or an object store URI (s3://, s3a://, gs://, abfss://). "
                "Set this or 'table'")
        .define(TABLE_CONFIG, Type.STRING, None, _non_empty, Importance.HIGH,
                "A Spark table name, 'name' or 'db.name', stored under 'warehouse.dir' as Spark lays out its "
                "default warehouse ('<warehouse>/<name>', '<warehouse>/<db>.db/<name>'). Set this or 'path'")
        .define(WAREHOUSE_CONFIG, Type.STRING, DEFAULT_WAREHOUSE, _non_empty, Importance.LOW,
                "The warehouse directory (or object store URI) 'table' names resolve under; relative paths are "
                "relative to the kernel's working directory, as Spark's default 'spark-warehouse'")
        .define(FORMAT_CONFIG, Type.STRING, "parquet", _one_of(*FORMATS), Importance.HIGH,
                "The table format: 'parquet' (a directory of Parquet files) or 'delta' (a Delta Lake table)")
        .define(STORE_URL_CONFIG, Type.STRING, "", None, Importance.MEDIUM,
                "For an s3:// table: the endpoint of an S3-compatible store (http://host:port); empty: AWS S3")
        .define(ACCESS_KEY_ID_CONFIG, Type.STRING, "", None, Importance.MEDIUM,
                "For an s3:// table: the AWS access key ID; empty: the environment's credentials (variables, "
                "profile, instance role)")
        .define(SECRET_ACCESS_KEY_CONFIG, Type.PASSWORD, None, None, Importance.MEDIUM,
                "For an s3:// table: the secret access key of 'aws.access.key.id' (a config provider reference "
                "such as ${file:/secrets/aws.properties:secret} keeps it out of the connector's config)")
        .define(REGION_CONFIG, Type.STRING, "", None, Importance.LOW,
                "For an s3:// table: the AWS region of its bucket; empty: the environment's")
    )


def sink_config_def() -> ConfigDef:
    """The settings of ``SparkTableSink``."""
    return (
        _location_def()
        .define(COORDINATES_CONFIG, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Add the Kafka coordinates of every record as columns: " + ", ".join(COORDINATE_COLUMNS))
        .define(KEY_COLUMN_CONFIG, Type.STRING, "", None, Importance.MEDIUM,
                "The column to write the record key into; empty: the key is not written")
        .define(HEADERS_COLUMN_CONFIG, Type.STRING, "", None, Importance.LOW,
                "The column to write the record headers into, as a map of strings to strings (the last "
                "value of a repeated header wins); empty: headers are not written")
        .define(FLUSH_SIZE_CONFIG, Type.INT, 100_000, _at_least(1), Importance.MEDIUM,
                "How many records of one topic partition are buffered before they are written, even before "
                "the next offset commit (which writes every buffered record)")
        .define(FLUSH_IDLE_CONFIG, Type.LONG, 1000, _at_least(-1), Importance.MEDIUM,
                "How long (ms) a topic partition may receive no new record before its buffered records are "
                "written, even before the next offset commit: the table catches up as soon as the topic is "
                "quiet. -1: only 'flush.size' and offset commits write (fewer, larger files when records "
                "trickle in)")
        .define(NULL_VALUES_CONFIG, Type.STRING, "ignore", _one_of("ignore", "fail"), Importance.LOW,
                "What to do with records whose value is null (tombstones): 'ignore' them or 'fail' the task")
    )


def source_config_def() -> ConfigDef:
    """The settings of ``SparkTableSource``."""
    return (
        _location_def()
        .define(TOPIC_CONFIG, Type.STRING, validator=_non_empty, importance=Importance.HIGH,
                documentation="The topic to write the rows to")
        .define(MODE_CONFIG, Type.STRING, "files", _one_of(*MODES), Importance.HIGH,
                "How new rows are found: 'files' (every row of each new data file, in the order files "
                "appear) or 'incrementing' (rows whose 'incrementing.column' is above the last one read)")
        .define(INCREMENTING_COLUMN_CONFIG, Type.STRING, "", None, Importance.MEDIUM,
                "With mode=incrementing: a column whose values only grow (an integer, string, date or "
                "timestamp column)")
        .define(BATCH_SIZE_CONFIG, Type.INT, 1000, _at_least(1), Importance.LOW,
                "The most rows one poll returns (in incrementing mode, rows with the last value of the "
                "column all go in the same poll)")
        .define(POLL_INTERVAL_CONFIG, Type.LONG, 1000, _at_least(1), Importance.LOW,
                "How long to wait before looking for new data again when everything was read, in ms")
    )


def location_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """``(key, value, reason)`` for a table location Kafka's per-key checks cannot see."""
    path, table = parsed.get(PATH_CONFIG), parsed.get(TABLE_CONFIG)
    if path and table:
        return [(TABLE_CONFIG, table, f"Set either '{PATH_CONFIG}' or '{TABLE_CONFIG}', not both")]
    if not path and not table:
        return [(PATH_CONFIG, path, f"Set '{PATH_CONFIG}' (a directory) or '{TABLE_CONFIG}' (a table name)")]
    if table and not _TABLE_NAME.fullmatch(table):
        return [(TABLE_CONFIG, table, "A table name is 'name' or 'db.name' (letters, digits and '_', not "
                                      "starting with a digit)")]
    for key, where in ((PATH_CONFIG, path), (WAREHOUSE_CONFIG, None if path else parsed.get(WAREHOUSE_CONFIG))):
        if where and "://" in where and not where.startswith("file://") and not is_object_store_uri(where):
            return [(key, where, "A table is in a local or mounted directory or in an object store: "
                                 f"{', '.join(s + '://' for s in OBJECT_STORE_SCHEMES)} (file:// for a local path)")]
    if parsed.get(ACCESS_KEY_ID_CONFIG) and not parsed.get(SECRET_ACCESS_KEY_CONFIG):
        return [(SECRET_ACCESS_KEY_CONFIG, None, f"'{ACCESS_KEY_ID_CONFIG}' is set: set its secret access key too")]
    return []


def sink_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """Location problems, and column names that clash."""
    problems = location_problems(parsed)
    taken = set(COORDINATE_COLUMNS) if parsed.get(COORDINATES_CONFIG) else set()
    for key in (KEY_COLUMN_CONFIG, HEADERS_COLUMN_CONFIG):
        column = parsed.get(key)
        if column and column in taken:
            problems.append((key, column, f"Column '{column}' is already used by another setting"))
        taken.add(column)
    return problems


def source_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """Location problems, and incrementing mode without its column."""
    problems = location_problems(parsed)
    if parsed.get(MODE_CONFIG) == "incrementing" and not parsed.get(INCREMENTING_COLUMN_CONFIG):
        problems.append((INCREMENTING_COLUMN_CONFIG, parsed.get(INCREMENTING_COLUMN_CONFIG),
                         "mode=incrementing needs the name of a column whose values only grow"))
    return problems


def parse_checked(definition: ConfigDef, problems: Any, props: Mapping[str, Any]) -> dict[str, Any]:
    """Parse ``props`` and raise :class:`ConfigException` for the first of ``problems(parsed)``."""
    parsed = definition.parse(props)
    for key, value, reason in problems(parsed):
        raise ConfigException(key, value, reason)
    return parsed


def add_problems(values: list[ConfigValue], problems: Any) -> list[ConfigValue]:
    """Kafka's per-key validation results, plus the errors of ``problems(parsed)`` on keys that have none."""
    by_name = {v.name: v for v in values}
    parsed = {v.name: v.value for v in values}
    for key, value, reason in problems(parsed):
        if not by_name[key].errors:
            by_name[key].add_error_message(str(ConfigException(key, value, reason)))
    return values


def table_location(parsed: Mapping[str, Any]) -> str:
    """The absolute directory, or the object store URI, of the table a (valid) configuration names.

    >>> table_location({"path": "/tmp/t"}), table_location({"table": "t", "warehouse.dir": "/wh"})
    ('/tmp/t', '/wh/t')
    """
    path = parsed.get(PATH_CONFIG)
    if not path:
        db, _, name = parsed[TABLE_CONFIG].rpartition(".")
        path = posixpath.join(parsed.get(WAREHOUSE_CONFIG) or DEFAULT_WAREHOUSE, f"{db}.db" if db else "", name)
    if is_object_store_uri(path):
        return path.rstrip("/")
    return os.path.abspath(path.removeprefix("file://"))


def table_store(parsed: Mapping[str, Any]) -> TableStore:
    """The store of the table a (valid) configuration names, with its S3 settings."""
    secret = parsed.get(SECRET_ACCESS_KEY_CONFIG)
    options = s3_options(parsed.get(STORE_URL_CONFIG), parsed.get(ACCESS_KEY_ID_CONFIG),
                         secret.value if isinstance(secret, Password) else secret, parsed.get(REGION_CONFIG))
    location = table_location(parsed)
    return TableStore(location, options if location.lower().startswith(("s3://", "s3a://")) else {})
