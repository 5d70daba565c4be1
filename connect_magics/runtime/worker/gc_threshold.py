"""The garbage collector's first threshold while tasks run.

CPython collects its youngest generation each time 700 more container objects (lists, dicts, records, structs)
were allocated than freed. A task holds a whole batch while it converts and sends it (a ``poll()``'s records, their
structs, values and offsets: thousands of containers), so at 700 every young collection finds a batch alive and
promotes it; the promoted batches fill the oldest generation, and the full collections they cause traverse the
whole heap: every module loaded, and in a notebook every object the user holds. On the JDBC source
(``bench/bench_jdbc.py``) full collections took half of the task's time per row (6.3 µs a row read, 2.1 µs with
the threshold below), and ``gc_collect_main`` was 13 % of a scale-bench worker's CPU.

At :data:`STREAMING_THRESHOLD` a batch dies young: it is freed before a collection sees it. At most that many more
container objects wait for their collection (a few MB). The first task to run in a process raises the threshold,
once, from CPython's default (:data:`CPYTHON_DEFAULT`); a process that set its own (``gc.set_threshold``, before or
after), or turned collection off (0), keeps it.

>>> import gc
>>> raise_once(), gc.get_threshold()  # doctest: +SKIP
(True, (50000, 10, 10))
"""

from __future__ import annotations

import gc
import logging
import threading

log = logging.getLogger(__name__)

#: The first threshold tasks run with: several times the containers of a batch of 1,000 records.
STREAMING_THRESHOLD = 50_000
#: CPython's first threshold (3.10 to 3.13), the only one raised: any other was chosen by the process.
CPYTHON_DEFAULT = 700

_RAISED = False
_LOCK = threading.Lock()


def raise_once() -> bool:
    """Raise the collector's first threshold from :data:`CPYTHON_DEFAULT` to :data:`STREAMING_THRESHOLD`, the first
    time this is called in the process; True if it raised it now."""
    global _RAISED
    with _LOCK:
        if _RAISED:
            return False
        _RAISED = True
        first, *older = gc.get_threshold()
        if first != CPYTHON_DEFAULT:
            return False
        gc.set_threshold(STREAMING_THRESHOLD, *older)
    log.info("Raised the garbage collector's first threshold from %d to %d for streaming tasks (a batch of records "
             "is freed before a collection; a threshold set with gc.set_threshold() is kept)", first, STREAMING_THRESHOLD)
    return True
