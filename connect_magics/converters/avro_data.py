"""Connect schemas and values to Avro schemas and datums and back, as Confluent's ``AvroData`` maps them.

An Avro schema here is its JSON form as Python data (what ``json.loads`` gives), written the way Avro's Java
``Schema.toString()`` writes it: a named type in full once, then by name; namespaces only where they change.
Datums are what fastavro reads and writes: dicts for records, and Python's ``Decimal``, ``date``, ``time`` and
``datetime`` for the logical types (the same objects Connect uses for Decimal, Date, Time and Timestamp).

>>> from connect_magics.api.data import SchemaBuilder, INT64_SCHEMA, OPTIONAL_STRING_SCHEMA
>>> schema = SchemaBuilder.struct().name("shop.Order").field("id", INT64_SCHEMA) \\
...     .field("note", OPTIONAL_STRING_SCHEMA).build()
>>> avro = AvroData().from_connect_schema(schema)
>>> avro["name"], avro["fields"][1]
('Order', {'name': 'note', 'type': ['null', 'string'], 'default': None})
>>> AvroData().to_connect_schema(avro) == schema
True
"""

from __future__ import annotations

import decimal
import json
import math
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import fastavro
from fastavro.schema import SchemaParseException, UnknownType

from connect_magics.api.data import (
    STRING_SCHEMA,
    Date,
    Decimal,
    LRUCache,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from connect_magics.api.errors import DataException

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = f"{NAMESPACE}.{DEFAULT_SCHEMA_NAME}"
MAP_ENTRY_TYPE_NAME = "MapEntry"
CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_RECORD_DOC_PROP = "connect.record.doc"  # discard.type.doc.default: a named type's own doc
CONNECT_ENUM_DOC_PROP = "connect.enum.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = f"{NAMESPACE}.record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = f"{NAMESPACE}.enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = f"{NAMESPACE}.field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = f"{NAMESPACE}.field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = f"{NAMESPACE}.enum.default."
AVRO_TYPE_UNION = f"{NAMESPACE}.Union"
AVRO_TYPE_ENUM = f"{NAMESPACE}.Enum"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
DECIMAL_PRECISION_DEFAULT = 64

_PRIMITIVES = {SchemaType.INT8: "int", SchemaType.INT16: "int", SchemaType.INT32: "int", SchemaType.INT64: "long",
               SchemaType.FLOAT32: "float", SchemaType.FLOAT64: "double", SchemaType.BOOLEAN: "boolean",
               SchemaType.STRING: "string", SchemaType.BYTES: "bytes"}
_NARROW_INTS = {SchemaType.INT8: "int8", SchemaType.INT16: "int16"}
_LOGICAL_TYPES = {Time.LOGICAL_NAME: "time-millis", Timestamp.LOGICAL_NAME: "timestamp-millis",
                  Date.LOGICAL_NAME: "date"}
_NAMED = frozenset({"record", "enum", "fixed"})
_VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class AvroDataConfig:
    """The settings of Confluent's ``AvroDataConfig`` that change the mapping (their defaults are Confluent's)."""

    connect_meta_data: bool = True
    enhanced_avro_schema_support: bool = False
    scrub_invalid_names: bool = False
    schemas_cache_size: int = 1000
    allow_optional_map_keys: bool = False
    flatten_singleton_unions: bool = True
    discard_type_doc_default: bool = False
    ignore_default_for_nullables: bool = False  # values: a null field is written null, not as its default


def scrub_name(name: str) -> str:
    """Confluent's ``doScrubName``: an Avro-valid name (URL-encoded, then anything else as ``_``).

    >>> scrub_name("my-field"), scrub_name("1st")
    ('my_field', 'x1st')
    """
    if not name or _VALID_NAME.match(name):
        return name
    encoded = urllib.parse.quote_plus(name, safe="*-._")
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return re.sub(r"[^A-Za-z0-9_]", "_", encoded)


class _Named(dict):
    """A named Avro type under construction (record, enum, fixed): written in full once, then by name."""

    def full_name(self) -> str:
        return f"{self['namespace']}.{self['name']}" if self.get("namespace") else self["name"]


class AvroData:
    """Confluent's ``AvroData``: Connect schemas and values to Avro and back, caching each schema's mapping.

    >>> from connect_magics.api.data import Decimal as ConnectDecimal
    >>> AvroData().from_connect_schema(ConnectDecimal.schema(2))["logicalType"]
    'decimal'
    """

    def __init__(self, config: AvroDataConfig | None = None) -> None:
        self.config = config or AvroDataConfig()
        self._avro_schemas = LRUCache(self.config.schemas_cache_size)  # Connect schema -> Avro schema
        self._connect_schemas = LRUCache(self.config.schemas_cache_size)  # (Avro text, version) -> Connect schema
        # id(schema) -> (schema, its value writer / reader): callers pass the same schema object again and
        # again, and hashing a Connect schema walks all of it
        self._writers: dict[int, tuple[Schema, Callable[[Any], Any]]] = {}
        self._readers: dict[int, tuple[Schema, Callable[[Any], Any]]] = {}

    def __getstate__(self) -> dict[str, Any]:  # converters travel to Spark executors pickled
        return {**self.__dict__, "_writers": {}, "_readers": {}}

    def _function(self, functions: dict[int, tuple[Schema, Callable[[Any], Any]]], schema: Schema,
                  make: Callable[[Schema, AvroDataConfig], Callable[[Any], Any]]) -> Callable[[Any], Any]:
        entry = functions.get(id(schema))
        if entry is None or entry[0] is not schema:
            if len(functions) >= self.config.schemas_cache_size:
                functions.clear()
            entry = functions[id(schema)] = (schema, make(schema, self.config))
        return entry[1]

    # ------------------------------------------------------------------------------- Connect -> Avro
    def from_connect_schema(self, schema: Schema) -> Any:
        """The Avro schema (JSON data) Confluent's AvroData gives a Connect schema."""
        if schema is None:
            raise DataException("The Avro converter needs a schema: schemaless values are not supported")
        cached = self._avro_schemas.get(schema)
        if cached is None:
            tree = _FromConnect(self.config).convert(schema, ignore_optional=False)
            cached = _to_json(tree, {}, None)
            self._avro_schemas.put(schema, cached)
        return cached

    def from_connect_data(self, schema: Schema, value: Any) -> Any:
        """The fastavro datum of a Connect value of ``schema`` (checked against it, as Java's casts do: a
        struct's fields were checked when put)."""
        return self.writer(schema)(value)

    def writer(self, schema: Schema) -> Callable[[Any], Any]:
        """:meth:`from_connect_data` for values of one ``schema``, made once (for a converter to keep)."""
        write = self._function(self._writers, schema, _writer)
        if schema is None or schema.type is SchemaType.STRUCT:
            return write

        def checked(value: Any) -> Any:
            validate_value(schema, value)
            return write(value)
        return checked

    # ------------------------------------------------------------------------------- Avro -> Connect
    def to_connect_schema(self, avro: Any, version: int | None = None) -> Schema:
        """The Connect schema of an Avro schema (JSON data or text); ``version``: the registry's, used when
        the schema carries no ``connect.version``."""
        key = (avro if isinstance(avro, str) else _canonical_text(avro), version)
        cached = self._connect_schemas.get(key)
        if cached is None:
            named: dict[str, Any] = {}
            try:
                parsed = fastavro_schema(avro, named)
            except (SchemaParseException, UnknownType, json.JSONDecodeError) as e:
                raise DataException(f"Invalid Avro schema: {type(e).__name__}: {e}") from e
            cached = _ToConnect(self.config, named).convert(parsed, False, None, version)
            self._connect_schemas.put(key, cached)
        return cached

    def to_connect_data(self, schema: Schema, datum: Any) -> Any:
        """The Connect value of a fastavro datum read by the Avro schema ``schema`` was made from."""
        return self._function(self._readers, schema, reader)(datum)

    def reader(self, schema: Schema) -> Callable[[Any], Any]:
        """A function from fastavro datums to Connect values of ``schema``, for this mapping's settings."""
        return reader(schema, self.config)


def fastavro_schema(avro: Any, named_schemas: dict[str, Any] | None = None) -> Any:
    """fastavro's parsed form of an Avro schema (JSON data or text), as lenient as Avro's Java parser: an
    invalid field default is ignored; a decimal whose scale and precision Avro's spec refuses (AvroData
    writes scale 7 with precision 5 as it is) is read as its underlying bytes, the value written unscaled; and
    a bare name in a namespace that has no such type is the type of that name without namespace (Avro's Java
    ``toString()`` writes such references, for a dotless Connect name met twice inside a dotted one).

    >>> fastavro_schema({"type": "bytes", "logicalType": "decimal", "scale": 7, "precision": 5})["logicalType"]
    'connect-legacy-decimal'
    >>> inner = {"type": "record", "name": "A", "namespace": "", "fields": []}
    >>> fastavro_schema({"type": "record", "name": "n.R", "fields": [{"name": "a", "type": inner},
    ...                                                              {"name": "b", "type": "A"}]})["fields"][1]
    {'name': 'b', 'type': 'n.A'}
    """
    named = {} if named_schemas is None else named_schemas
    tree = _lenient(_json(avro))
    aliases = _anonymous_references(tree)
    named.update(dict.fromkeys(aliases, {}))  # fastavro wants the name known when it meets the reference
    parsed = fastavro.parse_schema(tree, named, _ignore_default_error=True)
    for alias, name in aliases.items():
        named[alias] = named[name]
    if isinstance(parsed, dict) and "__fastavro_parsed" not in parsed:
        # fastavro marks parsed records only, and parses anything else again for each datum: again, a record
        # with namespace "" inside a namespace would take that namespace
        parsed["__fastavro_parsed"], parsed["__named_schemas"] = True, named
    return parsed


_AVRO_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def _anonymous_references(avro: Any) -> dict[str, str]:
    """The bare names Avro's Java parser resolves to a type without namespace, by the full name fastavro looks
    up instead (``{"n.A": "A"}``): names met in a namespace that has no type of that name (yet)."""
    defined: set[str] = set()
    found: dict[str, str] = {}

    def walk(node: Any, space: str | None) -> None:
        if isinstance(node, list):
            for member in node:
                walk(member, space)
        elif isinstance(node, str):
            if space and "." not in node and node not in _AVRO_PRIMITIVES and f"{space}.{node}" not in defined \
                    and node in defined:
                found[f"{space}.{node}"] = node
        elif isinstance(node, dict):
            t = node.get("type")
            if t in ("record", "error", "enum", "fixed"):
                name = node["name"]
                space = name.rpartition(".")[0] if "." in name else node.get("namespace", space) or None
                defined.add(name if "." in name or not space else f"{space}.{name}")
                for f in node.get("fields", []):
                    walk(f["type"], space)
            elif t in ("array", "map"):
                walk(node["items" if t == "array" else "values"], space)
            else:
                walk(t, space)  # {"type": <a schema>}

    walk(avro, None)
    return found


_LEGACY_DECIMAL = "connect-legacy-decimal"  # a logical type fastavro does not know: it reads the bytes


def _lenient(node: Any) -> Any:
    if isinstance(node, list):
        return [_lenient(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: (_lenient(v) if k in ("type", "items", "values", "fields") else v) for k, v in node.items()}
    if out.get("logicalType") == "decimal" and not _valid_decimal(out):
        out["logicalType"] = _LEGACY_DECIMAL
    return out


def _valid_decimal(node: Mapping[str, Any]) -> bool:
    scale, precision = node.get("scale", 0), node.get("precision")
    if not isinstance(scale, int) or not isinstance(precision, int) or not 0 <= scale <= precision:
        return False
    return node["type"] != "fixed" or precision <= math.floor(math.log10(2) * (8 * node["size"] - 1))


def _json(avro: Any) -> Any:
    """Avro schema text parsed, or JSON data as it is (a primitive's JSON data is its bare name)."""
    if isinstance(avro, str) and avro.lstrip()[:1] in ("{", "[", '"'):
        return json.loads(avro)
    return avro


def _canonical_text(avro: Any) -> str:
    return json.dumps(avro, separators=(",", ":"))


# ------------------------------------------------------------------------------------ schema: Connect -> Avro

class _FromConnect:
    """One conversion: its unnamed-record counter and the Avro types already made (reused, as Java's)."""

    def __init__(self, config: AvroDataConfig) -> None:
        self.config = config
        self.name_index = 0
        self.made: dict[Schema, Any] = {}
        self.field_type_names: set[str] = set()  # full names of the named field schemas met so far

    def names(self, name: str | None) -> tuple[str | None, str]:
        if name is None:
            self.name_index += 1
            return NAMESPACE, DEFAULT_SCHEMA_NAME + (str(self.name_index) if self.name_index > 1 else "")
        space, _, short = name.rpartition(".")
        if self.config.scrub_invalid_names:
            space = ".".join(scrub_name(part) for part in space.split(".")) if space else space
            short = scrub_name(short)
        return (space or None), short

    def convert(self, schema: Schema, ignore_optional: bool) -> Any:
        if not schema.optional and not _is_union(schema) and schema in self.made:
            return self.made[schema]
        params = schema.parameters or {}
        connect_type = _NARROW_INTS.get(schema.type)
        base: Any
        if schema.type is SchemaType.STRING and self.config.enhanced_avro_schema_support and AVRO_TYPE_ENUM in params:
            space, short = self.names(schema.name)
            prefix = AVRO_TYPE_ENUM + "."
            enum_space, _, enum_short = params[AVRO_TYPE_ENUM].rpartition(".")
            base = _Named(type="enum", name=enum_short, namespace=enum_space or None,
                          doc=params.get(CONNECT_ENUM_DOC_PROP if self.config.discard_type_doc_default
                                         else AVRO_ENUM_DOC_PREFIX_PROP + short),
                          symbols=[k[len(prefix):] for k in params if k.startswith(prefix)])
            if not self.config.discard_type_doc_default and params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + short) is not None:
                base["default"] = params[AVRO_ENUM_DEFAULT_PREFIX_PROP + short]
        elif schema.type is SchemaType.BYTES and schema.name is not None and CONNECT_AVRO_FIXED_SIZE_PROP in params:
            space, short = self.names(schema.name)
            base = _Named(type="fixed", name=short, namespace=space, size=int(params[CONNECT_AVRO_FIXED_SIZE_PROP]))
        elif schema.type in _PRIMITIVES:
            base = {"type": _PRIMITIVES[schema.type]}
        elif schema.type is SchemaType.ARRAY:
            base = {"type": "array", "items": self.convert(schema.value_schema, False)}
        elif schema.type is SchemaType.MAP:
            base = self.map_schema(schema)
        elif _is_union(schema):
            members = ["null"] if schema.optional else []
            members += [self.convert(_required(f.schema), True) for f in schema.fields]
            names = [m if isinstance(m, str) else m.full_name() if isinstance(m, _Named) else m["type"] for m in members]
            duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
            if duplicate is not None:  # as Avro's Schema.createUnion refuses it
                raise DataException(f"Duplicate in union: {duplicate}")
            return members
        elif schema.optional:
            base = ["null", self.convert(_required(schema), False)]
        else:
            base = self.record(schema, params)
        if isinstance(base, dict):
            if schema.type is SchemaType.BYTES and schema.name == Decimal.LOGICAL_NAME:
                base["scale"] = int(params[Decimal.SCALE_FIELD])
                base["precision"] = int(params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP, DECIMAL_PRECISION_DEFAULT))
            self.annotate(schema, base, params, connect_type)
            if not ignore_optional:
                base = _optional(schema, base)
        if not schema.optional:
            self.made[schema] = base
        return base

    def map_schema(self, schema: Schema) -> Any:
        key = schema.key_schema
        if key.type is SchemaType.STRING and (not key.optional or self.config.allow_optional_map_keys):
            return {"type": "map", "values": self.convert(schema.value_schema, False)}
        if schema.name is None:
            entry = _Named(type="record", name=MAP_ENTRY_TYPE_NAME, namespace=NAMESPACE)
        else:
            space, short = self.names(schema.name)
            entry = _Named(type="record", name=short, namespace=space)
            entry[CONNECT_INTERNAL_TYPE_NAME] = MAP_ENTRY_TYPE_NAME
        entry["fields"] = [self.field("key", key, None), self.field("value", schema.value_schema, None)]
        return {"type": "array", "items": entry}

    def record(self, schema: Schema, params: Mapping[str, str]) -> _Named:
        space, short = self.names(schema.name)
        discard = self.config.discard_type_doc_default  # docs as Connect docs, not parameters
        record = _Named(type="record", name=short, namespace=space,
                        doc=params.get(CONNECT_RECORD_DOC_PROP if discard else AVRO_RECORD_DOC_PROP))
        scrub = scrub_name if self.config.scrub_invalid_names else str
        record["fields"] = [self.field(scrub(f.name), f.schema, params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name))
                            for f in schema.fields]
        return record

    def field(self, name: str, schema: Schema, doc: str | None) -> dict[str, Any]:
        type_name = self.full_name(schema.name)
        seen_before = type_name in self.field_type_names
        if type_name is not None:
            self.field_type_names.add(type_name)
        field: dict[str, Any] = {"name": name, "type": self.convert(schema, False)}
        if self.config.discard_type_doc_default:
            doc = schema.doc
        if doc is not None:
            field["doc"] = doc
        if schema.default_value is not None:
            default = _default_json(schema, schema.default_value, self.config)
            if _valid_default(field["type"], default):  # else Avro refuses it, and Java leaves it out
                field["default"] = default
        elif schema.optional:
            field["default"] = None
        params = _shown_parameters(schema.parameters, self.config)
        if self.config.connect_meta_data and seen_before and params and _names_a_type(field["type"]):
            # A named type met again is written by name only: its own parameters go on the field
            field[CONNECT_PARAMETERS_PROP] = params
        return field

    def full_name(self, name: str | None) -> str | None:
        if name is None or not self.config.scrub_invalid_names:
            return name
        return ".".join(scrub_name(part) for part in name.split("."))

    def annotate(self, schema: Schema, base: dict[str, Any], params: Mapping[str, str],
                 connect_type: str | None) -> None:
        if self.config.connect_meta_data:
            if schema.doc is not None:
                base[CONNECT_DOC_PROP] = schema.doc
            if schema.version is not None:
                base[CONNECT_VERSION_PROP] = schema.version
            shown = _shown_parameters(params, self.config)
            if shown:
                base[CONNECT_PARAMETERS_PROP] = shown
            flagged = AVRO_FIELD_DEFAULT_FLAG_PROP in params and not self.config.discard_type_doc_default
            if schema.default_value is not None and not flagged:
                base[CONNECT_DEFAULT_VALUE_PROP] = _default_json(schema, schema.default_value, self.config)
            if schema.name is not None:
                base[CONNECT_NAME_PROP] = schema.name
            if connect_type is not None:
                base[CONNECT_TYPE_PROP] = connect_type
        if schema.name == Decimal.LOGICAL_NAME:
            base["logicalType"] = "decimal"
        elif schema.name in _LOGICAL_TYPES:
            base["logicalType"] = _LOGICAL_TYPES[schema.name]
        for key, value in params.items():
            if key.startswith("avro"):
                base[key] = value


