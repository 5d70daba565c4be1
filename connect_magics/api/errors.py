"""Exceptions of the Connect API (Kafka's ``org.apache.kafka.connect.errors``).

Example::

    >>> issubclass(DataException, ConnectException)
    True
"""

from __future__ import annotations

__all__ = [
    "AlreadyExistsException", "ConnectException", "DataException", "NotFoundException",
    "RetriableException", "SchemaBuilderException",
]


class ConnectException(Exception):
    """Base of every Connect error; a task that raises it fails."""


class RetriableException(ConnectException):
    """A transient failure: the runtime retries the operation (e.g. ``put`` or ``poll``)."""


class DataException(ConnectException):
    """Bad data: a value that does not match its schema, or bytes a converter cannot read."""


class SchemaBuilderException(DataException):
    """An invalid :class:`~connect_magics.api.data.SchemaBuilder` call."""


class NotFoundException(ConnectException):
    """An unknown connector, task or plugin."""


class AlreadyExistsException(ConnectException):
    """Creating something (e.g. a connector) that already exists."""
