"""KIP-875's offsets changes need a STOPPED connector: :func:`stopped_for` stops it, acts, and puts it back.

Used by the runtime's rewind and by the offsets editor, on a local runtime or a remote Kafka Connect cluster
alike (only the runtime methods both have are called).

>>> stopped_for(rt, "lines", lambda: rt.reset_offsets("lines"))  # doctest: +SKIP
({'message': 'The offsets for this connector have been reset successfully'}, 'stopped lines, then resumed it')
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from connect_magics.errors import ConnectRestError
from connect_magics.runtime.offsets import ZOMBIES

__all__ = ["stopped_for"]

T = TypeVar("T")


def stopped_for(rt: Any, name: str, action: Callable[[], T], timeout: float = 30.0) -> tuple[T, str]:
    """Stop connector ``name`` if it is not STOPPED, run ``action``, and put it back in its previous state
    (PAUSED: paused; any other: resumed) even when ``action`` fails. While the stopped sink's consumers are
    still leaving their group, ``action`` is tried again (Kafka's "tasks haven't stopped completely yet"
    answer) for up to ``timeout`` seconds. Returns the action's answer and a note of what was done."""
    previous = rt.connector_status(name)["connector"]["state"]
    if previous == "STOPPED":
        return action(), ""
    rt.stop_connector(name)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                answer = action()
                break
            except ConnectRestError as e:
                if e.message != ZOMBIES.format(verb="alter", c=name) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)  # the group's members leave as their tasks stop
    finally:
        (rt.pause_connector if previous == "PAUSED" else rt.resume_connector)(name)
    return answer, f"stopped {name}, then {'paused' if previous == 'PAUSED' else 'resumed'} it"
