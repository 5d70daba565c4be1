"""Converters for data behind a Schema Registry, under Confluent's class names: Avro and JSON Schema (and the
registry client settings they share). They import ``connect_magics.api`` only, as any plugin does.

>>> from connect_magics.converters import AvroConverter, JsonSchemaConverter
>>> AvroConverter.ALIASES, JsonSchemaConverter.ALIASES
(('io.confluent.connect.avro.AvroConverter',), ('io.confluent.connect.json.JsonSchemaConverter',))
"""

from connect_magics.converters.avro import AvroConverter
from connect_magics.converters.json_schema import JsonSchemaConverter

__all__ = ["AvroConverter", "JsonSchemaConverter"]
