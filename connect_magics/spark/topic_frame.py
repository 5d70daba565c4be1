"""A Kafka topic's records as a Spark DataFrame, keys and values decoded by Connect converters.

Columns: ``topic``, ``partition``, ``offset``, ``timestamp``, ``key``, ``value``, ``headers`` — those of
Spark's Kafka source, with ``key`` and ``value`` decoded: a string column for ``StringConverter``,
binary for ``ByteArrayConverter``, the Spark type of the Connect schema for ``JsonConverter`` with
schemas, and for schemaless JSON the type inferred from every record read (see
:mod:`connect_magics.spark.connect_types`). Headers stay bytes, as Spark's Kafka source gives them.

The read is bounded: from ``starting`` to ``ending`` offsets taken when it starts (``max_records`` caps
the total, taking the earliest records of every partition in turn). It runs on Spark's Kafka source
(``spark.read.format("kafka")``, decoding on the executors with ``mapInArrow``) when the session has
spark-sql-kafka, else on a consumer in this process; both give the same rows.

>>> df = read_topic(spark, {"bootstrap.servers": "127.0.0.1:9092"}, "orders",
...                 *converters(plugins, worker, {"value.converter": "JsonConverter",
...                                               "value.converter.schemas.enable": "false"}))  # doctest: +SKIP
>>> df.select("offset", "value.id").show()  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.sql import types as T

from connect_magics.api.converters import Converter
from connect_magics.errors import BadRequestError, NotFoundError
from connect_magics.spark.connect_types import finish_type, infer_type, merge_types, spark_type, spark_value
from connect_magics.spark.frames import arrow_table, spark_frame
from connect_magics.spark.session import spark_session
from connect_magics.storage.authorization import (
    KafkaAuthorizationError,
    access_error,
    check_topic_operations,
    principal,
)
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.kafka_log import known_partitions

__all__ = ["READERS", "TopicRange", "converters", "read_topic", "topic_ranges"]

READERS = ("auto", "kafka-source", "consumer")
"""``auto``: Spark's Kafka source when the session has it, else the consumer."""

RAW_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "value", "headers")
HEADERS_TYPE = T.ArrayType(T.StructType([T.StructField("key", T.StringType()),
                                         T.StructField("value", T.BinaryType())]))
_READ_GROUP = "connect-magics-read-topic"  # never committed: partitions are assigned, not subscribed
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_SOURCE_NOT_FOUND = ("_LEGACY_ERROR_TEMP_1140", "DATA_SOURCE_NOT_FOUND")  # Spark's errors for a missing "kafka"


@dataclass(frozen=True)
class TopicRange:
    """Offsets ``[start, end)`` of one partition."""

    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


# -- which converters ----------------------------------------------------------------------------------------


def converters(plugins: Any, worker: Mapping[str, str], converter: Any = None) -> tuple[Converter, Converter]:
    """The (key, value) converters for ``converter``: None for the worker's ``key.converter`` and
    ``value.converter``; a class name or alias, or a configured :class:`Converter`, for both; or a
    connector-style config (``value.converter``, ``value.converter.schemas.enable``, ``key.converter``...;
    other keys are ignored) where what it leaves out comes from the worker.
    """
    from connect_magics.runtime.config.connector_config import resolve_converter
    from connect_magics.runtime.plugins.registry import PluginNotFoundError

    if isinstance(converter, Converter):
        return converter, converter
    if converter is None:
        config: Mapping[str, str] = {}
    elif isinstance(converter, str):
        if not converter.strip():
            raise BadRequestError("Invalid value '' for converter: name a converter class or alias")
        config = {"key.converter": converter, "value.converter": converter}
    elif isinstance(converter, Mapping):
        config = {str(k): str(v) for k, v in converter.items()}
    else:
        raise BadRequestError(f"Invalid value {converter!r} for converter: expected a converter class name, a "
                              "Converter or a config mapping")
    out = []
    for key, is_key in (("key.converter", True), ("value.converter", False)):
        try:
            out.append(resolve_converter(plugins, config, worker, key, is_key)[1])
        except PluginNotFoundError as e:
            raise BadRequestError(f"Invalid value {config.get(key) or worker.get(key)} for {key}: {e}") from None
        except Exception as e:  # a converter refusing its configuration
            raise BadRequestError(f"Invalid configuration for {key}: {e}") from None
    return out[0], out[1]


# -- which offsets -------------------------------------------------------------------------------------------


def _consumer(client_config: Mapping[str, str]) -> Consumer:
    return Consumer({**client_config, "group.id": _READ_GROUP, "enable.auto.commit": False,
                     "enable.partition.eof": False})


