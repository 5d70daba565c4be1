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
from collections.abc import Callable, Mapping
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


def _is(value: ConfigValue | None, expected: str) -> bool:
    """True if ``value`` passed validation so far and is ``expected`` (in any case)."""
    return value is not None and not value.errors and str(value.value).strip().lower() == expected


def _ask(value: ConfigValue, hook: Callable[[], Any], what: str, answers: Callable[[Any], str | None]) -> None:
    """Add what ``answers`` makes of the connector's ``hook()`` answer as an error of ``value``; a hook that
    raises is reported as Kafka Connect reports it."""
    try:
        error = answers(hook())
    except Exception as e:  # noqa: BLE001 - reported as Kafka Connect does
        log.error("Failed while validating connector support for %s", what, exc_info=True)
        message = str(e).strip()
        error = "An unexpected error occurred during validation" + (
            f": {message}" if message else "; please see the worker logs for more details.")
    if error:
        value.errors.append(error)


def _exactly_once_error(answer: Any) -> str | None:
    if answer is None:
        return ("The connector does not implement the API required for preflight validation of exactly-once "
                "source support. Please consult the documentation for the connector to determine whether it "
                "supports exactly-once semantics, and then consider reconfiguring the connector to use the value "
                '"requested" for this property (which will disable this preflight check and allow the connector '
                "to be created).")
    if answer is ExactlyOnceSupport.UNSUPPORTED:
        return "The connector does not support exactly-once semantics with the provided configuration."
    if answer is not ExactlyOnceSupport.SUPPORTED:
        raise ValueError(f"Unexpected value returned from SourceConnector::exactlyOnceSupport: {answer}")
    return None


def _boundaries_error(answer: Any) -> str | None:
    if answer is None:
        return ("This connector has returned a null value from its canDefineTransactionBoundaries method, which "
                "is not permitted. The connector will be treated as if it cannot define its own transaction "
                "boundaries, and cannot be configured with 'transaction.boundary' set to 'connector'.")
    if answer is not ConnectorTransactionBoundaries.SUPPORTED:
        return ("The connector does not support connector-defined transaction boundaries with the given "
                "configuration. Please reconfigure it to use a different transaction boundary definition.")
    return None


def validate_exactly_once(connector: SourceConnector, config: dict[str, str], values: dict[str, ConfigValue],
                          worker: Mapping[str, str]) -> None:
    """Kafka Connect's preflight checks of ``exactly.once.support=required`` and
    ``transaction.boundary=connector``, as errors on those two keys (only if they are valid so far)."""
    support = values.get(EXACTLY_ONCE_SUPPORT)
    if _is(support, "required"):
        if not exactly_once_enabled(worker):
            support.errors.append("This worker does not have exactly-once source support enabled.")
        _ask(support, lambda: connector.exactly_once_support(dict(config)), "exactly-once semantics",
             _exactly_once_error)
    boundary = values.get(TRANSACTION_BOUNDARY)
    if _is(boundary, "connector"):
        _ask(boundary, lambda: connector.can_define_transaction_boundaries(dict(config)),
             "defining its own transaction boundaries", _boundaries_error)


def check_worker_setting(worker: Mapping[str, Any]) -> None:
    """Raise Kafka's ConfigException for an invalid ``exactly.once.source.support``."""
    CaseInsensitiveValidString.in_(*WORKER_LEVELS)(WORKER_SUPPORT, worker.get(WORKER_SUPPORT, "disabled"))
