"""Fixtures of the interop suite: a real Apache Kafka Connect worker (one per session) on the test
broker, the oracle that connect_magics' answers and state are compared with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_magics.local import EmbeddedBroker
from connect_magics.local.connect_worker import JavaConnectWorker

JAVA_GROUP = "java-connect"


@pytest.fixture(scope="session")
def java_connect(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaConnectWorker]:
    """An Apache Kafka Connect worker (distributed mode, group ``java-connect``, the same Kafka version
    as the broker); its jars are downloaded into the user cache on first use."""
    worker = JavaConnectWorker(broker.bootstrap_servers, JAVA_GROUP, tmp_path_factory.mktemp("java-connect"))
    worker.start()
    yield worker
    worker.stop()
