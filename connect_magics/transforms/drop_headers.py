"""``DropHeaders``: remove the headers with the given names.

Example::

    >>> t = DropHeaders(); t.configure({"headers": "trace,debug"})
    >>> from connect_magics.api.records import Headers, SourceRecord
    >>> r = SourceRecord(None, None, "t", headers=Headers().add("trace", "x").add("keep", "y"))
    >>> [h.key for h in t.apply(r).headers]
    ['keep']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import NO_DEFAULT, AbstractConfig, ConfigDef, Importance, Type
from connect_magics.api.records import ConnectRecord, Headers
from connect_magics.api.transforms import Transformation
from connect_magics.transforms.util import NonEmptyListValidator

__all__ = ["DropHeaders"]


class DropHeaders(Transformation):
    """Removes one or more headers from each record (``headers``: their names)."""

    CONFIG_DEF = ConfigDef().define("headers", Type.LIST, NO_DEFAULT, NonEmptyListValidator(), Importance.HIGH,
                                    "The name of the headers to be removed.")

    def config_def(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, props: Mapping[str, Any]) -> None:
        self.headers = set(AbstractConfig(self.CONFIG_DEF, props).get("headers"))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        kept = Headers(h for h in record.headers if h.key not in self.headers)
        return record.new_record(headers=kept)
