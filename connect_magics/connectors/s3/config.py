"""The configuration of the S3 sink: Confluent's keys, defaults and class names, and the checks between
settings (each error names its key).

>>> parsed = sink_config({"s3.bucket.name": "b", "flush.size": "3",
...                       "format.class": "io.confluent.connect.s3.format.json.JsonFormat"})
>>> parsed["topics.dir"], parsed["file.delim"], parsed["filename.offset.zero.pad.width"]
('topics', '+', 10)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    ConfigDef,
    ConfigException,
    ConfigValue,
    Importance,
    NonEmptyString,
    Range,
    Type,
    ValidString,
)

BUCKET = "s3.bucket.name"
REGION = "s3.region"
STORE_URL = "store.url"
ACCESS_KEY_ID = "aws.access.key.id"
SECRET_ACCESS_KEY = "aws.secret.access.key"
COMPRESSION_TYPE = "s3.compression.type"
TOPICS_DIR = "topics.dir"
DIRECTORY_DELIM = "directory.delim"
FILE_DELIM = "file.delim"
FLUSH_SIZE = "flush.size"
ROTATE_INTERVAL_MS = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS = "rotate.schedule.interval.ms"
FORMAT_CLASS = "format.class"
PARTITIONER_CLASS = "partitioner.class"
PARTITION_FIELD_NAME = "partition.field.name"
ZERO_PAD_WIDTH = "filename.offset.zero.pad.width"
NULL_VALUES = "behavior.on.null.values"
PARQUET_CODEC = "parquet.codec"
PARTITION_DURATION_MS = "partition.duration.ms"
PATH_FORMAT = "path.format"
LOCALE = "locale"
TIMEZONE = "timezone"
TIMESTAMP_EXTRACTOR = "timestamp.extractor"
TIMESTAMP_FIELD = "timestamp.field"

JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
PARQUET_FORMAT = "io.confluent.connect.s3.format.parquet.ParquetFormat"
FORMATS = (JSON_FORMAT, PARQUET_FORMAT)
DEFAULT_PARTITIONER = "io.confluent.connect.storage.partitioner.DefaultPartitioner"
FIELD_PARTITIONER = "io.confluent.connect.storage.partitioner.FieldPartitioner"
TIME_BASED_PARTITIONER = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"
HOURLY_PARTITIONER = "io.confluent.connect.storage.partitioner.HourlyPartitioner"
DAILY_PARTITIONER = "io.confluent.connect.storage.partitioner.DailyPartitioner"
TIME_PARTITIONERS = (TIME_BASED_PARTITIONER, HOURLY_PARTITIONER, DAILY_PARTITIONER)
PARTITIONERS = (DEFAULT_PARTITIONER, FIELD_PARTITIONER, *TIME_PARTITIONERS)
#: Confluent's classes this sink does not implement yet: refused with a reason rather than ignored.
NOT_YET = {
    "io.confluent.connect.s3.format.avro.AvroFormat": "AvroFormat is not supported yet",
    "io.confluent.connect.s3.format.bytearray.ByteArrayFormat": "ByteArrayFormat is not supported yet",
    "io.confluent.connect.s3.format.csv.CsvFormat": "CsvFormat is not supported yet",
}


def _define() -> ConfigDef:
    return (
        ConfigDef()
        .define(BUCKET, Type.STRING, importance=Importance.HIGH, documentation="The S3 Bucket.",
                validator=NonEmptyString())
        .define(REGION, Type.STRING, "us-west-2", None, Importance.MEDIUM,
                "The AWS region to be used the connector.")
        .define(STORE_URL, Type.STRING, None, None, Importance.HIGH,
                "Store's connection URL, if applicable: the endpoint of an S3-compatible store "
                "(http://host:port). Here also an fsspec URL such as file:///dir (objects under dir/bucket)")
        .define(ACCESS_KEY_ID, Type.STRING, "", None, Importance.HIGH,
                "The AWS access key ID used to authenticate personal AWS credentials")
        .define(SECRET_ACCESS_KEY, Type.PASSWORD, None, None, Importance.HIGH,
                "The secret access key used to authenticate personal AWS credentials")
        .define(COMPRESSION_TYPE, Type.STRING, "none", ValidString.in_("none", "gzip"), Importance.LOW,
                "Compression type for files written to S3. Applied when using JsonFormat. "
                "Available values: none, gzip.")
        .define(TOPICS_DIR, Type.STRING, "topics", None, Importance.HIGH,
                "Top level directory to store the data ingested from Kafka.")
        .define(DIRECTORY_DELIM, Type.STRING, "/", None, Importance.MEDIUM, "Directory delimiter pattern")
        .define(FILE_DELIM, Type.STRING, "+", None, Importance.MEDIUM, "File delimiter pattern")
        .define(FLUSH_SIZE, Type.INT, importance=Importance.HIGH, validator=Range.at_least(1),
                documentation="Number of records written to store before invoking file commits.")
        .define(ROTATE_INTERVAL_MS, Type.LONG, -1, None, Importance.HIGH,
                "The time interval in milliseconds to invoke file commits (by record timestamps). As in "
                "Confluent's sink it only applies with a TimeBasedPartitioner; -1 disables it.")
        .define(ROTATE_SCHEDULE_INTERVAL_MS, Type.LONG, -1, None, Importance.MEDIUM,
                "Wall-clock file commits; not supported here (it gives up exactly-once). -1 disables it.")
        .define(FORMAT_CLASS, Type.CLASS, importance=Importance.HIGH,
                documentation="The format class to use when writing data to the store.")
        .define(PARTITIONER_CLASS, Type.CLASS, DEFAULT_PARTITIONER, None, Importance.HIGH,
                "The partitioner to use when writing data to the store.")
        .define(PARTITION_FIELD_NAME, Type.LIST, "", None, Importance.MEDIUM,
                "The name of the partitioning field when FieldPartitioner is used.")
        .define(PARTITION_DURATION_MS, Type.LONG, -1, None, Importance.MEDIUM,
                "The duration of a partition in milliseconds, used by TimeBasedPartitioner.")
        .define(PATH_FORMAT, Type.STRING, "", None, Importance.MEDIUM,
                "This configuration is used to set the format of the data directories when partitioning with "
                "TimeBasedPartitioner (a Joda-Time pattern, e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH).")
        .define(LOCALE, Type.STRING, "", None, Importance.MEDIUM,
                "The locale to use when partitioning with TimeBasedPartitioner.")
        .define(TIMEZONE, Type.STRING, "", None, Importance.MEDIUM,
                "The timezone to use when partitioning with TimeBasedPartitioner.")
        .define(TIMESTAMP_EXTRACTOR, Type.STRING, "Wallclock",
                ValidString.in_("Wallclock", "Record", "RecordField"), Importance.MEDIUM,
                "The extractor that gets the timestamp for records when partitioning with "
                "TimeBasedPartitioner: Wallclock, Record or RecordField.")
        .define(TIMESTAMP_FIELD, Type.STRING, "timestamp", None, Importance.MEDIUM,
                "The record field to be used as timestamp by the RecordField timestamp extractor.")
        .define(ZERO_PAD_WIDTH, Type.INT, 10, Range.at_least(0), Importance.LOW,
                "Width to zero-pad offsets in store's filenames if offsets are too short in order to "
                "provide fixed-width filenames that can be ordered by simple lexicographic sorting.")
        .define(NULL_VALUES, Type.STRING, "fail", ValidString.in_("ignore", "fail"), Importance.LOW,
                "How to handle records with a null value (i.e. Kafka tombstone records). "
                "Valid options are 'ignore' and 'fail'.")
        .define(PARQUET_CODEC, Type.STRING, "snappy",
                ValidString.in_("none", "gzip", "snappy", "zstd"), Importance.LOW,
                "The Parquet compression codec to be used for output files.")
    )


def sink_config_def() -> ConfigDef:
    """The definition (a new one each call).

    >>> sink_config_def().config_keys()["s3.region"].default
    'us-west-2'
    """
    return _define()


def class_name(value: Any) -> str:
    """A CLASS value as its name (a Python class given directly is named by its ``ALIASES``)."""
    if isinstance(value, type):
        return next(iter(getattr(value, "ALIASES", ())), value.__name__)
    return str(value)


def _short(name: str, choices: tuple[str, ...]) -> str:
    """A full class name for a short one (``JsonFormat``), as the plugin aliases are accepted elsewhere."""
    return next((c for c in choices if c.rsplit(".", 1)[-1] == name), name)


def sink_problems(parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """What the definition accepts but this sink cannot run: ``(key, value, reason)`` triples.

    >>> sink_problems({"format.class": "x.Avro", "partitioner.class": DEFAULT_PARTITIONER})[0][2]
    'Class x.Avro is not a supported format; supported: io.confluent.connect.s3.format.json.JsonFormat, \
io.confluent.connect.s3.format.parquet.ParquetFormat'
    """
    problems: list[tuple[str, Any, str]] = []
    fmt = parsed.get(FORMAT_CLASS)
    if fmt is not None:
        name = _short(class_name(fmt), FORMATS)
        if name not in FORMATS:
            reason = NOT_YET.get(name, f"Class {name} is not a supported format")
            problems.append((FORMAT_CLASS, name, f"{reason}; supported: {', '.join(FORMATS)}"))
    partitioner = parsed.get(PARTITIONER_CLASS)
    if partitioner is not None:
        name = _short(class_name(partitioner), PARTITIONERS)
        if name not in PARTITIONERS:
            reason = NOT_YET.get(name, f"Class {name} is not a supported partitioner")
            problems.append((PARTITIONER_CLASS, name, f"{reason}; supported: {', '.join(PARTITIONERS)}"))
        elif name == FIELD_PARTITIONER and not parsed.get(PARTITION_FIELD_NAME):
            problems.append((PARTITION_FIELD_NAME, "", "FieldPartitioner requires at least one field name"))
        elif name in TIME_PARTITIONERS:
            problems += _time_problems(name, parsed)
    schedule = parsed.get(ROTATE_SCHEDULE_INTERVAL_MS)
    if isinstance(schedule, int) and schedule > 0:
        problems.append((ROTATE_SCHEDULE_INTERVAL_MS, schedule,
                         "Scheduled (wall-clock) rotation is not supported: it would give up exactly-once "
                         "object names; use flush.size"))
    for key in (DIRECTORY_DELIM, FILE_DELIM):
        if parsed.get(key) == "":
            problems.append((key, "", "String must be non-empty"))
    return problems


def _time_problems(name: str, parsed: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """TimeBasedPartitioner's checks (Confluent makes them when a task starts; here at validation too)."""
    from connect_magics.connectors.s3.time_partitioner import joda_formatter

    problems: list[tuple[str, Any, str]] = []
    if name == TIME_BASED_PARTITIONER:
        duration, path = parsed.get(PARTITION_DURATION_MS), parsed.get(PATH_FORMAT)
        if isinstance(duration, int) and duration < 0:
            problems.append((PARTITION_DURATION_MS, duration, "Partition duration needs to be a positive."))
        if not path:
            problems.append((PATH_FORMAT, path, "Path format cannot be empty."))
        else:
            try:
                joda_formatter(path)
            except ValueError as e:
                problems.append((PATH_FORMAT, path, str(e)))
    if not parsed.get(LOCALE):
        problems.append((LOCALE, parsed.get(LOCALE), "Locale cannot be empty."))
    timezone = parsed.get(TIMEZONE)
    if not timezone:
        problems.append((TIMEZONE, timezone, "Timezone cannot be empty."))
    else:
        from zoneinfo import ZoneInfo

        try:
            ZoneInfo(timezone)
        except Exception:  # noqa: BLE001 - ZoneInfoNotFoundError, ValueError for a malformed key
            problems.append((TIMEZONE, timezone, "Unknown timezone"))
    return problems


def with_problems(values: list[ConfigValue], problems: list[tuple[str, Any, str]]) -> list[ConfigValue]:
    """Add each problem to its key's ConfigValue (unless the key already has an error)."""
    by_name = {v.name: v for v in values}
    for key, value, reason in problems:
        if key in by_name and not by_name[key].errors:
            by_name[key].add_error_message(str(ConfigException(key, value, reason)))
    return values


def sink_config(props: Mapping[str, Any]) -> dict[str, Any]:
    """Parse and check; raise :class:`ConfigException` naming the first bad key. Class names come back
    in full (``format.class=JsonFormat`` gives Confluent's full name)."""
    parsed = _define().parse(props)
    for key, value, reason in sink_problems(parsed):
        raise ConfigException(key, value, reason)
    parsed[FORMAT_CLASS] = _short(class_name(parsed[FORMAT_CLASS]), FORMATS)
    parsed[PARTITIONER_CLASS] = _short(class_name(parsed[PARTITIONER_CLASS]), PARTITIONERS)
    return parsed
