"""JsonConverter's fast paths give exactly what its general path gives.

Envelopes written as Kafka's JsonConverter writes them (``{"schema":...,"payload":...}``, compact) are
read by finding the schema by its raw text and parsing only the payload (so are envelopes with JSON's
whitespace between their tokens, as ``json.dumps`` writes them); the same bytes after a space take the
general path (parse everything, then the schema). Schemaless JSON
is parsed straight to floats. Both must agree with the general path on every vector.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pickle
import random
import re

import pytest

from connect_magics.api.config import java_str_join
from connect_magics.api.converters import JsonConverter, SchemaAndValue, StringColumn
from connect_magics.api.data import (
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import DataException

pytestmark = pytest.mark.unit

TOPIC = "topic"
D = decimal.Decimal
UTC = dt.timezone.utc


def json_converter(**configs: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(configs, is_key=False)
    return c


def general(data: bytes) -> bytes:
    """The same envelope, spelled so that it misses the fast path (a space before the opening brace)."""
    assert data.startswith(b'{"schema":')
    return b" " + data


INNER = SchemaBuilder.struct().name("inner").field("x", INT32_SCHEMA).field("s", OPTIONAL_STRING_SCHEMA).build()
NESTED = (SchemaBuilder.struct().name("outer")
          .field("inner", INNER)
          .field("list", SchemaBuilder.array(INNER).build())
          .field("opt", SchemaBuilder.struct().field("y", INT64_SCHEMA).optional().build())
          .field("dflt", SchemaBuilder.string().optional().default_value("d").build())
          .field("bytes", BYTES_SCHEMA)
          .field("dec", Decimal.schema(30))
          .field("map", SchemaBuilder.map(INT32_SCHEMA, SchemaBuilder.array(STRING_SCHEMA).build()).build())
          .build())


def nested_value(dflt: str | None = None) -> Struct:
    inner = Struct(INNER).put("x", 1).put("s", 'é "q" \\ \x01\n')
    return (Struct(NESTED).put("inner", inner).put("list", [inner, Struct(INNER).put("x", -2)])
            .put("bytes", b"\x00\xff\x10").put("dec", D("-1234567890.123456789012345678901234567890"))
            .put("map", {1: ["a"], -7: []}).put("dflt", dflt))


# (schema, value[, value read back]) written by the converter, then read back through both paths.
WRITTEN = [
    (STRING_SCHEMA, "x" * 100),
    (STRING_SCHEMA, 'é "quoted" \\ \x00\x1f\t\u2028 ✓'),
    (OPTIONAL_STRING_SCHEMA, None, None),
    (SchemaBuilder.int32().optional().default_value(42).build(), None, 42),
    (FLOAT64_SCHEMA, 1e300),
    (FLOAT64_SCHEMA, float("nan")),
    (BYTES_SCHEMA, b"\x00\x01\xfe\xff"),
    (Decimal.schema(30), D("123456789012345678901234567890.123456789012345678901234567890")),
    (Decimal.schema(2), D("-0.01")),
    (Date.SCHEMA, dt.date(2024, 2, 29)),
    (Time.SCHEMA, dt.time(23, 59, 59, 999000)),
    (Timestamp.SCHEMA, dt.datetime(2024, 2, 29, 12, 0, 0, 1000, tzinfo=UTC)),
    (SchemaBuilder.map(STRING_SCHEMA, Decimal.schema(3)).build(), {"a": D("1.500"), "b": D("-2.000")}),
    (NESTED, nested_value(), nested_value("d")),  # null written as the field's default
]


def _same(a: SchemaAndValue, b: SchemaAndValue) -> bool:
    if isinstance(a.value, float) and a.value != a.value:  # NaN
        return a.schema == b.schema and b.value != b.value
    return a == b


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@pytest.mark.parametrize("schema, value, read_back", [(*w, w[1])[:3] for w in WRITTEN])
def test_written_envelopes_read_back_alike(decimal_format, schema, value, read_back):
    writer = json_converter(**{"decimal.format": decimal_format})
    data = writer.from_connect_data(TOPIC, schema, value)
    fast, slow = json_converter(), json_converter()
    expected = slow.to_connect_data(TOPIC, general(data))
    first, again = fast.to_connect_data(TOPIC, data), fast.to_connect_data(TOPIC, data)  # miss, then hit
    assert _same(first, expected) and _same(again, expected)
    assert fast._last_envelope is not None and not slow._envelopes._items  # the paths taken were the ones meant
    if not isinstance(value, float):
        assert expected.value == read_back


def test_big_numeric_decimals_stay_exact():
    data = (b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
            b'"version":1,"parameters":{"scale":"40"}},"payload":'
            b'12345678901234567890.1234567890123456789012345678901234567890}')
    value = json_converter().to_connect_data(TOPIC, data).value
    assert value == D("12345678901234567890.1234567890123456789012345678901234567890")


def test_schema_cache_hits_with_different_payloads():
    c = json_converter()
    a = b'{"schema":{"type":"int64","optional":true},"payload":'
    b = b'{"schema":{"type":"string","optional":false,"default":"dflt"},"payload":'
    got = [c.to_connect_data(TOPIC, prefix + payload + b"}").value
           for prefix, payload in [(a, b"1"), (a, b"-9223372036854775808"), (b, b'"x"'), (a, b"null"),
                                   (b, b"null"), (b, b'"\\u00e9"'), (a, b"12.9")]]
    assert got == [1, -9223372036854775808, "x", None, "dflt", "é", 12]
    assert len(c._envelopes) == 2 and len(c._to_connect_cache) == 2


@pytest.mark.parametrize("data", [
    b'{"schema":{"type":"int32","optional":false},"payload":0012}',  # leading zeros: Jackson allows them
    b'{"schema":{"type":"int32","optional":false},"payload": 12 }',
    b'{"schema":{"type":"int32","optional":false},"payload":12} ',
    b'{"schema":{"type":"int32","optional":false},"payload":[12]}',
])
def test_payloads_the_fast_path_leaves_to_the_general_one(data):
    assert json_converter().to_connect_data(TOPIC, data) == json_converter().to_connect_data(TOPIC, general(data))


@pytest.mark.parametrize("data, message", [
    (b'{"schema":{"type":"int32","optional":false},"payload":1,"extra":2}', "requires \"schema\" and \"payload\""),
    (b'{"schema":{"type":"int32","optional":false},"payload":null}', "Invalid null value for required INT32 field"),
    (b'{"schema":{"type":"nope"},"payload":1}', "Unknown schema type: nope"),
    (b'{"schema":{"type":"nope"},"payload":1,"x":2}', "requires \"schema\" and \"payload\""),
    (b'{"schema":{"type":"int32"},"payload":}', "serialization error"),
    (b'{"schema":{"type":"struct","fields":[]},"payload":[]}', "Structs should be encoded as JSON objects"),
])
def test_errors_are_the_general_paths(data, message):
    for c in (json_converter(), json_converter()):
        c.to_connect_data(TOPIC, b'{"schema":{"type":"int32","optional":false},"payload":1}')  # a warm cache
        with pytest.raises(DataException, match=message):
            c.to_connect_data(TOPIC, data)
        with pytest.raises(DataException, match=message):
            c.to_connect_data(TOPIC, general(data))


@pytest.mark.parametrize("data, value", [
    (b'{"a":1.5,"b":[1e400,-0.0,0.1],"c":null,"d":true}', {"a": 1.5, "b": [float("inf"), -0.0, 0.1], "c": None,
                                                           "d": True}),
    (b"12345678901234567890123", 12345678901234567890123),
    (b'"x"', "x"),
    (b" [007, 1.25e2] ", [7, 125.0]),
    ('"hé"'.encode("utf-16-le"), "hé"),
    ('{"k": "v"}'.encode("utf-8-sig"), {"k": "v"}),
])
def test_schemaless_reads(data, value):
    got = json_converter(**{"schemas.enable": "false"}).to_connect_data(TOPIC, data)
    assert got == SchemaAndValue(None, value) and repr(got.value) == repr(value)


def test_schema_alternation_when_writing():
    c = json_converter()
    first = c.from_connect_data(TOPIC, STRING_SCHEMA, "a")
    assert c.from_connect_data(TOPIC, INT32_SCHEMA, 1) == b'{"schema":{"type":"int32","optional":false},"payload":1}'
    assert c.from_connect_data(TOPIC, None, "a") == b'{"schema":null,"payload":"a"}'
    assert c.from_connect_data(TOPIC, STRING_SCHEMA, "a") == first == \
        b'{"schema":{"type":"string","optional":false},"payload":"a"}'


def test_pickled_after_use():
    c = json_converter()
    data = json_converter().from_connect_data(TOPIC, NESTED, nested_value())
    before = c.to_connect_data(TOPIC, data)
    copy = pickle.loads(pickle.dumps(c))
    assert copy.to_connect_data(TOPIC, data) == before
    assert copy.from_connect_data(TOPIC, NESTED, before.value) == data


COLUMN = [None, b'{"schema":{"type":"int32","optional":true},"payload":1}',
          b'{"schema":{"type":"int32","optional":true},"payload":null}', b'{ "schema": null, "payload": 2.5 }',
          bytearray(b'{"schema":{"type":"string","optional":false},"payload":"b"}'),
          b'{"schema":{"type":"int32","optional":true},"payload":0003}']


@pytest.mark.parametrize("configs, datas", [
    ({}, COLUMN),
    ({"schemas.enable": "false"}, [None, b"", b"1", b'{"a":[1.5]}', bytearray(b"007"), memoryview(b'"m"')]),
])
def test_to_connect_column_is_to_connect_data_for_each(configs, datas):
    column = json_converter(**configs).to_connect_column(TOPIC, datas)
    one_by_one = json_converter(**configs)
    assert column == [one_by_one.to_connect_data(TOPIC, d) for d in datas]


@pytest.mark.parametrize("configs, bad, message", [
    ({}, b'{"schema":{"type":"int32","optional":false},"payload":null}', "Invalid null value for required INT32"),
    ({}, b"[1]", "requires \"schema\" and \"payload\""),
    ({"schemas.enable": "false"}, b"{nope", "serialization error"),
])
def test_to_connect_column_raises_as_to_connect_data(configs, bad, message):
    with pytest.raises(DataException, match=message):
        json_converter(**configs).to_connect_column(TOPIC, [b'{"schema":null,"payload":1}', bad])


@pytest.mark.parametrize("text", ["x" * 100, "", "é日本", 'a"b', "a\\b", "tab\there", "nul\x00", "del\x7f",
                                  "line\u2028sep", "\x1f", "\ud800"])
@pytest.mark.parametrize("schema", [None, STRING_SCHEMA, OPTIONAL_STRING_SCHEMA])
@pytest.mark.parametrize("schemas", ["true", "false"])
def test_strings_are_written_as_the_general_path_writes_them(text, schema, schemas):
    """A string with nothing to escape is quoted as it is; any other takes the escaping path: the same bytes."""
    c = JsonConverter()
    c.configure({"schemas.enable": schemas}, is_key=False)
    payload = '"' + text.translate(_ESCAPES_JACKSON) + '"'
    start = "" if schemas == "false" else '{"schema":' + c.as_json_schema_text(schema) + ',"payload":'
    expected = start + payload + ("" if schemas == "false" else "}")
    if text == "\ud800":  # a lone surrogate cannot be written in UTF-8, on either path
        with pytest.raises(UnicodeEncodeError):
            c.from_connect_data(TOPIC, schema, text)
        return
    assert c.from_connect_data(TOPIC, schema, text) == expected.encode()


_TEXTS = ["x" * 100, "", "é日本", 'a"b', "a\\b", "tab\there", "line\nbreak", "nul\x00", "del\x7f", "line\u2028sep",
          "\x1f", "\ud800"]


@pytest.mark.parametrize("schemas", ["true", "false"])
@pytest.mark.parametrize("schema", [None, STRING_SCHEMA, OPTIONAL_STRING_SCHEMA])
@pytest.mark.parametrize("other", [*_TEXTS, None, 7, b"x"])
def test_a_string_column_is_written_as_each_string_is_or_left_to_them(schemas, schema, other):
    """A batch of strings with nothing to escape is written at once, byte for byte as one by one; a batch with
    anything else in it (a string to escape, a null, another type, another schema) is left to the record path."""
    c = json_converter(**{"schemas.enable": schemas})
    plain = ["a", "x" * 100, "é日本", "del\x7f", "line\u2028sep", ""]
    assert c.from_connect_column(TOPIC, [schema] * len(plain), plain) == \
        [c.from_connect_data(TOPIC, schema, v) for v in plain]
    batch = [*plain, other]
    column = c.from_connect_column(TOPIC, [schema] * len(batch), batch)
    if column is None:
        assert other not in plain
    else:
        assert other.__class__ is str and other.translate(_ESCAPES_JACKSON) == other
        assert column == [c.from_connect_data(TOPIC, schema, v) for v in batch]
    assert c.from_connect_column(TOPIC, [schema, INT32_SCHEMA], ["a", "b"]) is None
    assert c.from_connect_column(TOPIC, [], []) is None


def _envelope(schema: str, payload: bytes) -> bytes:
    return b'{"schema":' + schema.encode() + b',"payload":' + payload + b"}"


_REQUIRED, _OPTIONAL = '{"type":"string","optional":false}', '{"type":"string","optional":true}'
_PIECES = [b'"a"', b'"x"', b'"\xc3\xa9\xe6\x97\xa5"', b'""', b'"a\\u0041"', b'"tab\there"', b'"line\nbreak"',
           b'"a\\"b"', b'"', b'"}', b'"\n"', b"", b"7", b"null", b' "a"', b'"\xff"', b'"a"\n"b"', b'"a""', b'""""',
           b'a"', b'"a', b'"x"}\n{"schema":' + _REQUIRED.encode() + b',"payload":"y"', None]


