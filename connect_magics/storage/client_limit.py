"""How many Kafka clients this process can still create, and a clear error instead of a random one past that.

Every confluent-kafka client (``Producer``, ``Consumer``, ``AdminClient``, transactional or not) takes one
POSIX thread-specific-data key when it is built (``PyThread_tss_create`` in confluent-kafka's handle setup,
released only when the Python object is deallocated, not by ``Consumer.close()``); librdkafka itself uses
compiler TLS (``__thread``) and takes none. Linux allows ``PTHREAD_KEYS_MAX`` (1,024) keys per process, of
which the interpreter and the first client's library initialisation (OpenSSL) hold about a dozen. Past the
limit confluent-kafka raises ``RuntimeError: Failed to initialize thread local storage``.

This module counts the keys still free (by creating and deleting them at once), keeps a ledger of the clients
promised to tasks that are starting but have not built them yet (:func:`reserve`), and builds clients with
:func:`new_client`, which turns that ``RuntimeError`` into :class:`ClientLimitError`, naming the limit.

``CONNECT_MAGICS_THREAD_KEYS_MAX`` lowers the limit this module assumes (for tests and for leaving room to
other libraries in the process); it can never raise it above the operating system's.

>>> r = reserve(2, "Task lines-0")                                          # doctest: +SKIP
>>> producer = new_client(Producer, {"bootstrap.servers": "..."}, "Task lines-0", r)  # doctest: +SKIP
>>> r.release()                                                             # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from connect_magics.api.errors import ConnectException

KEYS_ENV = "CONNECT_MAGICS_THREAD_KEYS_MAX"
DEFAULT_KEYS_MAX = 1024  # glibc's PTHREAD_KEYS_MAX
#: Keys left free for the runtime's own short-lived clients (the offsets API's admin client, a fence's
#: producer built again after a broker outage, a dead letter queue's admin client) when tasks are admitted.
RESERVE = 16
#: The ways past the limit, for every message that names it.
WAYS_PAST = ("run the other tasks on another worker of the group (connect-magics worker), with the processes "
             "executor (executor=\"processes\": each task in a process of its own) or with executor=\"spark\"")

T = TypeVar("T")

_lock = threading.RLock()  # probes, reservations and task clients' construction, one at a time
_outstanding = 0  # clients promised to starting tasks and not built yet


class ClientLimitError(ConnectException):
    """This process cannot create another Kafka client (its thread-specific-data keys are used up)."""


def os_keys_max() -> int:
    """The operating system's per-process limit of thread-specific-data keys (1,024 on Linux)."""
    try:
        value = os.sysconf("SC_THREAD_KEYS_MAX")
    except (AttributeError, ValueError, OSError):
        return DEFAULT_KEYS_MAX
    return value if value and value > 0 else DEFAULT_KEYS_MAX


def keys_max() -> int:
    """The limit assumed here: the operating system's, or ``CONNECT_MAGICS_THREAD_KEYS_MAX`` if lower."""
    limit = os_keys_max()
    raw = os.environ.get(KEYS_ENV, "").strip()
    if raw:
        try:
            return max(0, min(limit, int(raw)))
        except ValueError:
            raise ValueError(f"{KEYS_ENV} must be an integer, not {raw!r}") from None
    return limit


def _pthread() -> tuple[Callable[[Any, Any], int], Callable[[Any], int], type] | None:
    if sys.platform == "win32":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") if sys.platform == "darwin" else None)
        key_t = ctypes.c_uint if sys.platform.startswith("linux") else ctypes.c_ulong
        create, delete = libc.pthread_key_create, libc.pthread_key_delete
    except (OSError, AttributeError):
        return None
    create.argtypes, create.restype = [ctypes.POINTER(key_t), ctypes.c_void_p], ctypes.c_int
    delete.argtypes, delete.restype = [key_t], ctypes.c_int
    return create, delete, key_t


_PTHREAD = _pthread()


def free_keys(at_most: int) -> int | None:
    """How many more clients this process can build, counted up to ``at_most`` (None where it cannot be
    counted). The keys are created and deleted at once; a lowered :func:`keys_max` counts as used."""
    if _PTHREAD is None:
        return None
    create, delete, key_t = _PTHREAD
    hidden = os_keys_max() - keys_max()  # keys a lowered limit takes away
    keys = []
    key = key_t()
    with _lock:
        try:
            while len(keys) < at_most + hidden and create(ctypes.byref(key), None) == 0:
                keys.append(key.value)
        finally:
            for k in keys:
                delete(k)
    return max(0, len(keys) - hidden)


def outstanding() -> int:
    """Clients promised to starting tasks and not built yet."""
    return _outstanding


class Reservation:
    """Clients promised to one task instance: each one it builds with :func:`new_client` is taken off, and
    :meth:`release` gives back those it never built (when the instance ends)."""

    def __init__(self, count: int) -> None:
        self.remaining = count

    def take(self) -> None:
        global _outstanding
        with _lock:
            if self.remaining > 0:
                self.remaining -= 1
                _outstanding -= 1

    def release(self) -> None:
        global _outstanding
        with _lock:
            _outstanding -= self.remaining
            self.remaining = 0


def available(reserve_keys: int = RESERVE, at_most: int = 4096) -> int | None:
    """Clients that can still be promised to tasks: free keys, less those promised and the reserve."""
    with _lock:
        free = free_keys(at_most + reserve_keys + _outstanding)
        return None if free is None else max(0, free - _outstanding - reserve_keys)


def reserve(count: int, message: Callable[[int, int], str]) -> Reservation:
    """Promise ``count`` clients to a starting task, or raise :class:`ClientLimitError` with ``message(count,
    available)`` if the process cannot build that many besides those already promised and the reserve."""
    global _outstanding
    with _lock:
        left = available(RESERVE, count)
        if left is not None and left < count:
            gc.collect()  # clients of stopped tasks that only a cycle keeps alive give their keys back
            left = available(RESERVE, count)
        if left is not None and left < count:
            raise ClientLimitError(message(count, left))
        _outstanding += count
        return Reservation(count)


def new_client(cls: Callable[[dict], T], config: Mapping[str, Any], what: str,
               reservation: Reservation | None = None) -> T:
    """``cls(config)`` (a confluent-kafka client class), raising :class:`ClientLimitError` rather than
    confluent-kafka's ``RuntimeError`` when the process has no thread-specific-data key left for it."""
    with _lock:
        try:
            client = cls(dict(config))
        except RuntimeError as e:
            if "thread local storage" not in str(e):
                raise
            raise ClientLimitError(limit_message(what, 1, 0)) from e
        if reservation is not None:
            reservation.take()
        return client


def limit_message(what: str, needed: int, left: int) -> str:
    """The clear error: what could not start, the limit it met, and the ways past it."""
    return (f"{what} cannot start: it needs {needed} more Kafka client{'s' if needed != 1 else ''} and this process "
            f"can build {left} more. Each Kafka client (producer, consumer or admin client) takes one of the "
            f"process's {keys_max()} thread-specific-data keys (PTHREAD_KEYS_MAX), so one runtime with the "
            f"threads executor holds only so many tasks; {WAYS_PAST}, or stop connectors you no longer need")
