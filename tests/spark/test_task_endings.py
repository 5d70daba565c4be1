"""A task whose thread, process or Spark job is killed by force is never left shown RUNNING (issue 31): its
status turns FAILED with the cause within a bound, on every executor; hosted tasks (a process, a Spark job)
then run again from their committed offsets and say RUNNING once more."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import threading

import pytest
from helpers import wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime

pytestmark = pytest.mark.slow

BOUND_S = 30.0  # from the kill to a status that is not RUNNING (a hosted one is seen when its job fails)


def task_states(bootstrap: str, group: str, connector: str) -> list[dict]:
    """Every status record of task 0 of ``connector``, oldest first."""
    key = f"status-task-{connector}-0"
    return [json.loads(v) for k, v in read_records(bootstrap, f"{group}-status") if k == key and v]


def kill_thread(name: str) -> None:
    """Raise SystemExit in the thread called ``name``, as a forced end of the thread would."""
    thread = next(t for t in threading.enumerate() if t.name == name)
    assert ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit)) == 1


@pytest.mark.parametrize("executor", ["threads", "processes", "spark"])
def test_a_task_killed_by_force_does_not_stay_running(bootstrap, unique, spark, executor, tmp_path) -> None:
    topic, group = f"killed-{unique}", f"g-{unique}"
    create_topics(bootstrap, topic)
    worker = {"offset.flush.interval.ms": "200", "consumer.session.timeout.ms": "6000"}
    with ConnectRuntime(bootstrap, group, worker, spark=spark, executor=executor) as rt:
        rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "rate": "200"})
        wait_until(lambda: rt.get_offsets("gen")["offsets"], 240, message="the task's first commit")
        assert rt.task_status("gen", 0)["state"] == "RUNNING"
        before = len(task_states(bootstrap, group, "gen"))
        handle = rt.herder.task_handle("gen", 0)
        if executor == "threads":
            kill_thread("task-gen-0")
        else:
            pid = wait_until(lambda: (handle.published() or {}).get("pid"), 120, message="the task's pid")
            os.kill(pid, signal.SIGKILL)

        def failed() -> dict | None:
            return next((s for s in task_states(bootstrap, group, "gen")[before:] if s["state"] == "FAILED"), None)
        status = wait_until(failed, BOUND_S, message="a FAILED status after the kill")
        if executor == "threads":  # the SystemExit, or, raised inside a C call's callback (the producer's flush),
            # the SystemError that call then returns: the thread ends either way
            assert "SystemExit" in status["trace"] or "SystemError" in status["trace"], status["trace"]
        else:
            assert "failed" in status["trace"]
        if executor == "threads":
            assert rt.task_status("gen", 0)["state"] == "FAILED"  # a thread's task stays failed, as in Kafka Connect
        else:  # the next generation runs from the committed offsets
            wait_until(lambda: rt.task_status("gen", 0)["state"] == "RUNNING"
                       and task_states(bootstrap, group, "gen")[-1]["state"] == "RUNNING", 240,
                       message="the task running again")
