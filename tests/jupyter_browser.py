"""What the real-browser tests share: a JupyterLab server, Chromium, and scripts run in the page
(see test_offsets_editor_browser.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from helpers import wait_until

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KERNEL_IDLE = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle'; }"""
RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyter_lab_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A JupyterLab server on 127.0.0.1 without a token, serving ``tmp_path / "root"``."""
    root = tmp_path / "root"
    root.mkdir()
    port = free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg")}
    log = open(tmp_path / "jupyter.log", "wb")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--IdentityProvider.token=", "--ServerApp.disable_check_xsrf=True", "--allow-root",
         f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: server.poll() is not None
                   or urllib.request.urlopen(f"{url}/api/status", timeout=5).status == 200, 120,
                   message=lambda: f"JupyterLab at {url}: {(tmp_path / 'jupyter.log').read_text()[-2000:]}")
        assert server.poll() is None, f"JupyterLab exited: {(tmp_path / 'jupyter.log').read_text()[-2000:]}"
        yield url, root
    finally:
        server.terminate()
        server.wait(30)
        log.close()


