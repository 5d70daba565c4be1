"""The %connect magics driven through a real IPython InteractiveShell against the session broker."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd
import pytest
from helpers import wait_until
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets import TraitError

from connect_magics import ConnectRuntime
from connect_magics.api import ConfigDef, SourceConnector, SourceTask
from connect_magics.notebook.magics import NOTEBOOK_WORKER_DEFAULTS, ConnectMagicError, ConnectMagics
from connect_magics.notebook.widgets import StatusBoard

STRING = "org.apache.kafka.connect.storage.StringConverter"


@pytest.fixture
def shell(bootstrap: str, unique: str):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    ip.run_line_magic("config", f"ConnectMagics.bootstrap_servers = {bootstrap!r}")
    ip.run_line_magic("config", f"ConnectMagics.group_id = 'magics-{unique}'")
    ip.run_line_magic("config", "ConnectMagics.worker_config = {'offset.flush.interval.ms': '300'}")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")


def magics(ip: InteractiveShell) -> ConnectMagics:
    return ip._connect_magics


def state(ip: InteractiveShell, name: str) -> tuple[str, ...]:
    frame = ip.run_line_magic("connect", f"status {name}")
    return tuple(frame["state"])


def test_full_lifecycle(shell: InteractiveShell, unique: str, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    m = magics(shell)
    assert m.bootstrap_servers and m.group_id == f"magics-{unique}"
    shell.run_line_magic("connect", "start -o rt")
    assert shell.user_ns["rt"] is m.runtime
    assert f"group.id=magics-{unique}" in capsys.readouterr().out

    src = tmp_path / "in.txt"
    src.write_text("".join(f"line {i}\n" for i in range(20)))
    name, topic = f"src-{unique}", f"lines-{unique}"
    shell.run_cell_magic("connect", f"create {name}", f"""
