"""Runtimes of one group in processes of their own (tests/group): each with its REST API and its role as it
reports it (group/group_host.py)."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from helpers import RestClient, wait_until

HOST = Path(__file__).parent / "group" / "group_host.py"
FAST = {"offset.flush.interval.ms": "100", "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
        "leader.request.timeout.ms": "60000", "scheduled.rebalance.max.delay.ms": "2000"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Member:
    """A runtime of the group in a process of its own, with its REST API and its role as it reports it."""

    def __init__(self, bootstrap: str, group: str, worker: dict[str, str] | None = None) -> None:
        self.port = free_port()
        worker = {**FAST, **(worker or {}), "rest.port": str(self.port)}
        self.stderr = tempfile.TemporaryFile("w+")  # its warnings, for a failing test to show (log_lines)
        self.proc = subprocess.Popen([sys.executable, str(HOST), bootstrap, group, json.dumps(worker)],
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        self.roles: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.url = wait_until(self._url, 90, message="the member's REST API")
        self.rest = RestClient(self.url)
        self.worker_id = f"{socket.gethostname()}:{self.port}"

    def _read(self) -> None:
        for line in self.proc.stdout:
            kind, _, rest = line.strip().partition(" ")
            if kind == "role":
                self.roles.append(rest)
            self._lines.put(line.strip())

    def _url(self) -> str | None:
        while not self._lines.empty():
            kind, _, rest = self._lines.get().partition(" ")
            if kind == "url":
                return rest
        return None

    @property
    def role(self) -> str:
        return self.roles[-1] if self.roles else "joining"

    def log_lines(self, *words: str) -> list[str]:
        """The lines of the member's log (warnings and errors) that contain one of ``words``."""
        self.stderr.seek(0)
        return [line.rstrip() for line in self.stderr if any(w in line for w in words)]

    def signal(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait(30)
        self.stderr.close()
