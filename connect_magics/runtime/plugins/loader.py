"""Plugin isolation: each ``plugin.path`` installation imports its own modules under a private name.

Kafka Connect gives every plugin directory its own child-first class loader (KIP-146), so that two
versions of one plugin, with the same class names, run side by side. This module is the Python
counterpart. An installation (one subdirectory, wheel or zip of a ``plugin.path`` entry) gets a
private package, ``connect_magics_isolated.<token>``, and every module it ships is imported under
it: ``mypkg.sub`` of installation A becomes ``connect_magics_isolated.<A>.mypkg.sub`` in
``sys.modules``. Code of the installation is executed with its own ``__import__``, so an absolute
``import mypkg.sub`` inside A resolves to A's copy (child first), while anything A does not ship
(the standard library, ``connect_magics``, pandas, ...) comes from the environment. See
``docs/plugins.md`` for what this does and does not isolate.

>>> inst = Installation("/opt/plugins/vplug-1.0")          # doctest: +SKIP
>>> inst.import_module("vplug.source").VersionedSource       # doctest: +SKIP
<class 'connect_magics_isolated.p_vplug_1_0_3f2a9c01.vplug.source.VersionedSource'>
"""

from __future__ import annotations

import builtins
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import logging
import pkgutil
import re
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

#: The package under which every installation's modules live.
ISOLATED_ROOT = "connect_magics_isolated"
#: What an installation may never provide itself: the runtime's API, the standard library.
SHARED_TOP_LEVEL = frozenset({"connect_magics", ISOLATED_ROOT, "__future__", "__main__",
                              *sys.builtin_module_names, *getattr(sys, "stdlib_module_names", ())})
#: Files that are installations (or nested roots of one) besides directories.
ARCHIVE_SUFFIXES = (".whl", ".zip", ".egg")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def public_module_name(module: str) -> str:
    """The name a module has in its installation (``mypkg.sub``), without the private prefix.

    >>> public_module_name("connect_magics_isolated.p_x_0123abcd.mypkg.sub"), public_module_name("json")
    ('mypkg.sub', 'json')
    """
    if module.startswith(ISOLATED_ROOT + "."):
        parts = module.split(".", 2)
        return parts[2] if len(parts) == 3 else ""
    return module


def installation_of(module: str) -> Installation | None:
    """The installation a (private) module name belongs to, if any."""
    if not module.startswith(ISOLATED_ROOT + "."):
        return None
    return _FINDER.installations.get(module.split(".")[1])


class Installation:
    """One plugin installation: a directory (modules, packages, wheels or zips in it) or one archive.

    Its modules are imported lazily, child first, under :attr:`package`.
    """

    def __init__(self, location: str | Path) -> None:
        self.location = Path(location).resolve()
        digest = hashlib.sha1(str(self.location).encode()).hexdigest()[:8]
        self.token = "p_" + re.sub(r"\W", "_", self.location.name)[:40] + "_" + digest
        self.package = f"{ISOLATED_ROOT}.{self.token}"
        self.roots = self._roots()
        self._provides: dict[str, bool] = {}
        self.builtins = dict(vars(builtins))
        self.builtins["__import__"] = self._import
        self.distributions = list(importlib.metadata.distributions(path=self.roots))
        _FINDER.register(self)

    def _roots(self) -> list[str]:
        if self.location.is_file():
            return [str(self.location)]
        nested = sorted(str(p) for p in self.location.iterdir() if p.suffix in ARCHIVE_SUFFIXES and p.is_file())
        return [str(self.location), *nested]

    def __repr__(self) -> str:
        return f"Installation({str(self.location)!r})"

    # -- what the installation ships --------------------------------------------------------------
    def provides(self, top: str) -> bool:
        """True if the installation ships the top-level module or package ``top`` (and may)."""
        known = self._provides.get(top)
        if known is None:
            known = top not in SHARED_TOP_LEVEL and bool(_IDENTIFIER.fullmatch(top)) \
                and importlib.machinery.PathFinder.find_spec(top, self.roots) is not None
            self._provides[top] = known
        return known

    def top_level_modules(self) -> list[str]:
        """The importable top-level modules and packages it ships, sorted."""
        names: set[str] = set()
        for root in self.roots:
            if Path(root).is_dir():
                entries = [(p.name, p.is_dir()) for p in Path(root).iterdir()]
            else:
                try:
                    with zipfile.ZipFile(root) as zf:
                        tops = {n.split("/")[0]: "/" in n for n in zf.namelist()}
                except (OSError, zipfile.BadZipFile):
                    log.warning("Plugin archive %s cannot be read; skipping it", root)
                    continue
                entries = list(tops.items())
            for name, is_dir in entries:
                stem = name if is_dir else name.split(".")[0]
                if not is_dir and not name.endswith((".py", ".pyc", ".so", ".pyd")):
                    continue
                if _IDENTIFIER.fullmatch(stem) and stem != "__pycache__" and self.provides(stem):
                    names.add(stem)
        return sorted(names)

    def walk_modules(self) -> Iterator[ModuleType]:
        """Import and yield every module it ships (packages recursively); failures are logged and skipped."""
        for top in self.top_level_modules():
            module = self._try_import(top)
            if module is None:
                continue
            yield from self._walk(top, module)

    def _walk(self, name: str, module: ModuleType) -> Iterator[ModuleType]:
        yield module
        for info in pkgutil.iter_modules(list(getattr(module, "__path__", None) or [])):
            sub = self._try_import(f"{name}.{info.name}")
            if sub is not None:
                yield from self._walk(f"{name}.{info.name}", sub)

    def _try_import(self, name: str) -> ModuleType | None:
        try:
            return self.import_module(name)
        except Exception:  # noqa: BLE001 - a broken module must not hide the other plugins
            log.warning("Plugin installation %s: module %s cannot be imported; skipping it", self.location, name,
                        exc_info=True)
            return None

    def import_module(self, name: str) -> ModuleType:
        """Import ``name`` as the installation's code would: from the installation if it ships it (child
        first), else from the environment."""
        if self.provides(name.partition(".")[0]):
            return importlib.import_module(f"{self.package}.{name}")
        return importlib.import_module(name)

    def load_class(self, qualified: str) -> Any:
        """``mypkg.mod.Class`` (or ``mypkg.mod:Class``) from this installation."""
        module, sep, attr = qualified.partition(":")
        if not sep:
            module, _, attr = qualified.rpartition(".")
        obj: Any = self.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj

    def distribution_of(self, module: str) -> importlib.metadata.Distribution | None:
        """The distribution (``*.dist-info`` inside the installation) that ships a module, if any."""
        top = public_module_name(module).split(".")[0]
        for dist in self.distributions:
            if top in _dist_top_levels(dist):
                return dist
        return self.distributions[0] if len(self.distributions) == 1 else None

    # -- the import hook ------------------------------------------------------------------------------
    def _import(self, name: str, globals: dict | None = None, locals: dict | None = None,
                fromlist: Any = (), level: int = 0) -> ModuleType:
        """``__import__`` for the installation's code: its own modules first, then the environment's."""
        if level == 0 and name:
            top = name.partition(".")[0]
            if self.provides(top):
                module = builtins.__import__(f"{self.package}.{name}", globals, locals, fromlist, 0)
                return module if fromlist else sys.modules[f"{self.package}.{top}"]
        return builtins.__import__(name, globals, locals, fromlist, level)