def _shown_parameters(params: Mapping[str, str] | None, config: AvroDataConfig) -> dict[str, str]:
    """The parameters written as ``connect.parameters``: all but the internal field-default flag."""
    if config.discard_type_doc_default:
        return dict(params or {})
    return {k: v for k, v in (params or {}).items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP}


def _valid_default(avro: Any, value: Any) -> bool:
    """Avro's ``isValidDefault``: whether a JSON default fits an Avro type (a union: any member).

    >>> _valid_default({"type": "array", "items": {"type": "int"}}, [[1, 2]]), _valid_default(["null", "int"], 3)
    (False, True)
    """
    if isinstance(avro, list):
        return any(_valid_default(member, value) for member in avro)
    t = avro if isinstance(avro, str) else avro["type"]
    if t in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if t in ("int", "long"):
        limit = 2 ** 31 if t == "int" else 2 ** 63
        return isinstance(value, int) and not isinstance(value, bool) and -limit <= value < limit
    if t in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "array":
        return isinstance(value, list) and all(_valid_default(avro["items"], v) for v in value)
    if t == "map":
        return isinstance(value, dict) and all(_valid_default(avro["values"], v) for v in value.values())
    if t == "record":  # each field given, or defaulted by the record
        return isinstance(value, dict) and all(
            (f["name"] in value or "default" in f) and _valid_default(f["type"], value.get(f["name"], f.get("default")))
            for f in avro["fields"])
    return value is None  # null


