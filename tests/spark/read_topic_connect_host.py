"""Reads a topic with every reader of ``rt.read_topic`` on a Spark Connect session, in a process of its own.

Usage: python read_topic_connect_host.py BOOTSTRAP TOPIC [PACKAGE ...]; prints ``RESULT {json}``: the session's
module, whether it has Spark's Kafka source, and per reader the value type and (partition, offset, n) rows, or
the error refusing that reader."""

from __future__ import annotations

import json
import sys

from spark_connect_host import local_connect_session

from connect_magics import ConnectRuntime
from connect_magics.errors import BadRequestError
from connect_magics.spark.packages import package_confs
from connect_magics.spark.topic_frame import READERS, has_kafka_source

SCHEMALESS = {"value.converter": "JsonConverter", "value.converter.schemas.enable": "false"}


def main(bootstrap: str, topic: str, *packages: str) -> int:
    spark = local_connect_session(package_confs(packages))
    out: dict = {"session": type(spark).__module__, "kafka_source": has_kafka_source(spark)}
    with ConnectRuntime(bootstrap, group_id="read-topic-connect", spark=spark) as rt:
        for reader in READERS:
            try:
                df = rt.read_topic(topic, SCHEMALESS, reader=reader)
            except BadRequestError as e:
                out[reader] = str(e)
                continue
            out[reader] = {"schema": df.schema["value"].dataType.simpleString(),
                           "rows": [[r["partition"], r["offset"], r["value"]["n"]]
                                    for r in df.orderBy("partition", "offset").collect()]}
    spark.stop()
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
