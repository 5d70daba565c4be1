"""Built-in connectors: Kafka's FileStream connectors, a deterministic data generator, a verifying sink and
the Spark table connectors.

Nothing here is registered as a plugin; each class names its Kafka (Java) class names in ``ALIASES``.

Example::

    >>> from connect_magics.connectors import FileStreamSourceConnector, SequenceSourceConnector
    >>> FileStreamSourceConnector.ALIASES
    ('org.apache.kafka.connect.file.FileStreamSourceConnector',)
    >>> SequenceSourceConnector().config_def().config_keys()["batch.size"].default
    1000
"""

from __future__ import annotations

import connect_magics
from connect_magics.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from connect_magics.connectors.sequence import SequenceSourceConnector, SequenceSourceTask
from connect_magics.connectors.spark_table import (
    SparkTableSinkConnector,
    SparkTableSinkTask,
    SparkTableSourceConnector,
    SparkTableSourceTask,
)
from connect_magics.connectors.verifying import VerifyingSinkConnector, VerifyingSinkTask

__all__ = [
    "FileStreamSinkConnector", "FileStreamSinkTask", "FileStreamSourceConnector", "FileStreamSourceTask",
    "SequenceSourceConnector", "SequenceSourceTask", "SparkTableSinkConnector", "SparkTableSinkTask",
    "SparkTableSourceConnector", "SparkTableSourceTask", "VerifyingSinkConnector", "VerifyingSinkTask", "version",
]


def version() -> str:
    """The version the built-in connectors report: ``connect_magics.__version__``, else ``"0.1.0"``.

    >>> isinstance(version(), str)
    True
    """
    v = getattr(connect_magics, "__version__", None)
    return v if isinstance(v, str) and v else "0.1.0"
