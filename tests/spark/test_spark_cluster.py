"""``executor="spark"`` on a Spark standalone cluster: a master and two worker JVMs
(connect_magics/local/spark_cluster.py), and a Connect worker whose SparkSession is on that master, in a process
of its own (spark_cluster_host.py).

A FileStreamSource (exactly once) feeds a topic and a SparkTableSink with ``tasks.max=2`` writes it into a table, all
three tasks on the cluster, the two sink tasks on different worker JVMs; the worker JVM of the sink task holding
more unflushed records is killed with SIGKILL while records stream in; Spark runs the lost tasks again on the
other worker, and the table holds every line of the file exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from helpers import RestClient, wait_until
from prometheus_client.parser import text_string_to_metric_families
from raw_topics import create_topics

from connect_magics.local.spark_cluster import SparkCluster, alive

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                                      reason="reads process ancestry from /proc")]

HOST = Path(__file__).with_name("spark_cluster_host.py")
STRING = "org.apache.kafka.connect.storage.StringConverter"
# The killed task's consumer leaves no LeaveGroup: its partitions move once its session expires, after the
# broker's minimum (6 s) rather than the consumer default (45 s). The sink writes a partition once it got no record
# for flush.idle.ms (10 s), and offsets are committed rarely (each commit writes what is buffered): records a
# task read just before the kill are in its buffers only.
# The source is exactly once (a lost source task's records are aborted, and it resumes from its committed offsets),
# and the sink reads committed records only.
HOST_WORKER = ('{"offset.flush.interval.ms": "300000", "consumer.session.timeout.ms": "6000", '
               '"exactly.once.source.support": "enabled", "consumer.isolation.level": "read_committed"}')
BATCH = 2000  # lines written before the kill, around it, and after it
READ_METRIC = "kafka_connect_sink_task_metrics_sink_record_read"


class ClusterWorker:
    """The host process: its REST API (``rest``) and its log (stderr: the runtime's and the driver's logs)."""

    def __init__(self, proc: subprocess.Popen, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.lines: list[str] = []
        threading.Thread(target=self._read, name="cluster-host-stdout", daemon=True).start()
        self.rest: RestClient | None = None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def url(self) -> str | None:
        """The REST API's URL once it listens ("exited" if the host exited before)."""
        url = next((line.split()[1] for line in self.lines if line.startswith("REST ")), None)
        return "exited" if url is None and self.proc.poll() is not None else url

    def log_tail(self, chars: int = 6000) -> str:
        return "\n".join(self.lines) + "\n" + (self.log.read_text(errors="replace")[-chars:] if self.log.exists() else "")


@pytest.fixture
def spark_cluster(tmp_path: Path) -> Iterator[SparkCluster]:
    """A master and two workers of 3 cores and 2 GB each: the application's three one-core executors of 512 MB
    (one per task) all fit on the worker left after the other is killed. Spark's cores are slots, not CPUs."""
    with SparkCluster(tmp_path / "cluster", workers=2, cores=3, memory="2g") as cluster:
        yield cluster


@pytest.fixture
def cluster_worker(spark_cluster: SparkCluster, bootstrap: str, unique: str, tmp_path: Path) -> Iterator[ClusterWorker]:
    """The Connect worker on the cluster (spark_cluster_host.py), stopped with SIGTERM at the end."""
    log = tmp_path / "host.log"
    env = {**os.environ, "CONNECT_MAGICS_CACHE": str(tmp_path / "host-cache")}  # its driver's JVM log goes there
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, str(HOST), bootstrap, f"g-{unique}", spark_cluster.master_url,
                                 HOST_WORKER], stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                text=True, env=env)
    host = ClusterWorker(proc, log)
    try:
        url = wait_until(host.url, 240, message=lambda: f"the host's REST API\n{host.log_tail()}")
        if url == "exited":
            raise RuntimeError(f"the host exited with {proc.returncode}:\n{host.log_tail()}")
        host.rest = RestClient(url)
        yield host
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


def python_pid(worker_id: str) -> int:
    """The Python worker's pid in a Spark task's worker id, ``{host}:spark-{pid}``."""
    return int(worker_id.rsplit(":spark-", 1)[1])


def rows(table: Path) -> int:
    return ds.dataset(str(table), format="parquet").count_rows() if table.exists() else 0


def append(path: Path, start: int, stop: int) -> None:
    with path.open("a") as f:
        f.write("".join(f"line {i}\n" for i in range(start, stop)))