def _names_a_type(avro: Any) -> bool:
    """Whether a field's Avro type is a named type (record, enum, fixed), or a union with one."""
    members = avro if isinstance(avro, list) else [avro]
    return any(isinstance(m, _Named) for m in members)


def _is_union(schema: Schema) -> bool:
    return schema.type is SchemaType.STRUCT and schema.name == AVRO_TYPE_UNION


def _required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(schema.type, False, schema.default_value, schema.name, schema.version, schema.doc,
                  schema.parameters, schema.fields if schema.type is SchemaType.STRUCT else None,
                  schema.key_schema, schema.value_schema)


def _optional(schema: Schema, base: Any) -> Any:
    if not schema.optional:
        return base
    return [base, "null"] if schema.default_value is not None else ["null", base]


def _default_json(schema: Schema, value: Any, config: AvroDataConfig) -> Any:
    """``defaultValueFromConnect``: a Connect default as the JSON Avro writes for it."""
    if value is None:
        return None
    t = schema.type
    if schema.name == Decimal.LOGICAL_NAME:
        return Decimal.from_logical(schema, value).decode("latin-1")
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    if t is SchemaType.BYTES:
        return bytes(value).decode("latin-1")
    if t is SchemaType.ARRAY:
        return [_default_json(schema.value_schema, v, config) for v in value]
    if t is SchemaType.MAP:
        key = schema.key_schema
        if key.type is SchemaType.STRING and (not key.optional or config.allow_optional_map_keys):
            return {k: _default_json(schema.value_schema, v, config) for k, v in value.items()}
        return [[_default_json(key, k, config), _default_json(schema.value_schema, v, config)]
                for k, v in value.items()]
    if t is SchemaType.STRUCT:
        scrub = scrub_name if config.scrub_invalid_names else str
        node = {}
        for f in schema.fields:
            node[scrub(f.name)] = _default_json(f.schema, value.get(f), config)
            if _is_union(schema):
                return node[scrub(f.name)]
        return node
    return value


