"""The one exception type of the runtime's API, carrying the HTTP status Kafka Connect would answer.

>>> try:
...     raise NotFoundError("Connector c not found")
... except ConnectRestError as e:
...     (e.status, e.message)
(404, 'Connector c not found')
"""

from __future__ import annotations


class ConnectRestError(Exception):
    """An error answered as Kafka Connect's REST API would: ``status`` and ``message``."""

    status = 500

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    def to_json(self) -> dict:
        """The REST error body: ``{"error_code": ..., "message": ...}``."""
        return {"error_code": self.status, "message": self.message}


class BadRequestError(ConnectRestError):
    status = 400


class ForbiddenError(ConnectRestError):
    status = 403


class NotFoundError(ConnectRestError):
    status = 404


class ConflictError(ConnectRestError):
    status = 409


def error_for_status(status: int, message: str) -> ConnectRestError:
    """The error class of an HTTP status, for errors that crossed a process boundary.

    >>> type(error_for_status(404, "Connector c not found")).__name__
    'NotFoundError'
    """
    for cls in (BadRequestError, ForbiddenError, NotFoundError, ConflictError):
        if cls.status == status:
            return cls(message)
    return ConnectRestError(message, status)
