"""Kafka Connect's REST API, a thin layer over :class:`~connect_magics.ConnectRuntime` (docs/rest.md)."""

from connect_magics.rest.auth import RestAuth, RestAuthError
from connect_magics.rest.listeners import BoundListeners
from connect_magics.rest.server import ConnectRestApi, RestServer
from connect_magics.runtime.config.worker_keys import Listener

__all__ = ["BoundListeners", "ConnectRestApi", "Listener", "RestAuth", "RestAuthError", "RestServer"]
