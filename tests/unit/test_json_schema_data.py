"""JsonSchemaData's mapping without a registry: Connect schemas and values to JSON Schema and JSON and back,
including the cases of Confluent's own JsonSchemaDataTest (their everit schemas written as JSON documents)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from connect_magics.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT8_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException
from connect_magics.converters.json_schema_data import (
    GENERALIZED_TYPE_ENUM,
    GENERALIZED_TYPE_UNION,
    JSON_TYPE_ENUM,
    JSON_TYPE_ONE_OF,
    JsonSchemaData,
    JsonSchemaDataConfig,
    _loads,
    java_hash_order,
    schema_text,
)

pytestmark = pytest.mark.unit

ONE_OF_0, ONE_OF_1 = JSON_TYPE_ONE_OF + ".field.0", JSON_TYPE_ONE_OF + ".field.1"
NULL = {"type": "null"}


def js(text: str) -> object:
    """A JSON value as the converter parses one (exact decimals)."""
    return _loads(text.encode())


def data(**settings: object) -> JsonSchemaData:
    return JsonSchemaData(JsonSchemaDataConfig(**settings))  # type: ignore[arg-type]


def from_connect(schema, value, expected_doc, expected_json, d: JsonSchemaData | None = None) -> None:
    d = d or JsonSchemaData()
    assert d.from_connect_schema(schema) == expected_doc
    assert d.from_connect_data(schema, value) == expected_json


def to_connect(doc, node, expected_schema, expected_value, d: JsonSchemaData | None = None) -> None:
    d = d or JsonSchemaData()
    schema = d.to_connect_schema(doc)
    assert schema == expected_schema
    assert d.to_connect_data(schema, node) == expected_value


def integer(connect_type: str, **extra: object) -> dict:
    return {"type": "integer", **extra, "connect.type": connect_type}


# ------------------------------------------------------------------------------------ Connect -> JSON Schema

def test_from_connect_null_and_primitives() -> None:
    from_connect(OPTIONAL_BOOLEAN_SCHEMA, None, {"oneOf": [NULL, {"type": "boolean"}]}, None)
    assert JsonSchemaData().from_connect_schema(None) is None
    from_connect(BOOLEAN_SCHEMA, True, {"type": "boolean"}, True)
    from_connect(INT8_SCHEMA, 12, integer("int8"), 12)
    from_connect(INT16_SCHEMA, 12, integer("int16"), 12)
    from_connect(INT32_SCHEMA, 12, integer("int32"), 12)
    from_connect(INT64_SCHEMA, 12, integer("int64"), 12)
    from_connect(FLOAT32_SCHEMA, 12.2, {"type": "number", "connect.type": "float32"}, 12.2)
    from_connect(FLOAT64_SCHEMA, 12.2, {"type": "number", "connect.type": "float64"}, 12.2)
    from_connect(BYTES_SCHEMA, b"foo", {"type": "string", "connect.type": "bytes"}, "Zm9v")
    from_connect(STRING_SCHEMA, "string", {"type": "string"}, "string")


def test_from_connect_float32_is_written_as_java_writes_a_float() -> None:
    assert schema_text(JsonSchemaData().from_connect_data(FLOAT32_SCHEMA, 12.2)) == "12.2"
    assert schema_text(JsonSchemaData().from_connect_data(FLOAT64_SCHEMA, 1e20)) == "1.0E20"


def test_from_connect_enum_and_const() -> None:
    const = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "").parameter(JSON_TYPE_ENUM + ".one", "one").build()
    from_connect(const, "one", {"enum": ["one"]}, "one")
    builder = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "")
    for symbol in ("one", "two", "three"):
        builder.parameter(f"{JSON_TYPE_ENUM}.{symbol}", symbol)
    from_connect(builder.build(), "one", {"enum": ["one", "two", "three"]}, "one")
    builder.parameter(JSON_TYPE_ENUM + ".<NULL>", "<NULL>")
    from_connect(builder.build(), "one", {"enum": ["one", "two", "three", None]}, "one")


def test_from_connect_enum_with_generalized_sum_type_support() -> None:
    builder = SchemaBuilder.string().parameter(GENERALIZED_TYPE_ENUM, "")
    for i, symbol in enumerate(("one", "two", "three", "<NULL>")):
        builder.parameter(f"{GENERALIZED_TYPE_ENUM}.{symbol}", str(i))
    schema = builder.build()
    expected = {"enum": ["one", "two", "three", None], "connect.parameters": schema.parameters}
    from_connect(schema, "one", expected, "one", data(generalized_sum_type_support=True))


def test_from_connect_union() -> None:
    schema = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, INT32_SCHEMA) \
        .field(ONE_OF_1, STRING_SCHEMA).build()
    expected = {"oneOf": [integer("int32", **{"connect.index": 0}), {"type": "string", "connect.index": 1}]}
    from_connect(schema, Struct(schema).put(ONE_OF_0, 12), expected, 12)


def test_from_connect_union_with_generalized_sum_type_support() -> None:
    schema = SchemaBuilder.struct().name("connect_union_0").parameter(GENERALIZED_TYPE_UNION, "connect_union_0") \
        .field("connect_union_field_0", INT32_SCHEMA).field("connect_union_field_1", STRING_SCHEMA).build()
    expected = {"oneOf": [integer("int32", **{"connect.index": 0}), {"type": "string", "connect.index": 1}]}
    from_connect(schema, Struct(schema).put("connect_union_field_0", 12), expected, 12,
                 data(generalized_sum_type_support=True))


def test_from_connect_union_of_structs_without_additional_properties() -> None:
    field0 = SchemaBuilder.struct().name("field0").field("a", INT8_SCHEMA).field("b", STRING_SCHEMA) \
        .optional().build()
    field1 = SchemaBuilder.struct().name("field1").field("c", INT8_SCHEMA).field("d", STRING_SCHEMA) \
        .optional().build()
    schema = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, field0).field(ONE_OF_1, field1).build()

    def obj(title: str, first: str, second: str, index: int) -> dict:
        return {"type": "object", "additionalProperties": False, "title": title, "connect.index": index,
                "properties": {first: integer("int8", **{"connect.index": 0}),
                               second: {"type": "string", "connect.index": 1}}}

    expected = {"oneOf": [obj("field0", "a", "b", 0), obj("field1", "c", "d", 1)]}
    d = data(object_additional_properties=False)
    value = Struct(schema).put(ONE_OF_0, Struct(field0).put("a", 12).put("b", "sample string"))
    from_connect(schema, value, expected, {"a": 12, "b": "sample string"}, d)
    value = Struct(schema).put(ONE_OF_1, Struct(field1).put("c", 12).put("d", "sample string"))
    from_connect(schema, value, expected, {"c": 12, "d": "sample string"}, d)


def test_from_connect_decimal_base64_and_numeric() -> None:
    expected = {"type": "string", "title": Decimal.LOGICAL_NAME, "connect.version": 1, "connect.type": "bytes",
                "connect.parameters": {"scale": "2"}}
    from_connect(Decimal.schema(2), decimal.Decimal("1.56"), expected, "AJw=", data(decimal_format="BASE64"))
    numeric = data(decimal_format="NUMERIC")
    from_connect(Decimal.schema(2), decimal.Decimal("1.56"), {**expected, "type": "number"},
                 decimal.Decimal("1.56"), numeric)
    # trailing zeros are kept, as BigDecimal's scale
    json_value = numeric.from_connect_data(Decimal.schema(4), decimal.Decimal("1.5600"))
    assert schema_text(json_value) == "1.5600"


def test_from_connect_timestamp_with_default() -> None:
    schema = Timestamp.builder().default_value(dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).build()
    expected = {"type": "integer", "title": Timestamp.LOGICAL_NAME, "default": 0, "connect.version": 1,
                "connect.type": "int64"}
    from_connect(schema, dt.datetime.fromtimestamp(1234567.890, dt.timezone.utc), expected, 1234567890)


def test_from_connect_maps() -> None:
    from_connect(SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"hi": 32},
                 {"type": "object", "connect.type": "map", "additionalProperties": integer("int32")}, {"hi": 32})
    entry = {"type": "object", "properties": {"value": integer("int32", **{"connect.index": 1}),
                                              "key": {"connect.index": 0, "oneOf": [NULL, {"type": "string"}]}}}
    from_connect(SchemaBuilder.map(OPTIONAL_STRING_SCHEMA, INT32_SCHEMA).build(), {"hi": 32},
                 {"type": "array", "connect.type": "map", "items": entry}, [{"key": "hi", "value": 32}])
    entry = {"type": "object", "properties": {"value": integer("int32", **{"connect.index": 1}),
                                              "key": integer("int32", **{"connect.index": 0})}}
    from_connect(SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {54: 32},
                 {"type": "array", "connect.type": "map", "items": entry}, [{"key": 54, "value": 32}])
    named = SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).name("foo.bar").build()
    assert JsonSchemaData().from_connect_schema(named) == {
        "type": "object", "title": "foo.bar", "connect.type": "map", "additionalProperties": integer("int32")}


def test_from_connect_record_with_missing_required_field_leaves_it_out() -> None:
    schema = SchemaBuilder.struct().name("Record").field("int8", INT8_SCHEMA).field("string", STRING_SCHEMA).build()
    expected = {"type": "object", "title": "Record",
                "properties": {"string": {"type": "string", "connect.index": 1},
                               "int8": integer("int8", **{"connect.index": 0})}}
    from_connect(schema, Struct(schema).put("int8", 12), expected, {"int8": 12})


def test_from_connect_record_ignore_default_for_nullables() -> None:
    string = SchemaBuilder.string().optional().default_value("default-string").build()
    schema = SchemaBuilder.struct().name("Record").field("int8", INT8_SCHEMA).field("string", string).build()
    value = Struct(schema).put("int8", 12)
    assert JsonSchemaData().from_connect_data(schema, value) == {"int8": 12, "string": "default-string"}
    ignoring = data(ignore_default_for_nullables=True)
    assert ignoring.from_connect_data(schema, value) == {"int8": 12, "string": None}
    assert ignoring.from_connect_schema(schema)["properties"]["string"] == {
        "connect.index": 1, "oneOf": [NULL, {"type": "string", "default": "default-string"}]}


def test_schema_text_is_what_confluent_registers() -> None:
    """The JSON schema Confluent's JsonSchemaConverter wrote for this struct, pinned by its SchemaValuesTest
    (properties in Java's HashMap order, everit's key order within each)."""
    schema = (SchemaBuilder.struct().field("int8", INT8_SCHEMA).field("int16", INT16_SCHEMA)
              .field("int32", INT32_SCHEMA).field("int64", INT64_SCHEMA).field("float32", FLOAT32_SCHEMA)
              .field("float64", FLOAT64_SCHEMA).field("boolean", BOOLEAN_SCHEMA).field("string", STRING_SCHEMA)
              .field("bytes", BYTES_SCHEMA).field("array", SchemaBuilder.array(STRING_SCHEMA).build())
              .field("map", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build()).build())
    confluent = """{
      "type": "object",
      "properties": {
        "boolean": {"connect.index": 6, "type": "boolean"},
        "string": {"type": "string", "connect.index": 7},
        "int32": {"type": "integer", "connect.index": 2, "connect.type": "int32"},
        "array": {"type": "array", "connect.index": 9, "items": {"type": "string"}},
        "int64": {"type": "integer", "connect.index": 3, "connect.type": "int64"},
        "bytes": {"type": "string", "connect.index": 8, "connect.type": "bytes"},
        "int8": {"type": "integer", "connect.index": 0, "connect.type": "int8"},
        "float32": {"type": "number", "connect.index": 4, "connect.type": "float32"},
        "float64": {"type": "number", "connect.index": 5, "connect.type": "float64"},
        "map": {"type": "object", "connect.index": 10, "connect.type": "map",
                "additionalProperties": {"type": "integer", "connect.type": "int32"}},
        "int16": {"type": "integer", "connect.index": 1, "connect.type": "int16"}
      }
    }"""
    text = schema_text(JsonSchemaData().from_connect_schema(schema))
    assert text == json.dumps(json.loads(confluent), separators=(",", ":"))
    assert JsonSchemaData().to_connect_schema(text) == schema


def test_schema_text_of_logical_types_and_optional_fields() -> None:
    schema = (SchemaBuilder.struct().name("shop.Order").doc("An order").field("amount", Decimal.schema(2))
              .field("day", Date.builder().optional().build()).build())
    assert schema_text(JsonSchemaData().from_connect_schema(schema)) == (
        '{"type":"object","title":"shop.Order","description":"An order","properties":{'
        '"amount":{"type":"string","title":"org.apache.kafka.connect.data.Decimal","connect.index":0,'
        '"connect.version":1,"connect.type":"bytes","connect.parameters":{"scale":"2"}},'
        '"day":{"connect.index":1,"oneOf":[{"type":"null"},{"type":"integer",'
        '"title":"org.apache.kafka.connect.data.Date","connect.version":1,"connect.type":"int32"}]}}}')


def test_java_hash_order() -> None:
    assert java_hash_order(["key", "value"]) == ["value", "key"]
    many = [f"field{i}" for i in range(20)]  # past 12 keys the map doubles
    assert sorted(java_hash_order(many)) == sorted(many)


# ------------------------------------------------------------------------------------ JSON Schema -> Connect

def test_to_connect_null_and_primitives() -> None:
    to_connect({"oneOf": [NULL, {"type": "boolean"}]}, None, OPTIONAL_BOOLEAN_SCHEMA, None)
    assert JsonSchemaData().to_connect_schema(None) is None
    assert JsonSchemaData().to_connect_data(None, None) is None
    to_connect({"type": "boolean"}, True, BOOLEAN_SCHEMA, True)
    to_connect(integer("int8"), 12, INT8_SCHEMA, 12)
    to_connect(integer("int16"), 12, INT16_SCHEMA, 12)
    to_connect(integer("int32"), 12, INT32_SCHEMA, 12)
    to_connect(integer("int64"), 12, INT64_SCHEMA, 12)
    to_connect({"type": "number", "connect.type": "float32"}, js("12.0"), FLOAT32_SCHEMA, 12.0)
    to_connect({"type": "number", "connect.type": "float64"}, js("12.0"), FLOAT64_SCHEMA, 12.0)
    nullable = {"oneOf": [NULL, {"type": "string"}]}
    to_connect(nullable, None, OPTIONAL_STRING_SCHEMA, None)
    to_connect(nullable, "teststring", OPTIONAL_STRING_SCHEMA, "teststring")
    to_connect({"type": "string"}, "teststring", STRING_SCHEMA, "teststring")
    to_connect({"type": "string", "connect.type": "bytes"}, "dGVzdHN0cmluZw==", BYTES_SCHEMA, b"teststring")


def test_to_connect_int8_with_default() -> None:
    expected = SchemaBuilder.int8().default_value(34).build()
    to_connect(integer("int8", default=34), 12, expected, 12)
    assert JsonSchemaData().to_connect_data(expected, None) == 34


def test_to_connect_array_and_maps() -> None:
    to_connect({"type": "array", "items": integer("int8")}, [12, 13],
               SchemaBuilder.array(INT8_SCHEMA).build(), [12, 13])
    to_connect({"type": "object", "connect.type": "map", "additionalProperties": integer("int8")}, {"field": 12},
               SchemaBuilder.map(STRING_SCHEMA, INT8_SCHEMA).build(), {"field": 12})
    entry = {"type": "object", "properties": {"key": integer("int8"), "value": integer("int16")}}
    to_connect({"type": "array", "connect.type": "map", "items": entry}, [{"key": 12, "value": 16}],
               SchemaBuilder.map(INT8_SCHEMA, INT16_SCHEMA).build(), {12: 16})
    entry = {"type": "object", "properties": {"key": integer("int8"), "value": {"oneOf": [NULL, {"type": "string"}]}}}
    expected = SchemaBuilder.map(INT8_SCHEMA, OPTIONAL_STRING_SCHEMA).build()
    doc = {"type": "array", "connect.type": "map", "items": entry}
    to_connect(doc, [{"key": 12, "value": "some value"}], expected, {12: "some value"})
    to_connect(doc, [{"key": 12, "value": None}], expected, {12: None})
    named = {"type": "object", "title": "foo.bar", "connect.type": "map", "additionalProperties": integer("int32")}
    assert JsonSchemaData().to_connect_schema(named) == \
        SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).name("foo.bar").build()


def record(**properties: dict) -> dict:
    return {"type": "object", "title": "Record", "properties": properties}


def test_to_connect_records() -> None:
    expected = SchemaBuilder.struct().name("Record").field("int8", INT8_SCHEMA).field("string", STRING_SCHEMA).build()
    doc = record(int8=integer("int8", **{"connect.index": 0}), string={"type": "string", "connect.index": 1})
    to_connect(doc, {"int8": 12, "string": "sample string"}, expected,
               Struct(expected).put("int8", 12).put("string", "sample string"))
    # a missing required property is left unset, as Java does
    value = JsonSchemaData().to_connect_data(expected, {"int8": 12})
    assert value.get("int8") == 12 and value.get("string") is None
    # additionalProperties: false reads the same
    to_connect({**doc, "additionalProperties": False}, {"int8": 12, "string": "x"}, expected,
               Struct(expected).put("int8", 12).put("string", "x"), data(object_additional_properties=False))


def test_to_connect_record_with_optional_values() -> None:
    expected = SchemaBuilder.struct().name("Record").field("int8", INT8_SCHEMA) \
        .field("string", OPTIONAL_STRING_SCHEMA).build()
    doc = record(int8=integer("int8", **{"connect.index": 0}),
                 string={"connect.index": 1, "oneOf": [NULL, {"type": "string"}]})
    for value in ("sample string", None):
        to_connect(doc, {"int8": 12, "string": value}, expected, Struct(expected).put("int8", 12).put("string", value))
    array = SchemaBuilder.array(STRING_SCHEMA).optional().build()
    expected = SchemaBuilder.struct().name("Record").field("string", OPTIONAL_STRING_SCHEMA) \
        .field("array", array).build()
    doc = record(string={"connect.index": 0, "oneOf": [NULL, {"type": "string"}]},
                 array={"connect.index": 1, "oneOf": [NULL, {"type": "array", "items": {"type": "string"}}]})
    for value in (["test"], None):
        to_connect(doc, {"string": "xx", "array": value}, expected,
                   Struct(expected).put("string", "xx").put("array", value))


def test_to_connect_nested_record_with_optional_record_value() -> None:
    nested = SchemaBuilder.struct().optional().name("nestedRecord").field("string", STRING_SCHEMA).build()
    expected = SchemaBuilder.struct().name("Record").field("nestedRecord", nested).build()
    doc = record(nestedRecord={"connect.index": 0, "oneOf": [NULL, {
        "type": "object", "title": "nestedRecord", "properties": {"string": {"type": "string", "connect.index": 0}}}]})
    to_connect(doc, {"nestedRecord": {"string": "xx"}}, expected,
               Struct(expected).put("nestedRecord", Struct(nested).put("string", "xx")))
    to_connect(doc, {"nestedRecord": None}, expected, Struct(expected))


def test_to_connect_use_optional_for_nonrequired() -> None:
    expected = SchemaBuilder.struct().name("Record").field("int8", INT8_SCHEMA) \
        .field("string", OPTIONAL_STRING_SCHEMA).build()
    doc = {**record(int8=integer("int8", **{"connect.index": 0}), string={"type": "string", "connect.index": 1}),
           "required": ["int8"]}
    to_connect(doc, {"int8": 12}, expected, Struct(expected).put("int8", 12), data(use_optional_for_nonrequired=True))


def test_to_connect_record_with_optional_reference() -> None:
    doc = js("""{"$schema": "http://json-schema.org/draft-04/schema#", "title": "Event", "type": "object",
      "properties": {"vehicle": {"$ref": "#/definitions/VehicleDto"}},
      "definitions": {
        "PriceDto": {"type": "object", "required": ["amount"],
                     "properties": {"amount": {"type": "number", "format": "decimal"}}},
        "VehicleDto": {"type": "object", "required": ["offerPrice", "firstRegistrationDate"],
          "properties": {
            "offerPrice": {"connect.index": 1, "$ref": "#/definitions/PriceDto"},
            "catalogPrice": {"connect.index": 2, "oneOf": [{"type": "null"}, {"$ref": "#/definitions/PriceDto"}]},
            "firstRegistrationDate": {"connect.index": 3, "type": "string", "format": "date-time"}}}}}""")
    d = data(use_optional_for_nonrequired=True)
    schema = d.to_connect_schema(doc)
    vehicle = schema.field("vehicle").schema
    assert not vehicle.field("offerPrice").schema.optional
    assert vehicle.field("catalogPrice").schema.optional
    value = d.to_connect_data(schema, js('{"vehicle":{"offerPrice":{"amount":20000},'
                                         '"firstRegistrationDate":"2020-08-19T12:05:15.953Z"}}'))
    assert value.get("vehicle").get("offerPrice").get("amount") == 20000.0
    assert value.get("vehicle").get("catalogPrice") is None


def test_to_connect_decimals() -> None:
    expected = SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter("scale", "2").build()
    doc = {"type": "number", "title": Decimal.LOGICAL_NAME, "connect.type": "bytes",
           "connect.parameters": {"scale": "2"}}
    to_connect(doc, "AJw=", expected, decimal.Decimal("1.56"))  # BASE64: the unscaled value's bytes
    to_connect(doc, js("1.56"), expected, decimal.Decimal("1.56"))  # NUMERIC
    scale4 = {**doc, "connect.parameters": {"scale": "4"}}
    value = JsonSchemaData().to_connect_data(JsonSchemaData().to_connect_schema(scale4), js("1.5600"))
    assert str(value) == "1.5600"
    scale17 = {**doc, "connect.parameters": {"scale": "17"}}
    value = JsonSchemaData().to_connect_data(JsonSchemaData().to_connect_schema(scale17), js("1.23456789123456789"))
    assert value == decimal.Decimal("1.23456789123456789")  # more than a double holds


def enum_schema(*symbols: str, generalized: bool = False):
    name = GENERALIZED_TYPE_ENUM if generalized else JSON_TYPE_ENUM
    builder = SchemaBuilder.string().parameter(name, "")
    for i, symbol in enumerate(symbols):
        builder.parameter(f"{name}.{symbol}", str(i) if generalized else symbol)
    return builder.build()


def test_to_connect_const_and_enums() -> None:
    to_connect({"const": "one"}, "one", enum_schema("one"), "one")
    to_connect({"enum": ["one", "two", "three"]}, "one", enum_schema("one", "two", "three"), "one")
    to_connect({"enum": ["one", "two", "three", None]}, "one", enum_schema("one", "two", "three", "<NULL>"), "one")
    generalized = data(generalized_sum_type_support=True)
    to_connect({"enum": ["one", "two", "three"]}, "one", enum_schema("one", "two", "three", generalized=True), "one",
               generalized)
    to_connect({"enum": ["one", "two", "three", None]}, "one",
               enum_schema("one", "two", "three", "<NULL>", generalized=True), "one", generalized)


def test_to_connect_all_of() -> None:
    to_connect({"allOf": [{"type": "string"}, {"enum": ["one", "two", "three"]}]}, "one",
               enum_schema("one", "two", "three"), "one")
    to_connect({"allOf": [{"type": "number"}, {"enum": [1, 2, 3]}]}, js("123.45"), FLOAT64_SCHEMA, 123.45)
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, OPTIONAL_INT8_SCHEMA) \
        .field(ONE_OF_1, OPTIONAL_INT16_SCHEMA).build()
    to_connect({"allOf": [{"oneOf": [integer("int8"), integer("int16")]}, {"enum": [1, 2, 3]}]}, 12, union,
               Struct(union).put(ONE_OF_0, 12))
    to_connect({"const": "money", "type": "string"}, "money", STRING_SCHEMA, "money")
    to_connect({"const": 123, "type": "integer"}, 123, INT64_SCHEMA, 123)
    to_connect({"const": 123.45, "type": "number"}, js("123.45"), FLOAT64_SCHEMA, 123.45)
    to_connect({"allOf": [{"$ref": "#/definitions/n"}], "definitions": {"n": integer("int64")}}, 27,
               SchemaBuilder.int64().build(), 27)


def test_to_connect_unions() -> None:
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, OPTIONAL_INT8_SCHEMA) \
        .field(ONE_OF_1, OPTIONAL_INT16_SCHEMA).build()
    to_connect({"oneOf": [integer("int8"), integer("int16")]}, 12, union, Struct(union).put(ONE_OF_0, 12))
    to_connect({"anyOf": [integer("int8"), integer("int16")]}, 12, union, Struct(union).put(ONE_OF_0, 12))
    to_connect({"oneOf": [{"type": "string"}]}, "bar", STRING_SCHEMA, "bar")
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, OPTIONAL_STRING_SCHEMA) \
        .field(ONE_OF_1, OPTIONAL_INT32_SCHEMA).build()
    to_connect({"oneOf": [{"type": "string"}, integer("int32")]}, 12, union, Struct(union).put(ONE_OF_1, 12))
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, OPTIONAL_STRING_SCHEMA) \
        .field(ONE_OF_1, OPTIONAL_INT64_SCHEMA).build()
    to_connect({"oneOf": [{"type": "string"}, {"type": "integer"}]}, 123, union, Struct(union).put(ONE_OF_1, 123))
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, OPTIONAL_STRING_SCHEMA) \
        .field(ONE_OF_1, OPTIONAL_FLOAT64_SCHEMA).build()
    to_connect({"oneOf": [{"type": "string"}, {"type": "number"}]}, 123, union, Struct(union).put(ONE_OF_1, 123.0))


def test_to_connect_union_with_generalized_sum_type_support() -> None:
    union = SchemaBuilder.struct().name("connect_union_0").parameter(GENERALIZED_TYPE_UNION, "connect_union_0") \
        .field("connect_union_field_0", OPTIONAL_INT8_SCHEMA).field("connect_union_field_1", OPTIONAL_INT16_SCHEMA) \
        .build()
    to_connect({"oneOf": [integer("int8"), integer("int16")]}, 12, union,
               Struct(union).put("connect_union_field_0", 12), data(generalized_sum_type_support=True))


def test_to_connect_union_of_structs_picks_the_best_match() -> None:
    def obj(title: str, first: str, second: str, index: int) -> dict:
        return {"type": "object", "title": title, "connect.index": index,
                "properties": {first: integer("int8", **{"connect.index": 0}),
                               second: {"type": "string", "connect.index": 1}}}

    field0 = SchemaBuilder.struct().name("field0").field("a", INT8_SCHEMA).field("b", STRING_SCHEMA) \
        .optional().build()
    field1 = SchemaBuilder.struct().name("field1").field("c", INT8_SCHEMA).field("d", STRING_SCHEMA) \
        .optional().build()
    union = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF).field(ONE_OF_0, field0).field(ONE_OF_1, field1).build()
    doc = {"oneOf": [obj("field0", "a", "b", 0), obj("field1", "c", "d", 1)]}
    to_connect(doc, {"a": 12, "b": "s"}, union, Struct(union).put(ONE_OF_0, Struct(field0).put("a", 12).put("b", "s")))
    to_connect(doc, {"c": 12, "d": "s"}, union, Struct(union).put(ONE_OF_1, Struct(field1).put("c", 12).put("d", "s")))


def test_to_connect_union_of_nested_structs() -> None:
    string = {"type": "string", "connect.index": 0}
    doc = {"oneOf": [
        {"type": "object", "connect.index": 0, "properties": {
            "commonFieldName": {"type": "object", "properties": {"differentFieldNameA": string}}}},
        {"type": "object", "connect.index": 1, "properties": {
            "commonFieldName": {"type": "object", "properties": {"differentFieldNameB": string}}}}]}
    d = JsonSchemaData()
    schema = d.to_connect_schema(doc)
    assert schema.name == JSON_TYPE_ONE_OF
    first = d.to_connect_data(schema, {"commonFieldName": {"differentFieldNameA": "A"}})
    assert first.get(ONE_OF_0).get("commonFieldName").get("differentFieldNameA") == "A"
    second = d.to_connect_data(schema, {"commonFieldName": {"differentFieldNameB": "B"}})
    assert second.get(ONE_OF_1).get("commonFieldName").get("differentFieldNameB") == "B"


def test_to_connect_combined_documents() -> None:
    """Confluent's cases of documents as users write them: allOf of $refs, formats, type lists, $defs."""
    identify = js("""{"$schema": "http://json-schema.org/draft-07/schema#",
      "allOf": [{"$ref": "#/definitions/MessageBase"}, {"$ref": "#/definitions/MessageBase2"}],
      "title": "IdentifyUserMessage", "description": "An IdentifyUser message", "type": "object",
      "properties": {"prevUserId": {"type": "string"}, "newUserId": {"type": "string"}},
      "definitions": {"MessageBase": {"properties": {"id": {"type": "string"}, "type": {"type": "string"}}},
                      "MessageBase2": {"properties": {"id2": {"type": "string"}}}}}""")
    schema = JsonSchemaData().to_connect_schema(identify)
    assert {f.name for f in schema.fields} == {"id", "type", "id2", "newUserId", "prevUserId"}
    product = {"title": "Product Identifier", "type": "object", "anyOf": [
        {"type": "object", "properties": {"keycode": {"type": "string"}}},
        {"type": "object", "properties": {"itemCode": {"type": "string"}}}]}
    assert JsonSchemaData().to_connect_schema(product).name == JSON_TYPE_ONE_OF

    def fields(doc: dict) -> dict:
        schema = JsonSchemaData().to_connect_schema(doc)
        return {f.name: f.schema for f in schema.fields}

    numerics = fields({"type": "object", "properties": {"id": {"type": "integer", "format": "int32"},
                                                        "num": {"type": "number", "format": "double"}},
                       "required": ["id"], "additionalProperties": False})
    assert numerics["id"] == INT64_SCHEMA and numerics["num"] == FLOAT64_SCHEMA
    numerics = fields({"type": "object", "properties": {"id": {"format": "int32", "type": ["null", "number"]},
                                                        "num": {"format": "double", "type": ["null", "integer"]}}})
    assert numerics["id"] == OPTIONAL_FLOAT64_SCHEMA and numerics["num"] == OPTIONAL_INT64_SCHEMA
    strings = fields({"type": "object", "properties": {"id": {"type": "string", "format": "password"},
                                                       "str": {"type": ["null", "string"], "format": "uuid"}}})
    assert strings["id"] == STRING_SCHEMA and strings["str"] == OPTIONAL_STRING_SCHEMA
    referenced = fields({"type": "object", "properties": {"complexNode": {"oneOf": [
        {"type": "null", "title": "Not included"}, {"$ref": "#/definitions/complexNode"}]}},
        "definitions": {"complexNode": {"type": "object", "properties": {"id": {"type": "string"}}}}})
    assert referenced["complexNode"].optional and referenced["complexNode"].type is SchemaType.STRUCT
    modern = fields({"$schema": "https://json-schema.org/draft/2020-12/schema",
                     "$defs": {"review": {"type": "object", "properties": {"created_on": {"type": ["string", "null"]}}}},
                     "properties": {"change_operation": {"type": "string"},
                                    "reviews": {"items": {"$ref": "#/$defs/review"}, "type": ["array", "null"]}}})
    assert modern["reviews"].type is SchemaType.ARRAY and modern["reviews"].optional
    assert modern["reviews"].value_schema.field("created_on").schema == OPTIONAL_STRING_SCHEMA