@pytest.mark.parametrize("schemas", ["true", "false"])
@pytest.mark.parametrize("seed", range(40))
def test_a_string_column_is_read_as_each_string_is(schemas, seed):
    """Batches of strings, plain or not, valid or not, in envelopes or bare, mixed with other values: read as a
    column, each value is what reading it alone gives, and a batch that does not read fails as one by one."""
    rng = random.Random(seed)
    pieces = _PIECES if schemas == "false" else [
        *(_envelope(rng.choice([_REQUIRED, _OPTIONAL]), p) for p in _PIECES if p is not None),
        _envelope(_REQUIRED, b"null"), _envelope('{"type":"int32","optional":false}', b"7"), b'"a"', None]
    c = json_converter(**{"schemas.enable": schemas})
    for _ in range(50):
        datas = [rng.choice(pieces) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.5:  # mostly plain strings: the fast path's own case
            datas = [datas[0]] * rng.randint(1, 6)
        try:
            expected = [tuple(c.to_connect_data(TOPIC, d)) for d in datas]
        except DataException as e:
            with pytest.raises(DataException, match=re.escape(str(e))):
                c.to_connect_column(TOPIC, datas)
            continue
        assert [tuple(v) for v in c.to_connect_column(TOPIC, datas)] == expected, datas
        for separator in ("\n", ", "):  # a StringColumn's text, or the values printed one by one
            assert c.to_connect_text(TOPIC, datas, separator) == java_str_join([v for _, v in expected], separator)


def test_a_plain_string_column_takes_the_fast_path():
    for schemas, datas in (("false", [b'"a"', b'"b"']), ("true", [_envelope(_REQUIRED, b'"a"')] * 2)):
        column = json_converter(**{"schemas.enable": schemas})._string_column(datas)
        assert isinstance(column, StringColumn) and [v for _, v in column] == ["a", "a" if schemas == "true" else "b"]
        assert column.joined(" | ") == ("a | a" if schemas == "true" else "a | b")


_ESCAPES_JACKSON = {i: f"\\u{i:04X}" for i in range(0x20)} | {
    ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\t"): "\\t", ord("\n"): "\\n", ord("\f"): "\\f",
    ord("\r"): "\\r"}


_NESTED = SchemaBuilder.struct().name("inner").field("n", INT32_SCHEMA).optional().build()
_ROW = (SchemaBuilder.struct().name("row")
        .field("id", INT64_SCHEMA).field("name", OPTIONAL_STRING_SCHEMA).field("f", FLOAT64_SCHEMA)
        .field("ok", SchemaBuilder.bool().optional().build())
        .field("dflt", SchemaBuilder.int32().optional().default_value(7).build())
        .field("price", Decimal.builder(2).optional().build()).field("ts", Timestamp.builder().optional().build())
        .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build()).field("inner", _NESTED).build())


