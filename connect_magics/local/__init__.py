"""The embedded Apache Kafka broker used by the quickstart and the tests (and, for fault tests, a small
multi-broker cluster and fault injection: :mod:`connect_magics.local.cluster`, :mod:`connect_magics.local.faults`),
and a local Schema Registry beside it (:mod:`connect_magics.local.registry`)."""

from connect_magics.local.broker import BrokerError, EmbeddedBroker, default_data_dir
from connect_magics.local.cluster import EmbeddedCluster
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION, KafkaDownloadError, kafka_classpath
from connect_magics.local.java import JavaNotFoundError, find_java
from connect_magics.local.registry import SchemaRegistry, SchemaRegistryError

__all__ = ["BrokerError", "DEFAULT_KAFKA_VERSION", "EmbeddedBroker", "EmbeddedCluster", "JavaNotFoundError",
           "KafkaDownloadError", "SchemaRegistry", "SchemaRegistryError", "default_data_dir", "find_java",
           "kafka_classpath"]
