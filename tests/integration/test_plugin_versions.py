"""KIP-891 against the real broker: several versions of one plugin (same module names) installed under
``plugin.path``, connectors pinned to different versions running at once, upgrades and rollbacks by
changing a connector's config, and versions that are never started when they do not match.

The test plugins (package ``vplug``) leave their version in every record they touch; see
``tests/versioned_plugins.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import versioned_plugins as vp
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.api.config import plugin_version

VERSIONS = ["1.0.0", "1.1.0", "2.0.0-rc1", "2.0.0"]
AVAILABLE = "[1.0.0, 1.1.0, 2.0.0-rc1, 2.0.0]"
FAST = {"offset.flush.interval.ms": "200"}
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(vp.build_plugin_path(tmp_path_factory.mktemp("kip891-all"), VERSIONS))


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str, plugin_path: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(path: str | None = None, **worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"kip891-{unique}", {**FAST, "plugin.path": path or plugin_path, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def create_topics(bootstrap: str, *names: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, 1, 1) for n in names]).values():
        future.result(30)


class TopicReader:
    """Reads a one-partition topic from the beginning, keeping every value (JSON-decoded)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.values: list[Any] = []
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kip891-reader",
                                   "enable.auto.commit": False})
        self._consumer.assign([TopicPartition(topic, 0, 0)])

    def read(self) -> list[Any]:
        for m in self._consumer.consume(500, timeout=0.2):
            if not m.error():
                self.values.append(json.loads(m.value()))
        return self.values

    def wait_for(self, condition: Callable[[Any], bool], what: str, timeout: float = 30) -> Any:
        return wait_until(lambda: next((v for v in self.read() if condition(v)), None), timeout, message=what)

    def close(self) -> None:
        self._consumer.close()


def source(topic: str, version: str | None = None, plugins_version: str | None = None,
           **extra: str) -> dict[str, str]:
    """A vplug source with its value converter, transformation ``t`` and predicate ``p``, all pinned to
    ``plugins_version`` (if given), the connector itself to ``version``."""
    config = {"connector.class": vp.SOURCE, "topic": topic, "value.converter": vp.CONVERTER,
              "transforms": "t", "transforms.t.type": vp.TRANSFORM, "transforms.t.predicate": "p",
              "predicates": "p", "predicates.p.type": "VersionedPredicate", **extra}
    if version is not None:
        config["connector.plugin.version"] = version
    if plugins_version is not None:
        config.update({"value.converter.plugin.version": plugins_version, "transforms.t.plugin.version":
                       plugins_version, "predicates.p.plugin.version": plugins_version})
    return config


def running_versions(rt: ConnectRuntime, name: str) -> tuple[str, str, list[tuple[str, str]]]:
    s = rt.connector_status(name)
    return s["connector"]["state"], s["connector"].get("version"), [(t["state"], t.get("version"))
                                                                    for t in s["tasks"]]


def wait_running(rt: ConnectRuntime, name: str, version: str, tasks: int = 1) -> None:
    expected = ("RUNNING", version, [("RUNNING", version)] * tasks)
    wait_until(lambda: running_versions(rt, name) == expected, 30,
               message=lambda: f"{name} RUNNING at {version}: {running_versions(rt, name)}")


def task_metrics(rt: ConnectRuntime, name: str, task: int = 0) -> dict[str, Any]:
    return rt.metrics()[f"connector-task-metrics,connector={name},task={task}"]


