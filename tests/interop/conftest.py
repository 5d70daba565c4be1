"""Fixtures of the interop suite: a real Apache Kafka Connect worker (one per session) on the test
broker, the oracle that connect_magics' answers and state are compared with."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.local.broker import HOST, free_port
from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.rest import RestServer

JAVA_GROUP = "java-connect"
MAGICS_GROUP = "magics-connect"


@pytest.fixture(scope="session")
def java_connect(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaConnectWorker]:
    """An Apache Kafka Connect worker (distributed mode, group ``java-connect``, the same Kafka version
    as the broker) with Prometheus' JMX exporter as a Java agent (``metrics_url``); its jars are downloaded
    into the user cache on first use."""
    worker = JavaConnectWorker(broker.bootstrap_servers, JAVA_GROUP, tmp_path_factory.mktemp("java-connect"),
                               prometheus_port=free_port())
    worker.start()
    yield worker
    worker.stop()


#: The oldest Apache Kafka Connect line the remote mode is tested against (docs/magics.md).
OLDEST_KAFKA = "3.9.1"


@pytest.fixture(scope="session")
def java_connect_oldest(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaConnectWorker]:
    """A worker of the oldest Kafka Connect line claimed (:data:`OLDEST_KAFKA`), group ``java-connect-oldest``."""
    worker = JavaConnectWorker(broker.bootstrap_servers, f"{JAVA_GROUP}-oldest", tmp_path_factory.mktemp("java-old"),
                               kafka_version=OLDEST_KAFKA)
    worker.start(timeout=240)
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def magics_worker(broker: EmbeddedBroker) -> Iterator[RestServer]:
    """``connect-magics worker``'s runtime and REST server, in process (group ``magics-connect``), configured
    like the Java worker: JSON converters, REST listener on 127.0.0.1, a 1 s offset flush."""
    port = free_port()
    config = {"rest.port": str(port), "rest.advertised.host.name": HOST, "offset.flush.interval.ms": "1000",
              "key.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    with ConnectRuntime(broker.bootstrap_servers, MAGICS_GROUP, config) as rt, RestServer(rt, HOST, port) as server:
        yield server


@dataclass
class ParityTally:
    """Labels of the REST comparisons that gave identical answers, and of the expected differences."""

    identical: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)


_TALLY = pytest.StashKey[ParityTally]()
_TRANSFORMS_TALLY = pytest.StashKey[ParityTally]()


@pytest.fixture(scope="session")
def parity_tally(request: pytest.FixtureRequest) -> ParityTally:
    return request.config.stash.setdefault(_TALLY, ParityTally())


@pytest.fixture(scope="session")
def transforms_tally(request: pytest.FixtureRequest) -> ParityTally:
    """The comparisons of tests/interop/test_transforms_parity.py."""
    return request.config.stash.setdefault(_TRANSFORMS_TALLY, ParityTally())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    tally = terminalreporter.config.stash.get(_TALLY, None)
    if tally is not None:
        terminalreporter.write_line(f"REST parity with Apache Kafka Connect: {len(tally.identical)} identical "
                                    f"answers, {len(tally.different)} expected differences "
                                    "(tests/interop/test_rest_parity.py)")
    tally = terminalreporter.config.stash.get(_TRANSFORMS_TALLY, None)
    if tally is not None:
        terminalreporter.write_line(f"Transformations parity with Apache Kafka Connect: {len(tally.identical)} equal, "
                                    f"{len(tally.different)} expected differences "
                                    "(tests/interop/test_transforms_parity.py)")