def _dist_top_levels(dist: importlib.metadata.Distribution) -> set[str]:
    text = dist.read_text("top_level.txt")
    if text:
        return {line.strip() for line in text.splitlines() if line.strip()}
    tops = set()
    for f in dist.files or ():
        first = f.parts[0] if f.parts else ""
        tops.add(first[:-3] if first.endswith(".py") else first)
    return tops


class _IsolatingLoader(importlib.abc.Loader):
    """Executes a module found in an installation under its private name, with the installation's
    ``__import__``; extension modules are loaded by their own loader (their imports are not redirected)."""

    def __init__(self, installation: Installation | None, original: importlib.machinery.ModuleSpec | None,
                 path: list[str] | None = None) -> None:
        self.installation, self.original, self.path = installation, original, path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        if self.original is not None and isinstance(self.original.loader, importlib.machinery.ExtensionFileLoader):
            return self.original.loader.create_module(spec)
        return None

    def exec_module(self, module: ModuleType) -> None:
        if self.original is None or self.original.origin is None:  # a (namespace) package of our own
            module.__path__ = list(self.path if self.path is not None else
                                   (self.original.submodule_search_locations or []))
            return
        loader = self.original.loader
        if isinstance(loader, importlib.machinery.ExtensionFileLoader):
            loader.exec_module(module)
            return
        code = loader.get_code(self.original.name)
        if code is None:
            raise ImportError(f"No code for module {self.original.name}", name=module.__name__)
        module.__dict__["__builtins__"] = self.installation.builtins
        exec(code, module.__dict__)  # noqa: S102 - this is what an import does

    # resources and sources, for importlib.resources, inspect and tracebacks
    def _orig(self, attr: str) -> Any:
        if self.original is None or not hasattr(self.original.loader, attr):
            raise ImportError(f"{attr} is not supported here")
        return getattr(self.original.loader, attr)

    def get_resource_reader(self, fullname: str) -> Any:
        return self._orig("get_resource_reader")(self.original.name)

    def get_source(self, fullname: str) -> str | None:
        return self._orig("get_source")(self.original.name)

    def get_data(self, path: str) -> bytes:
        return self._orig("get_data")(path)

    def get_filename(self, fullname: str) -> str:
        return self.original.origin if self.original is not None else ""

    def is_package(self, fullname: str) -> bool:
        return self.original is None or self.original.submodule_search_locations is not None


class _IsolatingFinder(importlib.abc.MetaPathFinder):
    """Finds ``connect_magics_isolated.<token>.<module>`` in the installation registered as ``<token>``."""

    def __init__(self) -> None:
        self.installations: dict[str, Installation] = {}
        self._lock = threading.Lock()

    def register(self, installation: Installation) -> None:
        with self._lock:
            self.installations.setdefault(installation.token, installation)
            if self not in sys.meta_path:
                sys.meta_path.insert(0, self)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != ISOLATED_ROOT and not fullname.startswith(ISOLATED_ROOT + "."):
            return None
        parts = fullname.split(".")
        installation = self.installations.get(parts[1]) if len(parts) > 1 else None
        if len(parts) <= 2:
            if len(parts) == 2 and installation is None:
                return None
            return importlib.machinery.ModuleSpec(fullname, _IsolatingLoader(installation, None, []),
                                                  is_package=True)
        if installation is None:
            return None
        name = ".".join(parts[2:])
        search = installation.roots if len(parts) == 3 else list(path or [])
        original = importlib.machinery.PathFinder.find_spec(name, search)
        if original is None:
            return None
        is_package = original.submodule_search_locations is not None
        spec = importlib.machinery.ModuleSpec(fullname, _IsolatingLoader(installation, original),
                                              origin=original.origin, is_package=is_package)
        if is_package:
            spec.submodule_search_locations = list(original.submodule_search_locations)
        spec.has_location = original.has_location
        if original.has_location and original.cached is not None:
            spec.cached = original.cached
        return spec


_FINDER = _IsolatingFinder()

__all__ = ["ISOLATED_ROOT", "Installation", "installation_of", "public_module_name"]