def _to_json(node: Any, written: dict[str, _Named], space: str | None) -> Any:
    """Avro's Java ``Schema.toString()`` layout: named types in full once, then by (relative) name.

    A second type of a name is written by that name too, as Java does: fine when only its parameters, docs or
    defaults differ (field-level ``connect.parameters`` keep those), refused when its data differs, since the
    schema would then describe other data than the records written with it (Java writes them unreadable)."""
    if isinstance(node, list):
        return [_to_json(n, written, space) for n in node]
    if isinstance(node, _Named):
        full = node.full_name()
        first = written.get(full)
        if first is not None:
            if first is not node and _shape(first) != _shape(node):
                raise DataException(f"Two different Connect schemas are both named {full}: the Avro schema would "
                                    "name the second by the first, which does not describe its data")
            return node["name"] if node.get("namespace") == space else full
        written[full] = node
        out: dict[str, Any] = {"type": node["type"], "name": node["name"]}
        own = node.get("namespace")
        if own is not None and own != space:
            out["namespace"] = own
        elif own is None and space is not None:
            out["namespace"] = ""
        if node.get("doc") is not None:
            out["doc"] = node["doc"]
        for key, value in node.items():
            if key == "fields":
                out["fields"] = [_field_json(f, written, own) for f in value]
            elif key not in ("type", "name", "namespace", "doc"):
                out[key] = value
        return out
    if isinstance(node, dict):
        if len(node) == 1 and node["type"] not in ("array", "map"):
            return node["type"]
        return {k: (_to_json(v, written, space) if k in ("items", "values") else v) for k, v in node.items()}
    return node


def _shape(node: Any) -> Any:
    """What an Avro type (as built here) says of the data: its structure, without docs, properties, defaults."""
    if isinstance(node, list):
        return tuple(_shape(n) for n in node)
    if isinstance(node, str):
        return node
    shape: tuple[Any, ...] = tuple(node.get(k) for k in ("type", "logicalType", "scale", "precision", "size"))
    if isinstance(node, _Named):
        shape += (node.full_name(), tuple(node.get("symbols") or ()))
    shape += tuple((f["name"], _shape(f["type"])) for f in node.get("fields", ()))
    return shape + tuple(_shape(node[k]) for k in ("items", "values") if k in node)


def _field_json(field: dict[str, Any], written: dict[str, _Named], space: str | None) -> dict[str, Any]:
    return {k: (_to_json(v, written, space) if k == "type" else v) for k, v in field.items()}


# ------------------------------------------------------------------------------------ schema: Avro -> Connect

