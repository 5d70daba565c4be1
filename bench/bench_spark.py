"""A topic into Parquet: SparkTableSink on the Spark executor against a plain Spark batch read (spark-sql-kafka).

Run:  python bench/bench_spark.py [--records 1000000] [--rounds 1] [--warm-session] [--cluster] [--twice]
                                 [--out [bench/results/spark.json]]

Starts an embedded broker, fills a 2-partition topic with ``--records`` schemaless JSON values of about
100 bytes (not timed), then, for ``local[1]`` and ``local[2]``, measures in a fresh Python process each
(a local SparkContext's core count is fixed per process), rounds interleaved:

- baseline: ``spark.read.format("kafka")`` of the whole topic, the value cast to a string, written with
  ``df.write.parquet``; timed from the action's start to its end;
- ours: ``ConnectRuntime(..., executor="spark")`` with ``SparkTableSink`` into a Parquet path,
  ``tasks.max`` = cores; timed from ``create_connector`` until the table's data files (counted by the
  offset ranges in their names) cover every record: task start-up (the Spark job, the consumer group
  join) included, the runtime's and the SparkSession's start-up excluded.

Each measurement is the first Spark work of its process: both include the JVM's warm-up of a first job
(about 2-3 s here), and ours creates its connector as soon as the runtime's constructor returned, so its
tasks also wait for the runtime's warm-up job (Spark's Python workers started). With ``--warm-session``
each process first runs one small job of its own (a count), as a notebook's session usually has, and ours
creates its connector once the runtime's start-up is done (``rt.executor.wait_ready()``), as in a
notebook where the runtime was started in an earlier cell: neither measurement then includes the JVM's
warm-up, nor ours the start of Python workers, which the baseline does not use.

With ``--cluster`` the same measurements run on a Spark standalone cluster started for the run (and stopped
after it; connect_magics/local/spark_cluster.py): a master and two workers of one core and 1 GiB each, on
127.0.0.1. Each measurement's process is an application of its own whose driver only schedules:
``spark.cores.max`` = cores (1, then 2) one-core executors of 1 GiB, which the master puts on different
workers, so with two cores each of ours' tasks, and each of Spark's read tasks, runs in an executor JVM (and
Python worker daemon) of its own, as on a cluster of machines. Both measurements start once every executor
has registered (the time it took is printed, not counted). The executors' Python workers run this Python
with this checkout's connect_magics (``spark.executorEnv.PYTHONPATH``).

With ``--twice`` each process measures its kind a second time, right after the first (into another path;
ours with a new connector on a new runtime): reported in a table of its own, as the same work on JVMs that
have done it once (the first read of Spark's Kafka source in a fresh JVM loads and compiles its classes).

Prints records/s of each (medians over the rounds), the ratio ours/baseline per core count, and the
scaling from one core to two of each. The broker runs on the same cores as Spark. Each Spark JVM and the
broker get about 1 GiB of heap (the cluster's master and workers 512 MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

CORES = (1, 2)
PARTITIONS = 2
PAD = "x" * 70  # {"id": <up to 7 digits>, "payload": "<70 x>"}: 94-100 bytes
FLUSH_SIZE = 250_000
FLUSH_IDLE_MS = 200  # the table catches up 0.2 s after the topic is drained, not at the next offset commit
OFFSET_FLUSH_MS = 1000
POLL_S = 0.02  # how often the table is looked at: its rows are counted from the names of its files
RESULT = "RESULT "  # prefix of the child process's one line of JSON on stdout
RESULTS = Path(__file__).parent / "results"
DEFAULT_OUT = RESULTS / "spark.json"
CLUSTER_OUT = RESULTS / "spark-cluster.json"
EXECUTOR_MEMORY = "1g"  # --cluster: each one-core executor's heap (and each worker's memory for executors)
EXECUTORS_WAIT_S = 180.0  # --cluster: longest a measurement waits for its executors to register


def fill_topic(bootstrap: str, topic: str, n: int) -> None:
    """Create ``topic`` with 2 partitions and write ``n`` JSON values, alternating partitions."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "none"})
    for i in range(n):
        value = json.dumps({"id": i, "payload": PAD}).encode()
        while True:
            try:
                p.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    if p.flush(300) != 0:
        raise RuntimeError(f"{topic}: not every record was acknowledged")


