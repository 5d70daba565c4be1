"""Connect schemas and values to JSON Schema documents and JSON values and back, as Confluent's
``JsonSchemaData`` maps them.

A JSON Schema here is its document as Python data (what ``json.loads`` gives), its keys in the order
Confluent's Java writes them (everit's printer, Java ``HashMap`` iteration where Java has one), so that
:func:`schema_text` gives the text Confluent's converter registers. JSON values are Python data too:
``int``, ``decimal.Decimal`` for fractional numbers read from the wire (Jackson's ``BigDecimal`` nodes), floats
written as Java writes them, base64 text for bytes.

Connect's types map as Confluent's: INT8..INT64 are ``"integer"`` with ``"connect.type"``, FLOAT32/64
``"number"`` with ``"connect.type"``, BYTES a ``"string"`` with ``"connect.type": "bytes"``, Decimal a base64
string (``decimal.format=BASE64``) or a number (``NUMERIC``) titled with its logical name, Date/Time/Timestamp
integers titled with theirs, an optional schema ``{"oneOf": [{"type": "null"}, ...]}``, a struct an ``"object"``
whose properties carry ``"connect.index"``, a map an ``"object"`` with ``"additionalProperties"`` (string keys)
or an array of key/value objects, names as ``"title"``, docs as ``"description"``, defaults as ``"default"``.

>>> from connect_magics.api.data import SchemaBuilder, INT64_SCHEMA, OPTIONAL_STRING_SCHEMA
>>> schema = SchemaBuilder.struct().name("Order").field("id", INT64_SCHEMA) \\
...     .field("note", OPTIONAL_STRING_SCHEMA).build()
>>> doc = JsonSchemaData().from_connect_schema(schema)
>>> schema_text(doc)
'{"type":"object","title":"Order","properties":{"note":{"connect.index":1,"oneOf":[{"type":"null"},{"type":"string"}]},"id":{"type":"integer","connect.index":0,"connect.type":"int64"}}}'
>>> JsonSchemaData().to_connect_schema(doc) == schema
True
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The JSON writing and reading helpers of Kafka's JsonConverter: Jackson's number and string formats,
# exact decimals when parsing. Private to connect_magics.api, shared with this converter on purpose.
from connect_magics.api.converters import (  # noqa: F401  (re-exported for json_schema.py)
    _as_int,
    _dump,
    _Float32,
    _is_integral,
    _is_number,
    _loads,
    _node_type,
    _pyclass,
)
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
)
from connect_magics.api.errors import DataException, SchemaBuilderException

NAMESPACE = "io.confluent.connect.json"
KEY_FIELD = "key"
VALUE_FIELD = "value"
CONNECT_TYPE_PROP = "connect.type"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INDEX_PROP = "connect.index"
CONNECT_TYPE_MAP = "map"
CONNECT_TYPE_BYTES = "bytes"
JSON_ID_PROP = NAMESPACE + ".Id"
JSON_TYPE_ENUM = NAMESPACE + ".Enum"
JSON_TYPE_ONE_OF = NAMESPACE + ".OneOf"
GENERALIZED_TYPE_UNION = "org.apache.kafka.connect.data.Union"
GENERALIZED_TYPE_ENUM = "org.apache.kafka.connect.data.Enum"
GENERALIZED_TYPE_UNION_PREFIX = "connect_union_"
GENERALIZED_TYPE_UNION_FIELD_PREFIX = GENERALIZED_TYPE_UNION_PREFIX + "field_"
NULL_MARKER = "<NULL>"

_CONNECT_TYPES = {SchemaType.INT8: "int8", SchemaType.INT16: "int16", SchemaType.INT32: "int32",
                  SchemaType.INT64: "int64", SchemaType.FLOAT32: "float32", SchemaType.FLOAT64: "float64"}
_BUILDERS = {"int8": SchemaBuilder.int8, "int16": SchemaBuilder.int16, "int32": SchemaBuilder.int32,
             "int64": SchemaBuilder.int64, "float32": SchemaBuilder.float32, "float64": SchemaBuilder.float64,
             "bytes": SchemaBuilder.bytes}
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()  # Java's null JsonNode


@dataclass(frozen=True)
class JsonSchemaDataConfig:
    """The settings of Confluent's ``JsonSchemaDataConfig`` (defaults are Confluent's).

    >>> JsonSchemaDataConfig().decimal_format
    'BASE64'
    """

    object_additional_properties: bool = True
    use_optional_for_nonrequired: bool = False
    decimal_format: str = "BASE64"
    flatten_singleton_unions: bool = True
    generalized_sum_type_support: bool = False
    ignore_default_for_nullables: bool = False
    schemas_cache_size: int = 1000


def schema_text(document: Any) -> str:
    """The compact text of a JSON Schema document (or any JSON value) as Jackson writes it.

    >>> schema_text({"type": "string", "title": "é"})
    '{"type":"string","title":"é"}'
    """
    return _dump(document)


# ------------------------------------------------------------------------------------ Java's HashMap order

def _java_hash(text: str) -> int:
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def java_hash_order(keys: list[str], capacity: int = 16) -> list[str]:
    """The iteration order of a Java ``HashMap`` made with ``capacity`` into which ``keys`` were put in order.

    >>> java_hash_order(["key", "value"])
    ['value', 'key']
    """
    size = 1
    while size < capacity:
        size *= 2
    while len(keys) > size * 0.75:
        size *= 2
    return [k for _, _, k in sorted((_java_hash(k) & (size - 1), i, k) for i, k in enumerate(keys))]


def _parameters_order(parameters: Mapping[str, str]) -> dict[str, str]:
    """``connect.parameters`` as Java prints it: a ``HashMap`` copied into org.json's ``JSONObject``."""
    once = java_hash_order(list(parameters))
    return {k: parameters[k] for k in java_hash_order(once, len(once))}


