"""Apache Kafka's transformations (``org.apache.kafka.connect.transforms``), one module each, and its
predicates (:mod:`.predicates`), with the helpers they share: field paths (:mod:`.field`, KIP-821), Java
date patterns (:mod:`.date_format`) and the ``$Key`` / ``$Value`` base and schema helpers (:mod:`.util`).
This package imports ``connect_magics.api`` only.

:data:`BUILTIN_TRANSFORMS` maps Kafka's class names (``org.apache.kafka.connect.transforms.Cast$Value``)
to these classes, and :data:`BUILTIN_PREDICATES` Kafka's predicates'; the runtime registers them as built-in
plugins.

Example::

    >>> from connect_magics.transforms import BUILTIN_TRANSFORMS
    >>> t = BUILTIN_TRANSFORMS["org.apache.kafka.connect.transforms.Cast$Value"]()
    >>> t.configure({"spec": "int32"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t", value="42")).value
    42
"""

from __future__ import annotations

from connect_magics.api.transforms import Transformation
from connect_magics.transforms.cast import Cast, CastKey, CastValue
from connect_magics.transforms.drop_headers import DropHeaders
from connect_magics.transforms.extract_field import ExtractField, ExtractFieldKey, ExtractFieldValue
from connect_magics.transforms.field import FieldSyntaxVersion, SingleFieldPath
from connect_magics.transforms.filter import Filter
from connect_magics.transforms.flatten import Flatten, FlattenKey, FlattenValue
from connect_magics.transforms.header_from import HeaderFrom, HeaderFromKey, HeaderFromValue
from connect_magics.transforms.hoist_field import HoistField, HoistFieldKey, HoistFieldValue
from connect_magics.transforms.insert_field import InsertField, InsertFieldKey, InsertFieldValue
from connect_magics.transforms.insert_header import InsertHeader
from connect_magics.transforms.mask_field import MaskField, MaskFieldKey, MaskFieldValue
from connect_magics.transforms.predicates import (
    BUILTIN_PREDICATES,
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)
from connect_magics.transforms.regex_router import RegexRouter
from connect_magics.transforms.replace_field import ReplaceField, ReplaceFieldKey, ReplaceFieldValue
from connect_magics.transforms.set_schema_metadata import (
    SetSchemaMetadata,
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
)
from connect_magics.transforms.timestamp_converter import (
    TimestampConverter,
    TimestampConverterKey,
    TimestampConverterValue,
)
from connect_magics.transforms.timestamp_router import TimestampRouter
from connect_magics.transforms.value_to_key import ValueToKey

__all__ = [
    "BUILTIN_PREDICATES", "BUILTIN_TRANSFORMS", "HasHeaderKey", "RecordIsTombstone", "TopicNameMatches", "Cast", "CastKey", "CastValue", "DropHeaders", "ExtractField", "ExtractFieldKey",
    "ExtractFieldValue", "FieldSyntaxVersion", "Filter", "Flatten", "FlattenKey", "FlattenValue", "HeaderFrom",
    "HeaderFromKey", "HeaderFromValue", "HoistField", "HoistFieldKey", "HoistFieldValue", "InsertField",
    "InsertFieldKey", "InsertFieldValue", "InsertHeader", "MaskField", "MaskFieldKey", "MaskFieldValue",
    "RegexRouter", "ReplaceField", "ReplaceFieldKey", "ReplaceFieldValue", "SetSchemaMetadata",
    "SetSchemaMetadataKey", "SetSchemaMetadataValue", "SingleFieldPath", "TimestampConverter",
    "TimestampConverterKey", "TimestampConverterValue", "TimestampRouter", "ValueToKey",
]

_PACKAGE = "org.apache.kafka.connect.transforms."
_WITHOUT_VARIANTS = (DropHeaders, Filter, InsertHeader, RegexRouter, TimestampRouter, ValueToKey)
_WITH_VARIANTS = (Cast, ExtractField, Flatten, HeaderFrom, HoistField, InsertField, MaskField, ReplaceField,
                  SetSchemaMetadata, TimestampConverter)

BUILTIN_TRANSFORMS: dict[str, type[Transformation]] = {
    **{_PACKAGE + cls.__name__: cls for cls in _WITHOUT_VARIANTS},
    **{f"{_PACKAGE}{base.__name__}${variant}": getattr(base, variant)
       for base in _WITH_VARIANTS for variant in ("Key", "Value")},
}
"""Kafka's class names of its transformations, mapped to their Python classes."""
