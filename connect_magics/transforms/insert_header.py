"""``InsertHeader``: add a header with a literal value to each record.

The literal is typed as Kafka's ``Values.parseString`` types it (``true`` a boolean, ``42`` an INT8,
``1.5`` a FLOAT32, anything else a string), so a header converter writes what Kafka's writes.

Example::

    >>> t = InsertHeader(); t.configure({"header": "source", "value.literal": "db1"})
    >>> from connect_magics.api.records import SourceRecord
    >>> t.apply(SourceRecord(None, None, "t")).headers.last_with_name("source").value
    'db1'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    Importance,
    NonNullValidator,
    Type,
)
from connect_magics.api.converters import _parse_string
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation

__all__ = ["InsertHeader"]


class InsertHeader(Transformation):
    """Add a header (``header``) with the value ``value.literal`` to each record."""

    CONFIG_DEF = (ConfigDef()
                  .define("header", Type.STRING, NO_DEFAULT, NonNullValidator(), Importance.HIGH,
                          "The name of the header.")
                  .define("value.literal", Type.STRING, NO_DEFAULT, NonNullValidator(), Importance.HIGH,
                          "The literal value that is to be set as the header value on all records."))

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        config = AbstractConfig(self.CONFIG_DEF, props)
        self.header: str = config.get("header")
        self.literal = _parse_string(config.get("value.literal"))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        headers = record.headers.duplicate().add(self.header, self.literal.value, self.literal.schema)
        return record.new_record(headers=headers)
