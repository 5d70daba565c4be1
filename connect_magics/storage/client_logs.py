"""Where librdkafka's log lines go: Python loggers under ``connect_magics.kafka``, not the kernel's stderr.

>>> client_logger("producer").name
'connect_magics.kafka.producer'
"""

from __future__ import annotations

import logging


def client_logger(name: str) -> logging.Logger:
    """The Python logger that librdkafka messages of a client of this kind (``producer``, ...) go to."""
    return logging.getLogger(f"connect_magics.kafka.{name}")
