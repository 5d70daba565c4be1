"""Object names exactly as Confluent's S3 sink makes them (pure functions, no I/O).

An object holds the records of one Kafka partition from ``start_offset`` on::

    {topics.dir}/{topic}/{encoded partition}/{topic}{file.delim}{partition}{file.delim}{start offset}.{ext}

>>> object_key("topics", "/", "+", 10, "orders", 1, "partition=1", 200, ".json")
'topics/orders/partition=1/orders+1+0000000200.json'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from connect_magics.api.config import java_str
from connect_magics.api.data import Struct
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord

__all__ = ["FieldPartitioner", "default_encoded_partition", "object_key", "partitioned_path"]


def default_encoded_partition(kafka_partition: int) -> str:
    """DefaultPartitioner's encoded partition: the Kafka partition.

    >>> default_encoded_partition(3)
    'partition=3'
    """
    return f"partition={kafka_partition}"


def partitioned_path(topic: str, encoded_partition: str, directory_delim: str) -> str:
    """The directory of a topic's encoded partition (Confluent's ``generatePartitionedPath``).

    >>> partitioned_path("orders", "partition=0", "/")
    'orders/partition=0'
    """
    return topic + directory_delim + encoded_partition


def object_key(topics_dir: str, directory_delim: str, file_delim: str, zero_pad_width: int, topic: str,
               kafka_partition: int, encoded_partition: str, start_offset: int, extension: str) -> str:
    """The key of the object starting at ``start_offset`` (offset zero-padded to ``zero_pad_width``).

    >>> object_key("t", "/", "-", 3, "a", 0, "partition=0", 7, ".json")
    't/a/partition=0/a-0-007.json'
    """
    name = f"{topic}{file_delim}{kafka_partition}{file_delim}{start_offset:0{zero_pad_width}d}" \
        if zero_pad_width else f"{topic}{file_delim}{kafka_partition}{file_delim}{start_offset}"
    return topics_dir + directory_delim + partitioned_path(topic, encoded_partition, directory_delim) \
        + directory_delim + name + extension


class FieldPartitioner:
    """Confluent's FieldPartitioner: ``name=value`` of each field of the record's value (a Struct or a
    map), joined by ``directory.delim``; a missing field or an unsupported value fails with the field named.

    >>> record = SinkRecord("t", 0, value={"region": "eu", "tier": 2})
    >>> FieldPartitioner(["region", "tier"], "/").encode(record)
    'region=eu/tier=2'
    """

    def __init__(self, fields: Sequence[str], directory_delim: str) -> None:
        self.fields = list(fields)
        self.delim = directory_delim

    def encode(self, record: SinkRecord) -> str:
        value = record.value
        parts = []
        for name in self.fields:
            parts.append(f"{name}={self._field(value, name, record)}")
        return self.delim.join(parts)

    def _field(self, value: Any, name: str, record: SinkRecord) -> str:
        where = f"record {record.topic}-{record.kafka_partition}@{record.kafka_offset}"
        if isinstance(value, Struct):
            field = value.schema.field(name)
            if field is None:
                raise ConnectException(f"partition.field.name: the value of {where} has no field '{name}'")
            found = value.get(field)
        elif isinstance(value, Mapping):
            if name not in value:
                raise ConnectException(f"partition.field.name: the value of {where} has no field '{name}'")
            found = value[name]
        else:
            raise ConnectException(f"partition.field.name: FieldPartitioner needs a struct or map value; "
                                   f"{where} has a {type(value).__name__}")
        if found is None or isinstance(found, (bytes, bytearray, list, Mapping, Struct, float)):
            raise ConnectException(f"partition.field.name: field '{name}' of {where} is a "
                                   f"{type(found).__name__}; FieldPartitioner supports strings, integers and "
                                   "booleans")
        return java_str(found)
