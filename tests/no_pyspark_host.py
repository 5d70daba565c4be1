"""Runs the runtime with pyspark (and py4j, delta) impossible to import, as in an environment without Spark:
``python no_pyspark_host.py BOOTSTRAP GROUP FILE_IN FILE_OUT EXECUTOR`` copies FILE_IN to FILE_OUT through a
topic with FileStream connectors, serves the REST API, loads the magics, and prints what it saw as JSON."""

from __future__ import annotations

import importlib.abc
import json
import sys
import time


class _NoSpark(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name.split(".")[0] in ("pyspark", "py4j", "delta"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, _NoSpark())


def main() -> None:
    bootstrap, group, file_in, file_out, executor = sys.argv[1:6]
    from IPython.core.interactiveshell import InteractiveShell

    from connect_magics import ConnectRuntime
    from connect_magics.rest import RestServer

    seen: dict[str, object] = {}
    with ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "500"}, executor=executor) as rt, \
            RestServer(rt, port=0) as server:
        topic = f"{group}-lines"
        rt.create_connector("src", {"connector.class": "FileStreamSource", "file": file_in, "topic": topic,
                                    "topic.creation.default.partitions": "1",
                                    "topic.creation.default.replication.factor": "1",
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        rt.create_connector("snk", {"connector.class": "FileStreamSink", "file": file_out, "topics": topic,
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
        expected = open(file_in).read()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if open(file_out).read() == expected:
                    break
            except FileNotFoundError:
                pass
            time.sleep(0.1)  # a polling interval of this helper process, not the test's synchronisation
        from urllib.request import urlopen

        with urlopen(f"{server.url}/connectors/snk/status", timeout=10) as response:
            seen["rest_status"] = json.load(response)["connector"]["state"]
        try:
            rt.read_topic(topic)
        except ImportError as e:
            seen["read_topic"] = str(e)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    seen["magics"] = "connect" in ip.magics_manager.magics["line"]
    seen["pyspark_loaded"] = any(m.split(".")[0] == "pyspark" for m in sys.modules)
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
