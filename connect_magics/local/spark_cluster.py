"""A Spark standalone cluster on 127.0.0.1 for tests and benchmarks (tests/spark/test_spark_cluster.py,
``bench/bench_spark.py --cluster``): a master and worker JVMs started from pyspark's own ``bin/spark-class`` (no
Spark distribution needed), each worker with its own work directory.

>>> with SparkCluster(tmp_path, workers=2) as cluster:  # doctest: +SKIP
...     session_on(cluster.master_url)
...     cluster.kill_worker(0)        # SIGKILL to the worker JVM, as when its machine is lost
...     cluster.worker_of(python_pid)  # which worker JVM a process (an executor's Python worker) descends from

``stop()`` kills every JVM it started and every process they started (executors, their Python workers).
Linux only: process ancestry is read from ``/proc``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from connect_magics.local.broker import free_port
from connect_magics.local.java import SPARK_JAVA_VERSIONS, find_java

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
DAEMON_MEMORY = "512m"  # the master's and the workers' own heaps (executors get spark.executor.memory)


def spark_home() -> Path:
    """The installed pyspark's directory, which holds Spark's jars and ``bin/spark-class``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class SparkCluster:
    """A master and ``workers`` worker JVMs, each worker offering ``cores`` cores and ``memory`` to executors.

    Ports are free ones; logs and work directories are under ``root``. Ready once the master's JSON page
    lists every worker ALIVE.
    """

    def __init__(self, root: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                 start_timeout: float = 180.0) -> None:
        self.root = Path(root)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.start_timeout = start_timeout
        self.port = free_port()
        self.webui_port = free_port()
        self.master: subprocess.Popen | None = None
        self.worker_procs: list[subprocess.Popen] = []
        self._orphans: list[tuple[int, int]] = []  # (pid, start time) of what a killed worker had started
        self._environ: dict[str, str] | None = None

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{HOST}:{self.webui_port}"

    def _env(self) -> dict[str, str]:
        """The JVMs' environment: a Java Spark supports, Spark's home and an empty conf directory, 127.0.0.1."""
        if self._environ is not None:
            return self._environ
        java = find_java(prefer=SPARK_JAVA_VERSIONS)
        if java.major not in SPARK_JAVA_VERSIONS:
            raise RuntimeError(f"Spark needs Java 17 or 21; found only Java {java.major} at {java.executable}")
        conf = self.root / "conf"  # empty: no spark-env.sh or spark-defaults.conf of the machine's
        conf.mkdir(parents=True, exist_ok=True)
        (self.root / "local").mkdir(exist_ok=True)
        self._environ = {**os.environ, "JAVA_HOME": java.home, "SPARK_HOME": str(spark_home()),
                         "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": HOST,
                         "SPARK_LOCAL_DIRS": str(self.root / "local"), "SPARK_DAEMON_MEMORY": DAEMON_MEMORY}
        return self._environ

    def _launch(self, name: str, args: list[str]) -> subprocess.Popen:
        """``bin/spark-class ARGS``; the script execs the JVM, so the process is the JVM."""
        log = (self.root / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(["bash", str(spark_home() / "bin" / "spark-class"), *args], env=self._env(),
                                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=self.root)
        finally:
            log.close()

    def start(self) -> SparkCluster:
        """Start the master and the workers, and wait until the master lists every worker ALIVE."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.master = self._launch("master", [MASTER_CLASS, "--host", HOST, "--port", str(self.port),
                                              "--webui-port", str(self.webui_port)])
        for i in range(self.workers):
            self.start_worker(i)
        self.wait_for_workers(self.workers)
        return self

    def start_worker(self, i: int) -> subprocess.Popen:
        """Start worker ``i`` (a new JVM, also after ``kill_worker(i)``); returns its process."""
        work = self.root / f"worker-{i}"
        work.mkdir(parents=True, exist_ok=True)
        proc = self._launch(f"worker-{i}", [WORKER_CLASS, "--host", HOST, "--webui-port", "0",
                                            "--cores", str(self.cores), "--memory", self.memory,
                                            "--work-dir", str(work), self.master_url])
        if i < len(self.worker_procs):
            self.worker_procs[i] = proc
        else:
            self.worker_procs.append(proc)
        return proc

    def state(self) -> dict:
        """The master's JSON page (``/json/``): workers, their states and cores, applications."""
        with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=5) as resp:
            return json.load(resp)

    def alive_workers(self) -> int:
        return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")

    def wait_for_workers(self, n: int) -> None:
        """Wait until the master lists ``n`` ALIVE workers; fail at once, with the logs, if a JVM exited."""
        def ready_or_exited() -> str | None:
            procs = [p for p in [self.master, *self.worker_procs] if p is not None]
            if any(p.poll() is not None for p in procs):
                return "exited"
            return "ready" if self.alive_workers() >= n else None

        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                outcome = ready_or_exited()
            except (OSError, ValueError):  # the master's web UI not answering yet
                outcome = None
            if outcome == "exited":
                raise RuntimeError(f"A Spark JVM exited while the cluster started:\n{self.log_tails()}")
            if outcome == "ready":
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {self.start_timeout} s waiting for {n} ALIVE workers on "
                                   f"{self.master_url}\n{self.log_tails()}")
            time.sleep(0.05)

    def log_tails(self, chars: int = 3000) -> str:
        """The end of every JVM's log, for failure messages."""
        return "\n".join(f"--- {log.name}:\n{log.read_text(errors='replace')[-chars:]}"
                         for log in sorted(self.root.glob("*.log")))

    def kill_worker(self, i: int) -> int:
        """SIGKILL worker ``i``'s JVM (its executors then exit, as when they lose their worker); returns its pid."""
        proc = self.worker_procs[i]
        self._orphans += descendants(proc.pid)  # killed at stop() if still there
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        return proc.pid

    def worker_of(self, pid: int) -> int | None:
        """The index of the (running) worker JVM that ``pid`` descends from, None if none does."""
        lineage = ancestors(pid)
        for i, proc in enumerate(self.worker_procs):
            if proc.poll() is None and proc.pid in lineage:
                return i
        return None

    def stop(self) -> None:
        """SIGKILL every JVM of the cluster and whatever they started (executors, Python workers)."""
        procs = [p for p in [*self.worker_procs, self.master] if p is not None]
        doomed = [d for p in procs if p.poll() is None for d in descendants(p.pid)] + self._orphans
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for pid, started in doomed:
            if _start_time(pid) == started:  # the same process, not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for proc in procs:
            proc.wait(30)

    def __enter__(self) -> SparkCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, ...), None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None  # field 22 of stat: start time in clock ticks since boot


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def ancestors(pid: int) -> list[int]:
    """``pid`` and its parents up to init."""
    chain = []
    while pid > 1 and (fields := _stat(pid)) is not None:
        chain.append(pid)
        pid = int(fields[1])
    return chain


def descendants(pid: int) -> list[tuple[int, int]]:
    """(pid, start time) of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        started = _start_time(child)
        if started is not None:
            found.append((child, started))
        todo += children.get(child, [])
    return found
