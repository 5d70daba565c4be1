"""Authentication of REST requests: HTTP basic against a credentials file (the format of Kafka Connect's
``BasicAuthSecurityRestExtension`` property file: one ``user=password`` or ``user: password`` per line),
or a bearer token. A server listening on anything but loopback must have one (see ``RestServer``).

>>> auth = RestAuth(users={"admin": "secret"})
>>> auth.allows("Basic " + base64.b64encode(b"admin:secret").decode()), auth.allows(None)
(True, False)
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
import socket
from dataclasses import dataclass, field
from pathlib import Path


class RestAuthError(ValueError):
    """Unusable authentication settings; the message names the setting and the reason."""


@dataclass(frozen=True)
class RestAuth:
    """Who may call the API: ``users`` (HTTP basic) and/or a bearer ``token``."""

    users: dict[str, str] = field(default_factory=dict)
    token: str | None = None

    def __post_init__(self) -> None:
        if not self.users and not self.token:
            raise RestAuthError("REST authentication needs at least one user or a token")

    @classmethod
    def from_files(cls, credentials_file: str | Path | None = None,
                   token_file: str | Path | None = None) -> RestAuth:
        """Users from a properties file (``user=password``), the token from the first line of a file."""
        users: dict[str, str] = {}
        if credentials_file is not None:
            from jproperties import Properties

            props = Properties()
            try:
                with open(credentials_file, "rb") as f:
                    props.load(f, "utf-8")
            except OSError as e:
                raise RestAuthError(f"REST credentials file {credentials_file}: {e.strerror}") from None
            users = {user: value.data for user, value in props.items()}
            if not users:
                raise RestAuthError(f"REST credentials file {credentials_file} has no user=password line")
        token = None
        if token_file is not None:
            try:
                token = Path(token_file).read_text().strip()
            except OSError as e:
                raise RestAuthError(f"REST token file {token_file}: {e.strerror}") from None
            if not token:
                raise RestAuthError(f"REST token file {token_file} is empty")
        return cls(users, token)

    def allows(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value carries valid credentials (compared in constant time)."""
        if not authorization:
            return False
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and self.token is not None:
            return hmac.compare_digest(value.strip().encode(), self.token.encode())
        if scheme.lower() == "basic" and self.users:
            try:
                user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return False
            expected = self.users.get(user)
            return expected is not None and hmac.compare_digest(password.encode(), expected.encode())
        return False


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
        except (OSError, ValueError):
            return False


def check_listener(host: str, auth: RestAuth | None, mutual_tls: bool = False) -> None:
    """Refuse to listen on anything but loopback without authentication: credentials (``auth``) or client
    certificates (an https listener with ``ssl.client.auth=required``, ``mutual_tls``)."""
    if auth is None and not mutual_tls and not is_loopback(host):
        raise RestAuthError(f"Listening on {host} (not a loopback address) requires authentication: give a "
                            "credentials file or a token (connect-magics worker --rest-credentials FILE or "
                            "--rest-token-file FILE), or require client certificates on an https listener "
                            "(listeners.https.ssl.client.auth=required), or listen on 127.0.0.1")
