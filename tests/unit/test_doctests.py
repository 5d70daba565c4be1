"""Every docstring example of the package runs (those that need a broker or a runtime say ``+SKIP``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import connect_magics

pytestmark = pytest.mark.unit

#: Modules whose import has effects of its own: Spark's Python worker daemon replaces the process's signal handling.
NOT_IMPORTED = ("connect_magics.spark.worker_daemon",)
MODULES = sorted(m.name for m in pkgutil.walk_packages(connect_magics.__path__, "connect_magics.")
                 if m.name not in NOT_IMPORTED)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (printed above)"
