"""Where the runtime's log goes in a kernel: a file, not whichever cell happens to run.

Background threads (task threads, librdkafka's log callbacks, the status writer) log through the
``connect_magics`` logger. With no handler configured, Python's last-resort handler writes their
warnings to ``sys.stderr``, which a Jupyter kernel shows in the cell that is running at that moment: a
task that failed in the background printed its traceback into the next ``%%connect create``. When the
extension loads, the ``connect_magics`` logger gets a file of its own (unless the user configured one)
and stops propagating to the root logger; failures show in the status board and the dashboard, and
``%connect log`` shows the file's last lines.

>>> path = install()        # doctest: +SKIP
>>> tail(20)                # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
from collections import deque
from pathlib import Path

from connect_magics.local.jars import cache_dir

__all__ = ["install", "log_path", "tail", "uninstall"]

LOGGER = "connect_magics"
_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"
_installed: tuple[logging.Handler, int, bool] | None = None  # what install() added, and what it changed


def log_path() -> Path | None:
    """The file the ``connect_magics`` logger writes to (None if no file handler is installed)."""
    for handler in logging.getLogger(LOGGER).handlers:
        if isinstance(handler, logging.FileHandler):
            return Path(handler.baseFilename)
    return None


def install(path: str | os.PathLike[str] | None = None, level: int = logging.INFO) -> Path | None:
    """Send the ``connect_magics`` logger to ``path`` (default: ``<cache>/logs/kernel-<pid>.log``) and no
    longer to the root logger's handlers. Does nothing if the logger has handlers already (the user's, or
    an earlier call): returns the file it writes to, if any."""
    global _installed
    logger = logging.getLogger(LOGGER)
    if logger.handlers:
        return log_path()
    target = Path(path) if path else cache_dir() / "logs" / f"kernel-{os.getpid()}.log"
    target.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(target, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT))
    _installed = (handler, logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level) if logger.level else level)
    logger.propagate = False
    return target


def uninstall() -> None:
    """Undo :func:`install` (the extension unloaded): the logger as it was before."""
    global _installed
    if _installed is None:
        return
    handler, level, propagate = _installed
    logger = logging.getLogger(LOGGER)
    logger.removeHandler(handler)
    handler.close()
    logger.setLevel(level)
    logger.propagate = propagate
    _installed = None


def tail(lines: int = 40) -> str:
    """The last ``lines`` lines of the log file ("" if there is none)."""
    path = log_path()
    if path is None or not path.exists():
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return "".join(deque(f, maxlen=lines))