# a FileStreamSource, in Java properties format
connector.class=FileStreamSource
file={src}
topic={topic}
value.converter={STRING}
topic.creation.default.partitions=1
topic.creation.default.replication.factor=1
""")
    assert f"Created source connector '{name}' with 1 task." in capsys.readouterr().out
    wait_until(lambda: state(shell, name) == ("RUNNING", "RUNNING"), 30, message="connector and task RUNNING")

    listing = shell.run_line_magic("connect", "list -o conns")
    assert isinstance(shell.user_ns["conns"], pd.DataFrame)
    assert listing.set_index("connector").loc[name, "state"] == "RUNNING"

    shell.run_line_magic("connect", f"status {name} -o st")
    st = shell.user_ns["st"]
    assert list(st["id"]) == ["connector", "0"] and list(st["state"]) == ["RUNNING", "RUNNING"]

    def flushed() -> bool:
        shell.run_line_magic("connect", f"offsets {name} -o off")
        off = shell.user_ns["off"]
        return len(off) == 1 and int(off.loc[0, "position"]) == src.stat().st_size
    wait_until(flushed, 30, message="the source offset at the end of the file")
    assert shell.user_ns["off"].loc[0, "filename"] == str(src)

    shell.run_line_magic("connect", f"pause {name}")
    wait_until(lambda: state(shell, name) == ("PAUSED", "PAUSED"), 30, message="PAUSED")
    shell.run_line_magic("connect", f"resume {name}")
    wait_until(lambda: state(shell, name) == ("RUNNING", "RUNNING"), 30, message="RUNNING again")

    capsys.readouterr()
    shell.run_line_magic("connect", f"restart {name} --include-tasks")
    assert f"Connector '{name}' restarting: 0:RESTARTING (connector RESTARTING)." in capsys.readouterr().out
    wait_until(lambda: state(shell, name) == ("RUNNING", "RUNNING"), 30, message="RUNNING after the restart")

    assert wait_until(lambda: shell.run_line_magic("connect", f"topics {name} -o topics") or
                      shell.user_ns["topics"], 30, message="tracked topics") == [topic]

    plugins = shell.run_line_magic("connect", "plugins")
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in set(plugins["class"])

    shell.run_line_magic("connect", f"metrics {name} -o mx")
    mx = shell.user_ns["mx"]
    assert list(mx[["connector", "task", "type"]].itertuples(index=False, name=None)) == [(name, 0, "source")]
    assert "source-record-write-rate" in mx.columns and mx.loc[0, "source-record-poll-total"] >= 0
    with pytest.raises(ConnectMagicError) as e:
        shell.run_line_magic("connect", "metrics no-such-connector")
    assert e.value.status == 404

    shell.run_line_magic("connect", f"delete {name}")
    assert name not in shell.run_line_magic("connect", "list")["connector"].tolist()
    with pytest.raises(ConnectMagicError) as e:
        shell.run_line_magic("connect", f"status {name}")
    assert e.value.status == 404 and "No status found for connector" in str(e.value)

    shell.run_line_magic("connect", "close")
    assert m.runtime is None


def test_json_body_validate_and_widget(shell: InteractiveShell, unique: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("connect", "start")
    errors = shell.run_cell_magic("connect", "validate -o errs",
                                  '{"connector.class": "FileStreamSource", "topic": "t", "tasks.max": "two"}')
    assert errors is shell.user_ns["errs"]
    assert "tasks.max" in set(errors["config"]) and errors["error"].str.len().min() > 0
    assert shell.run_cell_magic("connect", "validate ok", f"connector.class=FileStreamSource\ntopic=t\n"
                                f"file={tmp_path / 'x'}").empty
    assert "0 errors" in capsys.readouterr().out

    name = f"json-{unique}"
    (tmp_path / "in.txt").write_text("a\n")
    shell.run_cell_magic("connect", f"create {name} --initial-state paused", f'''{{"name": "{name}", "config": {{
        "connector.class": "FileStreamSource", "file": "{tmp_path / 'in.txt'}", "topic": "j-{unique}",
        "topic.creation.default.partitions": 1, "topic.creation.default.replication.factor": 1}}}}''')
    wait_until(lambda: state(shell, name)[0] == "PAUSED", 30, message="created PAUSED")

    board = shell.run_line_magic("connect", "board")
    assert isinstance(board, StatusBoard)
    assert f"  {name}: PAUSED (source)" in repr(board) and name in board.table.value
    assert "This runtime is the <b>leader</b> of group" in board.table.value  # alone in its group
    board.action_buttons[name]["resume"].click()
    assert "Resume requested" in board.message.value
    wait_until(lambda: (board.refresh(), board.statuses[name]["connector"]["state"])[1] == "RUNNING", 30,
               message="RUNNING after the Resume button")
    assert repr(board).startswith("StatusBoard: ")
    board.action_buttons[name]["stop"].click()
    wait_until(lambda: state(shell, name)[0] == "STOPPED", 30, message="STOPPED after the Stop button")
    shell.run_line_magic("connect", f"delete {name}")


def test_bad_input_raises_and_changes_nothing(shell: InteractiveShell, unique: str) -> None:
    with pytest.raises(UsageError, match="No Connect runtime in this kernel"):
        shell.run_line_magic("connect", "list")
    with pytest.raises(UsageError, match="--embedded and --bootstrap-servers exclude each other"):
        shell.run_line_magic("connect", "start --embedded --bootstrap-servers h:1")
    assert magics(shell).runtime is None and magics(shell).broker is None

    shell.run_line_magic("connect", "start")
    with pytest.raises(UsageError, match="already running"):
        shell.run_line_magic("connect", "start")
    name = f"bad-{unique}"
    with pytest.raises(UsageError, match="line 2: expected key=value"):
        shell.run_cell_magic("connect", f"create {name}", "connector.class=FileStreamSource\nnot a property")
    with pytest.raises(ConnectMagicError, match="Connector configuration is invalid|error") as e:
        shell.run_cell_magic("connect", f"create {name}", "connector.class=FileStreamSource\ntasks.max=x")
    assert e.value.status == 400
    with pytest.raises(UsageError, match="not a valid Python variable name"):
        shell.run_line_magic("connect", "list -o 1bad")
    assert name not in magics(shell).runtime.connectors()

    # through run_cell, as a notebook runs it: the cell ends as an error
    result = shell.run_cell(f"%connect pause {name}")
    assert not result.success and isinstance(result.error_in_exec, ConnectMagicError)
    result = shell.run_cell("%connect frobnicate")
    assert not result.success and isinstance(result.error_in_exec, UsageError)


def test_start_needs_bootstrap_servers(shell: InteractiveShell) -> None:
    shell.run_line_magic("config", "ConnectMagics.bootstrap_servers = ''")
    with pytest.raises(UsageError, match="bootstrap_servers is not set"):
        shell.run_line_magic("connect", "start")
    assert magics(shell).runtime is None


def test_offsets_round_trip_explain_and_rest(shell: InteractiveShell, unique: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import urllib.request

    shell.run_line_magic("connect", "start")
    name, topic = f"seq-{unique}", f"seq-{unique}"
    shell.run_cell_magic("connect", f"create {name}", f"""
