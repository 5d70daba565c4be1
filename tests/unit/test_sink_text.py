"""The text of a sink batch (``SinkRecords.joined``, ``Converter.to_connect_text``, ``java_str_join``): made from the
consumed bytes without decoding each value, it is always what decoding each value and printing it gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from connect_magics.api import SinkRecord, SinkRecords
from connect_magics.api.config import java_str, java_str_join
from connect_magics.api.converters import ByteArrayConverter, Converter, StringConverter
from connect_magics.connectors.file import FileStreamSinkTask

pytestmark = pytest.mark.unit

TRICKY = [b"", b"plain", "日本 é".encode(), b"\xff", b"\xc3", b"a\xe2\x82", b"\xf0\x9f\x98", b"\xe2\x82\xac\xe2",
          b"\xed\xa0\x80", b"\xc0\xaf", b"\x80abc", b"\xf4\x90\x80\x80", b"x\ny\r\n", b"it's", b'say "hi"',
          b"both ' and \"", b"back\\slash", b"\x00\x1f\x7f", b"\t", "\U0001F600".encode()]
# Bytes around UTF-8's boundaries (continuation, lead bytes of every length, invalid leads, surrogates' lead).
ALPHABET = b"a\n'\"\\ \x00\x7f\x80\x9f\xa0\xbf\xc2\xc3\xdf\xe0\xe2\xed\xef\xf0\xf4\xf5\xff"


def random_batches(seed: int = 7, n: int = 300) -> list[list[bytes | None]]:
    rnd = random.Random(seed)
    batches: list[list[bytes | None]] = [TRICKY, [*TRICKY, None], [None], []]
    batches += [[b"ok", bytes([byte]), b"~ "] for byte in range(256)]  # each byte, beside bytes shown as they are
    for _ in range(n):
        batches.append([bytes(rnd.choices(ALPHABET, k=rnd.randrange(6))) for _ in range(rnd.randrange(1, 6))])
    return batches


def string_converter(encoding: str) -> StringConverter:
    c = StringConverter()
    c.configure({"converter.encoding": encoding}, is_key=False)
    return c


CONVERTERS = {"String UTF-8": string_converter("UTF-8"), "String ISO-8859-1": string_converter("ISO-8859-1"),
              "String UTF-16": string_converter("UTF-16"), "ByteArray": ByteArrayConverter()}


def each_decoded(converter: Converter, datas: list[bytes | None], separator: str) -> str:
    return separator.join(java_str(converter.to_connect_data("t", d).value) for d in datas)


@pytest.mark.parametrize("separator", ["\n", "|", ", ", "", "é"])
@pytest.mark.parametrize("name", list(CONVERTERS))
def test_a_batch_text_is_its_values_decoded_one_by_one(name: str, separator: str) -> None:
    converter = CONVERTERS[name]
    for datas in random_batches():
        assert converter.to_connect_text("t", datas, separator) == each_decoded(converter, datas, separator), datas


def test_java_str_join_is_java_str_of_each() -> None:
    cases: list[list[Any]] = [[], ["a", "b"], [b"a", b"b"], TRICKY, [*TRICKY, None], [b"x", bytearray(b"y")],
                              [b"x", "y", 1, 2.5, None, True, [1, b"z"]], [b"", b""]]
    for values in cases + random_batches():
        for separator in ("\n", "", "|", "é"):
            assert java_str_join(values, separator) == separator.join(map(java_str, values)), values


@pytest.mark.parametrize("name", list(CONVERTERS))
def test_file_sink_writes_the_same_bytes_either_way(tmp_path: Path, name: str) -> None:
    """A batch whose text comes from the consumed bytes, and the same batch of built records."""
    converter = CONVERTERS[name]
    outputs = []
    for fast in (True, False):
        task = FileStreamSinkTask()
        task.start({"file": str(tmp_path / f"{name}-{fast}.txt")})
        for datas in random_batches(n=50):
            records = [SinkRecord("t", 0, None, None, None, converter.to_connect_data("t", d).value, kafka_offset=i)
                       for i, d in enumerate(datas)]
            if fast:
                batch = SinkRecords.deferred(len(records), lambda r=records: r,
                                             lambda field, r=records: [getattr(x, field) for x in r],
                                             lambda field, separator, d=datas: converter.to_connect_text("t", d, separator))
            else:
                batch = SinkRecords(records)
            task.put(batch)
        task.stop()
        outputs.append((tmp_path / f"{name}-{fast}.txt").read_bytes())
    assert outputs[0] == outputs[1] and b"null\n" in outputs[0]


def test_joined_reads_the_records_once_built() -> None:
    texts: list[str] = []
    batch = SinkRecords.deferred(2, lambda: [SinkRecord("t", 0, value="a"), SinkRecord("t", 0, value=None)],
                                 {"value": ["a", None], "topic": ["t", "t"]}.__getitem__,
                                 lambda field, separator: texts.append(field) or "fast")
    assert batch.joined() == "fast" and batch.joined("key", ",") == "fast" and texts == ["value", "key"]
    assert batch.joined("original_topic") == "t\nt"  # from the column
    assert batch[1].value is None and batch.joined() == "a\nnull" and texts == ["value", "key"]
