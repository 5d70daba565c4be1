"""A small multi-broker KRaft cluster on 127.0.0.1, for faults a single node cannot show ("the transaction
coordinator moved").

One controller-only node and ``nodes`` broker-only nodes (node ids ``0..nodes-1``), each an
:class:`~connect_magics.local.broker.EmbeddedBroker` in a subdirectory of ``data_dir``. The controller stays
up, so any broker can be stopped, killed or paused and its partitions' leadership moves to the others:
``__consumer_offsets``, ``__transaction_state`` and new topics are replicated on every broker
(``min.insync.replicas=1``).

>>> with EmbeddedCluster(nodes=2) as cluster:  # doctest: +SKIP
...     i = cluster.transaction_coordinator("nb-lines-0")
...     cluster.node(i).stop()  # the coordinator moves to the other broker
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from connect_magics.local.broker import (
    _TEMPORARY_DIRS,
    DEFAULT_HEAP,
    HOST,
    BrokerError,
    EmbeddedBroker,
    new_cluster_id,
)
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION

CONTROLLER_ID = 100
CONTROLLER_HEAP = "256m"
TRANSACTION_STATE = "__transaction_state"
CONSUMER_OFFSETS = "__consumer_offsets"


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units, 32-bit overflow).

    >>> java_string_hash("nb-lines-0")
    115445193
    """
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def coordinator_partition(key: str, partitions: int) -> int:
    """The partition of ``__transaction_state`` / ``__consumer_offsets`` that holds a transactional id or
    group id: ``Utils.abs(key.hashCode()) % partitions``, as Kafka's coordinators compute it."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class EmbeddedCluster:
    """A KRaft cluster: a controller and ``nodes`` brokers, replication factor ``nodes`` for the internal
    topics and new topics. ``server_properties`` extend every broker's ``server.properties``."""

    def __init__(self, nodes: int = 2, data_dir: str | Path | None = None,
                 kafka_version: str = DEFAULT_KAFKA_VERSION, heap: str = DEFAULT_HEAP,
                 java: str | None = None, server_properties: Mapping[str, str] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        if nodes < 2:
            raise ValueError("An EmbeddedCluster has at least 2 broker nodes (use EmbeddedBroker for one)")
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="connect-magics-cluster-"))
        if not data_dir:
            _TEMPORARY_DIRS.add(self.data_dir)
        cluster_id = new_cluster_id()
        common = {"kafka_version": kafka_version, "java": java, "progress": progress, "cluster_id": cluster_id}
        replicated = {
            "offsets.topic.replication.factor": str(nodes), "transaction.state.log.replication.factor": str(nodes),
            "transaction.state.log.min.isr": "1", "default.replication.factor": str(nodes),
            "min.insync.replicas": "1", "share.coordinator.state.topic.replication.factor": str(nodes),
            **(server_properties or {})}
        # The controller applies the defaults of topics created without a replication factor: it gets them too.
        self.controller = EmbeddedBroker(self.data_dir / "controller", heap=CONTROLLER_HEAP, node_id=CONTROLLER_ID,
                                         roles="controller", server_properties=replicated, **common)
        voters = f"{CONTROLLER_ID}@{HOST}:{self.controller.controller_port}"
        self.nodes = [EmbeddedBroker(self.data_dir / f"node-{i}", heap=heap, node_id=i, roles="broker",
                                     quorum_voters=voters, server_properties=replicated, **common)
                      for i in range(nodes)]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(node.bootstrap_servers for node in self.nodes)

    def node(self, i: int) -> EmbeddedBroker:
        """Broker node ``i`` (its Kafka node id is ``i``): stop, start, kill, pause it."""
        return self.nodes[i]

    def _admin(self):  # noqa: ANN202 - confluent_kafka is imported lazily, as in broker.py
        from confluent_kafka.admin import AdminClient

        from connect_magics.local.broker import _SILENT

        return AdminClient({"bootstrap.servers": self.bootstrap_servers, "logger": _SILENT})

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, timeout: float = 120.0) -> EmbeddedCluster:
        """Start the controller and the brokers; return once every broker is registered and the internal
        topics exist with all their replicas."""
        self.controller.start(timeout)
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            for future in [pool.submit(node.start, timeout) for node in self.nodes]:
                future.result()
        self.wait_for_brokers(timeout)
        self._create_internal_topics(timeout)
        return self

    def wait_for_brokers(self, timeout: float = 60.0) -> None:
        """Wait until the metadata lists every running broker."""
        admin = self._admin()
        expected = {node.node_id for node in self.nodes if node.is_running()}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if set(admin.list_topics(timeout=2).brokers) >= expected:
                    return
            except Exception:  # noqa: BLE001 - not answering yet
                pass
            time.sleep(0.1)
        raise BrokerError(f"Brokers {sorted(expected)} did not all register within {timeout:.0f} s")

    def _create_internal_topics(self, timeout: float) -> None:
        """``__consumer_offsets`` and ``__transaction_state`` are created on a first FindCoordinator: make both
        now, while every broker is up, so that each gets all its replicas."""
        from confluent_kafka import Producer

        from connect_magics.local.broker import _SILENT

        producer = Producer({"bootstrap.servers": self.bootstrap_servers, "transactional.id": "cluster-warm-up",
                             "logger": _SILENT})
        producer.init_transactions(timeout)
        self.partition_leaders(TRANSACTION_STATE, timeout)
        admin = self._admin()  # kept: a client destroyed early never resolves its futures
        deadline = time.monotonic() + timeout
        while CONSUMER_OFFSETS not in admin.list_topics(timeout=timeout).topics:
            try:  # a first FindCoordinator creates the topic; its answer may be NOT_COORDINATOR meanwhile
                admin.describe_consumer_groups(["cluster-warm-up"])["cluster-warm-up"].result(timeout)
            except Exception:  # noqa: BLE001
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.partition_leaders(CONSUMER_OFFSETS, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the brokers (a controlled shutdown each), then the controller."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda node: node.stop(timeout), self.nodes))
        self.controller.stop(timeout)

    def kill(self) -> None:
        for node in [*self.nodes, self.controller]:
            node.kill()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        running = [node.node_id for node in self.nodes if node.is_running()]
        return f"EmbeddedCluster({self.bootstrap_servers}, running brokers {running}, data_dir={str(self.data_dir)!r})"

    # -- where things are ----------------------------------------------------------------------
    def partition_leaders(self, topic: str, timeout: float = 30.0) -> dict[int, int]:
        """``{partition: leader node id}`` of ``topic``; waits until every partition has a leader."""
        admin = self._admin()
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                md = admin.list_topics(topic, timeout=2).topics[topic]
                if md.error is None and md.partitions and all(p.leader >= 0 for p in md.partitions.values()):
                    return {p.id: p.leader for p in md.partitions.values()}
                last = md.error
            except Exception as e:  # noqa: BLE001 - not answering yet
                last = e
            time.sleep(0.1)
        raise BrokerError(f"Topic {topic} has no leader for every partition after {timeout:.0f} s ({last})")

    def _coordinator(self, topic: str, key: str, timeout: float) -> int:
        leaders = self.partition_leaders(topic, timeout)
        return leaders[coordinator_partition(key, len(leaders))]

    def transaction_coordinator(self, transactional_id: str, timeout: float = 30.0) -> int:
        """The node (index and node id) that is the transaction coordinator of ``transactional_id``: the
        leader of its ``__transaction_state`` partition."""
        return self._coordinator(TRANSACTION_STATE, transactional_id, timeout)

    def group_coordinator(self, group_id: str, timeout: float = 30.0) -> int:
        """The node that is the group coordinator of ``group_id`` (leader of its ``__consumer_offsets`` partition)."""
        return self._coordinator(CONSUMER_OFFSETS, group_id, timeout)