# ------------------------------------------------------------------------------------ model of a document

class _Node:
    """A loaded JSON Schema (everit's model): ``kind`` is boolean, number, string, enum, const, combined,
    array, object, null, ref, empty, false, not or conditional."""

    __slots__ = ("kind", "title", "description", "default", "id", "unprocessed", "integer", "format", "values",
                 "criterion", "subs", "items", "properties", "required", "additional", "additional_schema", "ref",
                 "root", "source")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.title: str | None = None
        self.description: str | None = None
        self.default: Any = _MISSING
        self.id: str | None = None
        self.unprocessed: dict[str, Any] = {}
        self.integer = False
        self.format: str | None = None
        self.values: list[Any] = []
        self.criterion = ""
        self.subs: list[_Node] = []
        self.items: _Node | None = None
        self.properties: dict[str, _Node] = {}
        self.required: list[str] = []
        self.additional = True
        self.additional_schema: _Node | None = None
        self.ref: str | None = None
        self.root: _Loader | None = None
        self.source: Any = None


_COMMON_KEYS = {"title", "description", "default", "$id", "id", "nullable", "readOnly", "writeOnly"}
_NUMBER_KEYS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_STRING_KEYS = {"minLength", "maxLength", "pattern", "format"}
_ARRAY_KEYS = {"items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}
_OBJECT_KEYS = {"properties", "patternProperties", "additionalProperties", "required", "minProperties",
                "maxProperties", "dependencies", "propertyNames"}
_OTHER_KEYS = {"type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "$ref", "if", "then", "else"}
_KEYS_BY_TYPE = {"number": _NUMBER_KEYS, "integer": _NUMBER_KEYS, "string": _STRING_KEYS, "array": _ARRAY_KEYS,
                 "object": _OBJECT_KEYS, "boolean": set(), "null": set()}


class _Loader:
    """Loads a JSON Schema document the way everit's ``SchemaLoader`` does (one node per JSON object)."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.loaded: dict[int, _Node] = {}

    def load(self, node: Any) -> _Node:
        found = self.loaded.get(id(node))
        if found is not None:
            return found
        if node is True or node is False:
            result = _Node("empty" if node else "false")
        elif not isinstance(node, dict):
            raise DataException(f"Invalid JSON Schema: expected an object or a boolean but found {node!r}")
        else:
            result = _Node("empty")
            self.loaded[id(node)] = result  # before the subschemas, for recursive documents
            self._load_object(node, result)
        result.source = node
        result.root = self
        self.loaded[id(node)] = result
        return result

    def _load_object(self, node: dict[str, Any], result: _Node) -> None:
        extracted: list[_Node] = []
        if "enum" in node:
            enum = _Node("enum")
            enum.values = list(node["enum"])
            extracted.append(enum)
        for criterion in ("allOf", "anyOf", "oneOf"):
            if criterion in node:
                extracted.append(self._combined(criterion, [self.load(s) for s in node[criterion]]))
        if "not" in node:
            extracted.append(_Node("not"))
        if "const" in node:
            const = _Node("const")
            const.values = [node["const"]]
            extracted.append(const)
        typed = node.get("type")
        consumed: set[str] = set()
        if isinstance(typed, str):
            extracted.append(self._typed(typed, node, True))
            consumed = _KEYS_BY_TYPE.get(typed, set())
        elif isinstance(typed, list):
            extracted.append(self._combined("anyOf", [self._typed(t, node, True) for t in typed]))
            consumed = set().union(*(_KEYS_BY_TYPE.get(t, set()) for t in typed))
        for kind, keys in (("object", _OBJECT_KEYS), ("array", _ARRAY_KEYS), ("number", _NUMBER_KEYS),
                           ("string", _STRING_KEYS)):
            if keys - consumed & node.keys():
                extracted.append(self._typed(kind, node, False))
        if "if" in node:
            extracted.append(_Node("conditional"))
        if "$ref" in node:
            ref = _Node("ref")
            ref.ref = node["$ref"]
            extracted.append(ref)
        if len(extracted) == 1:
            chosen = extracted[0]
        elif extracted:
            chosen = self._combined("allOf", extracted)
        else:
            chosen = _Node("empty")
        for slot in _Node.__slots__:
            setattr(result, slot, getattr(chosen, slot))
        result.title = node.get("title")
        result.description = node.get("description")
        if "default" in node:
            result.default = node["default"]
        result.id = node.get("$id", node.get("id"))
        result.unprocessed = {k: v for k, v in node.items()
                              if k not in _COMMON_KEYS and k not in _OTHER_KEYS and not any(
                                  k in keys for keys in _KEYS_BY_TYPE.values())}

    @staticmethod
    def _combined(criterion: str, subs: list[_Node]) -> _Node:
        combined = _Node("combined")
        combined.criterion = criterion
        combined.subs = subs
        return combined

    def _typed(self, type_: str, node: dict[str, Any], explicit: bool) -> _Node:
        if type_ in ("number", "integer"):
            number = _Node("number")
            number.integer = type_ == "integer"
            return number
        if type_ == "string":
            string = _Node("string")
            string.format = node.get("format")
            return string
        if type_ in ("boolean", "null"):
            return _Node(type_)
        if type_ == "array":
            array = _Node("array")
            items = node.get("items")
            if isinstance(items, (dict, bool)):
                array.items = self.load(items)
            return array
        if type_ == "object":
            obj = _Node("object")
            properties = node.get("properties") or {}
            obj.properties = {k: self.load(properties[k]) for k in java_hash_order(list(properties))}
            obj.required = list(node.get("required") or [])
            additional = node.get("additionalProperties", True)
            obj.additional = additional is not False
            if isinstance(additional, dict):
                obj.additional_schema = self.load(additional)
            return obj
        raise DataException(f"Invalid JSON Schema: unknown type {type_!r}")

    def resolve(self, ref: str) -> _Node:
        """The node a ``$ref`` within this document names (JSON pointers, ``#`` and ``$id`` anchors)."""
        if ref == "#":
            return self.load(self.document)
        if ref.startswith("#/"):
            target: Any = self.document
            for part in ref[2:].split("/"):
                part = urllib.parse.unquote(part).replace("~1", "/").replace("~0", "~")
                try:
                    target = target[int(part)] if isinstance(target, list) else target[part]
                except (KeyError, IndexError, ValueError, TypeError):
                    raise DataException(f"Unresolvable JSON Schema reference {ref}") from None
            return self.load(target)
        found = _find_id(self.document, ref)
        if found is None:
            raise DataException(f"Unresolvable JSON Schema reference {ref}: references to other schemas are "
                                f"not supported by this converter")
        return self.load(found)


def _find_id(node: Any, wanted: str) -> Any:
    if isinstance(node, dict):
        if wanted in (node.get("$id"), node.get("id"), "#" + str(node.get("$anchor"))):
            return node
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _find_id(child, wanted)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------------------------ JsonSchemaData

class JsonSchemaData:
    """Confluent's ``JsonSchemaData``: Connect schemas and values to JSON Schema and JSON and back, caching each
    schema's mapping (see the module docstring for an example).

    >>> from connect_magics.api.data import INT8_SCHEMA
    >>> JsonSchemaData().from_connect_schema(INT8_SCHEMA)
    {'type': 'integer', 'connect.type': 'int8'}
    """

    def __init__(self, config: JsonSchemaDataConfig | None = None) -> None:
        self.config = config or JsonSchemaDataConfig()
        if self.config.decimal_format.upper() not in ("BASE64", "NUMERIC"):
            raise DataException(f"Unexpected decimal.format: {self.config.decimal_format}")
        self.numeric_decimals = self.config.decimal_format.upper() == "NUMERIC"
        self._documents = LRUCache(max(1, self.config.schemas_cache_size))  # Connect schema -> document
        self._schemas = LRUCache(max(1, self.config.schemas_cache_size))  # (text, version) -> Connect schema

    # ---------------------------------------------------------------------------- Connect -> JSON Schema
    def from_connect_schema(self, schema: Schema | None) -> Any:
        """The JSON Schema document Confluent's JsonSchemaData gives a Connect schema (None for None)."""
        if schema is None:
            return None
        cached = self._documents.get(schema)
        if cached is None:
            cached = self._raw(schema, None, False)
            self._documents.put(schema, cached)
        return cached

    def _raw(self, schema: Schema, index: int | None, ignore_optional: bool) -> dict[str, Any]:
        params = schema.parameters or {}
        type_ = schema.type
        extra: dict[str, Any] = {}  # everit's unprocessed properties
        head: dict[str, Any] = {}  # what everit prints before the common properties
        tail: dict[str, Any] = {}  # ... and after them
        kind = "plain"
        if type_ in _INT_BITS:
            head["type"] = "integer"
            extra[CONNECT_TYPE_PROP] = _CONNECT_TYPES[type_]
        elif type_ in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            head["type"] = "number"
            extra[CONNECT_TYPE_PROP] = _CONNECT_TYPES[type_]
        elif type_ is SchemaType.BOOLEAN:
            tail["type"] = "boolean"
        elif type_ is SchemaType.STRING:
            if GENERALIZED_TYPE_ENUM in params or JSON_TYPE_ENUM in params:
                name = GENERALIZED_TYPE_ENUM if self.config.generalized_sum_type_support else JSON_TYPE_ENUM
                head["enum"] = [None if k[len(name) + 1:] == NULL_MARKER else k[len(name) + 1:]
                                for k in params if k.startswith(name + ".")]
            else:
                head["type"] = "string"
        elif type_ is SchemaType.BYTES:
            numeric = schema.name == Decimal.LOGICAL_NAME and self.numeric_decimals
            head["type"] = "number" if numeric else "string"
            extra[CONNECT_TYPE_PROP] = CONNECT_TYPE_BYTES
        elif type_ is SchemaType.ARRAY:
            head["type"] = "array"
            tail["items"] = self._raw(_require(schema.value_schema, "array items"), None, False)
        elif type_ is SchemaType.MAP:
            key, value = _require(schema.key_schema, "map keys"), _require(schema.value_schema, "map values")
            extra[CONNECT_TYPE_PROP] = CONNECT_TYPE_MAP
            if key.type is SchemaType.STRING and not key.optional:
                head["type"] = "object"
                tail["additionalProperties"] = self._raw(value, None, False)
            else:
                entries = {KEY_FIELD: self._raw(key, 0, False), VALUE_FIELD: self._raw(value, 1, False)}
                head["type"] = "array"
                tail["items"] = {"type": "object",
                                 "properties": {k: entries[k] for k in java_hash_order(list(entries))}}
        elif _is_union(schema):
            kind = "combined"
            members = [{"type": "null"}] if schema.optional else []
            members += [self._raw(_required(f.schema), f.index, True) for f in schema.fields]
            tail["oneOf"] = members
        elif schema.optional:
            kind = "combined"
            tail["oneOf"] = [{"type": "null"}, self._raw(_required(schema), None, False)]
        else:
            head["type"] = "object"
            if not self.config.object_additional_properties:
                head["additionalProperties"] = False
            fields = {f.name: f for f in schema.fields}
            if fields:
                tail["properties"] = {name: self._raw(fields[name].schema, fields[name].index, False)
                                      for name in java_hash_order(list(fields))}
        common: dict[str, Any] = {}
        if kind == "plain":
            if schema.name is not None:
                common["title"] = schema.name
            if schema.doc is not None:
                common["description"] = schema.doc
            if schema.default_value is not None:
                common["default"] = _default_json(self.from_connect_data(schema, schema.default_value))
            if schema.version is not None:
                extra[CONNECT_VERSION_PROP] = schema.version
            shown = {k: v for k, v in params.items() if not k.startswith(NAMESPACE)}
            if shown:
                extra[CONNECT_PARAMETERS_PROP] = _parameters_order(shown)
            if not ignore_optional and schema.optional:
                inner = {**head, **common, **_ordered(extra), **tail}
                wrapper: dict[str, Any] = {}
                if JSON_ID_PROP in params:
                    wrapper["id"] = params[JSON_ID_PROP]
                if index is not None:
                    wrapper[CONNECT_INDEX_PROP] = index
                wrapper["oneOf"] = [{"type": "null"}, inner]
                return wrapper
        if JSON_ID_PROP in params:
            common["id"] = params[JSON_ID_PROP]
        if index is not None:
            extra[CONNECT_INDEX_PROP] = index
        return {**head, **common, **_ordered(extra), **tail}

    # ---------------------------------------------------------------------------- JSON Schema -> Connect
    def to_connect_schema(self, document: Any, version: int | None = None) -> Schema | None:
        """The Connect schema of a JSON Schema document (data or text); ``version``: the registry's, used when the
        document has no ``connect.version``."""
        if document is None:
            return None
        text = document if isinstance(document, str) else _dump(document)
        key = (text, version)
        cached = self._schemas.get(key)
        if cached is None:
            parsed = _loads(text.encode("utf-8")) if isinstance(document, str) else document
            loader = _Loader(parsed)
            cached = _ToConnect(self).convert(loader.load(parsed), version, False)
            self._schemas.put(key, cached)
        return cached

    # ---------------------------------------------------------------------------- values
    def from_connect_data(self, schema: Schema | None, value: Any) -> Any:
        """The JSON value of a Connect value; a module-private marker where Java's is null (nothing written)."""
        if value is None:
            if schema is None:
                return _MISSING
            if schema.default_value is not None and not self.config.ignore_default_for_nullables:
                return self.from_connect_data(schema, schema.default_value)
            return None if schema.optional else _MISSING
        if schema is not None and schema.name is not None:
            logical = _TO_JSON_LOGICAL.get(schema.name)
            if logical is not None:
                return logical(self, schema, value)
        type_ = schema.type if schema is not None else _schemaless_type(value)
        try:
            if type_ in _INT_BITS:
                if not isinstance(value, int) or isinstance(value, bool):
                    raise TypeError
                return int(value)
            if type_ is SchemaType.FLOAT32:
                return _Float32(_number(value))
            if type_ is SchemaType.FLOAT64:
                return float(_number(value))
            if type_ is SchemaType.BOOLEAN:
                if not isinstance(value, bool):
                    raise TypeError
                return value
            if type_ is SchemaType.STRING:
                if not isinstance(value, str):
                    raise TypeError
                return value
            if type_ is SchemaType.BYTES:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    return base64.b64encode(bytes(value)).decode("ascii")
                if isinstance(value, decimal.Decimal):
                    return value
                raise DataException(f"Invalid type for bytes type: {_pyclass(value)}")
            if type_ is SchemaType.ARRAY:
                if not isinstance(value, (list, tuple)):
                    raise TypeError
                item = schema.value_schema if schema is not None else None
                return [_null_if_missing(self.from_connect_data(item, v)) for v in value]
            if type_ is SchemaType.MAP:
                return self._map_to_json(schema, value)
            return self._struct_to_json(schema, value)
        except (TypeError, AttributeError):
            raise DataException(f"Invalid type for {schema.type if schema is not None else 'unknown schema'}: "
                                f"{_pyclass(value)}") from None

    def _map_to_json(self, schema: Schema | None, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        if schema is None:
            object_mode = all(isinstance(k, str) for k in value)
        else:
            object_mode = key_schema.type is SchemaType.STRING and not key_schema.optional
        if object_mode:
            return {_as_text(self.from_connect_data(key_schema, k)): _null_if_missing(
                self.from_connect_data(value_schema, v)) for k, v in value.items()}
        return [{KEY_FIELD: _null_if_missing(self.from_connect_data(key_schema, k)),
                 VALUE_FIELD: _null_if_missing(self.from_connect_data(value_schema, v))} for k, v in value.items()]

    def _struct_to_json(self, schema: Schema | None, value: Any) -> Any:
        if not isinstance(value, Struct):
            raise TypeError
        if value.schema != schema:
            raise DataException("Mismatching schema.")
        get = value.get_without_default if self.config.ignore_default_for_nullables else value.get
        if _is_union(schema):
            for f in schema.fields:
                member = get(f)
                if member is not None:
                    return self.from_connect_data(f.schema, member)
            return self.from_connect_data(schema, None)
        out: dict[str, Any] = {}
        for f in schema.fields:
            try:
                node = self.from_connect_data(f.schema, get(f))
            except DataException as e:
                raise _in_field(e, f.name) from e
            if node is not _MISSING:
                out[f.name] = node
        return out

    def to_connect_data(self, schema: Schema | None, node: Any) -> Any:
        """The Connect value of a JSON value (parsed with exact decimals) read by ``schema``; ``node`` may be the
        marker of a missing property."""
        if schema is not None:
            if node is None or node is _MISSING:
                if schema.default_value is not None:
                    return schema.default_value
                if node is _MISSING or schema.optional:
                    return None
                raise DataException(f"Invalid null value for required {schema.type} field")
            type_ = schema.type
        else:
            if node is None or node is _MISSING:
                return None
            type_ = _inferred_type(node)
        if schema is not None and schema.name is not None:
            logical = _TO_CONNECT_LOGICAL.get(schema.name)
            if logical is not None:
                return logical(schema, node)
        if type_ in _INT_BITS:
            return _as_int(_INT_BITS[type_], node)
        if type_ in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            return float(node) if _is_number(node) else 0.0
        if type_ is SchemaType.BOOLEAN:
            return node is True
        if type_ is SchemaType.STRING:
            return node if isinstance(node, str) else None
        if type_ is SchemaType.BYTES:
            if isinstance(node, str):
                try:
                    return base64.b64decode(node, validate=True)
                except (binascii.Error, ValueError) as e:
                    raise DataException("Invalid bytes field") from e
            if _is_number(node):
                return decimal.Decimal(node)
            return None
        if type_ is SchemaType.ARRAY:
            if not isinstance(node, list):
                raise DataException(f"Arrays should be encoded as JSON arrays, but found {_node_type(node)}")
            item = schema.value_schema if schema is not None else None
            return [self.to_connect_data(item, v) for v in node]
        if type_ is SchemaType.MAP:
            return self._map_to_connect(schema, node)
        return self._struct_to_connect(schema, node)

    def _map_to_connect(self, schema: Schema | None, node: Any) -> dict[Any, Any]:
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        if schema is None or (key_schema.type is SchemaType.STRING and not key_schema.optional):
            if not isinstance(node, dict):
                raise DataException("Maps with string fields should be encoded as JSON objects, but found "
                                    + _node_type(node))
            return {k: self.to_connect_data(value_schema, v) for k, v in node.items()}
        if not isinstance(node, list):
            raise DataException("Maps with non-string fields should be encoded as JSON array of objects, but "
                                "found " + _node_type(node))
        result: dict[Any, Any] = {}
        for entry in node:
            if not isinstance(entry, dict):
                raise DataException(f"Found invalid map entry instead of object: {_node_type(entry)}")
            if len(entry) != 2:
                raise DataException(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
            result[self.to_connect_data(key_schema, entry.get(KEY_FIELD, _MISSING))] = \
                self.to_connect_data(value_schema, entry.get(VALUE_FIELD, _MISSING))
        return result

    def _struct_to_connect(self, schema: Schema, node: Any) -> Struct:
        if _is_union(schema):
            prefix = GENERALIZED_TYPE_UNION_FIELD_PREFIX if GENERALIZED_TYPE_UNION in (schema.parameters or {}) \
                else JSON_TYPE_ONE_OF + ".field."
            best, best_score = None, 0
            for f in schema.fields:
                if _simple_match(f.schema, node):
                    return _union_struct(schema, prefix + str(f.index), self.to_connect_data(f.schema, node))
                score = _struct_match(f.schema, node)
                if score > best_score:
                    best, best_score = f, score
            if best is not None:
                return _union_struct(schema, prefix + str(best.index), self.to_connect_data(best.schema, node))
            raise DataException("Did not find matching oneof field for data")
        if not isinstance(node, dict):
            raise DataException(f"Structs should be encoded as JSON objects, but found {_node_type(node)}")
        values = []
        for f in schema.fields:
            try:
                values.append(self.to_connect_data(f.schema, node.get(f.name, _MISSING)))
            except DataException as e:
                raise _in_field(e, f.name) from e
        return Struct.of(schema, values)


# ------------------------------------------------------------------------------------ schema: JSON -> Connect

class _ToConnect:
    """One ``toConnectSchema`` call: the structs being built (recursion) and the union counter."""

    def __init__(self, data: JsonSchemaData) -> None:
        self.data = data
        self.config = data.config
        self.in_progress: set[int] = set()
        self.built: dict[int, Schema] = {}
        self.union_index = 0

    def convert(self, node: _Node, version: int | None, force_optional: bool) -> Schema:
        kind = node.kind
        builder: SchemaBuilder
        if kind == "boolean":
            builder = SchemaBuilder.boolean()
        elif kind == "number":
            connect_type = node.unprocessed.get(CONNECT_TYPE_PROP)
            if connect_type is None:
                builder = SchemaBuilder.int64() if node.integer else SchemaBuilder.float64()
            elif connect_type in _BUILDERS:
                builder = _BUILDERS[connect_type]()
            else:
                raise DataException(f"Unsupported type {connect_type}")
        elif kind == "string":
            bytes_ = node.unprocessed.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_BYTES
            builder = SchemaBuilder.bytes() if bytes_ else SchemaBuilder.string()
        elif kind in ("const", "enum"):
            builder = self.enums(node.values)
        elif kind == "combined":
            if len(node.subs) == 1 and self.config.flatten_singleton_unions:
                return self.convert(node.subs[0], None, False)
            if node.criterion == "allOf":
                return self.all_of(node, version, force_optional)
            if self.config.generalized_sum_type_support:
                name = GENERALIZED_TYPE_UNION_PREFIX + str(self.union_index)
                self.union_index += 1
            else:
                name = JSON_TYPE_ONE_OF
            if len(node.subs) == 2:
                others = [s for s in node.subs if s.kind != "null"]
                if len(others) == 1:
                    return self.convert(others[0], version, True)
            builder = SchemaBuilder.struct().name(name)
            if self.config.generalized_sum_type_support:
                builder.parameter(GENERALIZED_TYPE_UNION, name)
            index = 0
            for sub in node.subs:
                if sub.kind == "null":
                    builder.optional()
                    continue
                prefix = GENERALIZED_TYPE_UNION_FIELD_PREFIX if self.config.generalized_sum_type_support \
                    else name + ".field."
                builder.field(prefix + str(index), self.convert(sub, None, True))
                index += 1
        elif kind == "array":
            if node.items is None:
                raise DataException("Array schema did not specify the items type")
            items = self.deref(node.items)
            if node.unprocessed.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_MAP and items.kind == "object":
                key, value = items.properties.get(KEY_FIELD), items.properties.get(VALUE_FIELD)
                if key is None or value is None:
                    raise DataException("Found map encoded as array of key-value pairs, but array elements do "
                                        "not have key and value properties")
                builder = SchemaBuilder.map(self.convert(key, None, False), self.convert(value, None, False))
            else:
                builder = SchemaBuilder.array(self.convert(node.items, None, False))
        elif kind == "object":
            if node.unprocessed.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_MAP:
                if node.additional_schema is None:
                    raise DataException("Map schema did not specify the additionalProperties type")
                builder = SchemaBuilder.map(STRING_SCHEMA, self.convert(node.additional_schema, None, False))
            else:
                builder = self.struct(node)
        elif kind == "ref":
            target = self.deref(node)
            if id(target) in self.in_progress:
                raise DataException(f"Recursive JSON schemas are not supported by this converter: {node.ref} "
                                    f"refers to a schema that contains it")
            built = self.built.get(id(target))
            if built is not None:
                return _with_optional(built, force_optional)
            return self.convert(target, version, force_optional)
        elif kind == "empty":
            raise DataException("JSON schemas accepting any value (an empty schema or true) are not supported by "
                                "this converter")
        else:
            raise DataException(f"Unsupported schema type {kind} in JSON schema")
        return self.finish(node, builder, version, force_optional)

    def finish(self, node: _Node, builder: SchemaBuilder, version: int | None, force_optional: bool) -> Schema:
        props = builder._props
        try:
            if node.title is not None and props.get("name") is None:
                builder.name(node.title)
            connect_version = node.unprocessed.get(CONNECT_VERSION_PROP)
            if connect_version is not None:
                if not isinstance(connect_version, int) or isinstance(connect_version, bool):
                    raise DataException(f"Invalid connect.version: {connect_version!r}")
                builder.version(connect_version)
            elif version is not None:
                builder.version(version)
            if node.description is not None:
                builder.doc(node.description)
            parameters = node.unprocessed.get(CONNECT_PARAMETERS_PROP)
            if parameters is not None:
                if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
                    raise DataException(f"Expected connect.parameters to be an object of strings but found "
                                        f"{parameters!r}")
                builder.parameters(parameters)
            if node.default is not _MISSING and node.default is not None:
                builder.default_value(self.data.to_connect_data(builder.build(), node.default))
        except SchemaBuilderException as e:
            raise DataException(f"Invalid JSON schema for Connect: {e}") from e
        if force_optional:
            builder.optional()
        schema = builder.build()
        if node.kind == "object" and not force_optional:
            self.built[id(node)] = schema
        return schema

    def struct(self, node: _Node) -> SchemaBuilder:
        builder = SchemaBuilder.struct()
        self.in_progress.add(id(node))
        ordered: dict[int, tuple[str, _Node]] = {}
        for name, sub in node.properties.items():
            index = sub.unprocessed.get(CONNECT_INDEX_PROP)
            if not isinstance(index, int) or isinstance(index, bool):
                index = len(ordered)
            ordered[index] = (name, sub)
        for index in sorted(ordered):
            name, sub = ordered[index]
            optional = self.config.use_optional_for_nonrequired and name not in node.required
            builder.field(name, self.convert(sub, None, optional))
        self.in_progress.discard(id(node))
        return builder

    def enums(self, values: list[Any]) -> SchemaBuilder:
        builder = SchemaBuilder.string()
        generalized = self.config.generalized_sum_type_support
        name = GENERALIZED_TYPE_ENUM if generalized else JSON_TYPE_ENUM
        builder.parameter(name, "")
        for index, value in enumerate(values):
            symbol = NULL_MARKER if value is None else _java_to_string(value)
            builder.parameter(f"{name}.{symbol}", str(index) if generalized else symbol)
        return builder

    def all_of(self, node: _Node, version: int | None, force_optional: bool) -> Schema:
        found: dict[str, _Node] = {}
        properties: dict[str, _Node] = {}
        required: dict[str, bool] = {}
        for sub in node.subs:
            if sub.kind in ("const", "enum", "number", "string", "combined", "ref"):
                found[sub.kind] = sub
            self.collect(sub, properties, required, set())
        if properties:
            builder = SchemaBuilder.struct()
            for name, sub in properties.items():
                optional = self.config.use_optional_for_nonrequired and not required[name]
                builder.field(name, self.convert(sub, None, optional))
            if force_optional:
                builder.optional()
            return builder.build()
        string, number = found.get("string"), found.get("number")
        if "combined" in found:
            return self.convert(found["combined"], version, force_optional)
        if "const" in found:
            if string is not None:
                return self.convert(string, version, force_optional)
            if number is not None:
                return self.convert(number, version, force_optional)
        elif "enum" in found:
            if string is not None:
                return self.convert(found["enum"], version, force_optional)
            if number is not None:
                return self.convert(number, version, force_optional)
        elif string is not None and string.format is not None:
            return self.convert(number if number is not None else string, version, force_optional)
        elif "ref" in found:
            return self.convert(found["ref"], version, force_optional)
        raise DataException(f"Unsupported criterion allOf for JSON schema {_dump(node.source)}")

    def collect(self, node: _Node, properties: dict[str, _Node], required: dict[str, bool],
                visited: set[int]) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        if node.kind == "combined" and node.criterion == "allOf":
            for sub in node.subs:
                self.collect(sub, properties, required, visited)
        elif node.kind == "object":
            for name, sub in node.properties.items():
                properties[name] = sub
                required[name] = name in node.required
        elif node.kind == "ref":
            self.collect(self.deref(node), properties, required, visited)

    @staticmethod
    def deref(node: _Node) -> _Node:
        seen = 0
        while node.kind == "ref":
            node = node.root.resolve(node.ref)  # type: ignore[union-attr,arg-type]
            seen += 1
            if seen > 100:
                raise DataException("JSON schema references form a cycle")
        return node


# ------------------------------------------------------------------------------------ helpers

def _in_field(error: DataException, name: str) -> DataException:
    """``error`` naming the (nested) field it is about: ``... (field: order.lines.qty)``."""
    path = [name, *getattr(error, "field_path", [])]
    message = getattr(error, "bare_message", str(error))
    named = DataException(f"{message} (field: {'.'.join(path)})")
    named.field_path, named.bare_message = path, message  # type: ignore[attr-defined]
    return named


def _ordered(extra: dict[str, Any]) -> dict[str, Any]:
    """everit's unprocessed properties in Java's ``HashMap`` order (the same for every subset of these keys)."""
    order = (CONNECT_INDEX_PROP, CONNECT_VERSION_PROP, CONNECT_TYPE_PROP, CONNECT_PARAMETERS_PROP)
    return {k: extra[k] for k in order if k in extra}


def _is_union(schema: Schema) -> bool:
    return schema.type is SchemaType.STRUCT and (
        schema.name == JSON_TYPE_ONE_OF or GENERALIZED_TYPE_UNION in (schema.parameters or {}))


def _required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(schema.type, False, schema.default_value, schema.name, schema.version, schema.doc,
                  schema.parameters, schema.fields if schema.type is SchemaType.STRUCT else None,
                  schema.key_schema, schema.value_schema)


def _with_optional(schema: Schema, optional: bool) -> Schema:
    if not optional or schema.optional:
        return schema
    return Schema(schema.type, True, schema.default_value, schema.name, schema.version, schema.doc,
                  schema.parameters, schema.fields if schema.type is SchemaType.STRUCT else None,
                  schema.key_schema, schema.value_schema)


def _require(schema: Schema | None, what: str) -> Schema:
    if schema is None:
        raise DataException(f"No schema defined for {what}")
    return schema


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError
    return value


def _null_if_missing(node: Any) -> Any:
    return None if node is _MISSING else node


def _as_text(node: Any) -> str:
    """Jackson's ``asText()`` of a map key's node."""
    if node is None or node is _MISSING:
        return "null"
    if isinstance(node, str):
        return node
    return _dump(node)


def _default_json(node: Any) -> Any:
    """A default value as org.json prints it into the schema: integral numbers without a fraction."""
    if isinstance(node, float) and node.is_integer() and abs(node) < 1e16:
        return int(node)
    if isinstance(node, decimal.Decimal) and "." in str(node) and "E" not in str(node).upper():
        text = str(node).rstrip("0").rstrip(".")
        return decimal.Decimal(text) if "." in text else int(text)
    if isinstance(node, list):
        return [_default_json(v) for v in node]
    if isinstance(node, dict):
        return {k: _default_json(v) for k, v in node.items()}
    return _null_if_missing(node)


def _java_to_string(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (dict, list)):
        return _dump(value)
    return str(value)


def _schemaless_type(value: Any) -> SchemaType:
    for classes, type_ in ((bool, SchemaType.BOOLEAN), (int, SchemaType.INT64), (float, SchemaType.FLOAT64),
                           (str, SchemaType.STRING), ((bytes, bytearray, memoryview), SchemaType.BYTES),
                           ((list, tuple), SchemaType.ARRAY), (Mapping, SchemaType.MAP),
                           (Struct, SchemaType.STRUCT)):
        if isinstance(value, classes):
            return type_
    raise DataException(f"Java class {_pyclass(value)} does not have corresponding schema type.")


def _inferred_type(node: Any) -> SchemaType:
    if isinstance(node, bool):
        return SchemaType.BOOLEAN
    if isinstance(node, int):
        return SchemaType.INT64
    if isinstance(node, decimal.Decimal):
        return SchemaType.FLOAT64
    if isinstance(node, list):
        return SchemaType.ARRAY
    if isinstance(node, dict):
        return SchemaType.MAP
    if isinstance(node, str):
        return SchemaType.STRING
    raise DataException(f"Unknown schema type for {_node_type(node)}")


def _simple_match(schema: Schema, node: Any) -> bool:
    """Confluent's ``isInstanceOfSchemaTypeForSimpleSchema``."""
    t = schema.type
    if t in _INT_BITS:
        return _is_integral(node)
    if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return _is_number(node)
    if t is SchemaType.BOOLEAN:
        return isinstance(node, bool)
    if t is SchemaType.STRING:
        return isinstance(node, str)
    if t is SchemaType.BYTES:
        return isinstance(node, decimal.Decimal)
    if t is SchemaType.ARRAY:
        return isinstance(node, list)
    if t is SchemaType.MAP:
        return isinstance(node, (dict, list))
    return False


def _struct_match(schema: Schema, node: Any) -> int:
    """Confluent's ``matchStructSchema``: how many (nested) properties of ``node`` the struct has."""
    if schema.type is not SchemaType.STRUCT or not isinstance(node, dict):
        return 0
    shared = [f for f in schema.fields if f.name in node]
    return len(shared) + sum(_struct_match(f.schema, node[f.name]) for f in shared)


def _union_struct(schema: Schema, field: str, value: Any) -> Struct:
    struct = Struct(schema)
    struct._values[schema.field(field).index] = value  # type: ignore[union-attr]
    return struct


def _decimal_to_json(data: JsonSchemaData, schema: Schema, value: Any) -> Any:
    if not isinstance(value, decimal.Decimal):
        raise DataException(f"Invalid type for Decimal, expected BigDecimal but was {_pyclass(value)}")
    if data.numeric_decimals:
        return value
    return base64.b64encode(Decimal.from_logical(schema, value)).decode("ascii")


def _temporal_to_json(logical: Any, expected: type, what: str) -> Any:
    def to_json(data: JsonSchemaData, schema: Schema, value: Any) -> int:
        if not isinstance(value, expected):
            raise DataException(f"Invalid type for {what}, expected Date but was {_pyclass(value)}")
        return logical.from_logical(schema, value)
    return to_json


def _decimal_to_connect(schema: Schema, node: Any) -> decimal.Decimal:
    if _is_number(node):
        return decimal.Decimal(node)
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, base64.b64decode(node, validate=True))
        except (binascii.Error, ValueError, DataException) as e:
            raise DataException("Invalid bytes for Decimal field") from e
    raise DataException("Invalid type for Decimal, underlying representation should be numeric or bytes but was "
                        + _node_type(node))


def _temporal_to_connect(logical: Any, what: str, int32: bool) -> Any:
    def to_connect(schema: Schema, node: Any) -> Any:
        if not _is_integral(node) or (int32 and not -(1 << 31) <= node < (1 << 31)):
            raise DataException(f"Invalid type for {what}, underlying representation should be "
                                f"{'integer' if int32 else 'integral'} but was {_node_type(node)}")
        return logical.to_logical(schema, node)
    return to_connect


_TO_JSON_LOGICAL: dict[str, Any] = {
    Decimal.LOGICAL_NAME: _decimal_to_json,
    Date.LOGICAL_NAME: _temporal_to_json(Date, _dt.date, "Date"),
    Time.LOGICAL_NAME: _temporal_to_json(Time, _dt.time, "Time"),
    Timestamp.LOGICAL_NAME: _temporal_to_json(Timestamp, _dt.datetime, "Timestamp"),
}
_TO_CONNECT_LOGICAL: dict[str, Any] = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: _temporal_to_connect(Date, "Date", True),
    Time.LOGICAL_NAME: _temporal_to_connect(Time, "Time", True),
    Timestamp.LOGICAL_NAME: _temporal_to_connect(Timestamp, "Timestamp", False),
}
