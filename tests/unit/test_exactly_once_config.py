"""KIP-618 settings: the worker's exactly.once.source.support, a source connector's exactly.once.support and
transaction.boundary, and the preflight checks with the connector's hooks, with Kafka Connect's messages."""

from __future__ import annotations

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.connector import ConnectorTransactionBoundaries, ExactlyOnceSupport
from connect_magics.connectors.sequence import SequenceSourceConnector
from connect_magics.runtime.config.connector_config import config_errors, validate_connector_config
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.plugins.registry import Plugins

ENABLED = {"exactly.once.source.support": "enabled"}


class Unsupported(SequenceSourceConnector):
    def exactly_once_support(self, connector_config):
        return ExactlyOnceSupport.UNSUPPORTED

    def can_define_transaction_boundaries(self, connector_config):
        return ConnectorTransactionBoundaries.UNSUPPORTED


class Silent(SequenceSourceConnector):
    def exactly_once_support(self, connector_config):
        return None

    def can_define_transaction_boundaries(self, connector_config):
        return None


class Raising(SequenceSourceConnector):
    def exactly_once_support(self, connector_config):
        raise RuntimeError("cannot tell")

    def can_define_transaction_boundaries(self, connector_config):
        raise RuntimeError("")


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    p = Plugins()
    for cls in (Unsupported, Silent, Raising):
        p.register(cls)
    return p


def errors(plugins: Plugins, config: dict[str, str], worker: dict[str, str] | None = None) -> dict[str, list[str]]:
    infos = validate_connector_config({"name": "c", "topic": "t", **config}, plugins, worker=worker or {})
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}


def test_the_worker_setting_takes_three_values_in_any_case() -> None:
    assert WorkerConfig("b:9092", "g", {"exactly.once.source.support": "Preparing"})
    with pytest.raises(ConfigException) as e:
        WorkerConfig("b:9092", "g", {"exactly.once.source.support": "on"})
    assert str(e.value) == ("Invalid value on for configuration exactly.once.source.support: String must be one "
                            "of (case insensitive): DISABLED, ENABLED, PREPARING")


def test_required_on_a_worker_without_exactly_once_support(plugins: Plugins) -> None:
    assert errors(plugins, {"connector.class": "SequenceSource", "exactly.once.support": "required"}) == {
        "exactly.once.support": ["This worker does not have exactly-once source support enabled."]}
    assert errors(plugins, {"connector.class": "SequenceSource", "exactly.once.support": "REQUIRED"}, ENABLED) == {}
    assert errors(plugins, {"connector.class": "Unsupported", "exactly.once.support": "required"}) == {
        "exactly.once.support": ["This worker does not have exactly-once source support enabled.",
                                 "The connector does not support exactly-once semantics with the provided "
                                 "configuration."]}  # both, in Kafka's order


@pytest.mark.parametrize("cls, message", [
    (Unsupported, "The connector does not support exactly-once semantics with the provided configuration."),
    (Silent, 'The connector does not implement the API required for preflight validation of exactly-once source '
             'support. Please consult the documentation for the connector to determine whether it supports '
             'exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" '
             'for this property (which will disable this preflight check and allow the connector to be created).'),
    (Raising, "An unexpected error occurred during validation: cannot tell"),
])
def test_required_asks_the_connector(plugins: Plugins, cls: type, message: str) -> None:
    config = {"connector.class": cls.__qualname__, "exactly.once.support": "required"}
    assert errors(plugins, config, ENABLED) == {"exactly.once.support": [message]}
    assert errors(plugins, {**config, "exactly.once.support": "requested"}, ENABLED) == {}


@pytest.mark.parametrize("cls, message", [
    (Unsupported, "The connector does not support connector-defined transaction boundaries with the given "
                  "configuration. Please reconfigure it to use a different transaction boundary definition."),
    (Silent, "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
             "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and "
             "cannot be configured with 'transaction.boundary' set to 'connector'."),
    (Raising, "An unexpected error occurred during validation; please see the worker logs for more details."),
])
def test_connector_defined_boundaries_ask_the_connector(plugins: Plugins, cls: type, message: str) -> None:
    config = {"connector.class": cls.__qualname__, "transaction.boundary": "connector"}
    assert errors(plugins, config) == {"transaction.boundary": [message]}
    assert errors(plugins, {**config, "connector.class": "SequenceSource"}) == {}


@pytest.mark.parametrize("key, value, message", [
    ("exactly.once.support", "always", "Invalid value always for configuration exactly.once.support: String must be "
                                       "one of (case insensitive): REQUIRED, REQUESTED"),
    ("transaction.boundary", "batch", "Invalid value batch for configuration transaction.boundary: String must be one "
                                      "of (case insensitive): INTERVAL, POLL, CONNECTOR"),
    ("transaction.boundary.interval.ms", "-1", "Invalid value -1 for configuration transaction.boundary.interval.ms: "
                                               "Value must be at least 0"),
    ("transaction.boundary.interval.ms", "soon", "Invalid value soon for configuration "
                                                 "transaction.boundary.interval.ms: Not a number of type LONG"),
])
def test_invalid_values_name_the_setting(plugins: Plugins, key: str, value: str, message: str) -> None:
    assert errors(plugins, {"connector.class": "SequenceSource", key: value}) == {key: [message]}


def test_the_settings_are_in_the_validate_answer_with_kafka_defaults(plugins: Plugins) -> None:
    infos = validate_connector_config({"name": "c", "connector.class": "SequenceSource", "topic": "t"}, plugins)
    definitions = {c["definition"]["name"]: c["definition"] for c in infos["configs"]}
    assert {k: (definitions[k]["default_value"], definitions[k]["group"]) for k in (
        "exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms")} == {
        "exactly.once.support": ("requested", "Exactly Once Support"),
        "transaction.boundary": ("poll", "Exactly Once Support"),
        "transaction.boundary.interval.ms": (None, "Exactly Once Support")}
    assert config_errors(infos) == []
