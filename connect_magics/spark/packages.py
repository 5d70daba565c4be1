"""Maven packages for a local SparkSession, derived from what is installed: never a second Spark version.

``kafka`` is Spark's Kafka source and sink (``org.apache.spark:spark-sql-kafka-0-10_{scala}:{spark}``,
the installed pyspark's version and Scala binary version); ``connect`` is the Spark Connect server
(``org.apache.spark:spark-connect_{scala}:{spark}``; built into Spark 4, so nothing to load there);
``delta`` is Delta Lake
(``io.delta:delta-spark_{scala}:{delta}``, the version of the installed ``delta-spark`` Python package,
``pip install connect-magics[delta]``). Spark resolves them through Ivy from Maven Central, once, into
its Ivy cache (``~/.ivy2.5.2``); :func:`unresolved_artifacts` reads what it could not find from Ivy's report.

>>> kafka_coordinate("4.2.0", "2.13")
'org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0'
>>> package_confs(["delta"], spark_version="4.2.0", scala="2.13", delta="4.4.0")["spark.jars.packages"]
'io.delta:delta-spark_2.13:4.4.0'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "connect_coordinate", "delta_coordinate", "installed_delta_version", "kafka_coordinate", "package_confs",
           "pyspark_scala_version", "unresolved_artifacts"]

PACKAGES = ("kafka", "connect", "delta")
"""The names ``local_spark_session(packages=...)`` accepts."""

DELTA_CONFS = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
               "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"}

_SPARK_CORE_JAR = re.compile(r"^spark-core_(\d+\.\d+)-.+\.jar$")
_UNRESOLVED = re.compile(r"::\s+([\w.\-]+)#([\w.\-]+);([\w.\-]+):\s+not found")


def kafka_coordinate(spark_version: str, scala: str) -> str:
    """Spark's Kafka source for Spark ``spark_version`` built with Scala ``scala``."""
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala}:{spark_version}"


def connect_coordinate(spark_version: str, scala: str) -> str | None:
    """The Spark Connect server for Spark ``spark_version`` (None from Spark 4 on: its jars hold it).

    >>> connect_coordinate("3.5.7", "2.12"), connect_coordinate("4.2.0", "2.13")
    ('org.apache.spark:spark-connect_2.12:3.5.7', None)
    """
    return None if int(spark_version.split(".")[0]) >= 4 else f"org.apache.spark:spark-connect_{scala}:{spark_version}"


def delta_coordinate(delta_version: str, scala: str) -> str:
    """Delta Lake's Spark artifact ``delta_version`` for Scala ``scala``."""
    return f"io.delta:delta-spark_{scala}:{delta_version}"


def pyspark_scala_version(jars_dir: str | Path | None = None) -> str:
    """The Scala binary version the installed pyspark was built with, from its ``spark-core_X.Y`` jar.

    >>> pyspark_scala_version()  # doctest: +SKIP
    '2.13'
    """
    if jars_dir is None:
        import pyspark

        jars_dir = Path(pyspark.__file__).parent / "jars"
    names = os.listdir(jars_dir) if os.path.isdir(jars_dir) else []
    for name in names:
        match = _SPARK_CORE_JAR.match(name)
        if match:
            return match.group(1)
    raise RuntimeError(f"Cannot tell the Scala version of pyspark: no spark-core_<scala>-<version>.jar in "
                       f"{jars_dir} (a Spark Connect client without jars cannot start a local session)")


def installed_delta_version() -> str:
    """The version of the installed ``delta-spark`` Python package, which names its Maven artifact."""
    try:
        return metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        raise RuntimeError("Package 'delta' needs the delta-spark Python package, whose version selects "
                           "io.delta:delta-spark: pip install 'connect-magics[delta]'") from None


def package_confs(packages: Iterable[str], spark_version: str | None = None, scala: str | None = None,
                  delta: str | None = None) -> dict[str, str]:
    """The Spark confs that load ``packages`` (names from :data:`PACKAGES`): ``spark.jars.packages``, and
    Delta's SQL extension and catalog for ``delta``. Versions default to the installed ones.
    """
    names = list(dict.fromkeys(packages))
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        raise ValueError(f"Invalid value {unknown} for packages: unknown package(s); known: {list(PACKAGES)}")
    if not names:
        return {}
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    scala = scala or pyspark_scala_version()
    coordinates = []
    confs: dict[str, str] = {}
    if "kafka" in names:
        coordinates.append(kafka_coordinate(spark_version, scala))
    if "connect" in names and (server := connect_coordinate(spark_version, scala)) is not None:
        coordinates.append(server)
    if "delta" in names:
        coordinates.append(delta_coordinate(delta or installed_delta_version(), scala))
        confs.update(DELTA_CONFS)
    return {"spark.jars.packages": ",".join(coordinates), **confs} if coordinates else confs


def unresolved_artifacts(ivy_report: str) -> list[str]:
    """The ``group:artifact:version`` of each artifact that Ivy's report (what Spark's JVM printed while it
    resolved ``spark.jars.packages``) lists as unresolved: asked for, or a dependency of one.

    >>> unresolved_artifacts("\t\t:: io.delta#delta-spark_2.13;0.0.1: not found")
    ['io.delta:delta-spark_2.13:0.0.1']
    """
    return list(dict.fromkeys(":".join(m) for m in _UNRESOLVED.findall(ivy_report)))
