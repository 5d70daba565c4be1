"""Java properties files (a Kafka Connect ``worker.properties``) as dicts, for the CLI and the magics.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "worker.properties")
>>> _ = open(path, "w").write("bootstrap.servers=broker:9092\\nsasl.jaas.config=a \\\\\\n  b;\\n")
>>> load_properties(path)["sasl.jaas.config"]
'a b;'
"""

from __future__ import annotations

from jproperties import Properties


def load_properties(path: str) -> dict[str, str]:
    """The properties of the file at ``path`` (continuation lines joined, escapes resolved)."""
    props = Properties()
    with open(path, "rb") as f:
        props.load(f, "utf-8")
    return {key: value.data for key, value in props.items()}
