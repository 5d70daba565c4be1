"""Bulk operations against the real broker: creating many connectors in one call (all or none, their config
records in one transaction), stopping, pausing, resuming, restarting and deleting them by name or pattern, from a
follower of a group too, and the magics that drive them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.api.errors import ConnectException
from connect_magics.errors import NotFoundError

FAST = {"offset.flush.interval.ms": "200"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(group: str | None = None, **worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, group or f"bulk-{unique}", {**FAST, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


@pytest.fixture
def empty_file(tmp_path: Path) -> str:
    path = tmp_path / "empty.txt"
    path.write_text("")
    return str(path)


def file_source(path: str, topic: str = "bulk-lines") -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": path, "topic": topic}


def config_records(bootstrap: str, topic: str) -> list[tuple[int, str, bytes | None]]:
    """``(offset, key, value)`` of every committed record of the (one-partition) config topic; the offsets show the
    transaction markers between them."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bulk-raw", "enable.auto.commit": False,
                  "isolation.level": "read_committed"})
    try:
        tp = TopicPartition(topic, 0, 0)
        end = c.get_watermark_offsets(tp, timeout=10)[1]
        c.assign([tp])
        out: list[tuple[int, str, bytes | None]] = []

        def done() -> bool:
            for m in c.consume(1000, timeout=0.2):
                if m.error() is None:
                    out.append((m.offset(), m.key().decode(), m.value()))
            return c.position([tp])[0].offset >= end

        wait_until(done, 30, message=f"the records of {topic}")
        return out
    finally:
        c.close()


def all_running(rt: ConnectRuntime, names: list[str]) -> bool:
    for name in names:
        status = rt.connector_status(name)
        if status["connector"]["state"] != "RUNNING" or [t["state"] for t in status["tasks"]] != ["RUNNING"]:
            return False
    return True


def state_of(rt: ConnectRuntime, name: str) -> str:
    return rt.connector_status(name)["connector"]["state"]


def test_a_hundred_connectors_in_bulk_are_all_running_their_configs_in_one_transaction(
        runtime_factory, bootstrap: str, unique: str, empty_file: str) -> None:
    rt = ConnectRuntime(bootstrap, f"bulk-{unique}", FAST)
    try:
        names = [f"lines-{i:03}" for i in range(100)]
        infos = rt.create_connectors({name: file_source(empty_file) for name in names})
        check_created(rt, bootstrap, unique, empty_file, names, infos)
    finally:
        rt.close()
    # A new runtime of the group restores all of them from the topic.
    again = runtime_factory()
    wait_until(lambda: all_running(again, names), 90, message="every connector RUNNING after a restart")


def check_created(rt: ConnectRuntime, bootstrap: str, unique: str, empty_file: str, names: list[str],
                  infos: list[dict]) -> None:
    assert [info["name"] for info in infos] == names
    assert all(info["tasks"] == [{"connector": info["name"], "task": 0}] and info["type"] == "source"
               for info in infos)
    assert sorted(rt.connectors()) == names
    wait_until(lambda: all_running(rt, names), 90, message="every connector and task RUNNING")

    records = config_records(bootstrap, f"bulk-{unique}-configs")
    connectors = [(offset, key, value) for offset, key, value in records if key.startswith("connector-")]
    assert [key for _, key, _ in connectors] == [f"connector-{name}" for name in names]
    # Kafka Connect's record, exactly as one create writes it
    assert json.loads(connectors[0][2]) == {"properties": {**file_source(empty_file), "name": names[0]}}
    assert b" " not in connectors[0][2]
    # One transaction: the connector configs, then their task configs, at consecutive offsets.
    first = connectors[0][0]
    assert [offset for offset, _, _ in connectors] == list(range(first, first + 100))
    tasks = [(offset, key) for offset, key, _ in records if key.startswith(("task-", "commit-"))]
    assert [key for _, key in tasks] == [key for name in names for key in (f"task-{name}-0", f"commit-{name}")]
    assert [offset for offset, _ in tasks] == list(range(first + 100, first + 300))


