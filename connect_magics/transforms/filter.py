"""``Filter``: drop every record; with a predicate, drop only the records it matches.

Example::

    >>> Filter().apply(object()) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation

__all__ = ["Filter"]


class Filter(Transformation):
    """Drops every record; combine with a predicate (``transforms.x.predicate``) to drop only some.

    >>> Filter().apply(object()) is None
    True
    """

    def configure(self, props: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return None
