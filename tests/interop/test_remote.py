"""``%connect start --remote URL``: the magics, the status board and the offsets path managing a real Apache
Kafka Connect worker through :class:`~connect_magics.remote.RemoteRuntime`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import wait_until
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from raw_topics import read_records

from connect_magics.errors import ConnectRestError
from connect_magics.local.broker import free_port
from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.notebook.widgets import StatusBoard
from connect_magics.remote import RemoteRuntime, RemoteUnsupportedError

STRING = "org.apache.kafka.connect.storage.StringConverter"


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")


def values(bootstrap: str, topic: str) -> list[str]:
    return [v.decode() for _, v in read_records(bootstrap, topic)]


def test_magics_manage_kafka_connect(shell: InteractiveShell, java_connect: JavaConnectWorker, bootstrap: str,
                                     tmp_path: Path, unique: str, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("connect", f"start --remote {java_connect.url} -o rt")
    rt = shell.user_ns["rt"]
    assert isinstance(rt, RemoteRuntime)
    assert f"Managing the Kafka Connect cluster at {java_connect.url}" in capsys.readouterr().out
    lines = tmp_path / "in.txt"
    lines.write_text("".join(f"{n}\n" for n in range(1, 11)))
    name, topic = f"remote-{unique}", f"remote-{unique}"
    shell.run_cell_magic("connect", f"create {name}", json.dumps({  # a JSON body this time
        "connector.class": "FileStreamSource", "file": str(lines), "topic": topic, "value.converter": STRING,
        "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}))
    wait_until(lambda: tuple(shell.run_line_magic("connect", f"status {name}")["state"]) == ("RUNNING", "RUNNING"),
               60, message="RUNNING on Kafka Connect")
    listing = shell.run_line_magic("connect", "list")
    assert listing.set_index("connector").loc[name, "state"] == "RUNNING"
    assert f"{name}: RUNNING (source) tasks 0:RUNNING" in repr(StatusBoard(rt))
    wait_until(lambda: values(bootstrap, topic) == [str(n) for n in range(1, 11)], 60, message="lines 1-10")

    shell.run_line_magic("connect", f"stop {name}")
    wait_until(lambda: tuple(shell.run_line_magic("connect", f"status {name}")["state"]) == ("STOPPED",), 60,
               message="STOPPED")
    wait_until(lambda: rt.get_offsets(name)["offsets"], 30, message="committed offsets")
    frame = shell.run_line_magic("connect", f"offsets {name} -o offsets")
    assert list(frame["filename"]) == [str(lines)] and list(frame["position"]) == [len("".join(
        f"{n}\n" for n in range(1, 11)))]
    frame.loc[0, "position"] = len("1\n2\n3\n")  # replay from line 4
    shell.user_ns["offsets"] = frame
    shell.run_line_magic("connect", f"alter-offsets {name} offsets")
    assert rt.get_offsets(name) == {"offsets": [{"partition": {"filename": str(lines)},
                                                 "offset": {"position": 6}}]}
    shell.run_line_magic("connect", f"resume {name}")
    expected = [str(n) for n in range(1, 11)] + [str(n) for n in range(4, 11)]
    wait_until(lambda: values(bootstrap, topic) == expected, 60, message="lines 4-10 again after the resume")

    with pytest.raises(RemoteUnsupportedError, match="does not expose"):
        shell.run_line_magic("connect", f"explain {name}")
    shell.run_line_magic("connect", f"delete {name}")
    assert name not in rt.connectors()
    shell.run_line_magic("connect", "close")


def test_remote_errors(shell: InteractiveShell, java_connect: JavaConnectWorker) -> None:
    with pytest.raises(UsageError, match="expected the REST API's URL"):
        shell.run_line_magic("connect", "start --remote localhost:8083")
    with pytest.raises(UsageError, match="--remote excludes"):
        shell.run_line_magic("connect", f"start --remote {java_connect.url} --embedded")
    with pytest.raises(ConnectRestError, match="Cannot reach the Kafka Connect REST API"):
        shell.run_line_magic("connect", f"start --remote http://127.0.0.1:{free_port()}")
    assert shell._connect_magics.runtime is None
    rt = RemoteRuntime(java_connect.url)
    with pytest.raises(ConnectRestError) as e:
        rt.connector_status("nope")
    assert (e.value.status, e.value.message) == (404, "No status found for connector nope")
    with pytest.raises(RemoteUnsupportedError, match="JMX"):
        rt.metrics()


#: Each magic against Kafka Connect's REST API (with its Kafka's bootstrap servers): "works", or the one line
#: (a fragment of it) that says why it cannot.
REMOTE_MAGICS: dict[str, str | None] = {
    "list": None, "status {src}": None, "offsets {src}": None, "offsets {snk}": None, "offsets {snk} --edit": None,
    "topics {src}": None, "plugins": None, "board": None, "dashboard": None, "versions {src}": None,
    "topic-explorer {src} {topic}": None, "peek {topic} --converter StringConverter": None, "log": None,
    "explain {src}": "does not expose", "metrics": "publishes them over JMX",
    "rest --port 0": "serves its own REST API", "schemas": "needs a runtime in this kernel",
    "preview {snk}": "does not reach", "rewind {snk} --by 1h": "does not reach the broker",
}


#: The same magics on a runtime in the kernel: all work but ``schemas`` without a registry.
LOCAL_MAGICS = {**dict.fromkeys(REMOTE_MAGICS), "schemas": "No Schema Registry", "rest --port 0": None,
                "explain {src}": None, "metrics": None, "preview {snk}": None, "rewind {snk} --by 1h": None}


@pytest.mark.parametrize("cluster", ["java_connect", "java_connect_oldest", "magics_worker", "local"])
def test_every_magic_works_against_kafka_connect_or_says_why(shell: InteractiveShell, cluster: str, bootstrap: str,
                                                            tmp_path: Path, unique: str,
                                                            request: pytest.FixtureRequest) -> None:
    """Each magic against Apache Kafka Connect 4.1's REST API and the oldest line's (3.9), ``connect-magics
    worker``'s, and a runtime in the kernel."""
    if cluster == "local":
        shell.run_line_magic("connect", f"start --bootstrap-servers {bootstrap} --group-id all-{unique} -o rt")
        expected = LOCAL_MAGICS
    else:
        url = request.getfixturevalue(cluster).url
        shell.run_line_magic("connect", f"start --remote {url} --bootstrap-servers {bootstrap} -o rt")
        expected = REMOTE_MAGICS
    lines = tmp_path / "in.txt"
    lines.write_text("a\nb\n")
    src, snk, topic = f"all-src-{unique}", f"all-snk-{unique}", f"all-{unique}"
    shell.run_cell_magic("connect", f"create {src}", json.dumps({
        "connector.class": "FileStreamSource", "file": str(lines), "topic": topic, "value.converter": STRING,
        "topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1"}))
    shell.run_cell_magic("connect", f"create {snk}", json.dumps({
        "connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": topic,
        "value.converter": STRING}))
    wait_until(lambda: (tmp_path / "out.txt").exists() and (tmp_path / "out.txt").read_text() == "a\nb\n", 60,
               message="both lines through Kafka Connect")
    outcomes = {}
    for command, why in expected.items():
        line = command.format(src=src, snk=snk, topic=topic)
        try:
            result = shell.run_line_magic("connect", line)
            outcomes[command] = "works"
            if command.startswith("peek"):
                assert list(result["value"]) == ["a", "b"]
            if command.startswith("versions"):
                assert result.versions and result.error is None, repr(result)
        except (UsageError, ConnectRestError) as e:
            outcomes[command] = str(e)
            assert why is not None and why in str(e) and "\n" not in str(e).strip(), (command, str(e))
        assert (why is None) == (outcomes[command] == "works"), (command, outcomes[command])
        if command == "dashboard":  # states, lag and (where served) rates: no refresh fails
            result.refresh()
            assert "Refresh failed" not in result.message.value and src in repr(result)
            result.close()
    if cluster == "local":
        shell.run_line_magic("connect", "rest --stop")
    shell.run_line_magic("connect", f"delete {src}")
    shell.run_line_magic("connect", f"delete {snk}")


def test_magics_that_need_kafka_say_so_without_bootstrap_servers(shell: InteractiveShell,
                                                                 java_connect: JavaConnectWorker) -> None:
    shell.run_line_magic("connect", f"start --remote {java_connect.url} -o rt")
    with pytest.raises(RemoteUnsupportedError, match="--bootstrap-servers HOST:PORT"):
        shell.run_line_magic("connect", "peek some-topic")
    shell.run_line_magic("connect", "close")
    with pytest.raises(UsageError, match="--remote excludes --embedded"):
        shell.run_line_magic("connect", f"start --remote {java_connect.url} --group-id g")
