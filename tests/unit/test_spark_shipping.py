"""The zips ``ship_to_executors`` adds to a session: a package's ``.py`` files as imported here (shipping them to
executors: tests/spark/test_executors_with_the_package_shipped.py)."""

from __future__ import annotations

import zipfile
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import connect_magics
from connect_magics.spark.shipping import zip_module


def names(archive: Path) -> list[str]:
    with zipfile.ZipFile(archive) as z:
        return z.namelist()


def test_connect_magics_is_zipped_from_where_it_is_imported_py_files_only(tmp_path: Path) -> None:
    archive = zip_module("connect_magics", tmp_path)
    assert archive == tmp_path / "connect_magics.zip"
    inside = names(archive)
    assert {"connect_magics/__init__.py", "connect_magics/spark/shipping.py",
            "connect_magics/runtime/executors/task_host.py"} <= set(inside)
    assert all(name.endswith(".py") and "__pycache__" not in name for name in inside)
    here = Path(connect_magics.__file__).parent
    assert len(inside) == sum(1 for p in here.rglob("*.py") if "__pycache__" not in p.parts)


def test_a_plugin_package_and_a_single_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src" / "acme_ship" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "acme_ship" / "__init__.py").write_text("")
    (tmp_path / "src" / "acme_ship" / "sub" / "mod.py").write_text("X = 1\n")
    (tmp_path / "src" / "acme_ship" / "notes.txt").write_text("not Python")
    (tmp_path / "src" / "acme_single.py").write_text("Y = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    assert sorted(names(zip_module("acme_ship", tmp_path))) == ["acme_ship/__init__.py", "acme_ship/sub/mod.py"]
    assert names(zip_module("acme_single", tmp_path)) == ["acme_single.py"]


def test_what_cannot_be_shipped_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src" / "acme_compiled").mkdir(parents=True)
    (tmp_path / "src" / "acme_compiled" / "__init__.py").write_text("")
    (tmp_path / "src" / "acme_compiled" / f"_speedups{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    with pytest.raises(ValueError, match="'acme_compiled' .* compiled modules .* install it on every node"):
        zip_module("acme_compiled", tmp_path)
    with pytest.raises(ValueError, match="Cannot ship 'no_such_module_here' .* cannot import it"):
        zip_module("no_such_module_here", tmp_path)