class _ToConnect:
    """One conversion of a parsed (fastavro) Avro schema; ``named``: its named types by full name."""

    def __init__(self, config: AvroDataConfig, named: dict[str, Any]) -> None:
        self.config = config
        self.named = named
        self.open: set[str] = set()

    def convert(self, avro: Any, force_optional: bool, field_default: Any, version: int | None,
                has_default: bool = False, field_doc: str | None = None) -> Schema:
        if isinstance(avro, str) and avro in self.named:
            if avro in self.open:
                raise DataException(f"Recursive Avro schemas are not supported (type {avro} contains itself)")
            avro = self.named[avro]
        if isinstance(avro, list):
            member = self.flattened(avro)
            if member is not None:  # a singleton union or [null, X]: the field default is dropped, as Java does
                return self.convert(member, len(avro) == 2, None, None, field_doc=field_doc)
        node = {"type": "union"} if isinstance(avro, list) else {"type": avro} if isinstance(avro, str) else avro
        t = node["type"]
        logical = node.get("logicalType")
        if logical == _LEGACY_DECIMAL:
            logical = "decimal"
        meta = self.config.connect_meta_data
        discard = self.config.discard_type_doc_default
        if t == "union":
            builder = self.union(avro)
        elif t == "boolean":
            builder = SchemaBuilder.boolean()
        elif t in ("bytes", "fixed"):
            if logical == "decimal":
                builder = Decimal.builder(node.get("scale", 0) if isinstance(node.get("scale"), int) else 0)
                precision = node.get("precision")
                if precision is not None:
                    if not isinstance(precision, int):
                        raise DataException("precision property must be a JSON Integer. "
                                            "https://avro.apache.org/docs/1.9.1/spec.html#Decimal")
                    if precision != DECIMAL_PRECISION_DEFAULT:
                        builder.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, str(precision))
            else:
                builder = SchemaBuilder.bytes()
            if t == "fixed":
                builder.parameter(CONNECT_AVRO_FIXED_SIZE_PROP, str(node["size"]))
        elif t == "double":
            builder = SchemaBuilder.float64()
        elif t == "float":
            builder = SchemaBuilder.float32()
        elif t == "int":
            narrow = node.get(CONNECT_TYPE_PROP)
            if logical == "date":
                builder = Date.builder()
            elif logical == "time-millis":
                builder = Time.builder()
            elif narrow is not None and logical is None:
                if narrow not in ("int8", "int16"):
                    raise DataException("Connect type annotation for Avro int field is null")
                builder = SchemaBuilder.int8() if narrow == "int8" else SchemaBuilder.int16()
            else:
                builder = SchemaBuilder.int32()
        elif t == "long":
            builder = Timestamp.builder() if logical == "timestamp-millis" else SchemaBuilder.int64()
        elif t == "string":
            builder = SchemaBuilder.string()
        elif t == "array":
            items = node["items"]
            entry = self.named.get(items, items) if isinstance(items, str) else items
            if _is_map_entry(entry):
                fields = {f["name"]: f["type"] for f in entry["fields"]}
                if set(fields) != {"key", "value"}:
                    raise DataException("Found map encoded as array of key-value pairs, but array elements do "
                                        "not match the expected format.")
                if entry["name"] in self.open:  # a map of maps (all entries are MapEntry) reads as recursive
                    raise DataException(f"Recursive Avro schemas are not supported (type {entry['name']} "
                                        "contains itself)")
                self.open.add(entry["name"])
                builder = SchemaBuilder.map(self.convert(fields["key"], False, None, None),
                                            self.convert(fields["value"], False, None, None))
                self.open.discard(entry["name"])
            else:
                builder = SchemaBuilder.array(self.convert(items, False, None, None))
        elif t == "map":
            builder = SchemaBuilder.map(STRING_SCHEMA, self.convert(node["values"], False, None, None))
        elif t == "record":
            builder = self.record(node)
        elif t == "enum":
            builder = SchemaBuilder.string()
            short = node["name"].rpartition(".")[2]
            if meta and node.get("doc") is not None:
                builder.parameter(CONNECT_ENUM_DOC_PROP if discard else AVRO_ENUM_DOC_PREFIX_PROP + short, node["doc"])
            if meta and not discard and node.get("default") is not None:
                builder.parameter(AVRO_ENUM_DEFAULT_PREFIX_PROP + short, node["default"])
            builder.parameter(AVRO_TYPE_ENUM, node["name"])
            for symbol in node["symbols"]:
                builder.parameter(f"{AVRO_TYPE_ENUM}.{symbol}", symbol)
        elif t == "null":
            raise DataException("Standalone null schemas are not supported by this converter")
        else:
            raise DataException(f"Couldn't translate unsupported schema type {t}.")

        type_doc = node.get("doc") if t in _NAMED else None
        if discard:  # the field's doc, else the type's, is the Connect doc
            doc = next((d for d in (field_doc, type_doc, node.get(CONNECT_DOC_PROP)) if d is not None), None)
            if doc is not None:
                builder.doc(doc)
            if meta and type_doc is not None:
                builder.parameter(CONNECT_RECORD_DOC_PROP, type_doc)
        elif meta and node.get(CONNECT_DOC_PROP) is not None:
            builder.doc(node[CONNECT_DOC_PROP])
        connect_version = node.get(CONNECT_VERSION_PROP)
        if connect_version is not None and not isinstance(connect_version, int):
            raise DataException(f"Invalid Connect version found: {connect_version}")
        wanted = connect_version if connect_version is not None else version
        if wanted is not None and wanted >= 0:
            built_version = builder._props.get("version")
            if built_version is not None and built_version != wanted:
                raise DataException(f"Mismatched versions: version already added to SchemaBuilder ({built_version}) "
                                    f"differs from version in source schema ({wanted})")
            builder.version(wanted)
        parameters = node.get(CONNECT_PARAMETERS_PROP)
        if meta and parameters is not None:
            if not isinstance(parameters, dict):
                raise DataException(f"Expected JSON object for schema parameters but found: {parameters}")
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise DataException(f"Expected schema parameter values to be strings but found: {value}")
                builder.parameter(key, value)
        for key, value in node.items():
            if key.startswith("avro"):
                builder.parameter(key, str(value))
        connect_default = node.get(CONNECT_DEFAULT_VALUE_PROP)
        if has_default:
            try:
                field_default = self.to_object(field_default, avro)
            except (DataException, KeyError):  # Avro cannot read it: Java goes on without
                has_default = False
        if has_default and meta and not discard and connect_default is None:
            builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")
        name = node.get(CONNECT_NAME_PROP)
        if name is None and (t in ("record", "enum") or (t == "fixed" and logical != "decimal")):
            name = node["name"]
        if name is not None and not name.startswith(DEFAULT_SCHEMA_FULL_NAME):
            built_name = builder._props.get("name")
            if built_name is not None and built_name != name:
                raise DataException(f"Mismatched names: name already added to SchemaBuilder ({built_name}) "
                                    f"differs from name in source schema ({name})")
            builder.name(name)
        if force_optional:
            builder.optional()
        try:
            if has_default:
                default = self.from_object(builder.build(), field_default)
            else:
                default = self.json_default(builder.build(), avro, connect_default)
            if default is not None:
                builder.default_value(default)
        except (DataException, ValueError, TypeError, KeyError, AttributeError):
            pass  # Confluent logs and ignores an invalid default
        return builder.build()

    def record(self, node: dict[str, Any]) -> SchemaBuilder:
        builder = SchemaBuilder.struct()
        docs = self.config.connect_meta_data and not self.config.discard_type_doc_default
        if docs and node.get("doc") is not None:
            builder.parameter(AVRO_RECORD_DOC_PROP, node["doc"])
        self.open.add(node["name"])
        for field in node["fields"]:
            if docs and field.get("doc") is not None:
                builder.parameter(AVRO_FIELD_DOC_PREFIX_PROP + field["name"], field["doc"])
            schema = self.convert(field["type"], False, field.get("default"), None, has_default="default" in field,
                                  field_doc=field.get("doc"))
            params = field.get(CONNECT_PARAMETERS_PROP)
            if self.config.connect_meta_data and isinstance(params, dict):  # a named type written by name
                schema = _with_parameters(schema, {k: str(v) for k, v in params.items()})
            builder.field(field["name"], schema)
        self.open.discard(node["name"])
        return builder

    def flattened(self, members: list[Any]) -> Any:
        """The member a singleton union or a union of null and one type is read as (else None)."""
        if len(members) == 1 and self.config.flatten_singleton_unions:
            return members[0]
        if len(members) == 2 and "null" in members:
            return members[1] if members[0] == "null" else members[0]
        return None

    # -- defaults, read as Java's AvroData reads them: a field's default through the object Avro's Java API
    # holds for it, connect.default as JSON; in both a union's default is its first member's

    def resolve(self, avro: Any) -> Any:
        return self.named.get(avro, avro) if isinstance(avro, str) else avro

    def to_object(self, value: Any, avro: Any) -> Any:
        """Avro's ``JacksonUtils.toObject``: what Avro's Java API holds for a JSON default of type ``avro``
        (None: null, or a value the type does not take)."""
        avro = self.resolve(avro)
        if isinstance(avro, list):
            return self.to_object(value, avro[0])
        t = avro if avro is None or isinstance(avro, str) else avro["type"]
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            if t in (None, "float", "double"):
                return float(value) if t else value
            return value if t in ("int", "long") and isinstance(value, int) else None
        if isinstance(value, str):
            if t in (None, "string", "enum"):
                return value
            return value.encode("latin-1") if t in ("bytes", "fixed") else None
        if isinstance(value, list):
            if t not in (None, "array"):
                raise DataException(f"Not an array: {avro}")
            return [self.to_object(v, avro["items"] if t else None) for v in value]
        if t == "record":
            types = {f["name"]: f["type"] for f in avro["fields"]}
            return {k: self.to_object(v, types[k]) for k, v in value.items()}
        return {k: self.to_object(v, avro["values"] if t == "map" else None) for k, v in value.items()}

    def from_object(self, schema: Schema, value: Any) -> Any:
        """``toConnectData`` of such an object (or of the Connect default standing in for a record's field)."""
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        t = schema.type
        if t is SchemaType.ARRAY and isinstance(value, list):
            value = [self.from_object(schema.value_schema, v) for v in value]
        elif t is SchemaType.MAP and isinstance(value, dict) and schema.key_schema.type is SchemaType.STRING \
                and not schema.key_schema.optional:
            value = {k: self.from_object(schema.value_schema, v) for k, v in value.items()}
        elif t is SchemaType.MAP and value == []:  # key/value records: Avro's Java API holds none for a default
            value = {}
        elif _is_union(schema):
            member = next((f for f in schema.fields if _held(f.schema, value)), None)
            if member is None:
                raise DataException("Did not find matching union field for data")
            return Struct(schema).put(member, self.from_object(member.schema, value))
        elif t is SchemaType.STRUCT and isinstance(value, dict):
            names = _field_names(schema, self.config)
            struct = Struct(schema)
            for name, f in zip(names, schema.fields, strict=True):
                struct.put(f, self.from_object(f.schema, value.get(name, f.schema.default_value)))
            value = struct
        elif not _fits(t, value):
            raise DataException(f"Invalid type for {t}: {type(value).__name__}")
        return _to_logical(schema, value)

    def json_default(self, schema: Schema, avro: Any, value: Any) -> Any:
        """``defaultValueFromAvro`` of a ``connect.default``: JSON read along the Avro type (a record's missing
        field is null)."""
        if value is None:
            return None
        avro = self.resolve(avro)
        if isinstance(avro, list):
            first = self.resolve(avro[0])
            if first == "null":
                return None
            if not _is_union(schema):
                raise DataException("Cannot look up fields on non-struct type")
            member = schema.field(_union_member_name(first, 0, self.config.enhanced_avro_schema_support))
            return self.json_default(member.schema, first, value)
        t = avro if isinstance(avro, str) else avro["type"]
        if t == "int" and schema.type not in _INTS[:3]:
            return None
        if t in ("int", "long"):
            bits = {SchemaType.INT8: 8, SchemaType.INT16: 16}.get(schema.type, 32) if t == "int" else 64
            raw: Any = _wrap(int(_number(value)), bits)
        elif t in ("float", "double"):
            raw = float(_number(value))
        elif t == "boolean":
            raw = value if isinstance(value, bool) else _number(value) != 0 if not isinstance(value, str) \
                else value.strip() == "true"
        elif t in ("string", "enum"):
            raw = _as_text(value)
        elif t in ("bytes", "fixed"):
            raw = value.encode("latin-1") if isinstance(value, str) else None
        elif t in ("array", "map"):
            if not isinstance(value, list if t == "array" else dict):
                raise DataException(f"Invalid JSON for {t} default value")
            inner = avro["items" if t == "array" else "values"]
            raw = [self.json_default(schema.value_schema, inner, v) for v in value] if t == "array" else \
                {k: self.json_default(schema.value_schema, inner, v) for k, v in value.items()}
        elif t == "record":
            if not isinstance(value, dict):
                raise DataException("Invalid JSON for record default value")
            raw = Struct(schema)
            for f in avro["fields"]:
                connect_field = schema.field(f["name"])
                raw.put(f["name"], self.json_default(connect_field.schema, f["type"], value.get(connect_field.name)))
        else:
            raw = None
        return _to_logical(schema, raw)

    def union(self, members: list[Any]) -> SchemaBuilder:
        builder = SchemaBuilder.struct().name(AVRO_TYPE_UNION)
        seen: set[str] = set()
        for index, member in enumerate(members):
            if member == "null":
                builder.optional()
                continue
            node = self.named.get(member, member) if isinstance(member, str) else member
            field_name = _union_member_name(node, index, self.config.enhanced_avro_schema_support)
            if field_name in seen:
                raise DataException("Multiple union schemas map to the Connect union field name")
            seen.add(field_name)
            builder.field(field_name, self.convert(member, True, None, None))
        return builder


