"""Shipping connect_magics (and a plugin's package) to a session's executors, for nodes whose Python lacks it.

Each top-level package or module is zipped from where this Python imports it (its ``.py`` files only) and added
to the session as a Python file: ``SparkContext.addPyFile`` on a classic session, ``addArtifacts(pyfile=True)``
on a Spark Connect session. Spark puts the zip on its Python workers' ``sys.path``.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import threading
import weakref
import zipfile
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

__all__ = ["ship_to_executors"]

_lock = threading.Lock()
#: Per SparkContext (classic) or Spark Connect session: the zips added to it, by top-level name.
_shipped: weakref.WeakKeyDictionary[Any, dict[str, Path]] = weakref.WeakKeyDictionary()
_zip_dir: Path | None = None


def ship_to_executors(spark: Any, *also: str) -> list[Path]:
    """Add connect_magics, and the packages or modules named in ``also`` (a connector plugin's top-level
    package; a dotted name ships its top-level package), to ``spark``'s executors' Python as zips of their
    ``.py`` files, taken from where this Python imports them. Call it before the runtime starts tasks with
    ``executor="spark"``. A second call for the same session adds nothing again (a name is shipped once per
    session). Returns the zips, in order.

    It ships pure Python only: connect_magics' dependencies (confluent-kafka, a compiled wheel, pandas,
    pyarrow) must be installed on every node, or the session must run a packed environment
    (``spark.archives``); a package with compiled modules, or a name this Python cannot import, raises
    ValueError. Package data files (non-``.py``) are not shipped. See docs/deploy.md, "Spark executors".

    >>> ship_to_executors(spark, "acme_connect")  # doctest: +SKIP
    [PosixPath('/tmp/connect-magics-ship-.../connect_magics.zip'), PosixPath('/tmp/.../acme_connect.zip')]
    """
    names = list(dict.fromkeys(["connect_magics", *(name.split(".")[0] for name in also)]))
    remote = any(cls.__module__.startswith("pyspark.sql.connect") for cls in type(spark).__mro__)
    key = spark if remote else spark.sparkContext
    with _lock:
        shipped = _shipped.setdefault(key, {})
        for name in names:
            if name in shipped:
                continue
            archive = zip_module(name, _directory())
            if remote:
                spark.addArtifacts(str(archive), pyfile=True)
            else:
                spark.sparkContext.addPyFile(str(archive))
            shipped[name] = archive
        return [shipped[name] for name in names]


def zip_module(name: str, directory: Path) -> Path:
    """``directory/{name}.zip`` holding the ``.py`` files of top-level package or module ``name`` (every
    directory of a namespace package), as imported here; ``__pycache__`` left out."""
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise ValueError(f"Cannot ship {name!r} to the Spark executors: this Python cannot import it ({e})") from e
    files = _python_files(module)
    archive = directory / f"{name}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path, arcname in files:
            z.write(path, arcname)
    return archive


def _python_files(module: Any) -> list[tuple[Path, str]]:
    """``(file, name in the zip)`` of every ``.py`` file of ``module``; ValueError for compiled modules."""
    name = module.__name__
    roots = [Path(p) for p in getattr(module, "__path__", [])]
    if not roots:  # a single-file module
        path = Path(module.__file__ or "")
        if path.suffix != ".py":
            raise ValueError(_compiled(name, [path]))
        return [(path, path.name)]
    files: list[tuple[Path, str]] = []
    compiled: list[Path] = []
    for root in roots:
        for directory, subdirs, names in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for file in sorted(names):
                path = Path(directory, file)
                if file.endswith(".py"):
                    files.append((path, f"{name}/{path.relative_to(root).as_posix()}"))
                elif any(file.endswith(suffix) for suffix in EXTENSION_SUFFIXES):
                    compiled.append(path)
    if compiled:
        raise ValueError(_compiled(name, compiled))
    return files


def _compiled(name: str, paths: list[Path]) -> str:
    return (f"Cannot ship {name!r} to the Spark executors as a zip: it has compiled modules "
            f"({', '.join(p.name for p in paths[:3])}); install it on every node (docs/deploy.md, "
            "\"Spark executors\")")


def _directory() -> Path:
    """This process's directory of zips (one per name: a session adds each name once)."""
    global _zip_dir
    if _zip_dir is None:
        _zip_dir = Path(tempfile.mkdtemp(prefix="connect-magics-ship-"))
    return _zip_dir