def label(cores: int, cluster: bool) -> str:
    """``local[N]``, or ``cluster[N]``: N one-core executors on the standalone cluster."""
    return f"{'cluster' if cluster else 'local'}[{cores}]"


def spark_session(cores: int, master: str | None = None):
    """A SparkSession with Spark's Kafka source and 1 GiB of driver heap: on ``local[cores]``, or, with
    ``master`` (a standalone cluster's URL), ``cores`` one-core executors of EXECUTOR_MEMORY there."""
    import connect_magics
    from connect_magics.spark.session import local_spark_session

    if master is None:
        return local_spark_session(f"bench-spark-{cores}", packages=["kafka"], master=f"local[{cores}]")
    # the executors' Python workers: this Python (local_spark_session's default PYSPARK_PYTHON) and this
    # checkout's connect_magics, ahead of any installed copy
    source_root = str(Path(connect_magics.__file__).resolve().parents[1])
    python_path = os.pathsep.join(p for p in (source_root, os.environ.get("PYTHONPATH", "")) if p)
    return local_spark_session(f"bench-spark-cluster-{cores}", packages=["kafka"], master=master, conf={
        "spark.cores.max": str(cores), "spark.executor.cores": "1", "spark.executor.memory": EXECUTOR_MEMORY,
        "spark.executorEnv.PYTHONPATH": python_path})


def wait_for_executors(spark, n: int) -> float:
    """Wait until ``n`` executors registered with the driver; returns the seconds it took."""
    start = time.perf_counter()
    status = spark.sparkContext._jsc.sc()
    while (registered := status.getExecutorMemoryStatus().size() - 1) < n:  # the driver is listed too
        if time.perf_counter() - start > EXECUTORS_WAIT_S:
            raise RuntimeError(f"{registered} of {n} executors registered after {EXECUTORS_WAIT_S:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - start


def baseline(spark, bootstrap: str, topic: str, path: str, n: int) -> dict[str, float]:
    """Seconds for Spark's Kafka source to read the whole topic into Parquet (value as a string)."""
    frame = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
             .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
             .selectExpr("CAST(value AS STRING) AS value"))
    start = time.perf_counter()
    frame.write.parquet(path)
    elapsed = time.perf_counter() - start
    written = spark.read.parquet(path).count()
    if written != n:
        raise RuntimeError(f"baseline wrote {written} rows, expected {n}")
    return {"seconds": elapsed}


def table_rows(path: str) -> int:
    """Rows in the table's data files, from the offset ranges in their names."""
    from connect_magics.connectors.spark_table.table_logs import parse_data_file_name

    names = os.listdir(path) if os.path.isdir(path) else []
    return sum(last - first + 1 for _, first, last in filter(None, map(parse_data_file_name, names)))


def ours(spark, bootstrap: str, topic: str, path: str, n: int, cores: int, warm: bool) -> dict[str, float]:
    """Seconds from creating a SparkTableSink (tasks on the Spark executor) until the table holds ``n`` rows,
    and, for context, until every task was RUNNING and until the first rows were in the table. ``warm``:
    the connector is created once the runtime's start-up is done, else right after its constructor."""
    from connect_magics import ConnectRuntime

    tag = uuid.uuid4().hex[:8]
    name = f"table-{tag}"
    worker = {"offset.flush.interval.ms": str(OFFSET_FLUSH_MS)}
    with ConnectRuntime(bootstrap, f"bench-spark-{tag}", worker, spark=spark, executor="spark") as rt:
        if warm:  # a runtime started earlier: its start-up (the executor's warm-up job) is done
            rt.executor.wait_ready(120)
        start = time.perf_counter()
        rt.create_connector(name, {
            "connector.class": "SparkTableSink", "topics": topic, "path": path, "tasks.max": str(cores),
            "flush.size": str(FLUSH_SIZE), "flush.idle.ms": str(FLUSH_IDLE_MS), "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false"})
        deadline, marks = start + max(600, n / 1000), {}
        while (rows := table_rows(path)) < n:
            now = time.perf_counter()
            if now > deadline:
                raise RuntimeError(f"the table holds {rows} of {n} rows after {now - start:.0f} s; "
                                   f"status: {rt.connector_status(name)}")
            tasks = rt.connector_status(name)["tasks"]
            if "running" not in marks and len(tasks) == cores and all(t["state"] == "RUNNING" for t in tasks):
                marks["running"] = now - start
            if "first_rows" not in marks and rows:
                marks["first_rows"] = now - start
            time.sleep(POLL_S)
        elapsed = time.perf_counter() - start
        if rows != n:
            raise RuntimeError(f"the table holds {rows} rows, expected {n}")
        rt.delete_connector(name)
    return {"seconds": elapsed, **marks}


