"""Kafka Connect's REST API over a runtime on the real broker: paths, status codes and exact messages."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import RestClient as Client
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.rest import RestServer

FAST = {"offset.flush.interval.ms": "200"}


@pytest.fixture
def rest(bootstrap: str, unique: str) -> Iterator[tuple[Client, ConnectRuntime]]:
    with ConnectRuntime(bootstrap, f"rest-{unique}", FAST) as rt, RestServer(rt, port=0) as server:
        yield Client(server.url), rt


def seq_config(topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "SequenceSource", "topic": topic, "records": "1000000", "rate": "200",
            "tasks.max": "1", "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1", **extra}


def wait_state(call: Client, name: str, state: str, tasks: int | None = 1) -> dict:
    def reached() -> dict | None:
        status, body, _ = call("GET", f"/connectors/{name}/status")
        ok = status == 200 and body["connector"]["state"] == state and (
            tasks is None or (len(body["tasks"]) == tasks and all(t["state"] == state for t in body["tasks"])))
        return body if ok else None
    return wait_until(reached, 30, message=f"{name} {state}")


def test_server_info(rest: tuple[Client, ConnectRuntime]) -> None:
    call, rt = rest
    status, body, _ = call("GET", "/")
    assert status == 200
    assert body["version"] and body["kafka_cluster_id"] == rt.kafka_cluster_id() and body["kafka_cluster_id"]


def test_connector_lifecycle_codes_and_bodies(rest: tuple[Client, ConnectRuntime], unique: str) -> None:
    call, _ = rest
    name = f"seq-{unique}"
    status, body, headers = call("POST", "/connectors", {"name": name, "config": seq_config(f"t-{unique}")})
    assert status == 201 and headers["Location"] == f"/connectors/{name}"
    assert body == {"name": name, "config": {**seq_config(f"t-{unique}"), "name": name},
                    "tasks": [{"connector": name, "task": 0}], "type": "source"}
    assert call("POST", "/connectors", {"name": name, "config": seq_config("x")})[:2] == \
        (409, {"error_code": 409, "message": f"Connector {name} already exists"})
    assert call("GET", "/connectors") == (200, [name], call("GET", "/connectors")[2])
    running = wait_state(call, name, "RUNNING")
    assert running["type"] == "source" and running["tasks"][0]["id"] == 0

    status, body, _ = call("GET", "/connectors?expand=status&expand=info&expand=nonsense")
    assert status == 200 and set(body[name]) == {"status", "info"} and body[name]["info"]["type"] == "source"
    assert call("GET", f"/connectors/{name}/config")[1]["topic"] == f"t-{unique}"
    assert call("GET", f"/connectors/{name}/tasks")[1][0]["id"] == {"connector": name, "task": 0}
    assert call("GET", f"/connectors/{name}/tasks/0/status")[1]["state"] == "RUNNING"

    assert call("PUT", f"/connectors/{name}/pause")[:2] == (202, None)
    wait_state(call, name, "PAUSED")
    assert call("PUT", f"/connectors/{name}/resume")[:2] == (202, None)
    wait_state(call, name, "RUNNING")
    assert call("POST", f"/connectors/{name}/restart")[:2] == (204, None)
    status, body, _ = call("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false")
    assert status == 202 and body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING"]
    wait_state(call, name, "RUNNING")
    assert call("POST", f"/connectors/{name}/tasks/0/restart")[:2] == (204, None)
    wait_state(call, name, "RUNNING")

    assert call("PUT", f"/connectors/{name}/stop")[:2] == (204, None)
    wait_state(call, name, "STOPPED", tasks=0)
    assert call("DELETE", f"/connectors/{name}")[:2] == (204, None)
    assert call("GET", f"/connectors/{name}")[:2] == \
        (404, {"error_code": 404, "message": f"Connector {name} not found"})
    assert call("GET", "/connectors")[1] == []


def test_put_and_patch_config(rest: tuple[Client, ConnectRuntime], unique: str) -> None:
    call, _ = rest
    name = f"put-{unique}"
    status, body, headers = call("PUT", f"/connectors/{name}/config", seq_config(f"t-{unique}"))
    assert status == 201 and headers["Location"] == f"/connectors/{name}" and "created" not in body
    status, body, headers = call("PUT", f"/connectors/{name}/config", seq_config(f"t-{unique}", rate="100"))
    assert status == 200 and body["config"]["rate"] == "100" and "Location" not in headers
    status, body, _ = call("PATCH", f"/connectors/{name}/config", {"rate": "50"})
    assert status == 200 and body["config"]["rate"] == "50" and body["config"]["topic"] == f"t-{unique}"
    assert call("PUT", f"/connectors/{name}/config", {**seq_config("t"), "name": "other"})[:2] == (400, {
        "error_code": 400,
        "message": f"Connector name configuration (other) doesn't match connector name in the URL ({name})"})


def test_invalid_config_is_400_with_every_error_and_creates_nothing(rest: tuple[Client, ConnectRuntime],
                                                                    unique: str) -> None:
    call, rt = rest
    status, body, _ = call("POST", "/connectors", {"name": f"bad-{unique}", "config": {
        "connector.class": "SequenceSource", "tasks.max": "zero"}})
    assert status == 400 and body["error_code"] == 400
    assert body["message"].startswith("Connector configuration is invalid and contains the following ")
    assert "Invalid value zero for configuration tasks.max" in body["message"]
    assert body["message"].endswith("You can also find the above list of errors at the endpoint "
                                    "`/connector-plugins/{connectorType}/config/validate`")
    assert rt.connectors() == []


def test_unknown_connector_answers(rest: tuple[Client, ConnectRuntime]) -> None:
    call, _ = rest
    expected = {
        ("GET", "/connectors/nope/status"): "No status found for connector nope",
        ("DELETE", "/connectors/nope"): "Connector nope not found",
        ("PUT", "/connectors/nope/pause"): "Unknown connector nope",
        ("PUT", "/connectors/nope/resume"): "Unknown connector nope",
        ("PUT", "/connectors/nope/stop"): "Unknown connector nope",
        ("POST", "/connectors/nope/restart"): "Unknown connector: nope",
        ("GET", "/connectors/nope/offsets"): "Connector nope not found",
        ("DELETE", "/connectors/nope/offsets"): "Connector nope not found",
    }
    for (method, path), message in expected.items():
        assert call(method, path)[:2] == (404, {"error_code": 404, "message": message}), (method, path)
    # As in Kafka Connect, topic tracking does no existence check.
    assert call("GET", "/connectors/nope/topics")[:2] == (200, {"nope": {"topics": []}})


def test_offsets_through_rest(rest: tuple[Client, ConnectRuntime], unique: str) -> None:
    call, _ = rest
    name = f"off-{unique}"
    call("POST", "/connectors", {"name": name, "config": seq_config(f"t-{unique}")})
    wait_until(lambda: call("GET", f"/connectors/{name}/offsets")[1]["offsets"], 30, message="offsets committed")
    body = {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 5}}]}
    status, error, _ = call("PATCH", f"/connectors/{name}/offsets", body)
    assert status == 400 and error["message"] == (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        f"specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")
    call("PUT", f"/connectors/{name}/stop")
    wait_state(call, name, "STOPPED", tasks=0)
    assert call("PATCH", f"/connectors/{name}/offsets", {"offsets": []})[:2] == (400, {
        "error_code": 400, "message": "Partitions / offsets need to be provided for an alter offsets request"})
    status, reply, _ = call("PATCH", f"/connectors/{name}/offsets", body)
    assert (status, reply) == (200, {"message": "The offsets for this connector have been altered successfully"})
    assert call("GET", f"/connectors/{name}/offsets")[1] == body
    status, reply, _ = call("DELETE", f"/connectors/{name}/offsets")
    assert (status, reply) == (200, {"message": "The offsets for this connector have been reset successfully"})
    assert wait_until(lambda: call("GET", f"/connectors/{name}/offsets")[1] == {"offsets": []}, 30)


def test_topics_endpoints(bootstrap: str, unique: str) -> None:
    worker = {**FAST, "topic.tracking.allow.reset": "false"}
    with ConnectRuntime(bootstrap, f"rest-{unique}", worker) as rt, RestServer(rt, port=0) as server:
        call = Client(server.url)
        name = f"trk-{unique}"
        call("POST", "/connectors", {"name": name, "config": seq_config(f"t-{unique}")})
        wait_until(lambda: call("GET", f"/connectors/{name}/topics")[1] == {name: {"topics": [f"t-{unique}"]}}, 30)
        assert call("PUT", f"/connectors/{name}/topics/reset")[:2] == \
            (403, {"error_code": 403, "message": "Topic tracking reset is disabled."})


def test_plugins_and_validation(rest: tuple[Client, ConnectRuntime]) -> None:
    call, _ = rest
    status, plugins, _ = call("GET", "/connector-plugins")
    assert status == 200 and {p["type"] for p in plugins} <= {"source", "sink"}
    assert any(p["class"].endswith("FileStreamSourceConnector") for p in plugins)
    all_plugins = call("GET", "/connector-plugins?connectorsOnly=false")[1]
    assert {"transformation", "predicate", "converter"} <= {p["type"] for p in all_plugins}
    status, keys, _ = call("GET", "/connector-plugins/FileStreamSource/config")
    assert status == 200 and "file" in {k["name"] for k in keys}
    assert call("GET", "/connector-plugins/Nope/config")[:2] == \
        (404, {"error_code": 404, "message": "Unknown plugin Nope."})
    assert call("GET", "/connector-plugins/FileStreamSource/config?version=[1.0,")[:2] == \
        (400, {"error_code": 400, "message": "Invalid version specification: [1.0,"})

    status, infos, _ = call("PUT", "/connector-plugins/FileStreamSource/config/validate",
                            {"connector.class": "FileStreamSource", "topic": "a,b"})
    assert status == 200 and infos["name"] == "FileStreamSource"  # connector.class as given, as Kafka answers
    assert infos["error_count"] >= 1
    assert call("PUT", "/connector-plugins/FileStreamSink/config/validate",
                {"connector.class": "FileStreamSourceConnector"})[:2] == (400, {
                    "error_code": 400,
                    "message": "Included connector type FileStreamSourceConnector does not match request type "
                               "FileStreamSink"})
    status, error, _ = call("PUT", "/connector-plugins/FileStreamSink/config/validate", {"topics": "x"})
    assert status == 400 and error["message"].endswith("contains no connector type")


def test_malformed_requests(rest: tuple[Client, ConnectRuntime], unique: str) -> None:
    call, rt = rest
    status, body, _ = call("POST", "/connectors", raw=b"{not json")
    assert status == 500 and body["error_code"] == 500 and "Cannot deserialize" in body["message"]
    status, body, _ = call("POST", "/connectors", {"name": f"n-{unique}"})
    assert status == 400 and "'config'" in body["message"]
    assert call("GET", "/nothing-here")[:2] == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    assert call("POST", "/connectors/x/status")[:2] == \
        (405, {"error_code": 405, "message": "HTTP 405 Method Not Allowed"})
    assert rt.connectors() == []


def test_cli_worker_serves_rest_until_sigterm(bootstrap: str, unique: str, tmp_path: Path) -> None:
    props = tmp_path / "worker.properties"
    props.write_text(f"# a Kafka Connect worker file\nbootstrap.servers={bootstrap}\ngroup.id=cli-{unique}\n"
                     "offset.flush.interval.ms=200\nnot.a.worker.key=1\n")
    proc = subprocess.Popen([sys.executable, "-m", "connect_magics.cli", "worker", "--config", str(props),
                             "--rest-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)
        assert line and "REST API at http://" in line[0], (line, proc.poll())
        url = line[0].split("REST API at ")[1].split()[0]
        call = Client(url)
        name = f"cli-{unique}"
        assert call("POST", "/connectors", {"name": name, "config": seq_config(f"t-{unique}")})[0] == 201
        running = wait_state(call, name, "RUNNING")
        assert running["connector"]["worker_id"].endswith(f":{url.rsplit(':', 1)[1]}")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        # its log lines as Kafka Connect's: [time] level message (logger)
        assert re.search(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] WARNING These configurations "
                         r"'\[not\.a\.worker\.key\]' were supplied but are not used yet\. \(connect_magics\.",
                         proc.stderr.read(), re.MULTILINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The connector's state outlives the worker: a new runtime on the same group finds it.
    with ConnectRuntime(bootstrap, f"cli-{unique}", FAST) as rt:
        assert rt.connectors() == [name]


def test_cli_worker_requires_a_cluster(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "connect_magics.cli", "worker"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and "--bootstrap-servers" in result.stderr
