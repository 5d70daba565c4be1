"""The runtime's metrics as plain data: ``{group: {metric: value}}``, what ``ConnectRuntime.metrics()`` returns.

Kafka Connect exposes metrics as JMX MBeans named ``kafka.connect:type=<group>[,tag=value...]``.
Here a group is a string key: the group type alone (``status-backing-store-metrics``) or, for
tagged groups, the type followed by its tags as in the MBean name (see :func:`group_name`).

Parts of the runtime contribute groups by registering a *provider*, a callable returning
``{group: {metric: value}}`` that is called on every :meth:`MetricsRegistry.collect`::

    >>> registry = MetricsRegistry()
    >>> registry.register("status", lambda: {"status-backing-store-metrics": {"status-update-success-total": 3}})
    >>> registry.register("connectors", lambda: {
    ...     group_name("connector-metrics", connector="orders"): {"connector-class": "FileStreamSource",
    ...                                                           "connector-version": "1.0"}})
    >>> registry.collect()["connector-metrics,connector=orders"]["connector-version"]
    '1.0'

Providers must be cheap and must never block (no broker calls): ``metrics()`` is a status call.
A provider that raises is logged and left out; the other groups are still returned.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["MetricsProvider", "MetricsRegistry", "group_name"]

MetricsProvider = Callable[[], Mapping[str, Mapping[str, Any]]]
"""Returns some metric groups: ``{group: {metric: value}}``."""


def group_name(group: str, **tags: object) -> str:
    """The key of a tagged group, written like the MBean's properties after ``type=``.

    Tags keep the given order (Kafka Connect's is ``connector``, then ``task``, then e.g. ``transform``).

    >>> group_name("connector-task-metrics", connector="orders", task=0)
    'connector-task-metrics,connector=orders,task=0'
    >>> group_name("status-backing-store-metrics")
    'status-backing-store-metrics'
    """
    return ",".join([group, *(f"{k}={v}" for k, v in tags.items())])


class MetricsRegistry:
    """Named metric providers; :meth:`collect` merges what they return (thread-safe)."""

    def __init__(self) -> None:
        self._providers: dict[str, MetricsProvider] = {}
        self._lock = threading.Lock()

    def register(self, name: str, provider: MetricsProvider) -> None:
        """Add ``provider`` under ``name`` (a contributor's id); registering a name again replaces it."""
        if not callable(provider):
            raise TypeError(f"provider for {name!r} must be callable, not {type(provider).__name__}")
        with self._lock:
            self._providers[name] = provider

    def unregister(self, name: str) -> None:
        """Remove the provider registered under ``name`` (nothing if there is none)."""
        with self._lock:
            self._providers.pop(name, None)

    def collect(self) -> dict[str, dict[str, Any]]:
        """Every provider's groups, by group name; metrics of a group given by two providers are merged."""
        with self._lock:
            providers = list(self._providers.items())
        out: dict[str, dict[str, Any]] = {}
        for name, provider in providers:
            try:
                groups = provider()
            except Exception:  # noqa: BLE001 - one broken provider must not hide the others
                log.exception("Metrics provider %s failed; its groups are left out", name)
                continue
            for group, metrics in groups.items():
                out.setdefault(str(group), {}).update(metrics)
        return dict(sorted(out.items()))
