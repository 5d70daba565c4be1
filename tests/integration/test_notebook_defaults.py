"""What a notebook user sees first: %connect start commits offsets every few seconds (a notebook default,
docs/deviations.md) while the library and `connect-magics worker` keep Kafka Connect's 60 s, and an empty
offsets table says why it is empty."""

from __future__ import annotations

import pytest
from helpers import wait_until
from IPython.core.interactiveshell import InteractiveShell

from connect_magics import ConnectRuntime
from connect_magics.notebook.magics import NOTEBOOK_WORKER_DEFAULTS


@pytest.fixture
def shell(bootstrap: str, unique: str):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    ip.run_line_magic("config", f"ConnectMagics.bootstrap_servers = {bootstrap!r}")
    ip.run_line_magic("config", f"ConnectMagics.group_id = 'defaults-{unique}'")
    ip.run_line_magic("config", "ConnectMagics.worker_config = {}")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")


def test_start_uses_the_notebook_defaults_unless_the_worker_config_sets_them(shell: InteractiveShell) -> None:
    assert NOTEBOOK_WORKER_DEFAULTS == {"offset.flush.interval.ms": "5000"}
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