_ROW_AGAIN = SchemaBuilder.struct().name("row")
for _field in _ROW.fields:
    _ROW_AGAIN.field(_field.name, _field.schema)
_ROW_AGAIN = _ROW_AGAIN.build()
_ODD_NAMES = (SchemaBuilder.struct().field('a"b', STRING_SCHEMA).field("{c}", SchemaBuilder.bool().build())
              .field("\u00e9\n", INT32_SCHEMA).build())  # names to quote and escape, braces as in format strings


def _row(**values) -> Struct:
    """A row of ``_ROW``; values put without Struct.put's checks, so that a bad one reaches the converter."""
    row = Struct(_ROW).put("id", 1).put("f", 0.5)
    for name, value in values.items():
        row._values[_ROW.field(name).index] = value
    return row


def _generic(converter: JsonConverter, schema, value) -> bytes:
    """What from_connect_data wrote before it compiled writers: the general path, envelope and all."""
    from connect_magics.api.converters import _dump
    return (('{"schema":' + converter.as_json_schema_text(schema) + ',"payload":'
             + _dump(converter._to_json(schema, value)) + "}").encode("utf-8"))


@pytest.mark.parametrize("replace_null", ["true", "false"])
@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@pytest.mark.parametrize(("schema", "value"), [
    (INT64_SCHEMA, 5), (INT32_SCHEMA, -(1 << 40)), (FLOAT64_SCHEMA, 1e-7), (FLOAT64_SCHEMA, float("nan")),
    (FLOAT64_SCHEMA, 3), (OPTIONAL_STRING_SCHEMA, None), (OPTIONAL_STRING_SCHEMA, "tab\there \u00e9 \u0001"),
    (SchemaBuilder.bool().build(), False), (SchemaBuilder.int8().optional().default_value(3).build(), None),
    (Timestamp.SCHEMA, dt.datetime(2026, 1, 1, tzinfo=UTC)), (Date.SCHEMA, dt.date(2026, 1, 2)),
    (_ROW, _row()), (_ROW, _row(name="x", ok=True, price=D("1.25"), ts=dt.datetime(2026, 1, 1, tzinfo=UTC),
                                tags=["a", "b"], inner=Struct(_NESTED).put("n", 4))),
    (_ROW, _row(dflt=None, ok=None, name=None)), (_NESTED, None),
    (Decimal.schema(2), D("-1.00")), (Decimal.schema(0), D("128")), (Decimal.schema(30), D("-1." + "7" * 30)),
    (Decimal.builder(2).optional().build(), None), (Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
    (Timestamp.SCHEMA, dt.datetime(2026, 3, 29, 2, 30, tzinfo=dt.timezone(dt.timedelta(hours=-7)))),
    (Decimal.schema(2), D("-0.00")), (Decimal.schema(1), D("1" * 4400 + ".5")),  # beyond int()'s string digits
    (_ODD_NAMES, Struct(_ODD_NAMES).put('a"b', "x").put("{c}", True).put("\u00e9\n", 3)),
    (_ODD_NAMES, Struct(_ODD_NAMES).put('a"b', "\u0001\u001f\t\\").put("{c}", False).put("\u00e9\n", -3)),
    (SchemaBuilder.struct().build(), Struct(SchemaBuilder.struct().build())),
    (_ROW, Struct(_ROW_AGAIN).put("id", 2).put("f", 1.5).put("price", D("3.10"))),  # an equal schema built apart
])
def test_compiled_writers_write_what_the_general_path_writes(schema, value, decimal_format, replace_null) -> None:
    c = JsonConverter()
    c.configure({"decimal.format": decimal_format, "replace.null.with.default": replace_null}, is_key=False)
    expected = _generic(c, schema, value)
    assert c.from_connect_data(TOPIC, schema, value) == expected
    assert c.from_connect_data(TOPIC, schema, value) == expected  # the compiled writer, cached


@pytest.mark.parametrize(("schema", "value", "message"), [
    (INT64_SCHEMA, True, "Invalid type for INT64: class bool"),
    (INT32_SCHEMA, "1", "Invalid type for INT32: class str"),
    (STRING_SCHEMA, None, "Conversion error: null value for field that is required and has no default value"),
    (SchemaBuilder.bool().build(), 1, "Invalid type for BOOLEAN: class int"),
    (_ROW, _row(id=None), "Conversion error: null value for field that is required"),
    (_ROW, _row(ts=5), "Invalid type for Timestamp"),
    (_ROW, Struct(_NESTED), "Mismatching schema."),
    (_ROW, None, "Conversion error: null value for field that is required and has no default value"),
    (Decimal.schema(2), D("1.5"), "Decimal value has mismatching scale"),
    (Decimal.schema(2), D("NaN"), "Decimal value NaN cannot be represented"),
    (Decimal.schema(0), D("1E+2"), "Decimal value has mismatching scale"),
    (Decimal.schema(2), D("1.500"), "Decimal value has mismatching scale"),
    (_ODD_NAMES, Struct(_ODD_NAMES).put('a"b', "x").put("\u00e9\n", 3), "Conversion error: null value"),
    (Decimal.schema(2), 1.5, "Invalid type for Decimal"),
    (Timestamp.SCHEMA, dt.date(2026, 1, 1), "Invalid type for Timestamp"),
])
def test_compiled_writers_refuse_what_the_general_path_refuses(schema, value, message) -> None:
    c = JsonConverter()
    with pytest.raises(DataException) as general:
        _generic(c, schema, value)
    with pytest.raises(DataException) as compiled:
        c.from_connect_data(TOPIC, schema, value)
    assert str(compiled.value) == str(general.value) and str(general.value).startswith(message)


ROW = (SchemaBuilder.struct().name("row")
       .field("id", INT64_SCHEMA).field("small", SchemaBuilder.int8().build()).field("name", STRING_SCHEMA)
       .field("note", OPTIONAL_STRING_SCHEMA).field("flag", SchemaBuilder.boolean().optional().build())
       .field("ratio", SchemaBuilder.float32().build()).field("blob", BYTES_SCHEMA)
       .field("amount", Decimal.builder(2).optional().build()).field("day", Date.SCHEMA)
       .field("at", Time.builder().optional().build()).field("ts", Timestamp.SCHEMA)
       .field("dflt", SchemaBuilder.int32().optional().default_value(42).build())
       .field("inner", INNER).field("maybe", SchemaBuilder.struct().field("y", INT64_SCHEMA).optional().build())
       .build())
GOOD = {"id": 1, "small": 300, "name": "n", "note": None, "flag": True, "ratio": 0.5, "blob": "AP8=",
        "amount": "AJw=", "day": 3, "at": None, "ts": 1700000000123, "dflt": None, "inner": {"x": 1, "s": None},
        "maybe": None}


@pytest.mark.parametrize("node", [
    GOOD,
    {**GOOD, "note": "x", "flag": None, "amount": None, "at": 1000, "dflt": 7, "maybe": {"y": 2}},
    {**GOOD, "small": "not a number", "ratio": 3, "flag": 1},
    {k: v for k, v in GOOD.items() if k not in ("note", "dflt")},
    {**GOOD, "name": 5},  # read as null: a required field
    {**GOOD, "blob": 7, "name": None},
    {**GOOD, "inner": {"x": 1, "s": 2}},
    {**GOOD, "inner": {"s": "x"}},
    {**GOOD, "maybe": {"y": None}},
    {**GOOD, "blob": "not base64!"},
    {**GOOD, "name": 5, "blob": "not base64!"},  # two bad fields: the first one's error
    {**GOOD, "day": "x", "ts": 1.5},
    {**GOOD, "inner": [1]},
    {**GOOD, "ts": 10**20},
])
def test_struct_reader_is_put_field_by_field(node) -> None:
    """A struct read from its values at once is the struct put (validated) field by field, errors included."""
    reader = json_converter()._compile_reader(ROW)
    fields = [(f, json_converter()._compile_reader(f.schema)) for f in ROW.fields]

    def outcome(read):
        try:
            return read()
        except Exception as e:  # noqa: BLE001 - compared
            return type(e), str(e), type(e.__cause__)

    def put_field_by_field():
        struct = Struct(ROW)
        for f, read in fields:
            struct.put(f, read(node.get(f.name)))
        return struct

    expected = outcome(put_field_by_field)
    assert outcome(lambda: reader(node)) == expected
    if isinstance(expected, Struct):
        expected.validate()


def _spaced(data: bytes) -> bytes:
    """An envelope written compactly, respelled with JSON's whitespace between the envelope's tokens and in its
    schema (the payload's text kept)."""
    schema, end = json.JSONDecoder().raw_decode(data.decode(), len(b'{"schema":'))
    payload = data[end + len(b',"payload":'):-1]
    return b'{ "schema" :\t' + json.dumps(schema, indent=1).encode() + b'\r\n, "payload": ' + payload + b" \n}"


@pytest.mark.parametrize("schema, value, read_back", [(*w, w[1])[:3] for w in WRITTEN])
def test_envelopes_with_whitespace_take_the_fast_path(schema, value, read_back):
    data = json_converter().from_connect_data(TOPIC, schema, value)
    fast = json_converter()
    expected = json_converter().to_connect_data(TOPIC, general(data))
    first, again = fast.to_connect_data(TOPIC, _spaced(data)), fast.to_connect_data(TOPIC, _spaced(data))
    assert _same(first, expected) and _same(again, expected)
    assert fast._last_envelope is not None and fast._last_envelope[0].startswith(b'{ "schema" :\t')


def test_json_dumps_envelopes_are_read_by_the_fast_path():
    schema = {"type": "struct", "optional": False, "fields": [{"field": "id", "type": "int64", "optional": False}]}
    datas = [json.dumps({"schema": schema, "payload": {"id": i}}).encode() for i in range(3)]
    c = json_converter()
    assert c.to_connect_column(TOPIC, datas) == [json_converter().to_connect_data(TOPIC, general(d)) for d in datas]
    assert len(c._envelopes) == 1


# Every kind of field: Struct.put validated each field read; now only those whose reader may give an invalid value.
_KINDS = (SchemaBuilder.struct().name("kinds")
          .field("b", SchemaBuilder.bool().build()).field("i8", SchemaBuilder.int8().build())
          .field("i16", SchemaBuilder.int16().build()).field("i32", INT32_SCHEMA).field("i64", INT64_SCHEMA)
          .field("f32", SchemaBuilder.float32().build()).field("f64", FLOAT64_SCHEMA)
          .field("s", STRING_SCHEMA).field("os", OPTIONAL_STRING_SCHEMA).field("y", BYTES_SCHEMA)
          .field("oy", SchemaBuilder.bytes().optional().build())
          .field("ds", SchemaBuilder.string().default_value("d").build())
          .field("dec", Decimal.schema(2)).field("date", Date.builder().optional().build()).field("ts", Timestamp.SCHEMA)
          .field("arr", SchemaBuilder.array(STRING_SCHEMA).build())
          .field("map", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).optional().build())
          .field("inner", INNER).build())
