"""Kafka Connect's REST API, a thin layer over :class:`~connect_magics.ConnectRuntime` (docs/rest.md)."""

from connect_magics.rest.auth import RestAuth, RestAuthError
from connect_magics.rest.server import ConnectRestApi, RestServer

__all__ = ["ConnectRestApi", "RestAuth", "RestAuthError", "RestServer"]