def child(args: argparse.Namespace) -> None:
    """One measurement, in this process: print its timings (JSON) after RESULT."""
    spark = spark_session(args.cores, args.master)
    try:
        executors = wait_for_executors(spark, args.cores) if args.master else None
        if args.warm_session:
            spark.range(1000, numPartitions=args.cores).count()
        measure = baseline if args.child == "baseline" else ours
        extra = () if args.child == "baseline" else (args.cores, args.warm_session)
        timings = measure(spark, args.bootstrap, args.topic, args.path, args.records, *extra)
        if args.twice:  # the same again in this application: its JVMs (the executors') have done it once
            again = measure(spark, args.bootstrap, args.topic, args.path + "-again", args.records, *extra)
            timings["again"] = again["seconds"]
        if executors is not None:
            timings["executors"] = executors
    finally:
        spark.stop()
    print(RESULT + json.dumps(timings), flush=True)


def measure(kind: str, cores: int, bootstrap: str, topic: str, n: int, work: Path, warm: bool,
            master: str | None = None, twice: bool = False) -> dict[str, float]:
    """Records/s of one measurement, run in a fresh Python process (on ``master``'s cluster if given), by
    kind (``ours``/``baseline``; with ``twice`` also ``ours again``/``baseline again``)."""
    path = work / f"{kind}-{cores}-{uuid.uuid4().hex[:8]}"
    log = work / f"{path.name}.log"
    with open(log, "w") as err:
        out = subprocess.run([sys.executable, __file__, "--child", kind, "--cores", str(cores), "--bootstrap",
                              bootstrap, "--topic", topic, "--path", str(path), "--records", str(n),
                              *(["--warm-session"] if warm else []), *(["--master", master] if master else []),
                              *(["--twice"] if twice else [])],
                             stdout=subprocess.PIPE, stderr=err, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith(RESULT)]
    where = label(cores, master is not None)
    if out.returncode != 0 or not lines:
        tail = "".join(log.read_text().splitlines(keepends=True)[-30:])
        raise RuntimeError(f"{kind} on {where} failed (exit {out.returncode}); end of {log}:\n{tail}")
    timings = json.loads(lines[-1][len(RESULT):])
    seconds = timings["seconds"]
    marks = "".join(f", {mark.replace('_', ' ')} at {timings[mark]:.1f} s" for mark in ("running", "first_rows")
                    if mark in timings)
    if "running" in timings and seconds > timings["running"]:
        marks += f"; {n / (seconds - timings['running']):,.0f} r/s from then"
    if "executors" in timings:
        marks += f"; executors registered {timings['executors']:.1f} s after the session, not counted"
    if "again" in timings:
        marks += f"; again in the same process: {n / timings['again']:,.0f} r/s ({timings['again']:.1f} s)"
    print(f"  {kind:<8} {where}  {n / seconds:>12,.0f} r/s  ({seconds:.1f} s{marks})", flush=True)
    return {kind: n / seconds, **({f"{kind} again": n / timings["again"]} if "again" in timings else {})}


def ratio_table(rates: dict[tuple[str, int], list[float]], cluster: bool, suffix: str = "") -> dict:
    """Print one table of medians (``suffix``: "" for the first measurement of each process, " again" for
    the second); return it as a dict."""
    med = {key: statistics.median(values) for key, values in rates.items()}
    table: dict = {"cores": {}}
    width = len(label(1, cluster))
    b_col, o_col = len(suffix) + 22, len(suffix) + 20
    print(f"\n{'cores':<{width}}{'Spark Kafka source' + suffix:>{b_col}}{'SparkTableSink' + suffix:>{o_col}}"
          f"{'ours/baseline':>15}")
    for cores in CORES:
        b, o = med["baseline" + suffix, cores], med["ours" + suffix, cores]
        table["cores"][str(cores)] = {"baseline_rps": round(b), "ours_rps": round(o), "ratio": round(o / b, 3),
                                      "baseline_all_rps": [round(r) for r in rates["baseline" + suffix, cores]],
                                      "ours_all_rps": [round(r) for r in rates["ours" + suffix, cores]]}
        print(f"{label(cores, cluster):<{width}}{b:>{b_col - 4},.0f} r/s{o:>{o_col - 4},.0f} r/s{o / b:>15.2f}")
    scaling = {kind: med[kind + suffix, 2] / med[kind + suffix, 1] for kind in ("baseline", "ours")}
    table["scaling_1_to_2"] = {kind: round(s, 3) for kind, s in scaling.items()}
    print(f"{'1->2':<{width}}{scaling['baseline']:>{b_col - 2}.2f}x{scaling['ours']:>{o_col - 2}.2f}x")
    return table


