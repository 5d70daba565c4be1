"""A throwaway PostgreSQL server for the JDBC connectors' tests and tutorials: Debian's ``postgresql``
package's ``initdb`` and ``pg_ctl`` (not on PATH, in ``/usr/lib/postgresql/<version>/bin``).

``initdb`` refuses to run as root: as root the data directory is made in a directory the ``postgres``
user can reach (under ``/tmp``) and the server runs as that user (``runuser``).

Example::

    with PostgresServer() as pg:
        engine = sqlalchemy.create_engine(pg.sqlalchemy_url)
        config = {"connection.url": pg.jdbc_url, "connection.user": pg.user,
                  "connection.password": pg.password}
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from connect_magics.local.orphan_guard import end_with_this_process

__all__ = ["PostgresError", "PostgresServer", "find_postgres_bin"]

HOST = "127.0.0.1"


class PostgresError(RuntimeError):
    """The server could not be found, initialised, started or reached."""


def find_postgres_bin() -> Path:
    """The newest ``/usr/lib/postgresql/*/bin`` that has ``initdb``, else the directory of ``initdb`` on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: [int(x) for x in Path(p).parent.parent.name.split(".") if x.isdigit()])
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise PostgresError("PostgreSQL's initdb was not found: install Debian's postgresql package "
                        "(apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class PostgresServer:
    """``start()`` runs initdb into a fresh temporary directory, starts the server on a free port of
    127.0.0.1, waits until it accepts connections (``startup_timeout`` seconds at most) and creates
    ``database`` owned by ``user``; ``stop()`` stops it (fast shutdown) and removes the directory.
    """

    def __init__(self, database: str = "connect", user: str = "connect", password: str = "connect-secret",
                 startup_timeout: float = 60.0) -> None:
        self.database, self.user, self.password = database, user, password
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self.bin = find_postgres_bin()
        self._dir: Path | None = None
        self._as_root = os.geteuid() == 0

    # -- URLs
    @property
    def sqlalchemy_url(self) -> str:
        """``postgresql+psycopg://user:password@127.0.0.1:port/database``."""
        return f"postgresql+psycopg://{self.user}:{self.password}@{HOST}:{self._port()}/{self.database}"

    @property
    def jdbc_url(self) -> str:
        """``jdbc:postgresql://127.0.0.1:port/database`` (the user and password go in connection.user/password)."""
        return f"jdbc:postgresql://{HOST}:{self._port()}/{self.database}"

    def _port(self) -> int:
        if self.port is None:
            raise PostgresError("The PostgreSQL server is not started")
        return self.port

    # -- lifecycle
    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = list(args)
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise PostgresError(f"{' '.join(args)} failed ({result.returncode}): {result.stderr or result.stdout}")
        return result

    def start(self) -> PostgresServer:
        self._dir = Path(tempfile.mkdtemp(prefix="connect-magics-pg-", dir="/tmp" if self._as_root else None))
        data, socket_dir = self._dir / "data", self._dir / "sock"
        socket_dir.mkdir()
        if self._as_root:
            shutil.chown(self._dir, "postgres", "postgres")
            shutil.chown(socket_dir, "postgres", "postgres")
        pwfile = self._dir / "pw"
        pwfile.write_text("postgres\n")
        if self._as_root:
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=md5",
                  f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C", "--no-sync")
        self.port = _free_port()
        options = (f"-h {HOST} -p {self.port} -k {socket_dir} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c timezone=UTC -c max_connections=200")
        self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self._dir / "server.log"),
                  "-o", options, "-w", "-t", str(int(self.startup_timeout)), "start",
                  timeout=self.startup_timeout + 30)
        self._wait_ready()
        # an immediate shutdown (SIGQUIT to the postmaster) if this process is killed and runs no exit handler
        end_with_this_process(int((data / "postmaster.pid").read_text().split()[0]), signal.SIGQUIT)
        self._setup_database()
        return self

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                psycopg.connect(host=HOST, port=self.port, user="postgres", password="postgres",
                                dbname="postgres", connect_timeout=5).close()
                return
            except psycopg.OperationalError as e:
                if time.monotonic() > deadline:
                    raise PostgresError(f"PostgreSQL on port {self.port} did not accept connections "
                                        f"within {self.startup_timeout} s: {e}") from e
                time.sleep(0.1)

    def _setup_database(self) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(host=HOST, port=self.port, user="postgres", password="postgres",
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(self.user), sql.Literal(self.password)))
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(self.database), sql.Identifier(self.user)))

    def create_database(self, name: str) -> str:
        """Another database owned by :attr:`user`; returns its SQLAlchemy URL."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(host=HOST, port=self._port(), user="postgres", password="postgres",
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(self.user)))
        return f"postgresql+psycopg://{self.user}:{self.password}@{HOST}:{self.port}/{name}"

    def stop(self) -> None:
        if self._dir is None:
            return
        try:
            if self.port is not None and (self._dir / "data" / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self._dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir, self.port = None, None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
