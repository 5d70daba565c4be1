"""Authentication of the REST API (required off loopback) and passwords masked in every answer."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import RestClient, wait_until

from connect_magics import ConnectRuntime
from connect_magics.rest import RestAuth, RestAuthError, RestServer


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def runtime(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    with ConnectRuntime(bootstrap, f"auth-{unique}", {"offset.flush.interval.ms": "200"}) as rt:
        yield rt


def test_a_non_loopback_listener_requires_authentication(runtime: ConnectRuntime) -> None:
    with pytest.raises(RestAuthError, match=r"Listening on 0\.0\.0\.0 \(not a loopback address\) requires "
                                            "authentication"):
        RestServer(runtime, "0.0.0.0", 0)


def test_unauthenticated_requests_are_refused_with_401(runtime: ConnectRuntime, tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("# user=password, as Kafka Connect's BasicAuthSecurityRestExtension file\nadmin=s3cret\n"
                     "viewer: other\n")
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    auth = RestAuth.from_files(users, token)
    assert auth.users == {"admin": "s3cret", "viewer": "other"} and auth.token == "t0ken"
    with RestServer(runtime, "0.0.0.0", 0, auth) as server:
        url = f"http://127.0.0.1:{server.port}"
        for headers in ({}, basic("admin", "wrong"), basic("nobody", "s3cret"), {"Authorization": "Bearer nope"},
                        {"Authorization": "Basic !!!"}):
            status, body, answer_headers = RestClient(url, headers)("POST", "/connectors", {
                "name": "x", "config": {"connector.class": "FileStreamSource", "topic": "t", "file": "/tmp/x"}})
            assert (status, body["error_code"]) == (401, 401), headers
            assert body["message"].startswith("Authentication required")
            assert {k.lower(): v for k, v in answer_headers.items()}["www-authenticate"] == \
                'Basic realm="connect-magics"'
        assert runtime.connectors() == []  # the refused create changed nothing
        assert RestClient(url, basic("admin", "s3cret"))("GET", "/connectors")[:2] == (200, [])
        assert RestClient(url, basic("viewer", "other"))("GET", "/connectors")[:2] == (200, [])
        assert RestClient(url, {"Authorization": "Bearer t0ken"})("GET", "/connectors")[:2] == (200, [])


def test_unusable_credentials_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RestAuthError, match=f"REST credentials file {tmp_path / 'missing'}: No such file"):
        RestAuth.from_files(tmp_path / "missing")
    (tmp_path / "empty").write_text("# nobody\n")
    with pytest.raises(RestAuthError, match="has no user=password line"):
        RestAuth.from_files(tmp_path / "empty")
    (tmp_path / "blank").write_text("\n")
    with pytest.raises(RestAuthError, match="is empty"):
        RestAuth.from_files(token_file=tmp_path / "blank")
    with pytest.raises(RestAuthError, match="at least one user or a token"):
        RestAuth()


def test_cli_worker_refuses_an_open_listener(bootstrap: str) -> None:
    result = subprocess.run([sys.executable, "-m", "connect_magics.cli", "worker", "--bootstrap-servers", bootstrap,
                             "--rest-host", "0.0.0.0", "--rest-port", "0"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "error: Listening on 0.0.0.0 (not a loopback address) requires authentication" in result.stderr


def test_passwords_are_masked_in_every_answer(runtime: ConnectRuntime, unique: str, tmp_path: Path) -> None:
    name = f"secret-{unique}"
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": f"t-{unique}",
              "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1",
              "producer.override.ssl.key.password": "s3cret"}
    with RestServer(runtime, port=0) as server:
        call = RestClient(server.url)
        answers = [call("POST", "/connectors", {"name": name, "config": config})[:2]]
        answers += [call(method, path, body)[:2] for method, path, body in [
            ("GET", f"/connectors/{name}", None), ("GET", f"/connectors/{name}/config", None),
            ("GET", f"/connectors/{name}/tasks", None), ("GET", "/connectors?expand=info&expand=status", None),
            ("GET", f"/connectors/{name}/status", None),
            ("PATCH", f"/connectors/{name}/config", {"batch.size": "10"}),
            ("PUT", f"/connectors/{name}/config", {**config, "name": name}),
            ("PUT", "/connector-plugins/FileStreamSource/config/validate", {**config, "name": name})]]
        assert all(status in (200, 201) for status, _ in answers), answers
        assert not any("s3cret" in json.dumps(body) for _, body in answers)
        assert answers[2][1]["producer.override.ssl.key.password"] == "[hidden]"
        assert answers[3][1][0]["config"]["producer.override.ssl.key.password"] == "[hidden]"
    assert runtime.connector_config(name)["producer.override.ssl.key.password"] == "s3cret"  # kept as given


def test_passwords_are_masked_in_traces(runtime: ConnectRuntime, unique: str) -> None:
    """A failure message that quotes a password (here the file name, to have one) shows it hidden."""
    name, secret = f"trace-{unique}", f"s3cret-{unique}"
    config = {"connector.class": "FileStreamSink", "topics": f"t-{unique}", "file": f"/nonexistent/{secret}",
              "consumer.override.ssl.key.password": secret}
    with RestServer(runtime, port=0) as server:
        call = RestClient(server.url)
        assert call("POST", "/connectors", {"name": name, "config": config})[0] == 201

        def failed() -> tuple[int, dict] | None:
            answer = call("GET", f"/connectors/{name}/status")[:2]
            return answer if [t["state"] for t in answer[1]["tasks"]] == ["FAILED"] else None

        status = wait_until(failed, 30, message="the task failed")
        answers = [status, call("GET", f"/connectors/{name}/tasks/0/status")[:2],
                   call("GET", "/connectors?expand=status")[:2],
                   call("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")[:2]]
        assert "/nonexistent/[hidden]" in status[1]["tasks"][0]["trace"]
        assert not any(secret in json.dumps(body) for _, body in answers)
