"""Confluent's S3 sink (``io.confluent.connect.s3.S3SinkConnector``) on fsspec/s3fs: the same class name,
config keys and object names, exactly once through offset-derived names. See docs/s3-sink.md.

>>> S3SinkConnector.ALIASES
('io.confluent.connect.s3.S3SinkConnector',)
"""

from connect_magics.connectors.s3.sink import S3SinkConnector, S3SinkTask

__all__ = ["S3SinkConnector", "S3SinkTask"]