@pytest.mark.parametrize("bulk", [False, True])
def test_a_config_the_broker_refuses_fails_the_create_at_once_and_leaves_nothing(
        runtime_factory, bootstrap: str, unique: str, empty_file: str, bulk: bool) -> None:
    """A connector config over the config topic's largest message: the create (a bulk one with it, all or none)
    fails at once naming the broker's refusal, the connectors it started are stopped, no record is committed and
    no status kept, and the next create goes through (the leader's writer does not write the record again)."""
    rt = runtime_factory()
    rt.create_connector("before", file_source(empty_file))
    before = config_records(bootstrap, f"bulk-{unique}-configs")
    huge = {**file_source(empty_file), "padding": "x" * 1_100_000}
    with pytest.raises(ConnectException, match="the broker refuses a record .MSG_SIZE_TOO_LARGE"):
        if bulk:
            rt.create_connectors({"fits": file_source(empty_file), "huge": huge})
        else:
            rt.create_connector("huge", huge)
    assert rt.connectors() == ["before"]
    for name in ("fits", "huge"):
        with pytest.raises(NotFoundError):
            rt.connector_status(name)
    assert [key for _, key, _ in config_records(bootstrap, f"bulk-{unique}-configs")] == [k for _, k, _ in before]
    rt.create_connector("after", file_source(empty_file))
    wait_until(lambda: all_running(rt, ["before", "after"]), 60, message="both connectors RUNNING")


def test_one_bad_config_refuses_the_whole_call_and_nothing_is_written(
        runtime_factory, bootstrap: str, unique: str, empty_file: str) -> None:
    rt = runtime_factory()
    rt.create_connector("existing", file_source(empty_file))
    before = config_records(bootstrap, f"bulk-{unique}-configs")

    configs = {f"lines-{i}": file_source(empty_file) for i in range(100)}
    configs["lines-57"] = {**file_source(empty_file), "tasks.max": "many"}
    with pytest.raises(ConnectRestError) as refused:
        rt.create_connectors(configs)
    assert refused.value.status == 400
    assert refused.value.message.startswith("Connector lines-57: ")
    assert "Invalid value many for configuration tasks.max" in refused.value.message

    configs["lines-57"] = {"connector.class": "FileStreamSource", "file": empty_file}  # no topic
    with pytest.raises(ConnectRestError, match=r"(?s)Connector lines-57: .*Missing required configuration \"topic\"") as refused:
        rt.create_connectors(configs)
    assert refused.value.status == 400

    configs["lines-57"] = file_source(empty_file)
    with pytest.raises(ConnectRestError, match="Connector existing already exists") as refused:
        rt.create_connectors({**configs, "existing": file_source(empty_file)})
    assert refused.value.status == 409
    with pytest.raises(ConnectRestError, match="Connector lines-1 is given more than once"):
        rt.create_connectors([{"name": "lines-1", "config": file_source(empty_file)},
                              {**file_source(empty_file), "name": "lines-1"}])
    with pytest.raises(ConnectRestError, match="Connector 0 of the list has no name"):
        rt.create_connectors([file_source(empty_file)])
    with pytest.raises(ConnectRestError, match="Invalid initial state SOON"):
        rt.create_connectors(configs, initial_state="SOON")

    assert rt.connectors() == ["existing"]
    assert config_records(bootstrap, f"bulk-{unique}-configs") == before
    assert rt.create_connectors({}) == []