connector.class=SequenceSource
topic={topic}
records=50
topic.creation.default.partitions=2
topic.creation.default.replication.factor=1
""")
    def all_committed() -> bool:
        frame = shell.run_line_magic("connect", f"offsets {name} -o df")
        return not frame.empty and frame.loc[0, "seq"] == 49
    wait_until(all_committed, 30, message="all 50 committed")
    assert list(shell.user_ns["df"].columns) == ["task", "seq"]

    with pytest.raises(ConnectMagicError, match="STOPPED state") as e:  # refused while running; nothing changes
        shell.run_line_magic("connect", f"alter-offsets {name} df")
    assert e.value.status == 400
    with pytest.raises(UsageError, match="no variable named 'nothing'"):
        shell.run_line_magic("connect", f"alter-offsets {name} nothing")
    shell.run_line_magic("connect", f"stop {name}")
    wait_until(lambda: tuple(shell.run_line_magic("connect", f"status {name}")["state"]) == ("STOPPED",), 30)
    shell.user_ns["df"].loc[0, "seq"] = 9
    capsys.readouterr()
    shell.run_line_magic("connect", f"alter-offsets {name} df")
    assert "altered successfully" in capsys.readouterr().out
    assert shell.run_line_magic("connect", f"offsets {name}").loc[0, "seq"] == 9
    shell.run_line_magic("connect", f"reset-offsets {name}")
    assert "reset successfully" in capsys.readouterr().out
    assert shell.run_line_magic("connect", f"offsets {name}").empty

    explained = shell.run_line_magic("connect", f"explain {name} new-{unique} {topic} -o ex")
    assert list(explained["topic"]) == [f"new-{unique}", topic]
    assert list(explained["action"]) == ["create", "exists"]
    assert explained.loc[0, "group"] == "default" and explained.loc[0, "partitions"] == 2
    assert shell.user_ns["ex"] is explained

    shell.run_line_magic("connect", "rest --port 0")
    url = capsys.readouterr().out.split("REST API at ")[1].split()[0]
    with urllib.request.urlopen(f"{url}/connectors/{name}/status", timeout=30) as resp:
        assert json.loads(resp.read())["connector"]["state"] == "STOPPED"
    with pytest.raises(UsageError, match="already running"):
        shell.run_line_magic("connect", "rest --port 0")
    shell.run_line_magic("connect", "rest --stop")
    assert magics(shell).rest_server is None


def test_peek_shows_a_topics_first_records_decoded(shell: InteractiveShell, unique: str, bootstrap: str,
                                                  spark) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"peek-{unique}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        producer.produce(topic, f'{{"n": {i}}}'.encode(), f"k{i}".encode())
    assert producer.flush(30) == 0
    shell.run_line_magic("connect", "start")
    shown = shell.run_line_magic("connect", f"peek {topic} -n 3 -o df --key-converter StringConverter "
                                            "--converter JsonConverter --property schemas.enable=false")
    assert list(shown["key"]) == ["k0", "k1", "k2"] and [v["n"] for v in shown["value"]] == [0, 1, 2]
    df = shell.user_ns["df"]  # the Spark DataFrame (spark: the session active in this thread)
    assert df.schema["value"].dataType.simpleString() == "struct<n:bigint>" and df.count() == 3
    with pytest.raises(ConnectMagicError, match=f"Topic 'no-{topic}' does not exist") as e:
        shell.run_line_magic("connect", f"peek no-{topic}")
    assert e.value.status == 404
    with pytest.raises(ConnectMagicError, match="Invalid value Nope for key.converter"):
        shell.run_line_magic("connect", f"peek {topic} --converter Nope")
    with pytest.raises(UsageError, match="argument -n/--records: must be an integer >= 0"):
        shell.run_line_magic("connect", f"peek {topic} -n -1")


# -- what a notebook user sees first (issue 13, point 6) ------------------------------------------------


def test_start_uses_the_notebook_defaults_unless_the_worker_config_sets_them(shell: InteractiveShell) -> None:
    """%connect start commits offsets every few seconds (docs/deviations.md); the library keeps Kafka's 60 s."""
    assert NOTEBOOK_WORKER_DEFAULTS == {"offset.flush.interval.ms": "5000"}
    shell.run_line_magic("config", "ConnectMagics.worker_config = {}")
    shell.run_line_magic("connect", "start -o rt")
    assert shell.user_ns["rt"].worker_config.int("offset.flush.interval.ms") == 5000
    shell.run_line_magic("connect", "close")
    shell.run_line_magic("config", "ConnectMagics.worker_config = {'offset.flush.interval.ms': '700'}")
    shell.run_line_magic("connect", "start -o rt")
    assert shell.user_ns["rt"].worker_config.int("offset.flush.interval.ms") == 700
    shell.run_line_magic("connect", "close")
    shell.run_line_magic("config", "ConnectMagics.worker_config = {}")
    shell.run_line_magic("config", "ConnectMagics.notebook_defaults = {}")
    shell.run_line_magic("connect", "start -o rt")
    assert shell.user_ns["rt"].worker_config.int("offset.flush.interval.ms") == 60000


