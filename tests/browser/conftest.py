"""The real-browser tests' JupyterLab server (tests/jupyter_browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_browser import jupyter_lab_server


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A JupyterLab server on 127.0.0.1 without a token, serving ``tmp_path / "root"``: (its URL, that root)."""
    with jupyter_lab_server(tmp_path) as served:
        yield served
