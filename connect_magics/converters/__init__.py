"""Converters for data behind a Schema Registry, under Confluent's class names: Avro and Protobuf (and the
registry client settings they share). They import ``connect_magics.api`` only, as any plugin does.

>>> from connect_magics.converters import AvroConverter, ProtobufConverter
>>> AvroConverter.ALIASES, ProtobufConverter.ALIASES
(('io.confluent.connect.avro.AvroConverter',), ('io.confluent.connect.protobuf.ProtobufConverter',))
"""

from connect_magics.converters.avro import AvroConverter
from connect_magics.converters.protobuf import ProtobufConverter

__all__ = ["AvroConverter", "ProtobufConverter"]
