"""Converters for data behind a Schema Registry, under Confluent's class names: Avro, JSON Schema and
Protobuf (and the registry client settings they share). They import ``connect_magics.api`` only, as any
plugin does.

>>> from connect_magics.converters import AvroConverter, JsonSchemaConverter, ProtobufConverter
>>> [c.ALIASES[0] for c in (AvroConverter, JsonSchemaConverter, ProtobufConverter)]  # doctest: +NORMALIZE_WHITESPACE
['io.confluent.connect.avro.AvroConverter', 'io.confluent.connect.json.JsonSchemaConverter',
 'io.confluent.connect.protobuf.ProtobufConverter']
"""

from connect_magics.converters.avro import AvroConverter
from connect_magics.converters.json_schema import JsonSchemaConverter
from connect_magics.converters.protobuf import ProtobufConverter

__all__ = ["AvroConverter", "JsonSchemaConverter", "ProtobufConverter"]