def test_start_takes_a_worker_properties_file(shell: InteractiveShell, bootstrap: str, unique: str,
                                             tmp_path: Path) -> None:
    """%connect start --config: a Kafka Connect worker.properties as written, placeholders of its config providers
    resolved; a missing file is a UsageError naming it."""
    (tmp_path / "secrets.properties").write_text("interval=1234\n")
    worker = tmp_path / "worker.properties"
    worker.write_text(f"bootstrap.servers={bootstrap}\ngroup.id=file-{unique}\n"
                      "config.providers=file\n"
                      "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
                      f"offset.flush.interval.ms=${{file:{tmp_path}/secrets.properties:interval}}\n")
    shell.run_line_magic("config", "ConnectMagics.bootstrap_servers = ''")
    shell.run_line_magic("connect", f"start --config {worker} -o rt")
    rt = shell.user_ns["rt"]
    assert (rt.worker_config["group.id"], rt.worker_config["bootstrap.servers"]) == (f"file-{unique}", bootstrap)
    assert rt.worker_config.int("offset.flush.interval.ms") == 1234
    shell.run_line_magic("connect", "close")
    with pytest.raises(UsageError, match="--config /no/such/worker.properties"):
        shell.run_line_magic("connect", "start --config /no/such/worker.properties")
    assert magics(shell).runtime is None


