"""The user cache's download lock (connect_magics.local.jars.cache_lock) holds across processes."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

from connect_magics.local.jars import cache_lock

HOLDER = """
import sys
from connect_magics.local.jars import cache_lock
with cache_lock("bundle-1.0"):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_another_process_waits_while_one_holds_the_lock(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "held\n"
        with open(tmp_path / ".bundle-1.0.lock", "w") as handle, pytest.raises(BlockingIOError):
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # taken by the other process
        with cache_lock("other-2.0"):  # another bundle's lock is free
            pass
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(30) == 0
        with cache_lock("bundle-1.0"):  # released with the holder's block
            pass
    finally:
        holder.kill()