def test_four_connectors_pinned_to_different_versions_run_at_once(runtime_factory, bootstrap, unique,
                                                                  tmp_path: Path) -> None:
    topics = {v: f"v{v}-{unique}" for v in ("1.0.0", "1.1.0", "2.0.0-rc1")}
    create_topics(bootstrap, *topics.values())
    rt = runtime_factory()
    assert [p["version"] for p in rt.connector_plugins() if p["class"] == vp.SOURCE] == VERSIONS
    rt.create_connector("a", source(topics["1.0.0"], "1.0.0", "1.0.0"))
    rt.create_connector("b", source(topics["1.1.0"], "[1.1.0]", "1.1.0"))
    rt.create_connector("c", source(topics["2.0.0-rc1"], "[2.0.0-rc1,2.0.0)", "(1.1.0,2.0.0)"))
    out = tmp_path / "sink.jsonl"
    rt.create_connector("d", {"connector.class": "VersionedSink", "connector.plugin.version": "[2.0,)",
                              "topics": topics["1.0.0"], "file": str(out), "value.converter": vp.CONVERTER,
                              "header.converter": vp.CONVERTER, "header.converter.plugin.version": "1.1.0"})
    expected = {"a": "1.0.0", "b": "1.1.0", "c": "2.0.0-rc1", "d": "2.0.0"}
    for name, version in expected.items():
        wait_running(rt, name, version)
        assert rt.task_status(name, 0)["version"] == version

    metrics = rt.metrics()
    for name, version in expected.items():
        assert metrics[f"connector-metrics,connector={name}"] == {
            "connector-class": vp.SINK if name == "d" else vp.SOURCE, "connector-version": version,
            "connector-type": "sink" if name == "d" else "source", "status": "running"}
        tm = task_metrics(rt, name)
        assert (tm["connector-version"], tm["task-class"], tm["task-version"]) == (
            version, "vplug.sink.VersionedSinkTask" if name == "d" else "vplug.source.VersionedSourceTask", version)
        assert (tm["value-converter-class"], tm["value-converter-version"]) == (vp.CONVERTER, version)
        assert (tm["key-converter-class"], tm["key-converter-version"]) == (JSON_CONVERTER, plugin_version())
        if name != "d":
            assert metrics[f"connector-transform-metrics,connector={name},task=0,transform=t"] == {
                "transform-class": vp.TRANSFORM, "transform-version": version}
            assert metrics[f"connector-predicate-metrics,connector={name},task=0,predicate=p"] == {
                "predicate-class": vp.PREDICATE, "predicate-version": version}
    assert task_metrics(rt, "d")["header-converter-version"] == "1.1.0"

    # every record says which versions produced it: the connector's, the transformation's (gated by the
    # predicate: even sequence numbers only in 1.x) and the converter's
    for version, topic in topics.items():
        reader = TopicReader(bootstrap, topic)
        try:
            reader.wait_for(lambda v: v["value"]["seq"] >= 3, f"4 records in {topic}")
        finally:
            reader.close()
        for record in reader.values:
            value = record["value"]
            assert record["converter"] == value["source"] == version
            transformed = version.startswith("2.") or value["seq"] % 2 == 0
            assert value.get("transform") == (version if transformed else None), record
    # the sink (2.0.0, its converter packaged with it) decodes what connector a (1.0.0) wrote
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 3, 60, message="sink output")
    line = json.loads(out.read_text().splitlines()[0])
    assert line["sink"] == "2.0.0" and line["value"]["decoded_by"] == "2.0.0"
    assert line["value"]["converter"] == line["value"]["value"]["source"] == "1.0.0"


def test_upgrade_through_every_version_and_roll_back(runtime_factory, bootstrap, unique) -> None:
    topic = f"upgrade-{unique}"
    create_topics(bootstrap, topic)
    rt = runtime_factory()
    rt.create_connector("up", source(topic, "1.0.0", "1.0.0", **{"interval.ms": "10"}))
    reader = TopicReader(bootstrap, topic)
    try:
        for version in [*VERSIONS, "1.0.0"]:  # upgrade through every version, then roll back
            rt.patch_connector_config("up", {"connector.plugin.version": version,
                                             "value.converter.plugin.version": version,
                                             "transforms.t.plugin.version": version,
                                             "predicates.p.plugin.version": version})
            wait_running(rt, "up", version)
            tm = task_metrics(rt, "up")
            assert (tm["connector-version"], tm["task-version"], tm["value-converter-version"]) == (version,) * 3
            reader.wait_for(lambda v, version=version: v["converter"] == v["value"]["source"] == version
                            and v["value"]["seq"] > 0, f"a record from version {version}")
        runs = [v["value"]["source"] for v in reader.read()]
        assert [v for i, v in enumerate(runs) if i == 0 or runs[i - 1] != v] == [*VERSIONS, "1.0.0"]
        seqs = [v["value"]["seq"] for v in reader.values]
        assert seqs == sorted(seqs)  # offsets carry over from version to version
        assert all(v["converter"] == v["value"]["source"] for v in reader.values)
    finally:
        reader.close()