def test_stop_pause_resume_restart_and_delete_by_pattern_or_names(
        runtime_factory, bootstrap: str, unique: str, empty_file: str) -> None:
    rt = runtime_factory()
    orders = [f"orders-{i}" for i in range(10)]
    logs = [f"logs-{i}" for i in range(5)]
    rt.create_connectors({name: file_source(empty_file) for name in orders + logs})
    wait_until(lambda: all_running(rt, orders + logs), 90, message="every connector RUNNING")

    assert rt.stop_connectors("orders-.*") == sorted(orders)
    assert all(state_of(rt, name) == "STOPPED" and rt.connector_status(name)["tasks"] == [] for name in orders)
    assert all_running(rt, logs)
    assert rt.stop_connectors("order") == []  # the whole name must match

    def stopped_in_topic() -> bool:
        latest = {key: value for _, key, value in config_records(bootstrap, f"bulk-{unique}-configs")}
        return all(json.loads(latest[f"target-state-{n}"]) == {"state": "PAUSED", "state.v2": "STOPPED"}
                   and json.loads(latest[f"commit-{n}"]) == {"tasks": 0} for n in orders)
    wait_until(stopped_in_topic, 30, message="the STOPPED target states and empty task sets in the config topic")

    # Unknown names refuse the call, and nothing changes.
    with pytest.raises(ConnectRestError, match="Unknown connectors nope, nada") as refused:
        rt.pause_connectors(["logs-0", "nope", "nada"])
    assert refused.value.status == 404 and all_running(rt, logs)
    with pytest.raises(ConnectRestError, match="Invalid connector name pattern") as refused:
        rt.pause_connectors("logs-(")
    assert refused.value.status == 400

    assert rt.pause_connectors(["logs-1", "logs-0", "logs-1"]) == ["logs-0", "logs-1"]
    wait_until(lambda: all(state_of(rt, n) == "PAUSED" and rt.connector_status(n)["tasks"][0]["state"] == "PAUSED"
                           for n in ("logs-0", "logs-1")), 30, message="two connectors PAUSED")
    assert rt.resume_connectors(".*") == sorted(orders + logs)
    wait_until(lambda: all_running(rt, orders + logs), 90, message="every connector RUNNING again")

    plans = rt.restart_connectors("logs-.*", include_tasks=True)
    assert sorted(plans) == sorted(logs)
    assert all(plan["connector"]["state"] == "RESTARTING" and plan["tasks"][0]["state"] == "RESTARTING"
               for plan in plans.values())
    assert rt.restart_connectors(["logs-0"]) == {"logs-0": None}
    wait_until(lambda: all_running(rt, logs), 60, message="the restarted connectors RUNNING")

    assert rt.delete_connectors("orders-.*") == sorted(orders)
    assert sorted(rt.connectors()) == sorted(logs)
    latest = {key: value for _, key, value in config_records(bootstrap, f"bulk-{unique}-configs")}
    assert all(latest[f"connector-{n}"] is None and latest[f"target-state-{n}"] is None for n in orders)
    with pytest.raises(ConnectRestError) as gone:
        rt.connector_status("orders-0")
    assert gone.value.status == 404
    assert rt.delete_connectors(".*") == sorted(logs)
    assert rt.connectors() == []


def test_a_follower_forwards_bulk_calls_to_the_leader(bootstrap: str, unique: str, empty_file: str) -> None:
    from group_members import FAST as GROUP_FAST
    from group_members import Member

    group = f"bulk-grp-{unique}"
    leader = Member(bootstrap, group)
    follower = None
    try:
        wait_until(lambda: leader.role == "leader", 60, message="the first runtime to lead")
        follower = ConnectRuntime(bootstrap, group, GROUP_FAST)
        assert follower.role == "follower"
        names = [f"fwd-{i}" for i in range(20)]
        infos = follower.create_connectors({name: file_source(empty_file) for name in names})
        assert [info["name"] for info in infos] == names
        wait_until(lambda: sorted(follower.connectors()) == sorted(names), 30, message="the follower to read the configs")

        def running(name: str) -> bool:  # the group spreads the tasks over both members
            status, body, _ = leader.rest("GET", f"/connectors/{name}/status")
            workers = [t["worker_id"] for t in body["tasks"] if t["state"] == "RUNNING"] if status == 200 else []
            return len(workers) == 1 and workers[0] in (leader.worker_id, follower.worker_config.worker_id)
        wait_until(lambda: all(running(n) for n in names), 90, message="every task RUNNING")

        with pytest.raises(ConnectRestError, match="Connector fwd-3 already exists") as refused:
            follower.create_connectors({"new": file_source(empty_file), "fwd-3": file_source(empty_file)})
        assert refused.value.status == 409

        assert follower.stop_connectors("fwd-1.*") == sorted(["fwd-1", *(f"fwd-1{i}" for i in range(10))])
        wait_until(lambda: leader.rest("GET", "/connectors/fwd-1/status")[1]["connector"]["state"] == "STOPPED", 30)
        assert leader.rest("GET", "/connectors/fwd-2/status")[1]["connector"]["state"] == "RUNNING"
        assert follower.delete_connectors(["fwd-0", "fwd-1"]) == ["fwd-0", "fwd-1"]
        wait_until(lambda: sorted(leader.rest("GET", "/connectors")[1]) == sorted(set(names) - {"fwd-0", "fwd-1"}),
                   30, message="the leader to have deleted them")
        assert follower.delete_connectors(".*") == sorted(set(names) - {"fwd-0", "fwd-1"})
        wait_until(lambda: follower.connectors() == [], 30)
    finally:
        if follower is not None:
            follower.close()
        leader.stop()


