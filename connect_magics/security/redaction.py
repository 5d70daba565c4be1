"""Resolved secrets never shown: every value a config provider resolved for a sensitive key (a password, a JAAS
line, a token: :func:`is_sensitive`) is remembered (in this process) and replaced by ``[hidden]`` in log records
and in the traces of statuses.

>>> remember_secret("s3cret-value")
>>> redact("login failed for password s3cret-value")
'login failed for password [hidden]'
"""

from __future__ import annotations

import logging
import re
import threading

HIDDEN = "[hidden]"
MIN_LENGTH = 4  # shorter values ("1", "true") would blank out unrelated text
_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: list[str] = []  # the secrets, longest first (a secret inside another is replaced after it)


#: Config keys whose resolved values are secrets (a user name or a region from a provider is not).
SENSITIVE_KEY = re.compile(r"password|secret|token|credential|jaas|private|(^|[._-])(api[._-]?)?key($|[._-])|auth",
                           re.IGNORECASE)


def is_sensitive(key: str) -> bool:
    """True for a config key whose value is a secret.

    >>> is_sensitive("sasl.jaas.config"), is_sensitive("ssl.key.password"), is_sensitive("user")
    (True, True, False)
    """
    return SENSITIVE_KEY.search(key) is not None


def remember_secret(value: str) -> None:
    """Hide ``value`` from now on (values shorter than four characters are not secrets worth hiding)."""
    if len(value) < MIN_LENGTH or value in _secrets:
        return
    with _lock:
        _secrets.add(value)
        _pattern[:] = sorted(_secrets, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every remembered secret replaced by ``[hidden]``."""
    if not _pattern or not text:
        return text
    for secret in list(_pattern):
        if secret in text:
            text = text.replace(secret, HIDDEN)
    return text


def _redacted_record_factory(factory):
    def make(*args, **kwargs) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        if _pattern:
            record.msg, record.args = redact(record.getMessage()), ()
            if record.exc_info and record.exc_info[0] is not None:
                record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return record
    make.redacting = True  # type: ignore[attr-defined]
    return make


def install_log_redaction() -> None:
    """Hide remembered secrets in every log record made in this process from now on (a record factory, so that
    every logger and handler sees the redacted text; a no-op while no secret was resolved)."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "redacting", False):
        logging.setLogRecordFactory(_redacted_record_factory(factory))
