"""Maven coordinates of Spark packages, derived from version strings and the pyspark jars folder."""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest

from connect_magics.spark.packages import (
    DELTA_CONFS,
    delta_coordinate,
    kafka_coordinate,
    package_confs,
    pyspark_scala_version,
    unresolved_artifacts,
)


def test_coordinates_follow_the_versions() -> None:
    assert kafka_coordinate("4.2.0", "2.13") == "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
    assert kafka_coordinate("3.5.1", "2.12") == "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.1"
    assert delta_coordinate("4.4.0", "2.13") == "io.delta:delta-spark_2.13:4.4.0"


def test_the_spark_connect_server_is_loaded_before_spark_4_only() -> None:
    assert package_confs(["connect"], spark_version="4.2.0", scala="2.13") == {}
    assert package_confs(["connect", "kafka"], spark_version="3.5.7", scala="2.12")["spark.jars.packages"] == \
        "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7,org.apache.spark:spark-connect_2.12:3.5.7"


def test_confs_for_kafka_and_delta() -> None:
    confs = package_confs(["kafka", "delta", "kafka"], spark_version="4.2.0", scala="2.13", delta="4.4.0")
    assert confs == {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0,"
                                            "io.delta:delta-spark_2.13:4.4.0", **DELTA_CONFS}
    assert package_confs([]) == {}
    assert "spark.sql.extensions" not in package_confs(["kafka"], spark_version="4.2.0", scala="2.13")


def test_defaults_are_the_installed_versions() -> None:
    assert package_confs(["kafka"])["spark.jars.packages"] == \
        f"org.apache.spark:spark-sql-kafka-0-10_{pyspark_scala_version()}:{pyspark.__version__}"
    assert pyspark_scala_version() in ("2.12", "2.13")


def test_scala_version_from_the_spark_core_jar(tmp_path: Path) -> None:
    for name in ("ivy-2.5.3.jar", "spark-core_2.13-4.2.0.jar", "spark-sql_2.13-4.2.0.jar"):
        (tmp_path / name).touch()
    assert pyspark_scala_version(tmp_path) == "2.13"
    (tmp_path / "spark-core_2.13-4.2.0.jar").unlink()
    with pytest.raises(RuntimeError, match="no spark-core_<scala>-<version>.jar in"):
        pyspark_scala_version(tmp_path)


def test_unknown_packages_are_refused() -> None:
    with pytest.raises(ValueError, match=r"Invalid value \['avro'\] for packages: unknown package\(s\); known: "
                                         r"\['kafka', 'connect', 'delta'\]"):
        package_confs(["kafka", "avro"])


def test_unresolved_artifacts_come_from_ivys_report() -> None:
    report = """
		module not found: io.delta#delta-spark_2.13;0.0.0-missing
		::          UNRESOLVED DEPENDENCIES         ::
		:: io.delta#delta-spark_2.13;0.0.0-missing: not found
		:: org.apache.kafka#kafka-clients;9.9.9: not found
		:: io.delta#delta-spark_2.13;0.0.0-missing: not found
Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: io.delta#delta-spark_2.13;0.0.0-missing: not found]
"""
    assert unresolved_artifacts(report) == ["io.delta:delta-spark_2.13:0.0.0-missing",
                                            "org.apache.kafka:kafka-clients:9.9.9"]
    assert unresolved_artifacts("resolve 2921ms :: artifacts dl 62ms") == []
