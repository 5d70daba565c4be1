"""Bad input through a runtime on the real broker: worker configs, connector configs, updates, KIP-875 offsets
requests, other Python API calls and the REST API. Every case must fail with its expected status and message,
and leave Kafka as it was (no topic, record or consumer group written)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bad_input.cases import SINK, SRC, Case, ids, of
from bad_input.kafka_state import SMALL_TOPICS, KafkaState, wait_for_stable_group
from helpers import RestClient, wait_until
from raw_topics import create_topics

from connect_magics import ConnectRuntime
from connect_magics.cli import main
from connect_magics.errors import ConnectRestError
from connect_magics.rest.server import RestServer


def _fill(value: Any, **names: str) -> Any:
    """``value`` with ``{file}``, ``{b}`` and ``{g}`` placeholders replaced, in strings, dicts and lists."""
    if isinstance(value, str):
        for name, text in names.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, **names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_fill(v, **names) for v in value)
    return value


class Setup:
    """The module's runtime, its REST API, and connectors in every state the cases need."""

    def __init__(self, rt: ConnectRuntime, file: str, bootstrap: str) -> None:
        self.rt, self.file, self.bootstrap = rt, file, bootstrap
        self.state = KafkaState(rt)
        self.extra_runtimes: dict[str, ConnectRuntime] = {}

    def fill(self, value: Any) -> Any:
        return _fill(value, file=self.file, b=self.bootstrap)

    def runtime_for(self, case: Case) -> ConnectRuntime:
        """The module's runtime, or one whose worker has the case's client override policy."""
        policy = case.extra.get("policy")
        if policy is None:
            return self.rt
        if policy not in self.extra_runtimes:
            self.extra_runtimes[policy] = ConnectRuntime(
                self.bootstrap, f"{self.rt.worker_config['group.id']}-{policy.lower()}",
                {**SMALL_TOPICS, "connector.client.config.override.policy": policy})
        return self.extra_runtimes[policy]


