"""Servers that end with the Python process that started them, even when it is killed.

A broker, registry or Connect worker started from a notebook runs in a session of its own (a Ctrl-C in the
kernel must not reach it) and is stopped by an exit handler when the kernel exits. A kernel killed with
SIGKILL, or one that crashes, runs no exit handler, and its servers would go on holding their ports and a
gigabyte of memory each. :func:`end_with_this_process` starts a small watchdog per server: it waits for the end
of a pipe that only this process holds, which comes when this process is gone however it ended, and then kills
the server (PostgreSQL: an immediate shutdown). The watchdog holds a pidfd of the server, so a pid reused after
the server ended is never signalled, and it exits by itself as soon as the server ends. Linux only (pidfds,
Linux 5.3); elsewhere it does nothing.

>>> proc = subprocess.Popen(["sleep", "600"], start_new_session=True)  # doctest: +SKIP
>>> end_with_this_process(proc.pid)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

#: Each watchdog and the write end of its pipe, open and never written while its server may run.
_WATCHDOGS: list[tuple[subprocess.Popen, int]] = []


def end_with_this_process(pid: int, sig: int = signal.SIGKILL) -> bool:
    """Send process ``pid`` ``sig`` (SIGKILL; PostgreSQL's immediate shutdown is SIGQUIT) when this process ends,
    however it ends. False where pidfds are missing."""
    if not hasattr(os, "pidfd_open"):
        return False
    for watchdog, write_end in list(_WATCHDOGS):  # those whose server ended are done: their pipes can go
        if watchdog.poll() is not None:
            os.close(write_end)
            _WATCHDOGS.remove((watchdog, write_end))
    read_end, write_end = os.pipe()  # not inheritable: later children do not hold the write end
    try:
        # this file as a script, isolated (-I): the standard library only, not the package's imports
        watchdog = subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), str(pid), str(sig)],
                                    stdin=read_end,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    finally:
        os.close(read_end)
    _WATCHDOGS.append((watchdog, write_end))
    return True


def _watch(pid: int, sig: int) -> None:
    """The watchdog: end when the server ends, or signal it once standard input (the starter's pipe) ends."""
    try:
        server = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    while True:
        ready, _, _ = select.select([0, server], [], [])
        if server in ready:  # it ended: nothing to do
            return
        if not os.read(0, 1):  # end of file: the starter is gone
            try:
                signal.pidfd_send_signal(server, sig)
            except ProcessLookupError:
                pass
            return


if __name__ == "__main__":
    _watch(int(sys.argv[1]), int(sys.argv[2]))
