"""Spark table connectors: ``SparkTableSink`` writes topics into Parquet or Delta tables exactly once, and
``SparkTableSource`` reads tables into a topic incrementally. See docs/spark-tables.md.

Tasks use pyarrow and delta-rs (the ``deltalake`` package), never a SparkSession, so they run the same
on a kernel thread and in a Spark executor's Python worker; Spark reads the tables they write.

Example::

    >>> from connect_magics.connectors.spark_table import SparkTableSinkConnector
    >>> SparkTableSinkConnector().config_def().config_keys()["format"].default
    'parquet'
"""

from connect_magics.connectors.spark_table.sink import SparkTableSinkConnector, SparkTableSinkTask
from connect_magics.connectors.spark_table.source import SparkTableSourceConnector, SparkTableSourceTask

__all__ = ["SparkTableSinkConnector", "SparkTableSinkTask", "SparkTableSourceConnector", "SparkTableSourceTask"]
