"""connect_magics: a Kafka Connect runtime inside a Jupyter kernel.

>>> from connect_magics import ConnectRuntime  # doctest: +SKIP
>>> rt = ConnectRuntime("127.0.0.1:9092", group_id="nb")  # doctest: +SKIP
"""

__version__ = "0.1.0"

from connect_magics.errors import ConnectRestError  # noqa: E402
from connect_magics.runtime.runtime import ConnectRuntime  # noqa: E402

__all__ = ["ConnectRestError", "ConnectRuntime", "__version__"]
