"""Connection URLs and what differs between databases, on SQLAlchemy.

Confluent's JDBC URLs are translated to SQLAlchemy URLs (``jdbc:postgresql://host:port/db`` to
``postgresql+psycopg://host:port/db``, ``jdbc:sqlite:path`` to ``sqlite:///path``, ``jdbc:mysql://`` to
``mysql+pymysql://``); SQLAlchemy URLs are taken as they are, ``postgresql://`` meaning psycopg 3.
``connection.user`` / ``connection.password`` override what the URL holds.

>>> str(sqlalchemy_url("jdbc:postgresql://db.example:5433/shop?sslmode=require", "ann", None))
'postgresql+psycopg://ann@db.example:5433/shop?sslmode=require'
>>> str(sqlalchemy_url("jdbc:sqlite:/tmp/x.db", None, None))
'sqlite:////tmp/x.db'
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from connect_magics.api.config import ConfigException

CONNECTION_URL = "connection.url"

_JDBC_SUBPROTOCOLS = {
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mariadb+pymysql",
    "sqlserver": "mssql+pyodbc",
    "oracle": "oracle+oracledb",
}


def sqlalchemy_url(url: str, user: str | None, password: str | None) -> URL:
    """The SQLAlchemy URL for a ``connection.url`` (JDBC or SQLAlchemy); a bad URL raises a
    :class:`ConfigException` naming ``connection.url``."""
    if not url or not url.strip():
        raise ConfigException(CONNECTION_URL, url, "The JDBC or SQLAlchemy URL of the database is required")
    url = url.strip()
    try:
        if url.startswith("jdbc:"):
            parsed = _from_jdbc(url)
        else:
            parsed = make_url(url)
            if parsed.drivername == "postgresql":
                parsed = parsed.set(drivername="postgresql+psycopg")
    except ConfigException:
        raise
    except Exception as e:  # noqa: BLE001 - SQLAlchemy's ArgumentError and friends
        raise ConfigException(CONNECTION_URL, url, f"Not a JDBC or SQLAlchemy URL: {e}") from None
    if user:
        parsed = parsed.set(username=user)
    if password:
        parsed = parsed.set(password=password)
    return parsed


def _from_jdbc(url: str) -> URL:
    rest = url[len("jdbc:"):]
    sub, _, tail = rest.partition(":")
    if sub == "sqlite":
        if tail in ("", ":memory:"):
            return URL.create("sqlite")
        if tail.startswith("file:"):
            tail = tail[len("file:"):]
        return URL.create("sqlite", database=tail.split("?", 1)[0])
    driver = _JDBC_SUBPROTOCOLS.get(sub)
    if driver is None:
        known = ", ".join(["sqlite", *_JDBC_SUBPROTOCOLS])
        raise ConfigException(CONNECTION_URL, url, f"No SQLAlchemy dialect is known for the JDBC sub-protocol "
                                                   f"'{sub}' (known: {known}); give a SQLAlchemy URL instead")
    if sub == "sqlserver":  # jdbc:sqlserver://host:port;databaseName=db;user=...
        host, *props = tail.removeprefix("//").split(";")
        options = dict(p.split("=", 1) for p in props if "=" in p)
        hostname, _, port = host.partition(":")
        return URL.create(driver, username=options.pop("user", None), password=options.pop("password", None),
                          host=hostname or None, port=int(port) if port else None,
                          database=options.pop("databaseName", None) or options.pop("database", None),
                          query=options)
    if not tail.startswith("//"):  # jdbc:postgresql:database
        return URL.create(driver, host="localhost", database=tail or None)
    split = urllib.parse.urlsplit("x:" + tail)
    query = dict(urllib.parse.parse_qsl(split.query))
    return URL.create(driver, username=query.pop("user", None) or split.username,
                      password=query.pop("password", None) or split.password,
                      host=split.hostname, port=split.port,
                      database=split.path.lstrip("/") or None, query=query)


def create_engine(url: URL) -> Engine:
    """An engine with a small pool; SQLite waits up to 30 s for a lock instead of 5."""
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if url.get_backend_name() == "sqlite":
        kwargs["connect_args"] = {"timeout": 30}
    return sa.create_engine(url, **kwargs)


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def current_time(conn: sa.Connection) -> dt.datetime:
    """The database's clock (aware, UTC) where it has one worth asking; SQLite's is this process's."""
    if conn.dialect.name == "postgresql":
        value = conn.execute(sa.text("SELECT CURRENT_TIMESTAMP")).scalar_one()
    elif conn.dialect.name in ("mysql", "mariadb"):
        value = conn.execute(sa.text("SELECT UTC_TIMESTAMP(6)")).scalar_one()
    else:
        return dt.datetime.now(dt.timezone.utc)
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)


def upsert_statement(dialect: str, table: sa.Table, key_columns: Sequence[str], columns: Sequence[str]) -> Any:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE`` (PostgreSQL, SQLite) or ``ON DUPLICATE KEY UPDATE``
    (MySQL) for executemany with one parameter per column."""
    updates = [c for c in columns if c not in key_columns]
    if dialect in ("postgresql", "sqlite"):
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        stmt = insert(table)
        if not updates:
            return stmt.on_conflict_do_nothing(index_elements=list(key_columns))
        return stmt.on_conflict_do_update(index_elements=list(key_columns),
                                          set_={c: stmt.excluded[c] for c in updates})
    if dialect in ("mysql", "mariadb"):
        from sqlalchemy.dialects.mysql import insert

        stmt = insert(table)
        target = updates or list(key_columns)
        return stmt.on_duplicate_key_update({c: stmt.inserted[c] for c in target})
    raise NotImplementedError(f"insert.mode=upsert is not supported for the {dialect} dialect")
