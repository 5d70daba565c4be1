"""Confluent's JDBC source and sink connectors on SQLAlchemy (PostgreSQL through psycopg 3, SQLite, and any
database with a SQLAlchemy dialect): the same class names, config names and source offsets, so that configs
written for ``io.confluent.connect.jdbc`` carry over. See :mod:`.source` and :mod:`.sink`.

>>> JdbcSourceConnector.ALIASES
('io.confluent.connect.jdbc.JdbcSourceConnector',)
"""

from connect_magics.connectors.jdbc.sink import JdbcSinkConnector, JdbcSinkTask
from connect_magics.connectors.jdbc.source import JdbcSourceConnector, JdbcSourceTask

__all__ = ["JdbcSinkConnector", "JdbcSinkTask", "JdbcSourceConnector", "JdbcSourceTask"]
