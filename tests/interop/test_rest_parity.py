"""Differential REST tests: the same requests to a real Apache Kafka Connect worker and to
``connect-magics worker``'s REST server on the same broker, compared after normalising what may
differ (worker ids, plugin versions, traces, and each side's own connector, topic and file names).

Every comparison has a label. A label in ``EXPECTED_DIFFERENCES`` (patterns allowed) must differ, for
the reason given there and in docs/deviations.md; every other comparison must be identical. The
terminal summary reports how many answers were identical.

To survey differences (say, after a Kafka upgrade) set ``PARITY_COLLECT=FILE``: unexpected differences
are then appended to FILE as JSON lines instead of failing the tests.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import RestClient, wait_until

from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.rest import RestServer

#: Comparisons known to differ, by label (fnmatch patterns), with the reason (also in docs/deviations.md).
EXPECTED_DIFFERENCES: dict[str, str] = {
    "create without config": "Kafka Connect fails with a NullPointerException (500); we answer 400 naming the field",
    "create with a bad initial_state": "Kafka Connect answers Jackson's 500; we answer 400 naming the field and the "
                                       "allowed values",
    "create answer*": "Kafka Connect (distributed) answers before it generated the task configs, so 'tasks' is "
                     "empty; our runtime generates them first and lists them",
    "PUT config of a new connector": "the same as 'create answer'",
    "PATCH config renaming": "Kafka Connect 4.1 accepts a PATCH that changes 'name' and stores the other name; "
                             "we refuse it as PUT does",
    "offsets * malformed *": "Jackson's deserialisation messages name Java classes; ours name the field (both 500)",
    "offsets source null partition": "ours names the entry (both 500)",
    "plugins: only on one side": "the plugins installed differ: Kafka's Java SMTs and converters we do not have, "
                                 "our Python connectors",
    "validate * keys": "tasks.max.enforce and config.action.reload are not defined",
    "validate * value *.converter": "Kafka recommends the converters it has (Boolean, Double, ...), we ours",
    "validate * value *.converter.plugin.version": "versions differ; Kafka shows them for the worker's converters",
    "plugin config * common keys": "Kafka 4.1 also lists the common connector keys for a connector plugin",
    "plugin config FileStreamSource: its own keys": "'file' is required: a kernel has no standard input to read",
    "validate source* definition file": "the same as 'plugin config FileStreamSource: its own keys'",
    "validate source-errors value file": "the same as 'plugin config FileStreamSource: its own keys'",
    "validate source-errors name and error count": "the same as 'plugin config FileStreamSource: its own keys'",
    "plugin config with no matching version": "the message lists the installed versions, which differ",
    "create with an unknown connector.class": "the message lists the installed connectors, which differ",
    "validate without connector.class": "Kafka Connect 4.1 answers 500 with the exception class in the message "
                                        "(a BadRequestException wrapped on the way); we answer 400 as its code means",
    "plugin config InsertField$Value": "we also resolve a nested class's short name; Kafka 4.1 answers 404",
    "plugin config org.apache.kafka.connect.transforms.ReplaceField$Value": "we still accept 'blacklist' and "
                                                                            "'whitelist', removed in Kafka 4.0",
}


def _normalise(obj: Any, side: Side) -> Any:
    """Worker ids, versions and traces replaced by placeholders; the side's own names by ``{s}``."""
    if isinstance(obj, dict):
        out = {}
        version_key = str(obj.get("name", "")).endswith(".plugin.version")  # a ConfigInfos definition or value
        for key, value in obj.items():
            if key == "worker_id":
                value = "<worker>"
            elif key in ("version", "commit") and (isinstance(value, str) or value is None):
                value = "<version>"  # Kafka's restart plan may show a null version while a connector restarts
            elif version_key and key in ("default_value", "value") and value is not None:
                value = "<version>"
            elif version_key and key == "recommended_values":
                value = ["<version>"] * len(value)
            elif key == "trace" and isinstance(value, str):
                value = "<trace>"
            out[side.unfill(key)] = _normalise(value, side)
        return out
    if isinstance(obj, list):
        return [_normalise(v, side) for v in obj]
    if isinstance(obj, str):
        return side.unfill(obj)
    return obj