def _positions(name: str, spec: Any, partitions: list[int]) -> dict[int, str | int]:
    """``"earliest"``, ``"latest"`` or ``{partition: offset}`` (other partitions: the default) per partition."""
    if isinstance(spec, str) and spec in ("earliest", "latest"):
        return dict.fromkeys(partitions, spec)
    if isinstance(spec, Mapping):
        unknown = [p for p in spec if p not in partitions]
        if unknown:
            raise BadRequestError(f"Invalid value {dict(spec)} for {name}: the topic has no partition(s) {unknown}")
        bad = [o for o in spec.values() if isinstance(o, bool) or not isinstance(o, int) or o < 0]
        if bad:
            raise BadRequestError(f"Invalid value {dict(spec)} for {name}: offsets must be integers >= 0")
        default = "earliest" if name == "starting" else "latest"
        return {p: spec.get(p, default) for p in partitions}
    raise BadRequestError(f"Invalid value {spec!r} for {name}: must be 'earliest', 'latest' or a mapping "
                          "of partition to offset")


def _cap(ranges: list[TopicRange], max_records: int) -> list[TopicRange]:
    """The first ``max_records`` records, taken from every partition in turn."""
    quotas = [0] * len(ranges)
    left = max_records
    while left > 0:
        open_ = [i for i, r in enumerate(ranges) if quotas[i] < r.size]
        if not open_:
            break
        share = max(1, left // len(open_))
        for i in open_:
            take = min(share, ranges[i].size - quotas[i], left)
            quotas[i] += take
            left -= take
    return [TopicRange(r.partition, r.start, r.start + q) for r, q in zip(ranges, quotas, strict=True)]


def topic_ranges(client_config: Mapping[str, str], topic: str, starting: Any = "earliest", ending: Any = "latest",
                 max_records: int | None = None, timeout: float = 30.0) -> list[TopicRange]:
    """The offsets to read, one range per partition, from the broker's watermarks now."""
    if max_records is not None and (isinstance(max_records, bool) or not isinstance(max_records, int)
                                    or max_records < 0):
        raise BadRequestError(f"Invalid value {max_records!r} for max_records: must be an integer >= 0")
    _check_readable(client_config, topic, timeout)
    consumer = _consumer(client_config)
    try:
        metadata = consumer.list_topics(timeout=timeout)  # all topics: asking for one may auto-create it
        if topic not in metadata.topics:
            raise NotFoundError(f"Topic '{topic}' does not exist")
        partitions = sorted(metadata.topics[topic].partitions)
        first, last = _positions("starting", starting, partitions), _positions("ending", ending, partitions)
        ranges = []
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            bounds = {"earliest": low, "latest": high}
            start = max(low, min(high, bounds.get(first[p], first[p])))  # type: ignore[arg-type]
            end = max(start, min(high, bounds.get(last[p], last[p])))  # type: ignore[arg-type]
            ranges.append(TopicRange(p, start, end))
    finally:
        consumer.close()
    return ranges if max_records is None else _cap(ranges, max_records)


def _check_readable(client_config: Mapping[str, str], topic: str, timeout: float) -> None:
    """Raise a :class:`~connect_magics.storage.authorization.KafkaAuthorizationError` if the principal may not READ
    ``topic`` (asked once, with the principal's authorized operations), before any reader waits for records."""
    admin = AdminClient({**client_config, "logger": client_logger("admin")})
    missing = check_topic_operations(admin, client_config, {topic: ("READ",)}, timeout)  # none if it does not exist
    if missing:
        raise KafkaAuthorizationError(principal(client_config), missing,
                                      f"reading topic '{topic}' (a topic it may not DESCRIBE may also not exist)")


# -- decoding ------------------------------------------------------------------------------------------------


def _decode(converter: Converter, topic: str, data: bytes | None, where: str, what: str) -> Any:
    try:
        return converter.to_connect_data(topic, data)
    except Exception as e:
        raise ValueError(f"Cannot decode the {what} of {where} with {type(converter).__name__}: {e}") from e


def _decoded(raw: Mapping[str, list[Any]], key_conv: Converter, value_conv: Converter) -> Iterator[tuple[Any, Any]]:
    """(key, value) SchemaAndValues of every raw record."""
    for topic, partition, offset, key, value in zip(raw["topic"], raw["partition"], raw["offset"], raw["key"],
                                                    raw["value"], strict=True):
        where = f"{topic}-{partition}@{offset}"
        yield (_decode(key_conv, topic, key, where, "key"), _decode(value_conv, topic, value, where, "value"))


def _fixed_type(converter: Converter) -> T.DataType | None:
    fixed = converter.fixed_schema()
    return spark_type(fixed[0]) if fixed is not None and fixed[0] is not None else None


def _record_type(sv: Any) -> T.DataType:
    return spark_type(sv.schema) if sv.schema is not None else infer_type(sv.value)


def _infer_types(raw: Mapping[str, list[Any]], key_conv: Converter, value_conv: Converter,
                 types: tuple[T.DataType, T.DataType]) -> tuple[T.DataType, T.DataType]:
    """``types`` merged with the types of every record's key and value."""
    key_type, value_type = types
    for key, value in _decoded(raw, key_conv, value_conv):
        key_type, value_type = merge_types(key_type, _record_type(key)), merge_types(value_type, _record_type(value))
    return key_type, value_type


def _schema(key_type: T.DataType, value_type: T.DataType) -> T.StructType:
    """The frame's schema, for keys and values of these (merged) types."""
    key_type, value_type = finish_type(key_type), finish_type(value_type)
    return T.StructType([T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
                         T.StructField("offset", T.LongType()), T.StructField("timestamp", T.TimestampType()),
                         T.StructField("key", key_type), T.StructField("value", value_type),
                         T.StructField("headers", HEADERS_TYPE)])


def _columns(raw: Mapping[str, list[Any]], key_conv: Converter, value_conv: Converter,
             schema: T.StructType) -> list[list[Any]]:
    key_type, value_type = schema["key"].dataType, schema["value"].dataType
    keys, values = [], []
    for key, value in _decoded(raw, key_conv, value_conv):
        keys.append(spark_value(key.value, key_type))
        values.append(spark_value(value.value, value_type))
    return [raw["topic"], raw["partition"], raw["offset"], raw["timestamp"], keys, values, raw["headers"]]


class _Decoder:
    """What the executors run: types of raw Arrow batches, and decoded batches (pickled to the workers)."""

    TYPES = T.StructType([T.StructField("types", T.StringType())])

    def __init__(self, key_conv: Converter, value_conv: Converter, schema: T.StructType | None = None) -> None:
        self.key_conv, self.value_conv, self.schema = key_conv, value_conv, schema

    def types(self, batches: Iterable[Any]) -> Iterator[Any]:
        types: tuple[T.DataType, T.DataType] = (T.NullType(), T.NullType())
        for batch in batches:
            types = _infer_types(batch.to_pydict(), self.key_conv, self.value_conv, types)
        pair = T.StructType([T.StructField("key", types[0]), T.StructField("value", types[1])])  # not finished:
        yield arrow_table([[pair.json()]], self.TYPES).to_batches()[0]  # a null here may be a struct elsewhere

    def decode(self, batches: Iterable[Any]) -> Iterator[Any]:
        assert self.schema is not None
        for batch in batches:
            yield from arrow_table(_columns(batch.to_pydict(), self.key_conv, self.value_conv, self.schema),
                                   self.schema).to_batches()


# -- reading -------------------------------------------------------------------------------------------------


def _consume(client_config: Mapping[str, str], topic: str, ranges: list[TopicRange],
             timeout: float) -> dict[str, list[Any]]:
    """The raw records of ``ranges``, read by a consumer in this process (gaps of compaction allowed)."""
    raw: dict[str, list[Any]] = {c: [] for c in RAW_COLUMNS}
    todo = {r.partition: r for r in ranges if r.size > 0}
    if not todo:
        return raw
    consumer = _consumer(client_config)
    try:
        known_partitions(consumer, topic, timeout)
        consumer.assign([TopicPartition(topic, r.partition, r.start) for r in todo.values()])
        deadline = time.monotonic() + timeout
        while todo:
            if time.monotonic() > deadline:
                raise TimeoutError(f"Reading topic '{topic}' timed out after {timeout} s with partitions "
                                   f"{sorted(todo)} unfinished")
            messages = consumer.consume(500, timeout=0.2)
            for m in messages:
                if m.error() is not None:
                    if m.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:  # never comes back by itself
                        raise access_error(m.error(), client_config, f"reading topic '{topic}'",
                                           topic=("READ", topic))  # type: ignore[misc]
                    continue
                r = todo.get(m.partition())
                if r is None or m.offset() >= r.end:
                    continue
                ts_type, ts = m.timestamp()
                raw["topic"].append(topic)
                raw["partition"].append(m.partition())
                raw["offset"].append(m.offset())
                raw["timestamp"].append(_EPOCH + dt.timedelta(milliseconds=ts) if ts_type else None)
                raw["key"].append(m.key())
                raw["value"].append(m.value())
                raw["headers"].append([{"key": k, "value": v} for k, v in m.headers()] if m.headers() else None)
                if m.offset() >= r.end - 1:
                    del todo[m.partition()]
            if not messages:  # compaction or transaction markers can leave the last offsets empty
                for tp in consumer.position([TopicPartition(topic, p) for p in todo]):
                    if tp.offset >= todo[tp.partition].end:
                        del todo[tp.partition]
    finally:
        consumer.close()
    return raw


def _kafka_source(spark: Any, client_config: Mapping[str, str], topic: str, ranges: list[TopicRange],
                  options: Mapping[str, str]) -> Any:
    """The raw records of ``ranges`` through Spark's Kafka source (not yet run)."""
    def offsets(which: str) -> str:
        return json.dumps({topic: {str(r.partition): getattr(r, which) for r in ranges}})

    return (spark.read.format("kafka").option("kafka.bootstrap.servers", client_config["bootstrap.servers"])
            .option("assign", json.dumps({topic: [r.partition for r in ranges]}))
            .option("startingOffsets", offsets("start")).option("endingOffsets", offsets("end"))
            .option("includeHeaders", "true").options(**options).load().select(*RAW_COLUMNS))


def has_kafka_source(spark: Any) -> bool:
    """Whether ``spark`` can load Spark's Kafka source (spark-sql-kafka on its classpath)."""
    try:  # analysing the relation loads the source; it does not contact the broker
        fields = spark.read.format("kafka").option("kafka.bootstrap.servers", "127.0.0.1:9") \
            .option("subscribe", "probe").load().schema.fields
    except Exception as e:
        condition = getattr(e, "getCondition", lambda: None)()
        if condition in _SOURCE_NOT_FOUND or "Failed to find data source: kafka" in str(e):
            return False
        raise
    return bool(fields)


def read_topic_with(plugins: Any, worker: Any, spark: Any, topic: str, converter: Any = None,
                    starting: Any = "earliest", ending: Any = "latest", max_records: int | None = None,
                    reader: str = "auto", options: Mapping[str, str] | None = None) -> Any:
    """:func:`read_topic` with the converters :func:`converters` resolves from ``plugins`` and the
    :class:`~connect_magics.runtime.config.worker_config.WorkerConfig` ``worker`` (whose consumer settings,
    security included, also reach Spark's Kafka source as ``kafka.*`` options)."""
    key_converter, value_converter = converters(plugins, worker, converter)
    # Spark's Kafka source is a Java client: the worker's security settings in Java's names, as kafka.* options
    java = {f"kafka.{k}": v for k, v in worker.java_client_config("consumer").items()}
    return read_topic(spark, worker.client_config("consumer"), topic, key_converter, value_converter, starting,
                      ending, max_records, reader, {**java, **(options or {})})


def read_topic(spark: Any, client_config: Mapping[str, str], topic: str, key_converter: Converter,
               value_converter: Converter, starting: Any = "earliest", ending: Any = "latest",
               max_records: int | None = None, reader: str = "auto", options: Mapping[str, str] | None = None,
               timeout: float = 60.0) -> Any:
    """``topic``'s records from ``starting`` to ``ending`` (``"earliest"``, ``"latest"`` or
    ``{partition: offset}``; at most ``max_records``) as a Spark DataFrame with decoded keys and values.
    ``reader`` is one of :data:`READERS`; ``options`` go to Spark's Kafka source (``kafka.security.protocol``...).
    ``spark`` None: the active session, else a local one, chosen once the arguments are known to be valid.
    """
    if reader not in READERS:
        raise BadRequestError(f"Invalid value {reader!r} for reader: must be one of {list(READERS)}")
    ranges = topic_ranges(client_config, topic, starting, ending, max_records, timeout)
    spark = spark_session(spark)
    fixed = (_fixed_type(key_converter), _fixed_type(value_converter))
    types = (fixed[0] or T.NullType(), fixed[1] or T.NullType())  # merged with each record's unless fixed
    source_ok = reader != "consumer" and has_kafka_source(spark)
    if reader == "kafka-source" and not source_ok:
        raise BadRequestError("Invalid value 'kafka-source' for reader: the SparkSession has no Kafka source "
                              "(spark-sql-kafka); start it with local_spark_session(packages=['kafka']) or "
                              "spark.jars.packages, or use reader='consumer'")
    if not source_ok:
        raw = _consume(client_config, topic, ranges, timeout)
        if None in fixed:
            types = _infer_types(raw, key_converter, value_converter, types)
        schema = _schema(*types)
        return spark_frame(spark, _columns(raw, key_converter, value_converter, schema), schema)
    source = _kafka_source(spark, client_config, topic, ranges, options or {})
    if None in fixed:  # one more pass, on the executors: each partition's types, merged here
        for row in source.mapInArrow(_Decoder(key_converter, value_converter).types, _Decoder.TYPES).collect():
            found = T.StructType.fromJson(json.loads(row["types"]))
            types = (merge_types(types[0], found["key"].dataType), merge_types(types[1], found["value"].dataType))
    schema = _schema(*types)
    return source.mapInArrow(_Decoder(key_converter, value_converter, schema).decode, schema)
