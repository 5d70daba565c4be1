"""A runtime asked for more tasks than its process can hold (every Kafka client takes one of the process's
thread-specific-data keys) refuses them with a clear error; every task it accepted runs (docs/design.md, "How
many tasks one runtime holds")."""

from __future__ import annotations

import ctypes
import gc

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.storage import client_limit

FAST = {"offset.flush.interval.ms": "200"}


def _source(tmp_path, topic: str, name: str) -> dict:
    path = tmp_path / f"{name}.txt"
    path.write_text("a line\n")
    return {"connector.class": "FileStreamSource", "file": str(path), "topic": topic}


def _topic(bootstrap: str, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def _task_states(rt: ConnectRuntime, name: str) -> list[tuple[str, str]]:
    return [(t["state"], t.get("trace", "")) for t in rt.connector_status(name)["tasks"]]


def _running(rt: ConnectRuntime, names: list[str]) -> bool:
    return all([s for s, _ in _task_states(rt, n)] == ["RUNNING"] for n in names)


def _assert_clear(message: str) -> None:
    for part in ("thread-specific-data keys (PTHREAD_KEYS_MAX)", "another worker of the group",
                 'executor="processes"', 'executor="spark"'):
        assert part in message
    assert "Failed to initialize thread local storage" not in message


def test_a_runtime_refuses_the_tasks_it_cannot_hold_and_runs_those_it_accepted(bootstrap, unique, tmp_path,
                                                                               monkeypatch) -> None:
    topic = _topic(bootstrap, f"cap-{unique}")
    with ConnectRuntime(bootstrap, f"cap-{unique}", FAST) as rt:
        gc.collect()
        # CONNECT_MAGICS_THREAD_KEYS_MAX: this process may build 7 more clients (past the reserve): three
        # FileStreamSource tasks of 2 clients each (a producer, a fence's transactional producer), not four.
        used = client_limit.os_keys_max() - client_limit.free_keys(10_000)
        monkeypatch.setenv(client_limit.KEYS_ENV, str(used + client_limit.RESERVE + 7))
        accepted = [f"src-{i}" for i in range(3)]
        for name in accepted:
            rt.create_connector(name, _source(tmp_path, topic, name))
        wait_until(lambda: _running(rt, accepted), 60, message="the accepted tasks RUNNING")

        with pytest.raises(ConnectRestError) as refused:
            rt.create_connector("src-3", _source(tmp_path, topic, "src-3"))
        assert refused.value.status == 400
        assert str(refused.value).startswith("Connector src-3 cannot be created: its 1 task (tasks.max) needs 2 "
                                             "more Kafka clients (2 each) and this runtime's process can build ")
        _assert_clear(str(refused.value))
        assert "src-3" not in rt.connectors()

        # A connector that was accepted stopped (no tasks) and resumed: its task fails before it builds anything.
        rt.create_connector("later", _source(tmp_path, topic, "later"), initial_state="STOPPED")
        rt.resume_connector("later")
        state, trace = wait_until(lambda: (_task_states(rt, "later") or [None])[0], 30,
                                  message="the task of 'later' with a state")
        assert state == "FAILED"
        assert "Task later-0 cannot start: it needs 2 more Kafka clients and this process can build " in trace
        _assert_clear(trace)
        assert _running(rt, accepted)  # nothing failed at random

        # A task restarted at full capacity gives its clients back first: it runs again, as do the others.
        rt.restart_task("src-0", 0)
        rt.restart_connector("src-1", include_tasks=True)
        wait_until(lambda: _running(rt, accepted), 60, message="the restarted tasks RUNNING again")
        assert [s for s, _ in _task_states(rt, "later")] == ["FAILED"]


def test_the_real_limit_with_keys_held_elsewhere_in_the_process(bootstrap, unique, tmp_path) -> None:
    """No lowered limit: another library of the process holds all but a few keys, and the runtime admits
    what fits (a key short of two tasks and the reserve), no more."""
    topic = _topic(bootstrap, f"cap-real-{unique}")
    with ConnectRuntime(bootstrap, f"cap-real-{unique}", FAST) as rt:
        gc.collect()
        create, delete, key_t = client_limit._PTHREAD
        held, key = [], key_t()
        try:
            keep = client_limit.RESERVE + 5
            for _ in range(client_limit.free_keys(10_000) - keep):
                assert create(ctypes.byref(key), None) == 0
                held.append(key.value)
            names, refusal = [], None
            for i in range(10):
                try:
                    rt.create_connector(f"real-{i}", _source(tmp_path, topic, f"real-{i}"))
                except ConnectRestError as e:
                    refusal = e
                    break
                names.append(f"real-{i}")
            assert len(names) == 2 and refusal is not None and refusal.status == 400
            _assert_clear(str(refusal))
            wait_until(lambda: _running(rt, names), 60, message="the accepted tasks RUNNING")
        finally:
            for k in held:
                delete(k)


def test_a_restarted_runtime_restores_what_fits_and_fails_the_rest_clearly(bootstrap, unique, tmp_path,
                                                                          monkeypatch) -> None:
    """Connectors stored by an earlier runtime are restored, not created: the tasks that do not fit are FAILED
    before they start, with the clear error, and the others run."""
    topic, group = _topic(bootstrap, f"cap-restore-{unique}"), f"cap-restore-{unique}"
    names = [f"restored-{i}" for i in range(4)]
    gc.collect()
    before = client_limit.os_keys_max() - client_limit.free_keys(10_000)
    with ConnectRuntime(bootstrap, group, FAST) as rt:
        gc.collect()
        own = client_limit.os_keys_max() - client_limit.free_keys(10_000) - before  # the runtime's own clients
        for name in names:
            rt.create_connector(name, _source(tmp_path, topic, name))
        wait_until(lambda: _running(rt, names), 60, message="the tasks RUNNING")
    del rt  # a closed runtime's clients give their keys back when it is gone
    gc.collect()
    # Room for the runtime's own clients, the reserve and 5 more: two of the four tasks (give or take one
    # client the runtime builds lazily), never all four.
    monkeypatch.setenv(client_limit.KEYS_ENV, str(before + own + client_limit.RESERVE + 5))
    with ConnectRuntime(bootstrap, group, FAST) as rt:
        def settled() -> list[tuple[str, str]] | None:
            states = [_task_states(rt, n) for n in names]
            if all(len(s) == 1 and s[0][0] in ("RUNNING", "FAILED") for s in states):
                return [s[0] for s in states]
            return None

        states = wait_until(settled, 60, message="every restored task RUNNING or FAILED")
        failed = [trace for state, trace in states if state == "FAILED"]
        assert 1 <= len(failed) <= 3 and len(failed) + sum(s == "RUNNING" for s, _ in states) == 4
        for trace in failed:
            assert "cannot start: it needs 2 more Kafka clients" in trace
            _assert_clear(trace)


def test_a_bulk_create_beyond_capacity_is_refused_whole(bootstrap, unique, tmp_path, monkeypatch) -> None:
    topic = _topic(bootstrap, f"cap-bulk-{unique}")
    with ConnectRuntime(bootstrap, f"cap-bulk-{unique}", FAST) as rt:
        gc.collect()
        used = client_limit.os_keys_max() - client_limit.free_keys(10_000)
        monkeypatch.setenv(client_limit.KEYS_ENV, str(used + client_limit.RESERVE + 7))  # three tasks fit
        configs = {f"bulk-{i}": _source(tmp_path, topic, f"bulk-{i}") for i in range(4)}
        with pytest.raises(ConnectRestError) as refused:
            rt.create_connectors(configs)
        assert refused.value.status == 400
        assert str(refused.value).startswith("Connector bulk-3 cannot be created with the 4 connectors of this "
                                             "call: together their tasks need 8 more Kafka clients")
        _assert_clear(str(refused.value))
        assert rt.connectors() == []  # all or none
        del configs["bulk-3"]
        rt.create_connectors(configs)
        wait_until(lambda: _running(rt, list(configs)), 60, message="the three accepted tasks RUNNING")


@pytest.mark.parametrize("kind", ["source", "sink", "exactly-once source"])
def test_a_stopped_tasks_clients_are_freed_without_a_garbage_collection(bootstrap, unique, tmp_path, kind) -> None:
    """A deleted connector's tasks give their clients' keys back at once: each runner lets go of its clients when
    it closes. Their callbacks refer to the runner, and the cycle kept them (threads, connections, keys) until
    the next full collection, which tasks make rarer (runtime/worker/gc_threshold.py). The collector is off here:
    only reference counting frees them."""
    topic = _topic(bootstrap, f"free-{unique}")
    worker = {**FAST, **({"exactly.once.source.support": "enabled"} if kind == "exactly-once source" else {})}

    def config(name: str) -> dict:
        if kind == "sink":
            return {"connector.class": "FileStreamSink", "file": str(tmp_path / f"{name}.out"), "topics": topic}
        return _source(tmp_path, topic, name)

    with ConnectRuntime(bootstrap, f"free-{unique}", worker) as rt:
        def run_and_delete(names: list[str]) -> None:
            for name in names:
                rt.create_connector(name, config(name))
            wait_until(lambda: _running(rt, names), 60, message=f"{names} RUNNING")
            for name in names:
                rt.delete_connector(name)

        run_and_delete(["warm-up"])  # the worker's clients built on first use (a shared admin client) stay built
        wait_until(lambda: not rt.connectors(), 30, message="the warm-up connector gone")
        gc.collect()
        before = client_limit.free_keys(10_000)
        gc.disable()
        try:
            names = [f"task-{i}" for i in range(3)]
            run_and_delete(names)
            wait_until(lambda: client_limit.free_keys(10_000) >= before, 30,
                       message=lambda: f"the stopped tasks' clients freed: {client_limit.free_keys(10_000)} keys "
                                       f"free, {before} before")
        finally:
            gc.enable()
