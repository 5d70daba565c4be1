"""Naming the Spark jobs a thread submits, and cancelling them by that name, on every Spark we support.

Spark 4 sessions (classic and Connect) and Spark 3.5's Spark Connect sessions have job tags
(``addTag`` / ``removeTag`` / ``interruptTag``). A classic Spark 3.5 session raises on ``addTag``
("only supported with Spark Connect"): there the thread's job group does the same (``setJobGroup`` with
``interruptOnCancel``, ``cancelJobGroup``); a thread has one job group at a time, which is all the Spark
executor needs (each of its threads runs one job at a time).

>>> tags = JobTags(spark)                      # doctest: +SKIP
>>> tags.add("connect-magics-nb-lines-0-1")    # doctest: +SKIP
>>> tags.interrupt("connect-magics-nb-lines-0-1")  # from another thread  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from connect_magics.spark import pyspark_major


class JobTags:
    """Tags (or, on classic Spark 3.5, job groups) for the jobs the calling thread submits next."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.groups = not _has_tags(spark)  # classic Spark 3.5: job groups instead

    def add(self, tag: str) -> None:
        """Tag the jobs the calling thread submits from now on."""
        if self.groups:
            self.spark.sparkContext.setJobGroup(tag, tag, interruptOnCancel=True)
        else:
            self.spark.addTag(tag)

    def remove(self, tag: str) -> None:
        """Stop tagging the calling thread's jobs with ``tag``."""
        if self.groups:
            self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        else:
            self.spark.removeTag(tag)

    def interrupt(self, tag: str) -> None:
        """Cancel the running jobs tagged ``tag`` (from any thread)."""
        if self.groups:
            self.spark.sparkContext.cancelJobGroup(tag)
        else:
            self.spark.interruptTag(tag)


def _has_tags(spark: Any) -> bool:
    """True unless ``spark`` is a classic session of a Spark before 4 (whose ``addTag`` raises)."""
    return pyspark_major() >= 4 or "connect" in type(spark).__module__
