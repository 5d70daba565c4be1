"""Confluent's ``io.confluent.connect.json.JsonSchemaConverter``: Connect data as JSON in Confluent's wire format
(magic byte 0, the schema's 4-byte registry id, the JSON text), with JSON Schemas in a Schema Registry.

Example (a registry at ``url``)::

    c = JsonSchemaConverter()
    c.configure({"schema.registry.url": url}, is_key=False)
    data = c.from_connect_data("orders", schema, struct)   # registers orders-value once, then cached
    c.to_connect_data("orders", data)                      # SchemaAndValue(schema, struct)
"""

from __future__ import annotations

from typing import Any

from connect_magics.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    Importance,
    Type,
)
from connect_magics.api.converters import (
    NULL_SCHEMA_AND_VALUE,
    Converter,
    SchemaAndValue,
    _quote,
    converter_config_def,
)
from connect_magics.api.data import LRUCache, Schema
from connect_magics.api.errors import DataException, RetriableException
from connect_magics.api.records import Headers
from connect_magics.converters.json_schema_data import (
    _MISSING,
    JsonSchemaData,
    JsonSchemaDataConfig,
    _dump,
    _loads,
)
from connect_magics.converters.schema_registry import (
    Registry,
    define_registry_settings,
    split_wire,
    wire_header,
)

__all__ = ["JsonSchemaConverter"]

DRAFT_7 = "http://json-schema.org/draft-07/schema#"

# Settings of Confluent's serializer and deserializer configs that shape Java objects, not JsonNodes: accepted
# for compatibility, without effect on a converter (whose values are always JSON trees).
_JAVA_OBJECT_SETTINGS = [
    ("json.fail.unknown.properties", Type.BOOLEAN, True, "Fail on unknown properties of Java classes."),
    ("json.write.dates.iso8601", Type.BOOLEAN, False, "Write Java dates as ISO 8601 strings."),
    ("json.schema.spec.version", Type.STRING, "draft_7", "The JSON Schema version of schemas derived from classes."),
    ("json.oneof.for.nullables", Type.BOOLEAN, True, "Use oneOf for nullable fields of derived schemas."),
    ("json.key.type", Type.STRING, "java.lang.Object", "The Java class of deserialized keys."),
    ("json.value.type", Type.STRING, "java.lang.Object", "The Java class of deserialized values."),
]


def json_schema_converter_config_def() -> ConfigDef:
    """``JsonSchemaConverterConfig`` with ``JsonSchemaDataConfig`` and the JSON serde settings."""
    config_def = (define_registry_settings(converter_config_def())
                  .define("json.fail.invalid.schema", Type.BOOLEAN, False, None, Importance.MEDIUM,
                          "Whether to fail serialization or deserialization if the payload does not match the "
                          "schema")
                  .define("json.indent.output", Type.BOOLEAN, False, None, Importance.LOW,
                          "Whether JSON output should be indented (\"pretty-printed\")")
                  .define("object.additional.properties", Type.BOOLEAN, True, None, Importance.MEDIUM,
                          "Whether to allow additional properties for object schemas.")
                  .define("use.optional.for.nonrequired", Type.BOOLEAN, False, None, Importance.MEDIUM,
                          "Whether to set non-required properties to be optional.")
                  .define("ignore.modern.dialects", Type.BOOLEAN, False, None, Importance.LOW,
                          "Whether to ignore modern dialects of JSON Schema after draft 7 (read alike here).")
                  .define("decimal.format", Type.STRING, "BASE64",
                          CaseInsensitiveValidString.in_("BASE64", "NUMERIC"), Importance.LOW,
                          "Controls which format this converter will serialize decimals in. This value is case "
                          "insensitive and can be either 'BASE64' (default) or 'NUMERIC'")
                  .define("flatten.singleton.unions", Type.BOOLEAN, True, None, Importance.LOW,
                          "Whether to flatten singleton unions")
                  .define("preserve.additional.properties", Type.BOOLEAN, False, None, Importance.MEDIUM,
                          "Preserve undeclared JSON properties (not supported by this converter: must be false).")
                  .define("generalized.sum.type.support", Type.BOOLEAN, False, None, Importance.MEDIUM,
                          "Toggle for enabling/disabling generalized sum type support: interoperability of "
                          "enum/union with other schema formats")
                  .define("ignore.default.for.nullables", Type.BOOLEAN, False, None, Importance.MEDIUM,
                          "Whether to ignore the default for nullable fields when the value is null")
                  .define("schemas.cache.config", Type.INT, 1000, None, Importance.LOW,
                          "Size of the converted schemas cache"))
    for name, type_, default, doc in _JAVA_OBJECT_SETTINGS:
        config_def.define(name, type_, default, None, Importance.LOW, doc + " No effect on a converter.")
    return config_def