def _with_parameters(schema: Schema, params: dict[str, str]) -> Schema:
    """``schema`` with ``params`` over its own parameters (``applyFieldLevelParams``)."""
    merged = {**(schema.parameters or {}), **params}
    if merged == (schema.parameters or {}):
        return schema
    return Schema(schema.type, schema.optional, schema.default_value, schema.name, schema.version, schema.doc,
                  merged, schema.fields if schema.type is SchemaType.STRUCT else None,
                  schema.key_schema, schema.value_schema)


def _is_map_entry(node: Any) -> bool:
    if not isinstance(node, dict) or node.get("type") != "record":
        return False
    return node["name"] == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}" or \
        node.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME


def _union_member_name(member: Any, index: int, full_names: bool) -> str:
    """The Connect union field of a member: its Avro type, or a named type's (full, if ``full_names``) name."""
    node = {"type": member} if isinstance(member, str) else member
    if isinstance(node, list):
        return f"connect_union_field_{index}"
    if node["type"] in _NAMED:
        return node["name"] if full_names else node["name"].rpartition(".")[2]
    return node["type"]


_INTS = (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64)
_CLASSES = {SchemaType.FLOAT32: float, SchemaType.FLOAT64: float, SchemaType.BOOLEAN: bool, SchemaType.STRING: str,
            SchemaType.BYTES: bytes, SchemaType.ARRAY: list, SchemaType.MAP: dict}


