"""Records that flow through connectors, converters and transformations.

Modelled on Kafka Connect's ``ConnectRecord``, ``SourceRecord`` and ``SinkRecord``.
Values are plain Python objects (dict, list, str, int, float, bool, bytes, None) or
:class:`connect_magics.api.data.Struct` when a schema is attached.

Example::

    >>> r = SourceRecord({"file": "a.txt"}, {"position": 3}, "lines", value="hello")
    >>> r.new_record(topic="other").topic
    'other'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from connect_magics.api.config import java_str_join


@dataclass(frozen=True)
class Header:
    """One record header: a key and a value (with an optional schema)."""

    key: str
    value: Any
    schema: Any = None


class Headers:
    """An ordered, multi-valued collection of :class:`Header` (like Kafka's ``ConnectHeaders``).

    >>> h = Headers().add("trace", "abc")
    >>> h.last_with_name("trace").value
    'abc'
    """

    def __init__(self, headers: Iterable[Header] | None = None) -> None:
        self._headers: list[Header] = list(headers or [])

    def add(self, key: str, value: Any, schema: Any = None) -> Headers:
        self._headers.append(Header(key, value, schema))
        return self

    def remove(self, key: str) -> Headers:
        self._headers = [h for h in self._headers if h.key != key]
        return self

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._headers if h.key == key]

    def last_with_name(self, key: str) -> Header | None:
        found = self.all_with_name(key)
        return found[-1] if found else None

    def duplicate(self) -> Headers:
        return Headers(self._headers)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and self._headers == other._headers

    def __repr__(self) -> str:
        return f"Headers({self._headers!r})"


class ConnectRecord:
    """Fields common to source and sink records.

    Records are plain slotted objects, cheap to create in the hot path; their headers are created
    on first use.
    """

    __slots__ = ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp",
                 "_headers")
    _FIELDS: tuple[str, ...] = ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value",
                                "timestamp", "headers")

    def __init__(self, topic: str, kafka_partition: int | None = None, key_schema: Any = None,
                 key: Any = None, value_schema: Any = None, value: Any = None, timestamp: int | None = None,
                 headers: Headers | None = None) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers

    @property
    def headers(self) -> Headers:
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    @headers.setter
    def headers(self, headers: Headers) -> None:
        self._headers = headers

    def has_headers(self) -> bool:
        """True if the record carries at least one header (without creating an empty collection)."""
        return bool(self._headers)

    def _fields(self) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in self._FIELDS}
        fields["headers"] = None if self._headers is None else self._headers.duplicate()
        return fields

    def new_record(self, **changes: Any) -> ConnectRecord:
        """A copy of this record with the given fields replaced (what transformations return)."""
        return type(self)(**{**self._fields(), **changes})

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS if n != "headers") \
            and list(self._headers or ()) == list(other._headers or ())  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"{type(self).__name__}({shown})"


class SourceRecord(ConnectRecord):
    """A record produced by a :class:`~connect_magics.api.SourceTask`.

    ``source_partition`` and ``source_offset`` are maps of string keys to primitive
    values; the runtime commits the offset once the broker acknowledged the record.
    """

    __slots__ = ("source_partition", "source_offset")
    _FIELDS = ("source_partition", "source_offset", *ConnectRecord._FIELDS)

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Any = None,
        key: Any = None,
        value_schema: Any = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | None = None,
    ) -> None:
        # Assigned here rather than through ConnectRecord.__init__: records are made per message on the
        # hot path, where the extra call costs about a fifth of a record's creation.
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers


class SourceRecords(Sequence[SourceRecord]):
    """A ``poll()`` batch of records alike but for their values and source offsets: one source partition, one topic,
    one value schema and one timestamp, no key, no Kafka partition, no header. It is kept as those columns, and its
    :class:`SourceRecord` objects are made the first time it is read as records (then it is their list): a runtime
    that sends the values as a column makes none. What a source reading many alike records returns from
    ``poll()`` (FileStreamSource does).

    >>> batch = SourceRecords({"file": "a.txt"}, [{"position": 2}, {"position": 4}], "lines", None, ["a", "b"])
    >>> len(batch), batch.values, batch[1].value, batch[1].source_offset
    (2, ['a', 'b'], 'b', {'position': 4})
    """

    __slots__ = ("source_partition", "source_offsets", "topic", "value_schema", "values", "timestamp", "_records")

    def __init__(self, source_partition: dict[str, Any] | None, source_offsets: list[dict[str, Any] | None],
                 topic: str, value_schema: Any, values: list[Any], timestamp: int | None = None) -> None:
        if len(source_offsets) != len(values):
            raise ValueError(f"source_offsets: one offset per value ({len(values)}), not {len(source_offsets)}")
        self.source_partition, self.source_offsets, self.topic = source_partition, source_offsets, topic
        self.value_schema, self.values, self.timestamp = value_schema, values, timestamp
        self._records: list[SourceRecord] | None = None

    @property
    def built(self) -> bool:
        """Whether it was read as records (whose fields the reader may have changed since): then only they count."""
        return self._records is not None

    def record(self, index: int) -> SourceRecord:
        """Record ``index`` as a new object, without making the others (the runtime's offset bookkeeping)."""
        return SourceRecord(self.source_partition, self.source_offsets[index], self.topic, None, None, None,
                            self.value_schema, self.values[index], self.timestamp)

    def _all(self) -> list[SourceRecord]:
        if self._records is None:
            partition, topic, schema, timestamp = self.source_partition, self.topic, self.value_schema, self.timestamp
            self._records = [SourceRecord(partition, offset, topic, None, None, None, schema, value, timestamp)
                             for offset, value in zip(self.source_offsets, self.values, strict=True)]
        return self._records

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return self._all()[index]

    def __iter__(self) -> Iterator[SourceRecord]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[SourceRecord]) -> list[SourceRecord]:
        return [*self, *other]

    def __radd__(self, other: Iterable[SourceRecord]) -> list[SourceRecord]:
        return [*other, *self]

    def __repr__(self) -> str:
        return repr(self._all())


class SinkRecord(ConnectRecord):
    """A record delivered to a :class:`~connect_magics.api.SinkTask`, with its Kafka coordinates.

    ``original_topic``, ``original_kafka_partition`` and ``original_kafka_offset`` are where the
    record was consumed, whatever transformations changed since (records are treated as immutable:
    transformations return :meth:`new_record` copies).

    >>> SinkRecord("orders", 0, None, "k", None, "v", kafka_offset=7).new_record(topic="x").original_topic
    'orders'
    """

    __slots__ = ("kafka_offset", "_original")
    _FIELDS = (*ConnectRecord._FIELDS, "kafka_offset", "original_topic", "original_kafka_partition",
               "original_kafka_offset")

    def __init__(self, topic: str, kafka_partition: int | None = None, key_schema: Any = None,
                 key: Any = None, value_schema: Any = None, value: Any = None, timestamp: int | None = None,
                 headers: Headers | None = None, kafka_offset: int = -1, original_topic: str | None = None,
                 original_kafka_partition: int | None = None, original_kafka_offset: int | None = None) -> None:
        # Assigned here rather than through ConnectRecord.__init__: records are made per message on the
        # hot path, where the extra call costs about a fifth of a record's creation.
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self._headers = headers
        self.kafka_offset = kafka_offset
        # The originals are the record's own coordinates unless given: stored only then (a cheap hot path).
        self._original = None if original_topic is None and original_kafka_partition is None \
            and original_kafka_offset is None else (
                topic if original_topic is None else original_topic,
                kafka_partition if original_kafka_partition is None else original_kafka_partition,
                kafka_offset if original_kafka_offset is None else original_kafka_offset)

    @property
    def original_topic(self) -> str:
        return self.topic if self._original is None else self._original[0]

    @property
    def original_kafka_partition(self) -> int | None:
        return self.kafka_partition if self._original is None else self._original[1]

    @property
    def original_kafka_offset(self) -> int:
        return self.kafka_offset if self._original is None else self._original[2]


class SinkRecords(Sequence[SinkRecord]):
    """What :meth:`SinkTask.put <connect_magics.api.SinkTask.put>` receives: a read-only sequence of
    :class:`SinkRecord`, with the batch's keys and values also available as columns.

    The runtime builds the records of a batch on first access, and :meth:`column` (:meth:`keys`,
    :meth:`values`, :meth:`to_pandas`) reads straight from the consumed messages when the converters allow it. A task pays only for
    what it reads: counting a batch, or writing its values, creates no record at all.

    >>> batch = SinkRecords([SinkRecord("t", 0, None, b"k", None, b"v", kafka_offset=5)])
    >>> len(batch), batch[0].kafka_offset, batch.values()
    (1, 5, [b'v'])
    """

    __slots__ = ("_records", "_size", "_build", "_column", "_text")

    def __init__(self, records: Iterable[SinkRecord] = ()) -> None:
        self._records: list[SinkRecord] | None = list(records)
        self._size = len(self._records)
        self._build: Callable[[], list[SinkRecord]] | None = None
        self._column: Callable[[str], list[Any]] | None = None
        self._text: Callable[[str, str], str] | None = None

    @classmethod
    def deferred(cls, size: int, build: Callable[[], list[SinkRecord]], column: Callable[[str], list[Any]],
                 text: Callable[[str, str], str] | None = None) -> SinkRecords:
        """A batch of ``size`` untransformed records that ``build()`` makes on first access; ``column(field)``
        gives a field of :data:`COLUMNS` for every record without them, and ``text(field, separator)`` (if given)
        what :meth:`joined` returns (for runtimes)."""
        batch = cls.__new__(cls)
        batch._records, batch._size, batch._build, batch._column, batch._text = None, size, build, column, text
        return batch

    def _all(self) -> list[SinkRecord]:
        if self._records is None:
            self._records = self._build()  # type: ignore[misc]
            self._build = self._column = self._text = None
        return self._records

    def column(self, field: str) -> list[Any]:
        """One field of every record, in order: any of :data:`COLUMNS` or :data:`ORIGINAL_COLUMNS`, read straight from
        the consumed messages when the records have not been built.

        >>> SinkRecords([SinkRecord("t", 2, None, None, None, b"v", kafka_offset=9)]).column("kafka_offset")
        [9]
        """
        if field not in self.COLUMNS and field not in self.ORIGINAL_COLUMNS:
            names = ", ".join(self.COLUMNS + self.ORIGINAL_COLUMNS)
            raise ValueError(f"field: {field!r} is not a column of SinkRecords; use one of {names}")
        if self._records is None:  # not transformed: where a record was consumed is where it is
            return self._column(field.removeprefix("original_"))  # type: ignore[misc]
        return [getattr(r, field) for r in self._records]

    COLUMNS = ("topic", "kafka_partition", "kafka_offset", "timestamp", "key", "value")
    #: Where each record was consumed, before transformations (KIP-793); :meth:`column` gives them too.
    ORIGINAL_COLUMNS = ("original_topic", "original_kafka_partition", "original_kafka_offset")

    def keys(self) -> list[Any]:
        """Every record's key, in order (``column("key")``)."""
        return self.column("key")

    def values(self) -> list[Any]:
        """Every record's value, in order (``column("value")``)."""
        return self.column("value")

    def joined(self, field: str = "value", separator: str = "\n") -> str:
        """One field of every record as Java's ``String.valueOf`` prints it (:func:`~connect_magics.api.config.java_str`),
        joined by ``separator``: what FileStreamSink writes. The runtime may make it from the consumed bytes
        without decoding each value (StringConverter with UTF-8, ByteArrayConverter).

        >>> SinkRecords([SinkRecord("t", 0, value="a"), SinkRecord("t", 0, value=None)]).joined()
        'a\\nnull'
        """
        if self._text is not None and field in self.COLUMNS:
            return self._text(field, separator)
        return java_str_join(self.column(field), separator)

    def to_pandas(self) -> Any:
        """The batch as a pandas DataFrame with one column per field of :data:`COLUMNS`.

        >>> SinkRecords([SinkRecord("t", 0, None, b"k", None, b"v", 1700000000000, kafka_offset=3)]).to_pandas()
          topic  kafka_partition  kafka_offset      timestamp   key value
        0     t                0             3  1700000000000  b'k'  b'v'
        """
        import pandas as pd

        return pd.DataFrame({field: self.column(field) for field in self.COLUMNS}, columns=list(self.COLUMNS))

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[SinkRecord]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SinkRecords):
            return self._all() == other._all()
        return self._all() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return SinkRecords, (self._all(),)

    def __repr__(self) -> str:
        return f"SinkRecords({self._all()!r})"


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A topic and partition, as used by sink tasks."""

    topic: str
    partition: int
