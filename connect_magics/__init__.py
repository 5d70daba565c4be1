"""connect_magics: a Kafka Connect runtime inside a Jupyter kernel.

>>> from connect_magics import ConnectRuntime  # doctest: +SKIP
>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb")  # doctest: +SKIP
"""

from connect_magics._version import __version__
from connect_magics.errors import ConnectRestError  # noqa: E402
from connect_magics.remote import RemoteRuntime  # noqa: E402
from connect_magics.runtime.runtime import ConnectRuntime  # noqa: E402

__all__ = ["ConnectRestError", "ConnectRuntime", "RemoteRuntime", "__version__"]


def load_ipython_extension(ip: object) -> None:
    """``%load_ext connect_magics``: registers ``%connect`` / ``%%connect`` (see ``connect_magics.notebook``)."""
    from connect_magics.notebook.magics import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: object) -> None:
    """``%unload_ext connect_magics``: closes the magics' runtime and removes them."""
    from connect_magics.notebook.magics import unload_ipython_extension as unload

    unload(ip)