def _fits(t: SchemaType, value: Any) -> bool:
    """Whether ``value`` is of the class Avro's Java API holds for Connect type ``t``."""
    if t in _INTS:
        return isinstance(value, int) and not isinstance(value, bool)
    return t in _CLASSES and isinstance(value, _CLASSES[t])


def _held(schema: Schema, value: Any) -> bool:
    """``isInstanceOfAvroSchemaTypeForSimpleSchema`` for a default: whether a union member takes ``value``
    (never a record, an enum or a narrow int; a fixed only of its size)."""
    params = schema.parameters or {}
    if schema.type in (SchemaType.INT8, SchemaType.INT16) or AVRO_TYPE_ENUM in params:
        return False
    if schema.type is SchemaType.BYTES and schema.name is not None and CONNECT_AVRO_FIXED_SIZE_PROP in params:
        return isinstance(value, bytes) and len(value) == int(params[CONNECT_AVRO_FIXED_SIZE_PROP])
    return _fits(schema.type, value)


def _to_logical(schema: Schema, value: Any) -> Any:
    """``toConnectLogical``: the underlying value of a Connect logical type as its Python value."""
    name = schema.name
    if value is None or name not in (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME,
                                     Timestamp.LOGICAL_NAME):
        return value
    if name == Decimal.LOGICAL_NAME:
        if not isinstance(value, bytes):
            raise DataException("Invalid type for Decimal, underlying representation should be bytes")
        return Decimal.to_logical(schema, value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise DataException(f"Invalid type for {name}: {type(value).__name__}")
    logical = {Date.LOGICAL_NAME: Date, Time.LOGICAL_NAME: Time, Timestamp.LOGICAL_NAME: Timestamp}[name]
    return logical.to_logical(schema, value)


def _wrap(value: int, bits: int) -> int:
    """A Java narrowing cast to a signed integer of ``bits`` bits."""
    half = 1 << (bits - 1)
    return (value + half) % (2 * half) - half


def _number(value: Any) -> Any:
    """Jackson's ``intValue()`` / ``doubleValue()``: the number of a numeric JSON node, else 0."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _as_text(value: Any) -> str:
    """Jackson's ``asText()``."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return ""
    return json.dumps(value)


# ------------------------------------------------------------------------------------------------ values

_DEFAULT_CONFIG = AvroDataConfig()


def _writer(schema: Schema | None, config: AvroDataConfig = _DEFAULT_CONFIG) -> Callable[[Any], Any]:
    """A function from Connect values of ``schema`` to fastavro datums (cached per schema and config)."""
    cached = _WRITERS.get((schema, config))
    if cached is None:
        cached = _make_writer(schema, config)
        _WRITERS.put((schema, config), cached)
    return cached


def reader(schema: Schema, config: AvroDataConfig = _DEFAULT_CONFIG) -> Callable[[Any], Any]:
    """A function from fastavro datums to Connect values of ``schema`` (cached per schema and config)."""
    cached = _READERS.get((schema, config))
    if cached is None:
        cached = _make_reader(schema, config)
        _READERS.put((schema, config), cached)
    return cached


_WRITERS = LRUCache(1000)
_READERS = LRUCache(1000)


def _identity(value: Any) -> Any:
    return value


def _string_keys(schema: Schema, config: AvroDataConfig) -> bool:
    """Whether a MAP schema is an Avro map (else an array of key/value records)."""
    key = schema.key_schema
    return key.type is SchemaType.STRING and (not key.optional or config.allow_optional_map_keys)


def _field_names(schema: Schema, config: AvroDataConfig) -> list[str]:
    scrub = scrub_name if config.scrub_invalid_names else str
    return [scrub(f.name) for f in schema.fields]


def _make_writer(schema: Schema, config: AvroDataConfig) -> Callable[[Any], Any]:
    t = schema.type
    inner: Callable[[Any], Any]
    if schema.name == Decimal.LOGICAL_NAME and _legacy_decimal(schema):
        inner = _legacy_decimal_writer(schema)
    elif t is SchemaType.BYTES:
        inner = _identity if schema.name == Decimal.LOGICAL_NAME else _as_bytes
    elif t is SchemaType.ARRAY:
        item = _writer(schema.value_schema, config)
        inner = _identity if item is _identity else (lambda v: [item(x) for x in v])
    elif t is SchemaType.MAP:
        key, value = _writer(schema.key_schema, config), _writer(schema.value_schema, config)
        if _string_keys(schema, config):
            inner = lambda v: {k: value(x) for k, x in v.items()}  # noqa: E731
        else:
            inner = lambda v: [{"key": key(k), "value": value(x)} for k, x in v.items()]  # noqa: E731
    elif _is_union(schema):
        members = [(f, _writer(f.schema, config), _union_branch(f.schema, config)) for f in schema.fields]
        ignore_defaults = config.ignore_default_for_nullables

        def inner(v: Struct) -> Any:
            for f, write, branch in members:
                member = v.get_without_default(f) if ignore_defaults else v.get(f)
                if member is not None:
                    return write(member) if branch is None else (branch, write(member))
            return None
    elif t is SchemaType.STRUCT:
        # ignore.default.for.nullables: no field's default stands in for its null (Java's getWithoutDefault)
        defaults = [None if config.ignore_default_for_nullables else f.schema.default_value for f in schema.fields]
        fields = [(name, f.index, _writer(f.schema, config), default)
                  for name, f, default in zip(_field_names(schema, config), schema.fields, defaults, strict=True)]
        required = [(f.index, f.name) for f, default in zip(schema.fields, defaults, strict=True)
                    if not f.schema.optional and default is None]

        def inner(v: Struct) -> Any:
            if not isinstance(v, Struct):
                raise DataException(f"Expected a Struct for schema {schema!r} but got {type(v).__name__}")
            if v.schema is not schema and v.schema != schema:
                raise DataException("Mismatching struct schema")
            values = v._values
            if None in values:
                for i, name in required:
                    if values[i] is None:
                        raise DataException(f"Found null value for non-optional field {name}")
            return {name: write(values[i] if values[i] is not None else default)
                    for name, i, write, default in fields}
    else:
        inner = _identity
    if not schema.optional or inner is _identity:
        return inner
    return lambda v: None if v is None else inner(v)


def _union_branch(member: Schema, config: AvroDataConfig) -> str | None:
    """The name that picks a union member's branch (fastavro's tuple notation), as Java's value types pick it:
    a named record's full name, or the type of a member written as a bare Avro type name; else None, and
    fastavro picks the first branch that takes the value (a string before an enum, the first fixed of a size).
    Its validator of an enclosing union takes branch names of these two kinds only."""
    if member.type is SchemaType.STRUCT:
        return None if member.name is None else _FromConnect(config).full_name(member.name)
    avro = AvroData(config).from_connect_schema(_required(member))
    return avro if isinstance(avro, str) else None


def _legacy_decimal(schema: Schema) -> bool:
    """A Decimal whose scale and precision Avro's spec refuses: AvroData writes its unscaled bytes itself."""
    params = schema.parameters or {}
    scale = int(params.get(Decimal.SCALE_FIELD, 0))
    return not 0 <= scale <= int(params.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP, DECIMAL_PRECISION_DEFAULT))


