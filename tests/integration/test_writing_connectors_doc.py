"""The examples of docs/writing-connectors.md run as written: the Counter source feeds the ValuesToFile sink."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import wait_until

from connect_magics import ConnectRuntime

pytestmark = pytest.mark.broker

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-connectors.md"


def doc_classes() -> dict[str, type]:
    """Every class the doc's Python blocks define (blocks that only use them are left out)."""
    namespace: dict = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        if "\nclass " in f"\n{block}":
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    return {k: v for k, v in namespace.items() if isinstance(v, type)}


def test_the_documented_source_and_sink_run(bootstrap: str, unique: str, tmp_path: Path) -> None:
    classes = doc_classes()
    topic, out = f"counter-{unique}", tmp_path / "values.bin"
    raw = "org.apache.kafka.connect.converters.ByteArrayConverter"
    with ConnectRuntime(bootstrap, f"doc-{unique}", {"offset.flush.interval.ms": "200"}) as rt:
        rt.plugins.register(classes["Counter"])
        rt.plugins.register(classes["ValuesToFile"])
        rt.create_connector("count", {"connector.class": "Counter", "topic": topic, "value.converter": raw,
                                      "topic.creation.default.partitions": "1",
                                      "topic.creation.default.replication.factor": "1"})
        rt.create_connector("to-file", {"connector.class": "ValuesToFile", "topics": topic, "path": str(out),
                                        "value.converter": raw})

        def lines() -> list[bytes]:
            return out.read_bytes().splitlines() if out.exists() else []
        wait_until(lambda: len(lines()) >= 1000, 60, message="1000 values in the file")
        assert lines()[:1000] == [str(n).encode() for n in range(1000)]
        with pytest.raises(Exception, match="path"):
            rt.create_connector("no-path", {"connector.class": "ValuesToFile", "topics": topic})