def test_magics_stop_pause_resume_delete_all_or_by_pattern_and_create_many(
        bootstrap: str, unique: str, empty_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    from connect_magics.notebook.magics import ConnectMagicError

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    ip.run_line_magic("config", f"ConnectMagics.bootstrap_servers = {bootstrap!r}")
    ip.run_line_magic("config", f"ConnectMagics.group_id = 'bulk-magics-{unique}'")
    try:
        ip.run_line_magic("connect", "start -o rt")
        rt = ip.user_ns["rt"]
        ip.run_cell_magic("connect", "create --many", json.dumps(
            {f"a-{i}": file_source(empty_file) for i in range(3)}))
        ip.run_cell_magic("connect", "create --many --initial-state paused", "\n".join(
            f"b-{i}:\n  connector.class: FileStreamSource\n  file: {empty_file}\n  topic: bulk-lines\n  tasks.max: 1"
            for i in range(2)))
        assert "Created 2 connectors with 0 tasks." in capsys.readouterr().out
        assert sorted(rt.connectors()) == ["a-0", "a-1", "a-2", "b-0", "b-1"]
        assert state_of(rt, "b-0") == "PAUSED"
        wait_until(lambda: all_running(rt, ["a-0", "a-1", "a-2"]), 60)

        with pytest.raises(ConnectMagicError, match="Connector a-0 already exists"):
            ip.run_cell_magic("connect", "create --many", json.dumps({"a-0": file_source(empty_file)}))
        with pytest.raises(UsageError, match="takes one of NAME, --all or --pattern REGEX"):
            ip.run_line_magic("connect", "stop a-0 --all")
        with pytest.raises(UsageError, match="none was given"):
            ip.run_line_magic("connect", "delete")

        ip.run_line_magic("connect", "stop --pattern 'a-[01]' -o stopped")
        assert ip.user_ns["stopped"] == ["a-0", "a-1"]
        assert "Stopped 2 connectors: a-0, a-1" in capsys.readouterr().out
        assert state_of(rt, "a-0") == "STOPPED" and state_of(rt, "a-2") == "RUNNING"
        ip.run_line_magic("connect", "pause --all")
        assert all(state_of(rt, n) == "PAUSED" for n in rt.connectors())
        ip.run_line_magic("connect", "resume --all")
        wait_until(lambda: all_running(rt, rt.connectors()), 60, message="every connector RUNNING")
        ip.run_line_magic("connect", "restart --pattern 'b-.*' --include-tasks")
        assert "Restarted 2 connectors: b-0, b-1" in capsys.readouterr().out
        ip.run_line_magic("connect", "delete --pattern 'nothing'")
        assert "No connector name matches 'nothing': nothing to delete." in capsys.readouterr().out
        ip.run_line_magic("connect", "delete --all")
        assert "Deleted 5 connectors" in capsys.readouterr().out
        assert rt.connectors() == []
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")
