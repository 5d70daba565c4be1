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

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


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


@dataclass
class ConnectRecord:
    """Fields common to source and sink records."""

    topic: str
    kafka_partition: int | None = None
    key_schema: Any = None
    key: Any = None
    value_schema: Any = None
    value: Any = None
    timestamp: int | None = None
    headers: Headers = field(default_factory=Headers)

    def new_record(self, **changes: Any) -> ConnectRecord:
        """A copy of this record with the given fields replaced (what transformations return)."""
        if "headers" not in changes:
            changes["headers"] = self.headers.duplicate()
        return dataclasses.replace(self, **changes)


@dataclass
class SourceRecord(ConnectRecord):
    """A record produced by a :class:`~connect_magics.api.SourceTask`.

    ``source_partition`` and ``source_offset`` are maps of string keys to primitive
    values; the runtime commits the offset once the broker acknowledged the record.
    """

    source_partition: dict[str, Any] | None = None
    source_offset: dict[str, Any] | None = None

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
        super().__init__(topic, kafka_partition, key_schema, key, value_schema, value, timestamp,
                         headers if headers is not None else Headers())
        self.source_partition = source_partition
        self.source_offset = source_offset

    def new_record(self, **changes: Any) -> SourceRecord:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["headers"] = self.headers.duplicate()
        fields.update(changes)
        return SourceRecord(**fields)


@dataclass
class SinkRecord(ConnectRecord):
    """A record delivered to a :class:`~connect_magics.api.SinkTask`, with its Kafka coordinates."""

    kafka_offset: int = -1
    original_topic: str | None = None
    original_kafka_partition: int | None = None
    original_kafka_offset: int | None = None

    def __post_init__(self) -> None:
        if self.original_topic is None:
            self.original_topic = self.topic
        if self.original_kafka_partition is None:
            self.original_kafka_partition = self.kafka_partition
        if self.original_kafka_offset is None:
            self.original_kafka_offset = self.kafka_offset


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A topic and partition, as used by sink tasks."""

    topic: str
    partition: int
