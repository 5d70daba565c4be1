"""connect_magics: a Kafka Connect runtime inside a Jupyter kernel.

>>> from connect_magics import ConnectRuntime  # doctest: +SKIP
>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from connect_magics._version import __version__

if TYPE_CHECKING:
    from connect_magics.errors import ConnectRestError
    from connect_magics.remote import RemoteRuntime
    from connect_magics.runtime.runtime import ConnectRuntime

__all__ = ["ConnectRestError", "ConnectRuntime", "RemoteRuntime", "__version__"]

# Imported on first use: a plugin importing ``connect_magics.api`` or a Spark Python worker importing the
# task host does not load the runtime, the REST client and PySpark's SQL modules with it.
_LAZY = {"ConnectRestError": "connect_magics.errors", "ConnectRuntime": "connect_magics.runtime.runtime",
         "RemoteRuntime": "connect_magics.remote"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'connect_magics' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def load_ipython_extension(ip: object) -> None:
    """``%load_ext connect_magics``: registers ``%connect`` / ``%%connect`` (see ``connect_magics.notebook``)."""
    from connect_magics.notebook.magics import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: object) -> None:
    """``%unload_ext connect_magics``: closes the magics' runtime and removes them."""
    from connect_magics.notebook.magics import unload_ipython_extension as unload

    unload(ip)