def test_to_connect_field_order_without_connect_index_is_javas() -> None:
    """Without ``connect.index`` Confluent's fields come in everit's HashMap order, not the document's."""
    doc = {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}
    assert [f.name for f in JsonSchemaData().to_connect_schema(doc).fields] == ["value", "key"]


def test_logical_types_round_trip() -> None:
    schema = (SchemaBuilder.struct().field("date", Date.SCHEMA).field("time", Time.SCHEMA)
              .field("ts", Timestamp.SCHEMA).field("dec", Decimal.schema(3)).build())
    value = (Struct(schema).put("date", dt.date(2024, 2, 29)).put("time", dt.time(13, 5, 7, 123000))
             .put("ts", dt.datetime(2024, 2, 29, 13, 5, 7, 123000, tzinfo=dt.timezone.utc))
             .put("dec", decimal.Decimal("-12.345")))
    for fmt in ("BASE64", "NUMERIC"):
        d = data(decimal_format=fmt)
        text = schema_text(d.from_connect_schema(schema))
        node = js(schema_text(d.from_connect_data(schema, value)))
        assert d.to_connect_data(d.to_connect_schema(text), node) == value


def test_bad_input_names_the_problem() -> None:
    d = JsonSchemaData()
    with pytest.raises(DataException, match="Invalid null value for required INT32 field"):
        d.to_connect_data(INT32_SCHEMA, None)
    with pytest.raises(DataException, match="Invalid type for Date, underlying representation should be integer"):
        d.to_connect_data(Date.SCHEMA, "2020-01-01")
    with pytest.raises(DataException, match="Invalid type for INT32"):
        d.from_connect_data(INT32_SCHEMA, "7")
    inner = SchemaBuilder.struct().field("day", Date.SCHEMA).build()
    outer = SchemaBuilder.struct().field("inner", inner).build()
    with pytest.raises(DataException, match=r"representation should be integer but was STRING \(field: inner.day\)"):
        d.to_connect_data(outer, {"inner": {"day": "monday"}})
    with pytest.raises(DataException, match=r"expected Date but was class str \(field: inner.day\)"):
        d.from_connect_data(outer, Struct.of(outer, [Struct.of(inner, ["monday"])]))
    with pytest.raises(DataException, match="Maps with non-string fields"):
        d.to_connect_data(SchemaBuilder.map(INT32_SCHEMA, INT32_SCHEMA).build(), {"1": 2})
    with pytest.raises(DataException, match="Recursive JSON schemas are not supported"):
        d.to_connect_schema({"type": "object", "title": "Task", "id": "#id1",
                             "properties": {"parent": {"$ref": "#id1"}, "title": {"type": "string"}}})
    with pytest.raises(DataException, match="Unresolvable JSON Schema reference"):
        d.to_connect_schema({"$ref": "other.json"})
    with pytest.raises(DataException, match="accepting any value"):
        d.to_connect_schema({})