def test_bad_ranges_and_missing_versions_are_rejected_at_validation(runtime_factory, bootstrap, unique) -> None:
    topic = f"bad-{unique}"
    create_topics(bootstrap, topic)
    rt = runtime_factory()

    def values(config: dict[str, str]) -> tuple[int, dict[str, dict]]:
        infos = rt.validate_connector_config({"name": "never", **config})
        return infos["error_count"], {c["value"]["name"]: c for c in infos["configs"] if c["value"]}

    count, vals = values(source(topic, "[1.0"))
    assert count == 1
    assert vals["connector.plugin.version"]["value"]["errors"] == [
        "Invalid value [1.0 for configuration connector.plugin.version: Unbounded range: [1.0"]
    missing = f"Plugin {vp.SOURCE} not found that matches the version range [3.0.0,3.0.0], available versions: {AVAILABLE}"
    count, vals = values(source(topic, "3.0.0"))
    assert count == 2
    assert vals["connector.class"]["value"]["errors"] == vals["connector.plugin.version"]["value"]["errors"] == [
        missing]
    assert vals["connector.plugin.version"]["value"]["recommended_values"] == list(reversed(VERSIONS))
    assert vals["connector.plugin.version"]["definition"]["default_value"] == "2.0.0"
    count, vals = values(source(topic, "1.0.0", **{"transforms.t.plugin.version": "[5,)"}))
    assert count == 2 and vals["transforms.t.plugin.version"]["value"]["errors"] == [
        f"Plugin {vp.TRANSFORM} not found that matches the version range [5,), available versions: {AVAILABLE}"]

    for bad in (source(topic, "[1.0"), source(topic, "3.0.0"),
                source(topic, **{"value.converter.plugin.version": "0.9"}),
                source(topic, **{"predicates.p.plugin.version": "(,1.0.0)"})):
        with pytest.raises(ConnectRestError) as e:
            rt.create_connector("never", bad)
        assert e.value.status == 400 and "Connector configuration is invalid" in e.value.message
    assert rt.connectors() == []

    # a running connector asked for a version that is not installed keeps running as it was
    rt.create_connector("kept", source(topic, "1.1.0", "1.1.0"))
    wait_running(rt, "kept", "1.1.0")
    before = rt.connector_config("kept")
    with pytest.raises(ConnectRestError) as e:
        rt.patch_connector_config("kept", {"connector.plugin.version": "[3.0,4.0)"})
    assert e.value.status == 400 and "matches the version range [3.0,4.0)" in e.value.message
    assert rt.connector_config("kept") == before
    assert running_versions(rt, "kept") == ("RUNNING", "1.1.0", [("RUNNING", "1.1.0")])

    # config definitions per version
    names = [k["name"] for k in rt.connector_plugin_config("VersionedSource", version="1.0.0")]
    assert names == ["topic", "interval.ms"]
    assert [k["name"] for k in rt.connector_plugin_config("VersionedSource")][-1] == "greeting"
    for plugin, version, status, message in (
            ("Nope", None, 404, "Unknown plugin Nope."),
            ("VersionedSource", "[1.0", 400, "Invalid version specification: [1.0"),
            ("VersionedSource", "9", 400,
             f"Plugin {vp.SOURCE} not found that matches the version range [9,9], available versions: {AVAILABLE}")):
        with pytest.raises(ConnectRestError) as e:
            rt.connector_plugin_config(plugin, version=version)
        assert (e.value.status, e.value.message) == (status, message)


