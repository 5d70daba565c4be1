"""``InsertField``: insert the topic, partition, offset, timestamp and/or a static value as fields.

Example::

    >>> t = InsertField.Value(); t.configure({"topic.field": "topic", "static.field": "src", "static.value": "db"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "orders", value={"id": 1})).value
    {'id': 1, 'topic': 'orders', 'src': 'db'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import AbstractConfig, ConfigDef, ConfigException, Importance, Type
from connect_magics.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
    copy_schema_basics,
)
from connect_magics.api.errors import DataException
from connect_magics.api.records import ConnectRecord, SinkRecord
from connect_magics.transforms.util import (
    REPLACE_NULL_DOC,
    KeyOrValue,
    class_name,
    require_map,
    require_struct,
    variants,
)

__all__ = ["InsertField", "InsertFieldKey", "InsertFieldValue"]

_OPTIONALITY_DOC = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional " \
                   "(the default)."


def _insertion_spec(spec: str | None) -> tuple[str, bool] | None:
    """``name`` / ``name?`` → optional field, ``name!`` → required."""
    if spec is None:
        return None
    if spec.endswith(("?", "!")):
        return spec[:-1], spec.endswith("?")
    return spec, True


class InsertField(KeyOrValue):
    """Insert topic, partition, offset, timestamp and/or a static value as fields (``InsertField.Value``).

    >>> t = InsertField.Value(); t.configure({"topic.field": "topic", "static.field": "src", "static.value": "db"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "orders", value={"id": 1})).value
    {'id': 1, 'topic': 'orders', 'src': 'db'}
    """

    CONFIG_DEF = (ConfigDef()
                  .define("topic.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka topic. " + _OPTIONALITY_DOC)
                  .define("partition.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka partition. " + _OPTIONALITY_DOC)
                  .define("offset.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC)
                  .define("timestamp.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for record timestamp. " + _OPTIONALITY_DOC)
                  .define("static.field", Type.STRING, None, None, Importance.MEDIUM,
                          "Field name for static data field. " + _OPTIONALITY_DOC)
                  .define("static.value", Type.STRING, None, None, Importance.MEDIUM,
                          "Static field value, if field name configured.")
                  .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM,
                          REPLACE_NULL_DOC))
    _PURPOSE = "field insertion"
    _OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.topic_field = _insertion_spec(config.get("topic.field"))
        self.partition_field = _insertion_spec(config.get("partition.field"))
        self.offset_field = _insertion_spec(config.get("offset.field"))
        self.timestamp_field = _insertion_spec(config.get("timestamp.field"))
        self.static_field = _insertion_spec(config.get("static.field"))
        self.static_value: str | None = config.get("static.value")
        self.replace_null_with_default: bool = config.get("replace.null.with.default")
        specs = (self.topic_field, self.partition_field, self.offset_field, self.timestamp_field, self.static_field)
        if all(s is None for s in specs):
            raise ConfigException("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigException("static.value", None, f"No value specified for static field: {self.static_field[0]}")

    def _insertions(self, record: ConnectRecord, with_schema: bool) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self.topic_field:
            out.append((self.topic_field[0], record.topic))
        if self.partition_field and record.kafka_partition is not None:
            out.append((self.partition_field[0], record.kafka_partition))
        if self.offset_field:
            if not isinstance(record, SinkRecord):
                raise DataException(f"Only SinkRecord supported for [{self._PURPOSE}], found: {class_name(record)}")
            out.append((self.offset_field[0], record.kafka_offset))
        if self.timestamp_field and record.timestamp is not None:
            ts = Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp) if with_schema else record.timestamp
            out.append((self.timestamp_field[0], ts))
        if self.static_field and self.static_value is not None:
            out.append((self.static_field[0], self.static_value))
        return out

    def _make_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            builder.field(f.name, f.schema)
        extra = [(self.topic_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
                 (self.partition_field, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
                 (self.offset_field, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
                 (self.timestamp_field, self._OPTIONAL_TIMESTAMP, Timestamp.SCHEMA),
                 (self.static_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA)]
        for spec, optional_schema, required_schema in extra:
            if spec is not None:
                builder.field(spec[0], optional_schema if spec[1] else required_schema)
        return builder.build()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated_map = dict(require_map(value, self._PURPOSE))
            updated_map.update(self._insertions(record, with_schema=False))
            return self.new_record(record, None, updated_map)
        struct = require_struct(value, self._PURPOSE)
        updated_schema = self._updated_schema(struct.schema, self._make_schema)
        updated = Struct(updated_schema)
        for f in struct.schema.fields:
            updated.put(f.name, struct.get(f) if self.replace_null_with_default else struct.get_without_default(f))
        for name, field_value in self._insertions(record, with_schema=True):
            updated.put(name, field_value)
        return self.new_record(record, updated_schema, updated)



InsertFieldKey, InsertFieldValue = variants(InsertField)