@dataclass
class Side:
    name: str
    client: RestClient
    token: str  # replaces "{s}" in requests: the side's own connector, topic and file names

    def fill(self, obj: Any) -> Any:
        return None if obj is None else json.loads(json.dumps(obj).replace("{s}", self.token))

    def unfill(self, text: str) -> str:
        return text.replace(self.token, "{s}")

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, answer, _ = self.client(method, self.fill(path), self.fill(body))
        return status, _normalise(answer, self)


def expected_difference(label: str) -> str | None:
    return next((reason for pattern, reason in EXPECTED_DIFFERENCES.items() if fnmatch.fnmatchcase(label, pattern)),
                None)


class Parity:
    """Sends requests to both workers and checks their answers against the expectation for the label."""

    def __init__(self, java: Side, ours: Side, tally: Any) -> None:
        self.java, self.ours, self.tally = java, ours, tally

    def compare(self, label: str, theirs: Any, ours: Any) -> None:
        reason = expected_difference(label)
        if reason is None:
            if os.environ.get("PARITY_COLLECT") and ours != theirs:
                with open(os.environ["PARITY_COLLECT"], "a") as f:
                    f.write(json.dumps([label, theirs, ours]) + "\n")
                return
            assert ours == theirs, f"{label}: Kafka Connect answered {theirs!r}, we answered {ours!r}"
            self.tally.identical.append(label)
        else:
            assert ours != theirs, f"{label}: now identical; remove it from EXPECTED_DIFFERENCES ({reason})"
            self.tally.different.append(label)

    def same(self, label: str, method: str, path: str, body: Any = None) -> tuple[Any, Any]:
        """Send the request to both; their (status, body) must match (or differ, if expected)."""
        theirs, ours = self.java.call(method, path, body), self.ours.call(method, path, body)
        self.compare(label, theirs, ours)
        return theirs, ours

    def wait_state(self, name: str, state: str, tasks: int) -> None:
        """Wait until connector ``name`` and exactly ``tasks`` tasks are in ``state`` on both sides."""
        for side in (self.java, self.ours):
            def reached(side: Side = side) -> bool:
                status, body = side.call("GET", f"/connectors/{name}/status")
                return status == 200 and body["connector"]["state"] == state and len(body["tasks"]) == tasks \
                    and all(t["state"] == state for t in body["tasks"])
            wait_until(reached, 60, 0.1, message=f"{side.name}: {name} {state} with {tasks} tasks")

    def wait_topics(self, name: str, used: bool = True) -> None:
        """Wait until connector ``name`` has active topics (``used``), or none, on both sides."""
        def reached() -> bool:
            return all(bool(side.call("GET", f"/connectors/{name}/topics")[1][name]["topics"]) == used
                       for side in (self.java, self.ours))
        wait_until(reached, 30, 0.1, message=f"{name}: {'some' if used else 'no'} active topics on both sides")