def _legacy_decimal_writer(schema: Schema) -> Callable[[Any], Any]:
    size = int((schema.parameters or {}).get(CONNECT_AVRO_FIXED_SIZE_PROP, 0))

    def write(value: Any) -> bytes:
        unscaled = Decimal.from_logical(schema, value)
        if size and len(unscaled) > size:
            raise DataException(f"Unscaled value byte array length {len(unscaled)} is greater than fixed size {size}")
        return unscaled.rjust(size, b"\xff" if unscaled[0] & 0x80 else b"\x00") if size else unscaled
    return write


def _as_bytes(value: Any) -> Any:
    return value if value is None or value.__class__ is bytes else bytes(value)


def _make_reader(schema: Schema, config: AvroDataConfig) -> Callable[[Any], Any]:
    t = schema.type
    inner: Callable[[Any], Any]
    if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        inner = _identity
    elif schema.name == Decimal.LOGICAL_NAME:
        inner = _decimal_reader(schema)
    elif t is SchemaType.ARRAY:
        item = reader(schema.value_schema, config)
        inner = _identity if item is _identity else (lambda v: [item(x) for x in v])
    elif t is SchemaType.MAP:
        key, value = reader(schema.key_schema, config), reader(schema.value_schema, config)
        if schema.key_schema.type is SchemaType.STRING:
            inner = lambda v: ({k: value(x) for k, x in v.items()} if isinstance(v, dict)  # noqa: E731
                               else {key(e["key"]): value(e["value"]) for e in v})
        else:
            inner = lambda v: {key(e["key"]): value(e["value"]) for e in v}  # noqa: E731
    elif _is_union(schema):
        members = [(f, reader(f.schema, config), _record_keys(f.schema, config)) for f in schema.fields]

        def inner(v: Any) -> Any:
            struct = Struct(schema)
            for f, read, keys in members:
                if keys is not None and not (isinstance(v, dict) and v.keys() == keys):
                    continue  # a record of other fields is another member's
                try:
                    return struct.put(f, read(v))
                except DataException:
                    continue
            raise DataException(f"No union member of {schema!r} matches {v!r}")
    elif t is SchemaType.STRUCT:
        fields = list(zip(_field_names(schema, config), (reader(f.schema, config) for f in schema.fields), strict=True))
        of = Struct.of
        if all(read is _identity for _, read in fields):
            names = [name for name, _ in fields]
            inner = lambda v: of(schema, [v.get(n) for n in names])  # noqa: E731
        else:
            inner = lambda v: of(schema, [read(v.get(n)) for n, read in fields])  # noqa: E731
    else:
        inner = _identity
    if inner is _identity:
        return inner
    return lambda v: None if v is None else inner(v)


def _record_keys(schema: Schema, config: AvroDataConfig) -> set[str] | None:
    if schema.type is not SchemaType.STRUCT or _is_union(schema):
        return None
    return set(_field_names(schema, config))


def _decimal_reader(schema: Schema) -> Callable[[Any], Any]:
    scale = Decimal.scale(schema)

    def read(value: Any) -> Any:
        if isinstance(value, decimal.Decimal):
            return value
        return Decimal.to_logical(schema, value) if scale is not None else value
    return read