@pytest.fixture(scope="module")
def setup(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    import uuid

    group = f"bad-input-{uuid.uuid4().hex[:8]}"
    file = str(Path(tmp_path_factory.mktemp("bad-input")) / "empty.txt")
    Path(file).write_text("")
    create_topics(bootstrap, "bi-in")
    with ConnectRuntime(bootstrap, group, {**SMALL_TOPICS, "offset.flush.interval.ms": "100"}) as rt:
        s = Setup(rt, file, bootstrap)
        for name, config, state in [("src-running", SRC, None), ("src-paused", SRC, "PAUSED"),
                                    ("src-stopped", SRC, "STOPPED"), ("sink-running", SINK, None),
                                    ("sink-stopped", SINK, "STOPPED")]:
            rt.create_connector(name, s.fill(config), state)
        expected = {"src-running": "RUNNING", "src-paused": "PAUSED", "src-stopped": "STOPPED",
                    "sink-running": "RUNNING", "sink-stopped": "STOPPED"}
        wait_until(lambda: all(rt.connector_status(n)["connector"]["state"] == st for n, st in expected.items())
                   and len(rt.connector_status("src-running")["tasks"]) == 1
                   and rt.connector_status("sink-running")["tasks"][0]["state"] == "RUNNING",
                   message="the module's connectors in their states")
        wait_for_stable_group(rt, "connect-sink-running")
        server = RestServer(rt, port=0).start()
        s.rest = RestClient(server.url)
        try:
            yield s
        finally:
            server.stop()
            for extra in s.extra_runtimes.values():
                extra.close()
            s.state.close()


def _assert_error(error: BaseException, case: Case) -> None:
    message = error.message if isinstance(error, ConnectRestError) else str(error)
    missing = [f for f in case.expect if f not in message]
    assert not missing, f"{case.id}: {missing} not in {message!r}"
    if case.status is not None and isinstance(error, ConnectRestError):
        assert error.status == case.status, f"{case.id}: status {error.status}, not {case.status}: {message}"


def _unchanged(setup: Setup, call) -> None:
    """Run ``call`` and check that Kafka is as it was."""
    before = setup.state.snapshot()
    call()
    after = setup.state.snapshot()
    assert after == before


@pytest.mark.parametrize("case", of("worker"), ids=ids(of("worker")))
def test_worker_config(case: Case, setup: Setup) -> None:
    bootstrap, group, props = case.input
    group = group if group is not None else f"bi-worker-{abs(hash(case.id)) % 10**8}"
    errors: list[BaseException] = []

    def start() -> None:
        with pytest.raises(ValueError) as raised:
            ConnectRuntime(setup.fill(bootstrap), group, _fill(props, g=group),
                           executor=case.extra.get("executor", "threads")).close()
        errors.append(raised.value)

    _unchanged(setup, start)
    _assert_error(errors[0], case)


@pytest.mark.parametrize("case", of("connector"), ids=ids(of("connector")))
def test_connector_config(case: Case, setup: Setup) -> None:
    rt = setup.runtime_for(case)
    name = f"bi-c-{abs(hash(case.id)) % 10**8}"
    config = setup.fill(case.input)
    errors: list[BaseException] = []

    def create() -> None:
        with pytest.raises(ConnectRestError) as raised:
            rt.create_connector(name, config)
        errors.append(raised.value)

    _unchanged(setup, create)
    _assert_error(errors[0], case)
    assert name not in rt.connectors()
    if case.key is not None:  # validation puts the reason on the key that has it
        infos = rt.validate_connector_config({**config, "name": name})
        on_key = [e for c in infos["configs"] if c["value"]["name"] == case.key for e in c["value"]["errors"]]
        assert any(case.expect[-1] in e for e in on_key), f"{case.id}: {case.key} has errors {on_key}"


@pytest.mark.parametrize("case", of("update"), ids=ids(of("update")))
def test_update(case: Case, setup: Setup) -> None:
    method, changes = case.input
    rt = setup.rt
    before = rt.connector_config("src-stopped")
    errors: list[BaseException] = []

    def update() -> None:
        with pytest.raises(ConnectRestError) as raised:
            if method == "put":
                rt.update_connector("src-stopped", {**setup.fill(SRC), **changes})
            elif method == "put-raw":
                rt.update_connector("src-stopped", changes)
            elif method == "patch":
                rt.patch_connector_config("src-stopped", changes)
            else:
                rt.patch_connector_config("bi-nope", changes)
        errors.append(raised.value)

    _unchanged(setup, update)
    _assert_error(errors[0], case)
    assert rt.connector_config("src-stopped") == before
    assert rt.connector_status("src-stopped")["connector"]["state"] == "STOPPED"


@pytest.mark.parametrize("case", of("offsets"), ids=ids(of("offsets")))
def test_offsets_request(case: Case, setup: Setup) -> None:
    target, body = case.input
    rt = setup.rt
    errors: list[BaseException] = []

    def modify() -> None:
        with pytest.raises(ConnectRestError) as raised:
            if body == "reset":
                rt.reset_offsets(target)
            else:
                rt.alter_offsets(target, body)
        errors.append(raised.value)

    _unchanged(setup, modify)
    _assert_error(errors[0], case)


@pytest.mark.parametrize("case", of("api"), ids=ids(of("api")))
def test_api_call(case: Case, setup: Setup) -> None:
    method, *args = setup.fill(case.input)
    errors: list[BaseException] = []

    def call() -> None:
        with pytest.raises(ConnectRestError) as raised:
            getattr(setup.rt, method)(*args)
        errors.append(raised.value)

    _unchanged(setup, call)
    _assert_error(errors[0], case)


@pytest.mark.parametrize("case", of("rest"), ids=ids(of("rest")))
def test_rest_request(case: Case, setup: Setup) -> None:
    method, path, body = case.input
    answers: list[tuple[int, Any]] = []

    def request() -> None:
        raw = body if isinstance(body, bytes) else None if body is None else json.dumps(setup.fill(body)).encode()
        status, answer, _ = setup.rest(method, path, raw=raw) if raw is not None else setup.rest(method, path)
        answers.append((status, answer))

    _unchanged(setup, request)
    status, answer = answers[0]
    assert status == case.status, f"{case.id}: {status} {answer}"
    assert answer["error_code"] == status
    missing = [f for f in case.expect if f not in answer["message"]]
    assert not missing, f"{case.id}: {missing} not in {answer['message']!r}"


@pytest.mark.parametrize("case", of("cli"), ids=ids(of("cli")))
def test_command_line(case: Case, setup: Setup, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, files = case.input
    names = {"dir": str(tmp_path), "b": setup.bootstrap}
    for name, text in files.items():
        (tmp_path / name).write_text(_fill(text, **names))
    codes: list[int] = []

    def run() -> None:
        try:
            codes.append(main(_fill(argv, **names)))
        except SystemExit as e:  # argparse's usage errors
            codes.append(e.code)

    _unchanged(setup, run)
    assert codes == [2]
    err = capsys.readouterr().err
    missing = [f for f in _fill(case.expect, **names) if f not in err]
    assert not missing, f"{case.id}: {missing} not in {err!r}"