@pytest.fixture(scope="module")
def parity(java_connect: JavaConnectWorker, magics_worker: RestServer, parity_tally: Any) -> Iterator[Parity]:
    yield Parity(Side("java", RestClient(java_connect.url), "javaside"),
                 Side("ours", RestClient(magics_worker.url), "magicsside"), parity_tally)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder whose ``{s}-in.txt`` files (one per side) hold three lines."""
    for token in ("javaside", "magicsside"):
        (tmp_path / f"{token}-in.txt").write_text("a\nb\nc\n")
    return tmp_path


def source_config(folder: Path, name: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": str(folder / "{s}-in.txt"), "topic": f"{{s}}-{name}",
            "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}


def sink_config(folder: Path, topic: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSink", "file": str(folder / "{s}-out.txt"), "topics": topic}


# -- plugins --------------------------------------------------------------------------------------------
def test_root(parity: Parity) -> None:
    parity.same("GET /", "GET", "/")


def test_plugin_listings(parity: Parity) -> None:
    for query in ("", "?connectorsOnly=true", "?connectorsOnly=false"):
        theirs, ours = parity.java.call("GET", "/connector-plugins" + query), \
            parity.ours.call("GET", "/connector-plugins" + query)
        assert theirs[0] == ours[0] == 200
        common = {p["class"] for p in theirs[1]} & {p["class"] for p in ours[1]}
        parity.compare(f"plugins{query}: the common plugins, in order",
                       [p for p in theirs[1] if p["class"] in common], [p for p in ours[1] if p["class"] in common])
        parity.compare("plugins: only on one side", theirs[1], ours[1])
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in common


PLUGINS_ON_BOTH_SIDES = [
    "org.apache.kafka.connect.json.JsonConverter", "org.apache.kafka.connect.storage.StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter", "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "org.apache.kafka.connect.transforms.InsertField$Value", "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "org.apache.kafka.connect.transforms.HoistField$Key", "org.apache.kafka.connect.transforms.ExtractField$Value",
    "org.apache.kafka.connect.transforms.RegexRouter", "org.apache.kafka.connect.transforms.Filter",
    "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
    "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "InsertField$Value", "RegexRouter", "JsonConverter",
]


@pytest.mark.parametrize("plugin", PLUGINS_ON_BOTH_SIDES)
def test_plugin_config(parity: Parity, plugin: str) -> None:
    parity.same(f"plugin config {plugin}", "GET", f"/connector-plugins/{plugin}/config")


@pytest.mark.parametrize("plugin", ["FileStreamSource", "FileStreamSink"])
def test_connector_plugin_config(parity: Parity, plugin: str) -> None:
    theirs, ours = parity.java.call("GET", f"/connector-plugins/{plugin}/config"), \
        parity.ours.call("GET", f"/connector-plugins/{plugin}/config")
    own = [d["name"] for d in ours[1]]
    parity.compare(f"plugin config {plugin}: its own keys", (theirs[0], theirs[1][:len(own)]), ours)
    parity.compare(f"plugin config {plugin} common keys", theirs[1], ours[1])


def test_plugin_config_errors(parity: Parity) -> None:
    parity.same("plugin config of an unknown plugin", "GET", "/connector-plugins/NoSuchPlugin/config")
    parity.same("plugin config with a bad version", "GET", "/connector-plugins/FileStreamSource/config?version=[1,")
    parity.same("plugin config with no matching version", "GET",
                "/connector-plugins/FileStreamSource/config?version=[99.0,100.0]")


# -- validation -----------------------------------------------------------------------------------------
def _compare_config_infos(parity: Parity, label: str, theirs: tuple[int, Any], ours: tuple[int, Any]) -> None:
    assert theirs[0] == ours[0] == 200
    parity.compare(f"{label} name and error count", (theirs[1]["name"], theirs[1]["error_count"]),
                   (ours[1]["name"], ours[1]["error_count"]))
    parity.compare(f"{label} groups", theirs[1]["groups"], ours[1]["groups"])
    java_configs = {(c["definition"] or c["value"])["name"]: c for c in theirs[1]["configs"]}
    our_configs = {(c["definition"] or c["value"])["name"]: c for c in ours[1]["configs"]}
    parity.compare(f"{label} keys", list(java_configs), list(our_configs))
    for key in java_configs.keys() & our_configs.keys():
        for part in ("definition", "value"):
            parity.compare(f"{label} {part} {key}", java_configs[key][part], our_configs[key][part])


@pytest.mark.parametrize("plugin, config", [
    ("FileStreamSource", {"connector.class": "FileStreamSource", "topic": "t", "file": "/tmp/x", "name": "a"}),
    ("FileStreamSource", {"connector.class": "FileStreamSource", "batch.size": "x", "tasks.max": "0"}),
    ("FileStreamSink", {"connector.class": "FileStreamSink", "topics": "t", "file": "/tmp/x", "name": "a"}),
    ("FileStreamSink", {"connector.class": "FileStreamSink", "topics": "t", "topics.regex": "t.*"}),
    ("FileStreamSink", {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "t",
                        "name": "a", "transforms": "i",
                        "transforms.i.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                        "transforms.i.static.field": "f", "transforms.i.static.value": "v"}),
], ids=["source", "source-errors", "sink", "sink-topics-and-regex", "sink-with-smt"])
def test_validate(parity: Parity, plugin: str, config: dict[str, str], request: pytest.FixtureRequest) -> None:
    path = f"/connector-plugins/{plugin}/config/validate"
    _compare_config_infos(parity, f"validate {request.node.callspec.id}", parity.java.call("PUT", path, config),
                          parity.ours.call("PUT", path, config))


def test_validate_errors(parity: Parity) -> None:
    parity.same("validate without connector.class", "PUT", "/connector-plugins/FileStreamSource/config/validate",
                {"topic": "t"})
    parity.same("validate of another plugin", "PUT", "/connector-plugins/FileStreamSink/config/validate",
                {"connector.class": "FileStreamSource"})


# -- connectors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method, path", [
    ("GET", ""), ("GET", "/config"), ("GET", "/status"), ("GET", "/tasks"), ("GET", "/tasks/0/status"),
    ("DELETE", ""), ("PUT", "/pause"), ("PUT", "/resume"), ("PUT", "/stop"), ("POST", "/restart"),
    ("POST", "/restart?includeTasks=true&onlyFailed=true"), ("POST", "/tasks/0/restart"), ("GET", "/topics"),
    ("PUT", "/topics/reset"), ("GET", "/offsets"), ("DELETE", "/offsets"), ("PATCH", "/config"),
])
def test_unknown_connector(parity: Parity, method: str, path: str) -> None:
    parity.same(f"unknown connector {method} {path}", method, f"/connectors/{{s}}-nope{path}",
                {"tasks.max": "1"} if method == "PATCH" else None)


def test_unknown_connector_offsets(parity: Parity) -> None:
    parity.same("unknown connector PATCH offsets", "PATCH", "/connectors/{s}-nope/offsets",
                {"offsets": [{"partition": {"a": 1}, "offset": {"b": 2}}]})


def test_create_errors(parity: Parity, files: Path) -> None:
    config = source_config(files, "create-errors")
    theirs, ours = parity.same("create with an unknown connector.class", "POST", "/connectors",
                               {"name": "{s}-x", "config": {"connector.class": "NoSuchConnector"}})
    parity.compare("create with an unknown connector.class, up to the list of connectors",
                   (theirs[0], theirs[1]["message"].split(": PluginDesc")[0]),
                   (ours[0], ours[1]["message"].split(": PluginDesc")[0]))
    parity.same("create without a name", "POST", "/connectors", {"config": config})
    parity.same("create with an empty name", "POST", "/connectors", {"name": "", "config": config})
    parity.same("create without config", "POST", "/connectors", {"name": "{s}-x"})
    parity.same("create with an empty config", "POST", "/connectors", {"name": "{s}-x", "config": {}})
    parity.same("create with a bad initial_state", "POST", "/connectors",
                {"name": "{s}-x", "config": config, "initial_state": "bogus"})
    parity.same("create with an invalid value", "POST", "/connectors",
                {"name": "{s}-x", "config": {**config, "batch.size": "x"}})
    parity.same("PUT config with a mismatched name", "PUT", "/connectors/{s}-x/config", {**config, "name": "other"})
    parity.same("connectors after failed creates", "GET", "/connectors")


def test_source_connector_lifecycle(parity: Parity, files: Path) -> None:
    config = source_config(files, "lifecycle")
    parity.same("create answer", "POST", "/connectors", {"name": "{s}-life", "config": config})
    parity.same("create a duplicate", "POST", "/connectors", {"name": "{s}-life", "config": config})
    parity.wait_state("{s}-life", "RUNNING", 1)
    for label, path in [("info", ""), ("config", "/config"), ("status", "/status"), ("tasks", "/tasks"),
                        ("task status", "/tasks/0/status"), ("unknown task status", "/tasks/7/status")]:
        parity.same(f"running connector {label}", "GET", f"/connectors/{{s}}-life{path}")
    for query in ("?expand=status", "?expand=info", "?expand=status&expand=info", "?expand=bogus"):
        parity.same(f"list {query}", "GET", f"/connectors{query}")
    parity.same("pause", "PUT", "/connectors/{s}-life/pause")
    parity.wait_state("{s}-life", "PAUSED", 1)
    parity.same("paused status", "GET", "/connectors/{s}-life/status")
    parity.same("resume", "PUT", "/connectors/{s}-life/resume")
    parity.wait_state("{s}-life", "RUNNING", 1)
    parity.same("restart connector", "POST", "/connectors/{s}-life/restart")
    parity.wait_state("{s}-life", "RUNNING", 1)
    parity.same("restart with tasks", "POST", "/connectors/{s}-life/restart?includeTasks=true")
    parity.wait_state("{s}-life", "RUNNING", 1)
    parity.same("restart only failed", "POST", "/connectors/{s}-life/restart?includeTasks=true&onlyFailed=true")
    parity.same("restart only failed connector", "POST", "/connectors/{s}-life/restart?onlyFailed=true")
    parity.same("restart task", "POST", "/connectors/{s}-life/tasks/0/restart")
    parity.same("restart unknown task", "POST", "/connectors/{s}-life/tasks/5/restart")
    parity.wait_state("{s}-life", "RUNNING", 1)
    parity.same("PUT config", "PUT", "/connectors/{s}-life/config", {**config, "batch.size": "10"})
    parity.same("PUT config naming another connector", "PUT", "/connectors/{s}-life/config",
                {**config, "name": "other"})
    parity.same("PATCH config", "PATCH", "/connectors/{s}-life/config", {"batch.size": "11"})
    parity.same("PATCH config renaming", "PATCH", "/connectors/{s}-life/config", {"name": "other"})
    parity.same("PUT config of a new connector", "PUT", "/connectors/{s}-life2/config", config)
    parity.same("delete", "DELETE", "/connectors/{s}-life")
    parity.same("delete again", "DELETE", "/connectors/{s}-life")
    parity.same("delete the other", "DELETE", "/connectors/{s}-life2")


def test_pause_a_stopped_connector(parity: Parity, files: Path) -> None:
    config = source_config(files, "pause-stopped")
    parity.same("create stopped", "POST", "/connectors", {"name": "{s}-ps", "config": config,
                                                          "initial_state": "STOPPED"})
    parity.wait_state("{s}-ps", "STOPPED", 0)
    parity.same("stopped status", "GET", "/connectors/{s}-ps/status")
    parity.same("stopped tasks", "GET", "/connectors/{s}-ps/tasks")
    parity.same("pause stopped", "PUT", "/connectors/{s}-ps/pause")
    parity.wait_state("{s}-ps", "PAUSED", 0)
    parity.same("paused after stopped: status", "GET", "/connectors/{s}-ps/status")
    parity.same("paused after stopped: tasks", "GET", "/connectors/{s}-ps/tasks")
    parity.same("resume the paused, once stopped", "PUT", "/connectors/{s}-ps/resume")
    parity.wait_state("{s}-ps", "RUNNING", 1)
    parity.same("delete", "DELETE", "/connectors/{s}-ps")


# -- offsets (KIP-875) ----------------------------------------------------------------------------------
def test_source_offsets(parity: Parity, files: Path) -> None:
    config = source_config(files, "offsets")
    partition = {"filename": str(files / "{s}-in.txt")}
    alter = {"offsets": [{"partition": partition, "offset": {"position": 2}}]}
    parity.same("create answer", "POST", "/connectors", {"name": "{s}-so", "config": config})
    parity.wait_state("{s}-so", "RUNNING", 1)
    parity.same("offsets source alter running", "PATCH", "/connectors/{s}-so/offsets", alter)
    parity.same("offsets source reset running", "DELETE", "/connectors/{s}-so/offsets")
    parity.same("pause", "PUT", "/connectors/{s}-so/pause")
    parity.wait_state("{s}-so", "PAUSED", 1)
    parity.same("offsets source alter paused", "PATCH", "/connectors/{s}-so/offsets", alter)
    parity.same("offsets source reset paused", "DELETE", "/connectors/{s}-so/offsets")
    parity.same("stop", "PUT", "/connectors/{s}-so/stop")
    parity.wait_state("{s}-so", "STOPPED", 0)
    wait_until(lambda: all(side.call("GET", "/connectors/{s}-so/offsets")[1]["offsets"]
                           for side in (parity.java, parity.ours)), 30, message="both sources' offsets")
    parity.same("offsets source committed", "GET", "/connectors/{s}-so/offsets")
    parity.same("offsets source no body", "PATCH", "/connectors/{s}-so/offsets", {})
    parity.same("offsets source empty list", "PATCH", "/connectors/{s}-so/offsets", {"offsets": []})
    parity.same("offsets source alter", "PATCH", "/connectors/{s}-so/offsets", alter)
    parity.same("offsets source altered", "GET", "/connectors/{s}-so/offsets")
    parity.same("offsets source alter to null", "PATCH", "/connectors/{s}-so/offsets",
                {"offsets": [{"partition": partition, "offset": None}]})
    parity.same("offsets source after null", "GET", "/connectors/{s}-so/offsets")
    parity.same("offsets source alter again", "PATCH", "/connectors/{s}-so/offsets", alter)
    parity.same("offsets source reset", "DELETE", "/connectors/{s}-so/offsets")
    parity.same("offsets source reset again", "DELETE", "/connectors/{s}-so/offsets")
    parity.same("offsets source after reset", "GET", "/connectors/{s}-so/offsets")
    parity.same("offsets source null partition", "PATCH", "/connectors/{s}-so/offsets",
                {"offsets": [{"partition": None, "offset": {"position": 2}}]})
    parity.same("offsets source missing offset", "PATCH", "/connectors/{s}-so/offsets",
                {"offsets": [{"partition": partition}]})
    parity.same("offsets source malformed offset", "PATCH", "/connectors/{s}-so/offsets",
                {"offsets": [{"partition": partition, "offset": "x"}]})
    parity.same("offsets source malformed list", "PATCH", "/connectors/{s}-so/offsets", {"offsets": "x"})
    parity.same("offsets source malformed entry field", "PATCH", "/connectors/{s}-so/offsets",
                {"offsets": [{"partition": partition, "offset": {"position": 2}, "extra": 1}]})
    parity.same("offsets source malformed body field", "PATCH", "/connectors/{s}-so/offsets", {"bogus": 1})
    parity.same("delete", "DELETE", "/connectors/{s}-so")


SINK_OFFSET_ERRORS = {
    "null partition": [{"partition": None, "offset": {"kafka_offset": 1}}],
    "partition without keys": [{"partition": {"a": 1}, "offset": {"kafka_offset": 1}}],
    "null topic": [{"partition": {"kafka_topic": None, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}],
    "null partition number": [{"partition": {"kafka_topic": "t", "kafka_partition": None},
                               "offset": {"kafka_offset": 1}}],
    "bad partition number": [{"partition": {"kafka_topic": "t", "kafka_partition": "x"},
                              "offset": {"kafka_offset": 1}}],
    "offset without key": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"a": 1}}],
    "bad offset": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": "x"}}],
}


def test_sink_offsets(parity: Parity, files: Path) -> None:
    parity.same("create answer (source)", "POST", "/connectors", {"name": "{s}-sk-src",
                                                         "config": source_config(files, "sink-offsets")})
    parity.wait_state("{s}-sk-src", "RUNNING", 1)
    parity.wait_topics("{s}-sk-src")  # the topic exists before the sink subscribes
    parity.same("create answer (sink)", "POST", "/connectors", {"name": "{s}-sk",
                                                       "config": sink_config(files, "{s}-sink-offsets")})
    parity.wait_state("{s}-sk", "RUNNING", 1)
    wait_until(lambda: all((files / f"{token}-out.txt").read_text() == "a\nb\nc\n"
                           for token in ("javaside", "magicsside")), 30, message="both sinks wrote the lines")
    partition = {"kafka_topic": "{s}-sink-offsets", "kafka_partition": 0}
    parity.same("offsets sink alter running", "PATCH", "/connectors/{s}-sk/offsets",
                {"offsets": [{"partition": partition, "offset": {"kafka_offset": 1}}]})
    parity.same("stop", "PUT", "/connectors/{s}-sk/stop")
    parity.wait_state("{s}-sk", "STOPPED", 0)
    wait_until(lambda: all(side.call("GET", "/connectors/{s}-sk/offsets")[1]["offsets"]
                           for side in (parity.java, parity.ours)), 30, message="both sinks' offsets")
    parity.same("offsets sink committed", "GET", "/connectors/{s}-sk/offsets")
    for label, offsets in SINK_OFFSET_ERRORS.items():
        parity.same(f"offsets sink {label}", "PATCH", "/connectors/{s}-sk/offsets", {"offsets": offsets})
    parity.same("offsets sink alter", "PATCH", "/connectors/{s}-sk/offsets",
                {"offsets": [{"partition": partition, "offset": {"kafka_offset": "1"}}]})
    parity.same("offsets sink altered", "GET", "/connectors/{s}-sk/offsets")
    parity.same("offsets sink alter to null", "PATCH", "/connectors/{s}-sk/offsets",
                {"offsets": [{"partition": partition, "offset": None}]})
    parity.same("offsets sink after null", "GET", "/connectors/{s}-sk/offsets")
    parity.same("offsets sink reset", "DELETE", "/connectors/{s}-sk/offsets")
    parity.same("offsets sink reset again", "DELETE", "/connectors/{s}-sk/offsets")
    parity.same("offsets sink after reset", "GET", "/connectors/{s}-sk/offsets")
    parity.same("delete sink", "DELETE", "/connectors/{s}-sk")
    parity.same("delete source", "DELETE", "/connectors/{s}-sk-src")


# -- topics (KIP-558) ------------------------------------------------------------------------------------
def test_topics(parity: Parity, files: Path) -> None:
    parity.same("create answer", "POST", "/connectors", {"name": "{s}-tp", "config": source_config(files, "topics")})
    parity.wait_state("{s}-tp", "RUNNING", 1)
    parity.wait_topics("{s}-tp")
    parity.same("topics of a running source", "GET", "/connectors/{s}-tp/topics")
    parity.same("stop", "PUT", "/connectors/{s}-tp/stop")
    parity.wait_state("{s}-tp", "STOPPED", 0)
    parity.same("reset topics", "PUT", "/connectors/{s}-tp/topics/reset")
    parity.wait_topics("{s}-tp", used=False)
    parity.same("topics after reset", "GET", "/connectors/{s}-tp/topics")
    for token in ("javaside", "magicsside"):
        with open(files / f"{token}-in.txt", "a") as f:
            f.write("d\n")
    parity.same("resume", "PUT", "/connectors/{s}-tp/resume")
    parity.wait_state("{s}-tp", "RUNNING", 1)
    parity.wait_topics("{s}-tp")
    parity.same("topics tracked again", "GET", "/connectors/{s}-tp/topics")
    parity.same("delete", "DELETE", "/connectors/{s}-tp")
    parity.wait_topics("{s}-tp", used=False)
    parity.same("topics of a deleted connector", "GET", "/connectors/{s}-tp/topics")
