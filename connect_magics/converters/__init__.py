"""Converters for data behind a Schema Registry, under Confluent's class names: Avro (and the registry client
settings they share). They import ``connect_magics.api`` only, as any plugin does.

>>> from connect_magics.converters import AvroConverter
>>> AvroConverter.ALIASES
('io.confluent.connect.avro.AvroConverter',)
"""

from connect_magics.converters.avro import AvroConverter

__all__ = ["AvroConverter"]
