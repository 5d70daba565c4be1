"""Servers started by a process end with it, even when it is killed (connect_magics.local.orphan_guard)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_until

OWNER = """
import subprocess, sys
from connect_magics.local.orphan_guard import end_with_this_process
server = subprocess.Popen(["sleep", "600"], start_new_session=True)
print(server.pid, end_with_this_process(server.pid), flush=True)
if sys.argv[1] == "end-server":
    server.kill()
    server.wait()
    print("ended", flush=True)
sys.stdin.readline()
"""

POSTGRES_OWNER = """
import sys
from connect_magics.local.postgres import PostgresServer
server = PostgresServer().start()
print(open(f"{server._dir}/data/postmaster.pid").read().split()[0], flush=True)
sys.stdin.readline()
"""

BROKER_OWNER = """
import sys
from connect_magics.local import EmbeddedBroker
broker = EmbeddedBroker(sys.argv[1]).start()
print(broker._proc.pid, flush=True)
sys.stdin.readline()
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not reaped yet, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def watchdogs_of(pid: int) -> list[int]:
    """The running watchdogs of server ``pid`` (a zombie has no command line any more)."""
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = path.read_bytes().split(b"\0")[:-1]
        except OSError:  # ended meanwhile
            continue
        if len(args) >= 3 and args[-3].endswith(b"orphan_guard.py") and args[-2] == str(pid).encode():  # ... pid sig
            found.append(int(path.parent.name))
    return found


def start_owner(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_a_server_ends_when_the_process_that_started_it_is_killed() -> None:
    owner = start_owner(OWNER, "keep")
    try:
        pid, guarded = owner.stdout.readline().split()
        server = int(pid)
        assert guarded == "True" and alive(server)
        wait_until(lambda: watchdogs_of(server), 30, message="the server's watchdog")
        owner.send_signal(signal.SIGKILL)  # no exit handler runs
        owner.wait(30)
        wait_until(lambda: not alive(server), 30, message="the server killed by its watchdog")
        wait_until(lambda: not watchdogs_of(server), 30, message="the watchdog gone")
    finally:
        owner.kill()


def test_the_watchdog_ends_by_itself_when_its_server_ends_first() -> None:
    owner = start_owner(OWNER, "end-server")
    try:
        server = int(owner.stdout.readline().split()[0])
        assert owner.stdout.readline() == "ended\n"
        wait_until(lambda: not watchdogs_of(server), 30, message="the watchdog gone with its server")
        assert owner.poll() is None  # the process that started it runs on
    finally:
        owner.kill()


@pytest.mark.parametrize("server", ["broker", "postgres"])
def test_a_server_of_connect_magics_local_ends_with_the_killed_kernel_that_started_it(server: str,
                                                                                      tmp_path: Path) -> None:
    """The broker's JVM is killed; PostgreSQL's postmaster gets its immediate shutdown."""
    owner = start_owner(BROKER_OWNER, str(tmp_path / "broker")) if server == "broker" else start_owner(POSTGRES_OWNER)
    try:
        pid = int(owner.stdout.readline())
        assert alive(pid)
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
        wait_until(lambda: not alive(pid), 60, message=f"the {server}'s process ended")
    finally:
        owner.kill()
