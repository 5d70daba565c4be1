"""Runs a file pipeline with ``executor="spark"`` on a Spark Connect session, in a process of its own (the
local Spark Connect server needs a SparkContext of its own).

Usage: python spark_connect_host.py BOOTSTRAP GROUP SOURCE_FILE OUT_FILE TOPIC; prints ``RESULT``, the session's
module and the task's worker id, and exits 0 once every line of the source file is in the output file."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

from connect_magics import ConnectRuntime
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java
from connect_magics.spark.packages import package_confs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import wait_until  # noqa: E402  (tests/helpers.py)


def local_connect_session(confs: dict[str, str] | None = None) -> RemoteSparkSession:
    """What remote("local[2]") does, on a free loopback port rather than 15002: a local Spark Connect
    server (the SparkConnectPlugin in a local SparkContext, with ``confs``), and a Spark Connect client
    session."""
    os.environ["JAVA_HOME"] = find_java(prefer=SPARK_JAVA_VERSIONS).home
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (SparkSession.builder.master("local[2]").config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
     .config("spark.connect.grpc.binding.address", "127.0.0.1").config("spark.connect.grpc.binding.port", str(port))
     .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false").config(map=with_server(confs or {})).getOrCreate())
    return RemoteSparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()


def with_server(confs: dict[str, str]) -> dict[str, str]:
    """``confs`` with the Spark Connect server's package added where pyspark's jars lack it (Spark 3.5)."""
    packages = [p for p in (confs.get("spark.jars.packages", ""),
                            package_confs(["connect"]).get("spark.jars.packages", "")) if p]
    return {**confs, **({"spark.jars.packages": ",".join(packages)} if packages else {})}


def main(bootstrap: str, group: str, source: str, out: str, topic: str) -> int:
    spark = local_connect_session()
    session = type(spark).__module__
    expected = Path(source).read_text().splitlines()
    with ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "200"}, spark=spark,
                        executor="spark") as rt:
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": source, "topic": topic})
        rt.create_connector("sink", {"connector.class": "FileStreamSink", "file": out, "topics": topic})
        def copied() -> bool:
            return Path(out).exists() and Path(out).read_text().splitlines() == expected

        try:
            wait_until(copied, 240, message="every line in the sink's file")
        except AssertionError as e:
            print(e, flush=True)
            return 1
        print("RESULT", session, rt.connector_status("sink")["tasks"][0]["worker_id"], flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
