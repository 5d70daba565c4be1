"""Fixtures: a real embedded Apache Kafka broker (one per session, a second on demand), a local
SparkSession with quiet logs and small memory, a real Schema Registry (Apicurio, on demand) and a real
PostgreSQL server (on demand)."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from connect_magics.local import EmbeddedBroker, SchemaRegistry  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that use the broker or Spark fixtures get those markers automatically. For pytest-xdist's
    ``--dist loadgroup`` (the README's command), a module's tests form a group, run on one worker (they share
    the module's fixtures), except the notebooks: each runs in a kernel and with a broker of its own, so they
    spread over the workers one by one."""
    for item in items:
        module = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(item.nodeid if module.startswith("tests/notebook/") else module))
        names = set(getattr(item, "fixturenames", ()))
        if names & {"broker", "second_broker", "bootstrap", "runtime_factory"}:
            item.add_marker(pytest.mark.broker)
        if "spark" in names:
            item.add_marker(pytest.mark.spark)
        if "schema_registry" in names:
            item.add_marker(pytest.mark.registry)
        if "postgres" in names:
            item.add_marker(pytest.mark.postgres)
        if not any(item.iter_markers(name=m) for m in ("broker", "spark", "notebook", "registry", "postgres")):
            item.add_marker(pytest.mark.unit)


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBroker:
    """The session's broker (auto topic creation off, as KIP-158 tests need)."""
    b = EmbeddedBroker(tmp_path_factory.mktemp("broker"),
                       server_properties={"auto.create.topics.enable": "false"})
    b.start()
    yield b
    # Killed, not stopped: nothing reads its data afterwards, and a graceful stop of a broker holding every
    # runtime's internal topics (thousands of partitions by the end of the suite) took tens of seconds.
    # Graceful stops and restarts are tests/integration/test_broker.py's.
    b.kill()


@pytest.fixture(scope="session")
def bootstrap(broker: EmbeddedBroker) -> str:
    return broker.bootstrap_servers


@pytest.fixture(scope="session")
def second_broker(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBroker:
    """A second, independent cluster (for KIP-875's "different Kafka cluster" cases)."""
    b = EmbeddedBroker(tmp_path_factory.mktemp("broker2"),
                       server_properties={"auto.create.topics.enable": "false"})
    b.start()
    yield b
    b.kill()  # as the session's broker


@pytest.fixture(scope="module")
def outage_broker(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBroker:
    """A broker of the test module's own, which its tests stop and start (outages)."""
    b = EmbeddedBroker(tmp_path_factory.mktemp("outage-broker"))
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def schema_registry() -> SchemaRegistry:
    """The session's Schema Registry: Apicurio Registry in memory, Confluent's API at ``.url`` (downloaded from
    Maven Central into the user cache on first use, progress on stderr)."""
    registry = SchemaRegistry()
    registry.start()
    yield registry
    registry.stop()


@pytest.fixture(scope="session")
def postgres():
    """The session's PostgreSQL server (Debian's postgresql package, initdb'd into a temporary directory, on a
    free port): ``.sqlalchemy_url``, ``.jdbc_url``, ``.user``, ``.password``, ``.create_database(name)``."""
    from connect_magics.local.postgres import PostgresServer

    server = PostgresServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def unique() -> str:
    """A short unique suffix for topic, group and connector names."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    """The one classic SparkSession of the test process, with Spark's Kafka source (spark-sql-kafka)."""
    from connect_magics.spark.session import local_spark_session

    session = local_spark_session(warehouse=Path(tmp_path_factory.mktemp("spark-warehouse")), packages=["kafka"])
    yield session
    session.stop()
