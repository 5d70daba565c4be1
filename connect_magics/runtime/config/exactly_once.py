"""KIP-618's settings: the worker's ``exactly.once.source.support``, a source connector's
``exactly.once.support``, ``transaction.boundary`` and ``transaction.boundary.interval.ms``, and the
preflight checks Kafka Connect's herder makes with the connector's hooks.

>>> from connect_magics.runtime.config.worker_config import WorkerConfig
>>> exactly_once_enabled(WorkerConfig("b:9092", "nb", {"exactly.once.source.support": "Enabled"}))
True
>>> TransactionBoundary.of({"transaction.boundary": "interval", "transaction.boundary.interval.ms": "500"}, 60000)
TransactionBoundary(kind='interval', interval_ms=500)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_magics.api.config import CaseInsensitiveValidString, ConfigValue
from connect_magics.api.connector import ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector

log = logging.getLogger(__name__)

WORKER_SUPPORT = "exactly.once.source.support"
WORKER_LEVELS = ("disabled", "preparing", "enabled")
EXACTLY_ONCE_SUPPORT = "exactly.once.support"
EXACTLY_ONCE_LEVELS = ("requested", "required")
TRANSACTION_BOUNDARY = "transaction.boundary"
TRANSACTION_BOUNDARIES = ("poll", "interval", "connector")
TRANSACTION_BOUNDARY_INTERVAL = "transaction.boundary.interval.ms"
EXACTLY_ONCE_GROUP = "Exactly Once Support"


def exactly_once_enabled(worker: Mapping[str, str]) -> bool:
    """True when the worker runs source tasks exactly once (``exactly.once.source.support=enabled``)."""
    return str(worker.get(WORKER_SUPPORT, "disabled")).strip().lower() == "enabled"


@dataclass(frozen=True)
class TransactionBoundary:
    """When an exactly-once source task commits its transaction: after every ``poll`` batch, every
    ``interval_ms``, or when the task says so (``connector``)."""

    kind: str
    interval_ms: int

    @classmethod
    def of(cls, connector_config: Mapping[str, str], offset_flush_interval_ms: int) -> TransactionBoundary:
        """From a validated connector config (the interval defaults to ``offset.flush.interval.ms``)."""
        kind = str(connector_config.get(TRANSACTION_BOUNDARY) or "poll").strip().lower()
        interval = connector_config.get(TRANSACTION_BOUNDARY_INTERVAL)
        return cls(kind, int(interval) if interval not in (None, "") else offset_flush_interval_ms)


def _unexpected(e: Exception) -> str:
    message = str(e).strip()
    return ("An unexpected error occurred during validation" + (f": {message}" if message else
            "; please see the worker logs for more details."))


def validate_exactly_once(connector: SourceConnector, config: dict[str, str], values: dict[str, ConfigValue],
                          worker: Mapping[str, str]) -> None:
    """Kafka Connect's preflight checks of ``exactly.once.support=required`` and
    ``transaction.boundary=connector``, as errors on those two keys (only if they are valid so far)."""
    support = values.get(EXACTLY_ONCE_SUPPORT)
    if support is not None and not support.errors and str(support.value).strip().lower() == "required":
        if not exactly_once_enabled(worker):
            support.errors.append("This worker does not have exactly-once source support enabled.")
        try:
            answer = connector.exactly_once_support(dict(config))
            if answer is None:
                support.errors.append(
                    "The connector does not implement the API required for preflight validation of exactly-once "
                    "source support. Please consult the documentation for the connector to determine whether it "
                    "supports exactly-once semantics, and then consider reconfiguring the connector to use the value "
                    '"requested" for this property (which will disable this preflight check and allow the connector '
                    "to be created).")
            elif answer is ExactlyOnceSupport.UNSUPPORTED:
                support.errors.append("The connector does not support exactly-once semantics with the provided "
                                      "configuration.")
            elif answer is not ExactlyOnceSupport.SUPPORTED:
                raise ValueError(f"Unexpected value returned from SourceConnector::exactlyOnceSupport: {answer}")
        except Exception as e:  # noqa: BLE001 - reported as Kafka Connect does
            log.error("Failed while validating connector support for exactly-once semantics", exc_info=True)
            support.errors.append(_unexpected(e))
    boundary = values.get(TRANSACTION_BOUNDARY)
    if boundary is not None and not boundary.errors and str(boundary.value).strip().lower() == "connector":
        try:
            answer = connector.can_define_transaction_boundaries(dict(config))
            if answer is None:
                boundary.errors.append(
                    "This connector has returned a null value from its canDefineTransactionBoundaries method, which "
                    "is not permitted. The connector will be treated as if it cannot define its own transaction "
                    "boundaries, and cannot be configured with 'transaction.boundary' set to 'connector'.")
            elif answer is not ConnectorTransactionBoundaries.SUPPORTED:
                boundary.errors.append(
                    "The connector does not support connector-defined transaction boundaries with the given "
                    "configuration. Please reconfigure it to use a different transaction boundary definition.")
        except Exception as e:  # noqa: BLE001
            log.error("Failed while validating connector support for defining its own transaction boundaries",
                      exc_info=True)
            boundary.errors.append(_unexpected(e))


def check_worker_setting(worker: Mapping[str, Any]) -> None:
    """Raise Kafka's ConfigException for an invalid ``exactly.once.source.support``."""
    CaseInsensitiveValidString.in_(*WORKER_LEVELS)(WORKER_SUPPORT, worker.get(WORKER_SUPPORT, "disabled"))