_GOOD = {"b": True, "i8": 1, "i16": 2, "i32": 3, "i64": 4, "f32": 1.5, "f64": 2.5, "s": "s", "os": "o", "y": "AAE=",
         "oy": None, "ds": "x", "dec": "AQ==", "date": 19000, "ts": 1700000000000, "arr": ["a"], "map": {"k": 1},
         "inner": {"x": 1, "s": None}}
_BAD_NODES = [None, 5, -(1 << 70), "x", "not base64!", 1.5, True, [], [5], {}, {"k": "v"}, {"x": "y"}]
_MISSING_FIELD = object()


def _reference(c: JsonConverter, schema, payload: dict) -> Struct:
    """How the struct was read before: each field read on its own, then ``Struct.put`` (validated)."""
    struct = Struct(schema)
    for f in schema.fields:
        envelope = json.dumps({"schema": c.as_json_schema(f.schema), "payload": payload.get(f.name)}).encode()
        struct.put(f, c.to_connect_data(TOPIC, b" " + envelope).value)
    return struct


def _read(read, *args):
    """What ``read`` returns, or the type and message of what it raises."""
    try:
        return read(*args)
    except Exception as e:  # noqa: BLE001 - DataException, and OverflowError for a timestamp out of range
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("field", [f.name for f in _KINDS.fields])
@pytest.mark.parametrize("node", [*_BAD_NODES, _MISSING_FIELD])
@pytest.mark.parametrize("replace_null", ["true", "false"])
def test_structs_are_read_as_struct_put_validated_them(field, node, replace_null):
    c = json_converter(**{"replace.null.with.default": replace_null})
    payload = {k: v for k, v in _GOOD.items() if k != field or node is not _MISSING_FIELD}
    if node is not _MISSING_FIELD:
        payload[field] = node
    data = json.dumps({"schema": c.as_json_schema(_KINDS), "payload": payload}, separators=(",", ":")).encode()
    expected = _read(_reference, c, _KINDS, payload)
    got = _read(lambda: c.to_connect_data(TOPIC, data).value)
    assert got == expected and (isinstance(got, str) or got.schema is _KINDS or got.schema == _KINDS)