def test_a_version_that_is_no_longer_installed_is_never_started(runtime_factory, bootstrap, unique,
                                                                tmp_path: Path) -> None:
    topic = f"gone-{unique}"
    create_topics(bootstrap, topic)
    rt = runtime_factory()
    rt.create_connector("pinned", source(topic, "1.1.0", "1.1.0"))
    wait_running(rt, "pinned", "1.1.0")
    rt.close()
    # the worker restarts without version 1.1.0 installed: the connector FAILS, nothing else runs
    fewer = str(vp.build_plugin_path(tmp_path, ["1.0.0", "2.0.0"]))
    rt = runtime_factory(fewer)
    state = rt.connector_status("pinned")
    assert state["connector"]["state"] == "FAILED"
    assert (f"Plugin {vp.SOURCE} not found that matches the version range [1.1.0,1.1.0], available versions: "
            "[1.0.0, 2.0.0]") in state["connector"]["trace"]
    assert [t["state"] for t in state["tasks"]] == ["FAILED"]  # its task cannot load that version either
    assert "matches the version range [1.1.0,1.1.0]" in state["tasks"][0]["trace"]
    assert "connector-task-metrics,connector=pinned,task=0" not in rt.metrics()
    reader = TopicReader(bootstrap, topic)
    try:
        reader.wait_for(lambda v: True, "the records of version 1.1.0")
        # a re-pin to an installed version runs it
        rt.patch_connector_config("pinned", {"connector.plugin.version": "2.0.0", "value.converter.plugin.version":
                                             "2.0.0", "transforms.t.plugin.version": "2.0.0",
                                             "predicates.p.plugin.version": "2.0.0"})
        wait_running(rt, "pinned", "2.0.0")
        reader.wait_for(lambda v: v["value"]["source"] == "2.0.0", "a record of version 2.0.0")
        assert {v["value"]["source"] for v in reader.values} == {"1.1.0", "2.0.0"}
    finally:
        reader.close()


def test_worker_converter_versions(runtime_factory, bootstrap, unique) -> None:
    """The worker's ``value.converter.plugin.version`` selects the worker's converter; a connector's own
    version key for it is ignored; a worker version that is not installed fails the tasks that use it."""
    topics = [f"w{i}-{unique}" for i in range(3)]
    create_topics(bootstrap, *topics)
    rt = runtime_factory(**{"value.converter": vp.CONVERTER, "value.converter.plugin.version": "[1.0,1.1)"})
    config = {"connector.class": vp.SOURCE, "connector.plugin.version": "2.0.0"}
    rt.create_connector("inherits", {**config, "topic": topics[0], "value.converter.plugin.version": "2.0.0"})
    wait_running(rt, "inherits", "2.0.0")
    assert task_metrics(rt, "inherits")["value-converter-version"] == "1.0.0"  # the worker's, not 2.0.0
    reader = TopicReader(bootstrap, topics[0])
    try:
        assert reader.wait_for(lambda v: True, "a record")["converter"] == "1.0.0"
    finally:
        reader.close()
    rt.close()

    rt = runtime_factory(**{"value.converter": vp.CONVERTER, "value.converter.plugin.version": "7.0"})
    rt.create_connector("fails", {**config, "topic": topics[1]})
    rt.create_connector("own", {**config, "topic": topics[2], "value.converter": JSON_CONVERTER})
    wait_running(rt, "own", "2.0.0")
    wait_until(lambda: rt.connector_status("fails")["tasks"], 30, message="a task status")
    task = rt.connector_status("fails")["tasks"][0]
    assert task["state"] == "FAILED"
    assert (f"Plugin {vp.CONVERTER} not found that matches the version range [7.0,7.0], available versions: "
            f"{AVAILABLE}") in task["trace"]
