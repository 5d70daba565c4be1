"""Built-in connectors: Kafka's FileStream connectors, a deterministic data generator, a verifying sink,
the Spark table connectors, Confluent's JDBC source and sink (on SQLAlchemy) and Confluent's S3 sink
(on fsspec/s3fs).

Nothing here is registered as a plugin; each class names its Kafka (Java) class names in ``ALIASES``.

Example::

    >>> from connect_magics.connectors import FileStreamSourceConnector, SequenceSourceConnector
    >>> FileStreamSourceConnector.ALIASES
    ('org.apache.kafka.connect.file.FileStreamSourceConnector',)
    >>> SequenceSourceConnector().config_def().config_keys()["batch.size"].default
    1000
"""

from __future__ import annotations

from connect_magics.api.config import plugin_version
from connect_magics.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from connect_magics.connectors.jdbc import (
    JdbcSinkConnector,
    JdbcSinkTask,
    JdbcSourceConnector,
    JdbcSourceTask,
)
from connect_magics.connectors.s3 import S3SinkConnector, S3SinkTask
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
    "JdbcSinkConnector", "JdbcSinkTask", "JdbcSourceConnector", "JdbcSourceTask",
    "S3SinkConnector", "S3SinkTask", "SequenceSourceConnector", "SequenceSourceTask",
    "SparkTableSinkConnector", "SparkTableSinkTask",
    "SparkTableSourceConnector", "SparkTableSourceTask", "VerifyingSinkConnector", "VerifyingSinkTask",
    "version",
]


def version() -> str:
    """The version the built-in connectors report: the package's.

    >>> isinstance(version(), str)
    True
    """
    return plugin_version()
