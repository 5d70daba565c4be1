"""Confluent's ``io.confluent.connect.avro.AvroConverter``: Connect data as Avro in Confluent's wire format
(magic byte 0, the schema's 4-byte registry id, the Avro binary body), with schemas in a Schema Registry.

Example (a registry at ``url``)::

    c = AvroConverter()
    c.configure({"schema.registry.url": url}, is_key=False)
    data = c.from_connect_data("orders", schema, struct)   # registers orders-value once, then cached
    c.to_connect_data("orders", data)                      # SchemaAndValue(schema, struct)
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import fastavro

from connect_magics.api.config import AbstractConfig, ConfigDef, ConfigException, Importance, Type
from connect_magics.api.converters import (
    NULL_SCHEMA_AND_VALUE,
    Converter,
    SchemaAndValue,
    converter_config_def,
)
from connect_magics.api.data import LRUCache, Schema
from connect_magics.api.errors import DataException
from connect_magics.api.records import Headers
from connect_magics.converters.avro_data import AvroData, AvroDataConfig, fastavro_schema
from connect_magics.converters.schema_registry import (
    Registry,
    define_registry_settings,
    split_wire,
    wire_header,
)

__all__ = ["AvroConverter"]


def avro_converter_config_def() -> ConfigDef:
    """``AvroConverterConfig``: the registry's serde settings and ``AvroDataConfig``'s."""
    return (define_registry_settings(converter_config_def())
            .define("connect.meta.data", Type.BOOLEAN, True, None, Importance.LOW,
                    "Keep Connect's schema names, versions, docs and parameters in the Avro schema.")
            .define("enhanced.avro.schema.support", Type.BOOLEAN, False, None, Importance.LOW,
                    "Keep Avro enums and their names through a round trip.")
            .define("scrub.invalid.names", Type.BOOLEAN, False, None, Importance.LOW,
                    "Replace characters Avro names may not have.")
            .define("schemas.cache.config", Type.INT, 1000, None, Importance.LOW,
                    "The number of schemas cached each way.")
            .define("allow.optional.map.keys", Type.BOOLEAN, False, None, Importance.LOW,
                    "Write maps with optional string keys as Avro maps.")
            .define("flatten.singleton.unions", Type.BOOLEAN, True, None, Importance.LOW,
                    "Read a union of one type as that type.")
            .define("discard.type.doc.default", Type.BOOLEAN, False, None, Importance.LOW,
                    "Use Connect docs and defaults instead of Avro's.")
            .define("ignore.default.for.nullables", Type.BOOLEAN, False, None, Importance.LOW,
                    "Read a missing nullable field as null, not as its default."))


class AvroConverter(Converter):
    """Confluent's AvroConverter, byte-compatible with it and with confluent-kafka's ``AvroSerializer`` and
    ``AvroDeserializer`` (see the module docstring for an example)."""

    ALIASES: tuple[str, ...] = ("io.confluent.connect.avro.AvroConverter",)

    def config_def(self) -> ConfigDef:
        return avro_converter_config_def()

    def configure(self, configs: Any, is_key: bool) -> None:
        settings = {k: v for k, v in dict(configs).items() if k != "converter.type"}
        config = AbstractConfig(self.config_def(), {**settings, "converter.type": "key" if is_key else "value"})
        self.is_key = is_key
        self.registry = Registry(settings, "AVRO")
        self.data = AvroData(AvroDataConfig(
            connect_meta_data=config.get("connect.meta.data"),
            enhanced_avro_schema_support=config.get("enhanced.avro.schema.support"),
            scrub_invalid_names=config.get("scrub.invalid.names"),
            schemas_cache_size=config.get("schemas.cache.config"),
            allow_optional_map_keys=config.get("allow.optional.map.keys"),
            flatten_singleton_unions=config.get("flatten.singleton.unions"),
            discard_type_doc_default=config.get("discard.type.doc.default"),
            ignore_default_for_nullables=config.get("ignore.default.for.nullables")))
        self._writers = LRUCache(config.get("schemas.cache.config"))  # Connect schema -> (text, parsed, write)
        self._readers: dict[int, tuple[Any, Schema, Any]] = {}  # schema id -> (parsed, Connect schema, read)
        self._last: tuple[Schema | None, str, bytes, Any, Any] | None = None  # the last (schema, topic) written

    # -------------------------------------------------------------------------------- Connect -> bytes
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if value is None:
            return None
        try:
            last = self._last
            if last is not None and schema is last[0] and topic is last[1]:  # the same schema mostly repeats
                _, _, header, parsed, write = last
            else:
                text, parsed, write, record_name = self._writer(schema)
                subject = self.registry.subject(topic, self.is_key, record_name)
                if self.registry.use_latest:
                    schema_id, latest = self.registry.latest(subject)
                    parsed = fastavro_schema(_avro_json(latest.schema_str))
                else:
                    schema_id = self.registry.id_for(subject, text)
                    self._last = (schema, topic, wire_header(schema_id), parsed, write)
                header = wire_header(schema_id)
            out = io.BytesIO()
            out.write(header)
            fastavro.schemaless_writer(out, parsed, write(value))
            return out.getvalue()
        except ConfigException:
            raise
        except DataException as e:
            raise DataException(f"Failed to serialize Avro data from topic {topic}: {e}") from e.__cause__
        except (ValueError, TypeError, AttributeError, KeyError) as e:
            raise DataException(f"Failed to serialize Avro data from topic {topic}: {type(e).__name__}: {e}") from e

    def _writer(self, schema: Schema | None) -> tuple[str, Any, Any, str | None]:
        cached = self._writers.get(schema)
        if cached is None:
            avro = self.data.from_connect_schema(schema)
            text = json.dumps(avro, separators=(",", ":"), ensure_ascii=False)
            record_name = None
            if isinstance(avro, dict) and avro.get("type") == "record":
                record_name = f"{avro['namespace']}.{avro['name']}" if avro.get("namespace") else avro["name"]
            cached = (text, fastavro_schema(avro), self.data.writer(schema), record_name)
            self._writers.put(schema, cached)
        return cached

    # -------------------------------------------------------------------------------- bytes -> Connect
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        schema_id, payload = split_wire(data)
        parsed, schema, read = self._readers.get(schema_id) or self._reader(topic, schema_id)
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)
        except (EOFError, ValueError, TypeError, IndexError, KeyError) as e:
            raise DataException(f"Failed to deserialize data for topic {topic} to Avro: {type(e).__name__}: {e}") \
                from e
        return SchemaAndValue(schema, read(datum))

    def to_connect_column(self, topic: str, datas: Sequence[bytes | None]) -> list[tuple[Schema | None, Any]]:
        out: list[tuple[Schema | None, Any]] = []
        readers, schemaless_reader, stream = self._readers, fastavro.schemaless_reader, io.BytesIO
        for data in datas:
            if data is None:
                out.append(NULL_SCHEMA_AND_VALUE)
                continue
            if len(data) < 5 or data[0] != 0:
                split_wire(data)  # raises the error
            schema_id = int.from_bytes(data[1:5], "big")
            parsed, schema, read = readers.get(schema_id) or self._reader(topic, schema_id)
            buffer = stream(data)
            buffer.seek(5)
            try:
                out.append(SchemaAndValue(schema, read(schemaless_reader(buffer, parsed, None))))
            except (EOFError, ValueError, TypeError, IndexError, KeyError) as e:
                raise DataException(f"Failed to deserialize data for topic {topic} to Avro: "
                                    f"{type(e).__name__}: {e}") from e
        return out

    def _reader(self, topic: str, schema_id: int) -> tuple[Any, Schema, Any]:
        registered = self.registry.schema(schema_id)
        if registered.schema_type not in (None, "AVRO"):
            raise DataException(f"Schema {schema_id} is {registered.schema_type}, not AVRO: the topic {topic} "
                                f"needs the matching converter")
        avro = _avro_json(registered.schema_str)
        record_name = None
        if isinstance(avro, dict) and avro.get("type") == "record":
            record_name = avro["name"] if "." in avro["name"] or not avro.get("namespace") \
                else f"{avro['namespace']}.{avro['name']}"
        try:
            subject = self.registry.subject(topic, self.is_key, record_name)
            version = self.registry.version(subject, schema_id)
        except DataException:
            version = None
        schema = self.data.to_connect_schema(json.dumps(avro), version)
        entry = (fastavro_schema(avro), schema, self.data.reader(schema))
        self._readers[schema_id] = entry
        return entry

    def __getstate__(self) -> dict[str, Any]:  # converters travel to Spark executors pickled
        return {**self.__dict__, "_writers": LRUCache(self._writers.max_size), "_readers": {}, "_last": None}


def _avro_json(text: str) -> Any:
    """A registered Avro schema as JSON data (a registry may answer a primitive schema unquoted: ``long``)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text.strip()