class _Key(str):
    """A string key of another class: the general path's own."""


@pytest.mark.parametrize("schemas", ["true", "false"])
@pytest.mark.parametrize("value", [
    {"task": 0, "seq": 7, "payload": "x" * 10}, {"a": {"b": [1, "two", None, True, False, 2.5]}}, [], {},
    {1: "int keys", 2: "an array of pairs"}, {"mixed": 1, 2: "keys"}, {_Key("k"): 1}, {"nan": float("nan")},
    {"bytes": b"\x00\xff", "tuple": (1, 2), "big": 1 << 70, "float": 1e-7, "neg": -0.0},
    {"esc\u0001": "tab\there \u00e9 \"q\""}, ["nested", ["lists", {"x": None}]], 3, "text", False,
])
def test_schemaless_writes_are_the_general_paths(schemas, value) -> None:
    c = json_converter(**{"schemas.enable": schemas})
    from connect_magics.api.converters import _dump
    payload = _dump(c._to_json(None, value))
    expected = payload if schemas == "false" else '{"schema":null,"payload":' + payload + "}"
    assert c.from_connect_data(TOPIC, None, value) == expected.encode()


@pytest.mark.parametrize("value", [{"x": object()}, [{"y": {1.5}}]])
def test_schemaless_refusals_are_the_general_paths(value) -> None:
    c = json_converter()
    with pytest.raises(DataException) as general:
        c._to_json(None, value)
    with pytest.raises(DataException) as fast:
        c.from_connect_data(TOPIC, None, value)
    assert str(fast.value) == str(general.value)