def report(rates: dict[tuple[str, int], list[float]], n: int, rounds: int, warm: bool, cluster: bool) -> dict:
    """Print the table(s); return them as a dict (for --out)."""
    table = {"records": n, "rounds": rounds, "partitions": PARTITIONS, "warm_session": warm,
             "mode": "standalone cluster, one-core executors" if cluster else "local",
             **ratio_table(rates, cluster)}
    if ("ours again", CORES[0]) in rates:
        print("(the same measurements again, each in the same process right after the first; into another path)")
        table["again"] = ratio_table(rates, cluster, " again")
    where = ("on a standalone cluster (master, two 1-core workers; N one-core executors of "
             f"{EXECUTOR_MEMORY}, from the executors' registration on); " if cluster else "")
    print(f"({'medians of ' + str(rounds) + ' rounds' if rounds > 1 else '1 round'}; {where}{n:,} JSON records of "
          f"~100 bytes, {PARTITIONS} partitions; each measurement in a fresh process, "
          f"{'after one small job of its own, ours on a started runtime' if warm else 'its first Spark work'}; "
          "baseline: the read + write.parquet action; ours: from "
          "create_connector to all rows in the table, task start-up included, runtime and SparkSession "
          f"start-up excluded; tasks.max = cores, flush.size {FLUSH_SIZE:,}, flush.idle.ms {FLUSH_IDLE_MS}, "
          "offset.flush.interval.ms "
          f"{OFFSET_FLUSH_MS}; the broker shares the cores)")
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--warm-session", action="store_true",
                    help="run one small Spark job in each process before measuring (see above)")
    ap.add_argument("--twice", action="store_true",
                    help="measure each kind a second time in the same process (its JVMs warm), reported apart")
    ap.add_argument("--cluster", action="store_true",
                    help="measure on a Spark standalone cluster started for the run (see above)")
    ap.add_argument("--out", nargs="?", const="", help=f"write the table as JSON (default {DEFAULT_OUT}, "
                    f"with --cluster {CLUSTER_OUT})")
    ap.add_argument("--child", choices=["baseline", "ours"], help=argparse.SUPPRESS)
    ap.add_argument("--cores", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--master", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    from connect_magics.local import EmbeddedBroker
    from connect_magics.local.spark_cluster import SparkCluster

    n = args.records
    if args.out == "":
        args.out = str(CLUSTER_OUT if args.cluster else DEFAULT_OUT)
    broker = EmbeddedBroker(heap="1g").start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
            topic = f"bench-spark-{uuid.uuid4().hex[:6]}"
            fill_topic(broker.bootstrap_servers, topic, n)
            print(f"{n:,} records in {topic} ({PARTITIONS} partitions); measuring in {tmp}", flush=True)
            cluster = None
            if args.cluster:  # two one-core workers: N one-core executors go to N different workers
                started = time.perf_counter()
                cluster = SparkCluster(Path(tmp) / "cluster", workers=max(CORES), cores=1,
                                       memory=EXECUTOR_MEMORY).__enter__()
                print(f"standalone cluster {cluster.master_url}: {max(CORES)} workers of 1 core "
                      f"({time.perf_counter() - started:.1f} s to start)", flush=True)
            try:
                master = cluster.master_url if cluster else None
                rates: dict[tuple[str, int], list[float]] = {}
                for r in range(args.rounds):
                    print(f"round {r + 1}/{args.rounds}", flush=True)
                    for cores in CORES:
                        for kind in ("baseline", "ours"):
                            got = measure(kind, cores, broker.bootstrap_servers, topic, n, Path(tmp),
                                          args.warm_session, master, args.twice)
                            for k, rate in got.items():
                                rates.setdefault((k, cores), []).append(rate)
            finally:
                if cluster is not None:
                    cluster.stop()
            table = report(rates, n, args.rounds, args.warm_session, args.cluster)
    finally:
        broker.stop()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(table, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