class JsonSchemaConverter(Converter):
    """Confluent's JsonSchemaConverter, byte-compatible with it and with confluent-kafka's ``JSONSerializer`` and
    ``JSONDeserializer`` (see the module docstring for an example)."""

    ALIASES: tuple[str, ...] = ("io.confluent.connect.json.JsonSchemaConverter",)

    def config_def(self) -> ConfigDef:
        return json_schema_converter_config_def()

    def configure(self, configs: Any, is_key: bool) -> None:
        settings = {k: v for k, v in dict(configs).items() if k != "converter.type"}
        config = AbstractConfig(self.config_def(), {**settings, "converter.type": "key" if is_key else "value"})
        if config.get("preserve.additional.properties"):
            raise ConfigException("preserve.additional.properties", True,
                                  "not supported by this converter (it needs Confluent's Variant type)")
        self.is_key = is_key
        self.registry = Registry(settings, "JSON")
        self.validate: bool = config.get("json.fail.invalid.schema")
        self.indent: bool = config.get("json.indent.output")
        self.data = JsonSchemaData(JsonSchemaDataConfig(
            object_additional_properties=config.get("object.additional.properties"),
            use_optional_for_nonrequired=config.get("use.optional.for.nonrequired"),
            decimal_format=config.get("decimal.format").upper(),
            flatten_singleton_unions=config.get("flatten.singleton.unions"),
            generalized_sum_type_support=config.get("generalized.sum.type.support"),
            ignore_default_for_nullables=config.get("ignore.default.for.nullables"),
            schemas_cache_size=config.get("schemas.cache.config")))
        self._cache_size: int = max(1, config.get("schemas.cache.config"))
        self._reset_compiled()

    def _reset_compiled(self) -> None:
        self._writers = LRUCache(self._cache_size)  # Connect schema -> (text, document, record name)
        self._readers: dict[int, tuple[Schema | None, Any]] = {}  # schema id -> (Connect schema, schema text)
        self._validators: dict[str, Any] = {}  # schema text -> jsonschema validator
        self._alternates: dict[str, str] = {}  # schema text -> the text with $schema the registry took instead

    def __getstate__(self) -> dict[str, Any]:  # converters travel to Spark executors pickled
        return {k: v for k, v in self.__dict__.items() if k not in ("_writers", "_readers", "_validators",
                                                                   "_alternates")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset_compiled()

    # -------------------------------------------------------------------------------- Connect -> bytes
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers | None = None) -> bytes | None:
        if schema is None and value is None:
            return None
        if schema is None:
            raise DataException(f"Converting Kafka Connect data to byte[] failed due to serialization error of "
                                f"topic {topic}: the JSON Schema converter needs a schema (schemaless value)")
        try:
            text, document, record_name = self._writer(schema)
            node = self.data.from_connect_data(schema, value)
            if node is _MISSING:
                return None
            subject = self.registry.subject(topic, self.is_key, record_name)
            if self.registry.use_latest:
                schema_id, latest = self.registry.latest(subject)
                text = latest.schema_str
            else:
                schema_id, text = self._register(subject, text, document)
            if self.validate:
                self._check(text, node, "Validation error in JSON")
            payload = _pretty(node, 0) if self.indent else _dump(node)
            return wire_header(schema_id) + payload.encode("utf-8")
        except (DataException, RetriableException) as e:
            raise type(e)(f"Converting Kafka Connect data to byte[] failed due to serialization error of topic "
                          f"{topic}: {e}") from e.__cause__

    def _register(self, subject: str, text: str, document: Any) -> tuple[int, str]:
        """The id of the schema (registered or looked up) and the text the registry took.

        Confluent's registry takes the document as Java writes it. Apicurio's refuses a JSON Schema it cannot
        recognize as one (a top-level ``"type": "string"``, an object without ``properties``) unless it names its
        ``$schema``: for it, the same document with ``"$schema"`` (draft 7, what Confluent's serializers assume)
        first, once per schema.
        """
        text = self._alternates.get(text, text)
        try:
            return self.registry.id_for(subject, text), text
        except DataException as e:
            if "HTTP status code 422" not in str(e) or not isinstance(document, dict) or "$schema" in document:
                raise
            alternate = _dump({"$schema": DRAFT_7, **document})
            try:
                found = self.registry.id_for(subject, alternate)
            except DataException:
                raise e from None
            self._alternates[text] = alternate
            return found, alternate

    def _writer(self, schema: Schema) -> tuple[str, Any, str | None]:
        cached = self._writers.get(schema)
        if cached is None:
            document = self.data.from_connect_schema(schema)
            title = document.get("title") if isinstance(document, dict) else None
            cached = (_dump(document), document, title)
            self._writers.put(schema, cached)
        return cached

    # -------------------------------------------------------------------------------- bytes -> Connect
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers | None = None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        try:
            schema_id, payload = split_wire(data)
            schema, text = self._readers.get(schema_id) or self._reader(topic, schema_id)
            try:
                node = _loads(bytes(payload))
            except ValueError as e:
                raise DataException(f"Invalid JSON: {e}") from e
            if self.validate:
                self._check(text, node, "Validation error in JSON")
            return SchemaAndValue(schema, self.data.to_connect_data(schema, node))
        except (DataException, RetriableException) as e:
            raise type(e)(f"Converting byte[] to Kafka Connect data failed due to serialization error of topic "
                          f"{topic}: {e}") from e.__cause__

    def _reader(self, topic: str, schema_id: int) -> tuple[Schema | None, str]:
        registered = self.registry.schema(schema_id)
        if registered.schema_type not in (None, "JSON"):
            raise DataException(f"Schema {schema_id} is {registered.schema_type}, not JSON: the topic {topic} "
                                f"needs the matching converter")
        if registered.references:
            raise DataException(f"Schema {schema_id} refers to other schemas: references are not supported by "
                                f"this converter")
        try:
            document = _loads(registered.schema_str.encode("utf-8"))
        except ValueError as e:
            raise DataException(f"Schema {schema_id} is not valid JSON: {e}") from e
        title = document.get("title") if isinstance(document, dict) else None
        try:
            subject = self.registry.subject(topic, self.is_key, title)
            version = self.registry.version(subject, schema_id)
        except DataException:
            version = None
        schema = self.data.to_connect_schema(document, version)
        entry = (schema, registered.schema_str)
        self._readers[schema_id] = entry
        return entry

    def _check(self, text: str, node: Any, what: str) -> None:
        """``json.fail.invalid.schema``: validate ``node`` against the schema with the ``jsonschema`` package."""
        validator = self._validators.get(text)
        if validator is None:
            import jsonschema

            document = _loads(text.encode("utf-8"))
            cls = jsonschema.validators.validator_for(document, default=jsonschema.Draft7Validator)
            validator = cls(document)
            self._validators[text] = validator
        errors = sorted(validator.iter_errors(node), key=lambda e: list(e.absolute_path))
        if errors:
            report = "; ".join(f"#/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
            raise DataException(f"{what}, Error report: {report}")


def _pretty(node: Any, level: int) -> str:
    """``json.indent.output``: the text Jackson's default pretty printer writes."""
    if isinstance(node, dict):
        if not node:
            return "{ }"
        pad = "\n" + "  " * (level + 1)
        return "{" + ",".join(pad + _quote(k) + " : " + _pretty(v, level + 1) for k, v in node.items()) + \
            "\n" + "  " * level + "}"
    if isinstance(node, list):
        return "[ " + ", ".join(_pretty(v, level) for v in node) + " ]" if node else "[ ]"
    return _dump(node)
