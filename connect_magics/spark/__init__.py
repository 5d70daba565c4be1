"""Spark: the task executor on a SparkSession, topics and offsets as DataFrames, Spark's Kafka source.

Spark is optional: ``pip install 'connect-magics[spark]'`` (or the pyspark a platform provides, 3.5 or 4.x).
Everything else (the runtime, the magics, the REST worker, the threads and processes executors) runs without it.
"""

from __future__ import annotations

from connect_magics.spark.shipping import ship_to_executors

__all__ = ["pyspark_major", "require_pyspark", "ship_to_executors"]


def require_pyspark(what: str) -> None:
    """Raise an ImportError that says how to install Spark support if pyspark is missing.

    >>> require_pyspark("Reading a topic")  # with pyspark installed: nothing happens
    """
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ImportError(f"{what} needs pyspark (3.5 or 4.x), which is not installed: pip install "
                          "'connect-magics[spark]', or use the Spark your platform provides") from None


def pyspark_major() -> int:
    """The major version of the installed pyspark (3 or 4), for what Spark 3.5 does differently.

    >>> pyspark_major() in (3, 4)
    True
    """
    from pyspark import __version__

    return int(__version__.split(".")[0])