def test_a_task_on_a_killed_worker_jvm_runs_again_on_the_other_worker_and_every_record_is_in_the_table_once(
        spark_cluster: SparkCluster, cluster_worker: ClusterWorker, bootstrap: str, unique: str,
        tmp_path: Path) -> None:
    topic, table, src, sink = f"cluster-{unique}", tmp_path / "table", tmp_path / "in.txt", f"table-{unique}"
    create_topics(bootstrap, topic, partitions=2)
    src.touch()
    rest = cluster_worker.rest
    assert rest is not None

    def context() -> str:
        return f"\n{cluster_worker.log_tail()}\n{spark_cluster.log_tails()}"

    def running(connector: str = sink) -> dict[int, int]:
        """task -> Python worker pid of the connector's RUNNING tasks."""
        code, body, _ = rest("GET", f"/connectors/{connector}/status")
        return {t["id"]: python_pid(t["worker_id"]) for t in body["tasks"] if t["state"] == "RUNNING"} \
            if code == 200 else {}

    code, body, _ = rest("POST", "/connectors", {"name": sink, "config": {
        "connector.class": "SparkTableSink", "topics": topic, "path": str(table), "tasks.max": "2",
        "value.converter": STRING, "kafka.coordinates": "true", "flush.idle.ms": "10000"}})
    assert code == 201, body

    # each task on its own worker JVM (its Python worker descends from the worker's executor). Spark gives a task's
    # job any free executor: when both landed on one worker, task 1 is restarted until it runs on the other.
    restarted: set[int] = set()  # the Python worker pids of task 1 that were restarted

    def placed() -> dict[int, int] | None:
        pids = running()
        workers = {task: spark_cluster.worker_of(pid) for task, pid in pids.items()}
        if sorted(workers) != [0, 1] or None in workers.values():
            return None
        if workers[0] == workers[1]:
            if pids[1] not in restarted:
                restarted.add(pids[1])
                rest("POST", f"/connectors/{sink}/tasks/1/restart")
            return None
        return workers
    workers = wait_until(placed, 240, message=lambda: f"the sink tasks RUNNING on both worker JVMs (task 1 restarted "
                                                      f"from Python workers {sorted(restarted)}){context()}")
    pids = running()

    def reads() -> dict[int, float]:
        """task -> records it read (sink-record-read-total), from the host's GET /metrics."""
        with urllib.request.urlopen(f"{cluster_worker.url()}/metrics", timeout=30) as resp:
            text = resp.read().decode()
        return {int(s.labels["task"]): s.value for family in text_string_to_metric_families(text)
                for s in family.samples if s.name in (READ_METRIC, f"{READ_METRIC}_total")
                and s.labels.get("connector") == sink}

    code, body, _ = rest("POST", "/connectors", {"name": "src", "config": {
        "connector.class": "FileStreamSource", "file": str(src), "topic": topic, "value.converter": STRING}})
    assert code == 201, body
    source_pid = wait_until(lambda: running("src").get(0), 240, message=lambda: f"the source RUNNING{context()}")
    assert spark_cluster.worker_of(source_pid) is not None  # on a worker JVM too
    append(src, 0, BATCH)
    wait_until(lambda: rows(table) == BATCH, 120, message=lambda: f"{BATCH} rows{context()}")
    before = reads()
    append(src, BATCH, 2 * BATCH)
    # mid-stream: the second batch read by the tasks, in their buffers until flush.idle.ms passes
    def second_batch_read() -> dict[int, float] | None:
        now = reads()
        return now if sum(now.values()) == 2 * BATCH else None
    after = wait_until(second_batch_read, 120, message=lambda: f"{2 * BATCH} records read by the tasks{context()}")
    task = max(after, key=lambda t: after[t] - before.get(t, 0))  # the one holding more of the second batch
    victim, survivor = workers[task], workers[1 - task]
    killed_pid = pids[task]
    source_lost = spark_cluster.worker_of(source_pid) == victim
    spark_cluster.kill_worker(victim)
    assert rows(table) == BATCH  # some records in the table, the second batch only in the tasks' buffers
    append(src, 2 * BATCH, 3 * BATCH)
    # the killed worker's executors exit (they lost their worker), and their Python workers with them
    wait_until(lambda: not alive(killed_pid), 60,
               message=lambda: f"the killed worker's Python worker {killed_pid} gone{context()}")
    # Spark runs the lost tasks again on executors the master starts on the other worker
    wait_until(lambda: (pid := running().get(task)) not in (None, killed_pid)
               and spark_cluster.worker_of(pid) == survivor, 180,
               message=lambda: f"task {task} RUNNING again on worker {survivor}{context()}")
    wait_until(lambda: (pid := running("src").get(0)) is not None and spark_cluster.worker_of(pid) == survivor,
               180, message=lambda: f"the source RUNNING on worker {survivor} (lost with the victim: {source_lost})"
                                    f"{context()}")
    wait_until(lambda: rows(table) >= 3 * BATCH, 180, message=lambda: f"{3 * BATCH} rows{context()}")

    got = ds.dataset(str(table), format="parquet").to_table(columns=["value", "kafka_partition", "kafka_offset"])
    values = got.column("value").to_pylist()
    coordinates = list(zip(got.column("kafka_partition").to_pylist(), got.column("kafka_offset").to_pylist(),
                           strict=True))
    assert len(values) == 3 * BATCH, f"{len(values)} rows{context()}"  # nothing twice...
    assert set(values) == {f"line {i}" for i in range(3 * BATCH)}  # ... nothing lost
    assert len(set(coordinates)) == 3 * BATCH
    assert sorted(running()) == [0, 1]
    assert spark_cluster.alive_workers() == 1
