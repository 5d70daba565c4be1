"""Security for Kafka clients as Kafka Connect users configure it: Java's ``sasl.jaas.config`` and JKS /
PKCS12 / PEM stores turned into librdkafka's settings (:func:`librdkafka_settings`).

This package imports ``connect_magics.api`` only, never the runtime.

>>> librdkafka_settings({"ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/kafka/ca.pem"})
{'ssl.ca.location': '/etc/kafka/ca.pem'}
"""

from connect_magics.security.client_settings import librdkafka_settings

__all__ = ["librdkafka_settings"]