def test_empty_offsets_say_when_the_next_commit_is_due(shell: InteractiveShell, unique: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("config", "ConnectMagics.worker_config = {'offset.flush.interval.ms': '600000'}")
    shell.run_line_magic("connect", "start -o rt")
    rt = shell.user_ns["rt"]
    name = f"first-{unique}"
    shell.run_cell_magic("connect", f"create {name}", f"connector.class=SequenceSource\ntopic={name}\nrecords=3\n"
                         "topic.creation.default.partitions=1\ntopic.creation.default.replication.factor=1")
    wait_until(lambda: rt.connector_status(name)["tasks"], 30, message="the task started")
    capsys.readouterr()
    assert shell.run_line_magic("connect", f"offsets {name}").empty
    out = capsys.readouterr().out
    assert f"No offsets committed yet for {name}; the next commit is due in " in out
    due = int(out.split("due in ")[1].split(" s")[0])
    assert 0 < due <= 600 and "(offset.flush.interval.ms=600000)" in out


def test_the_library_keeps_kafka_connects_default(bootstrap: str, unique: str) -> None:
    with ConnectRuntime(bootstrap, f"lib-{unique}") as rt:
        assert rt.worker_config.int("offset.flush.interval.ms") == 60000


def test_the_executor_setting_runs_tasks_in_processes(shell: InteractiveShell, unique: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("config", "ConnectMagics.executor = 'processes'")
    try:
        shell.run_line_magic("connect", "start -o rt")
        assert "tasks on task processes" in capsys.readouterr().out
        rt = shell.user_ns["rt"]
        name = f"proc-{unique}"
        shell.run_cell_magic("connect", f"create {name}", f"connector.class=SequenceSource\ntopic={name}\n"
                             "records=3\ntopic.creation.default.partitions=1\n"
                             "topic.creation.default.replication.factor=1")
        pid = wait_until(lambda: (rt.herder.task_handle(name, 0).published() or {}).get("pid"), 60,
                         message="the task's process")
        assert pid != os.getpid()
        with pytest.raises(TraitError, match=r"The 'executor' trait of a ConnectMagics instance expected any of "
                                             r"\['threads', 'processes', 'spark'\], not the str 'gpu'."):
            magics(shell).executor = "gpu"
        assert magics(shell).executor == "processes"
    finally:  # the shell is shared by later tests: its config must not keep this setting
        del shell.config.ConnectMagics["executor"]


class _FailingTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.polls = 0

    def poll(self) -> list | None:
        self.polls += 1
        if self.polls > 3:
            raise RuntimeError("background failure on purpose")
        return None

    def stop(self) -> None:
        pass

    def version(self) -> str:
        return "1.0"


class FailingSource(SourceConnector):
    """A source whose task fails a moment after it started, in the background."""

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type:
        return _FailingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return "1.0"


def test_a_background_failure_prints_nothing_into_the_running_cell(
        shell: InteractiveShell, unique: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In a kernel the root logger has no handler, so Python's last resort prints warnings to sys.stderr, which
    Jupyter shows in whichever cell runs: the extension sends its loggers to a file instead."""
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # as in a kernel (pytest's handlers removed)
    shell.run_line_magic("connect", "start -o rt")
    assert "%connect log shows the last lines" in capsys.readouterr().out
    rt = shell.user_ns["rt"]
    rt.plugins.register(FailingSource)
    name = f"failing-{unique}"
    shell.run_cell_magic("connect", f"create {name}", "connector.class=FailingSource\n")
    capsys.readouterr()
    wait_until(lambda: rt.connector_status(name)["tasks"][0]["state"] == "FAILED", 30, message="the task FAILED")
    shell.run_line_magic("connect", "list")
    out, err = capsys.readouterr()
    assert "background failure on purpose" not in out + err and "Traceback" not in out + err
    shell.run_line_magic("connect", "log -n 400")
    assert "background failure on purpose" in capsys.readouterr().out  # the log file has it


def test_a_bad_output_variable_is_refused_before_the_command_runs(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="-o my-rt: not a valid Python variable name"):
        shell.run_line_magic("connect", "start -o my-rt")
    assert magics(shell).runtime is None  # nothing was started
