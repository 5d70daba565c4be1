"""The ``connect-magics`` command: the embedded broker, a worker with its REST API, a local Schema Registry,
and the demo."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from connect_magics.api.config import ConfigException
from connect_magics.local import (
    BrokerError,
    EmbeddedBroker,
    JavaNotFoundError,
    KafkaDownloadError,
    SchemaRegistry,
    SchemaRegistryError,
)
from connect_magics.local.broker import default_data_dir
from connect_magics.local.registry import COMPATIBILITY_LEVELS
from connect_magics.runtime.executors import EXECUTORS
from connect_magics.storage.authorization import KafkaAccessError


def _broker(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    broker = EmbeddedBroker(data_dir, port=getattr(args, "port", None))
    if args.action == "start":
        if broker.is_running():
            print(f"bootstrap.servers={broker.bootstrap_servers}")
            print(f"(already running, data directory {broker.data_dir})", file=sys.stderr)
            return 0
        broker.start(detach=True)
        print(f"bootstrap.servers={broker.bootstrap_servers}")
        print(f"Kafka broker running in the background; data directory {broker.data_dir}, "
              f"log {broker.log_file}. Stop it with: connect-magics broker stop", file=sys.stderr)
    elif args.action == "stop":
        running = broker.is_running()
        broker.stop()
        print("stopped" if running else "not running")
    else:
        if broker.is_running():
            print(f"running bootstrap.servers={broker.bootstrap_servers} data_dir={broker.data_dir}")
        else:
            print(f"not running data_dir={broker.data_dir}")
            return 1
    return 0


class WorkerStartError(Exception):
    """A worker that cannot start, for a reason the message gives (the command exits with status 2)."""


@contextlib.contextmanager
def running_worker(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """``connect-magics worker``'s runtime and REST server, started from ``args`` and stopped on exit.

    The REST listeners are Kafka Connect 4's ``listeners`` (else the deprecated ``rest.host.name`` /
    ``rest.port``, else http://127.0.0.1:8083); ``--rest-host`` / ``--rest-port`` replace the first one's host
    and port. They are bound, and their TLS settings loaded, before anything touches Kafka.
    """
    from connect_magics import ConnectRuntime
    from connect_magics.rest import BoundListeners, RestAuth, RestAuthError, RestServer
    from connect_magics.runtime.config.worker_config import WorkerConfig
    from connect_magics.runtime.config.worker_keys import (
        ADVERTISED_PORT,
        advertised_listener,
        check_worker_keys,
        rest_listeners,
    )

    try:
        from connect_magics.runtime.config.properties import load_properties

        props = load_properties(args.config) if args.config else {}
    except OSError as e:
        raise WorkerStartError(f"--config {args.config}: {e.strerror or e}") from None
    check_worker_keys(props)  # unknown and deprecated keys, logged once; unusable listener settings refused
    bootstrap = props.pop("bootstrap.servers", None)  # the options win over the file
    bootstrap = args.bootstrap_servers or bootstrap
    if not bootstrap:
        raise WorkerStartError("--bootstrap-servers (or bootstrap.servers in --config) is required")
    group = props.pop("group.id", None)
    group = args.group_id or group or "connect-magics"
    listeners = rest_listeners(props)
    if args.rest_port is not None and not 0 <= args.rest_port <= 65535:
        raise WorkerStartError(f"--rest-port {args.rest_port}: must be between 0 and 65535 (0: a free one)")
    if args.rest_host is not None or args.rest_port is not None:
        first = listeners[0]
        listeners[0] = dataclasses.replace(first, host=first.host if args.rest_host is None else args.rest_host,
                                           port=first.port if args.rest_port is None else args.rest_port)
    try:  # unusable credentials, or a non-loopback listener without them: refused before starting anything
        auth = RestAuth.from_files(args.rest_credentials, args.rest_token_file) \
            if args.rest_credentials or args.rest_token_file else None
        # the worker's settings as the runtime will have them (config providers resolved) for the TLS settings
        bound = BoundListeners(listeners, WorkerConfig(bootstrap, group, props), auth)
    except RestAuthError as e:
        raise WorkerStartError(str(e)) from None
    except OSError as e:  # a busy port
        raise WorkerStartError(f"cannot listen on {e.filename}: {e.strerror}" if e.filename else str(e)) from None
    try:
        if ADVERTISED_PORT not in props:  # statuses name this worker by the port it listens on (port 0: a free one)
            props[ADVERTISED_PORT] = str(advertised_listener(bound.listeners, props).port)
        with ConnectRuntime(bootstrap, group, props, executor=args.executor) as rt, \
                RestServer(rt, listeners=bound, auth=auth) as server:
            yield rt, server
    finally:
        bound.close()


#: CPython's switch interval in a worker process (5 ms by default). A thread waiting for the interpreter lock wakes
#: every interval; a worker hosts hundreds of task threads, and when hundreds wait at once (a garbage collection
#: of a large heap, a member's share of tasks starting together) 5 ms turned into tens of thousands of futex
#: wake-ups a second. At 1,000 connectors on 2 cores (bench/bench_scale.py) the workers' kernel time then starved
#: their own Kafka clients: requests timed out, transactions were lost and claimed again, and the load fed itself.
#: Task threads wait on I/O, not on the interpreter: a longer slice costs them nothing. (A notebook's kernel is the
#: user's process and keeps its setting.)
WORKER_SWITCH_INTERVAL_S = 0.05


#: A worker process's log lines, as Kafka Connect's ``connect-log4j.properties`` writes them (``[%d] %p %m (%c)``):
#: when, how bad, what, and which part of the runtime said it.
WORKER_LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


def _worker(args: argparse.Namespace) -> int:
    sys.setswitchinterval(WORKER_SWITCH_INTERVAL_S)
    logging.basicConfig(level=logging.WARNING, format=WORKER_LOG_FORMAT)
    try:
        with running_worker(args) as (rt, server):
            stop = threading.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: stop.set())
            print(f"Kafka Connect REST API at {' and '.join(server.urls)} (group.id {rt.worker_config['group.id']}); "
                  "stop with SIGTERM or Ctrl-C", flush=True)
            stop.wait()
    except WorkerStartError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _schema_registry(args: argparse.Namespace) -> int:
    registry = SchemaRegistry(port=args.port, version=args.version, java=args.java,
                              compatibility=args.compatibility)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with registry:
        print(f"schema.registry.url={registry.url}", flush=True)
        print(f"Apicurio Registry {registry.version} (Confluent's Schema Registry API, in memory, default "
              f"compatibility {registry.compatibility}) started in {registry.startup_seconds:.1f} s; log "
              f"{registry.log_file}. Stop it with SIGTERM or Ctrl-C.", file=sys.stderr, flush=True)
        stop.wait()
    return 0


def _demo(args: argparse.Namespace) -> int:
    from connect_magics.demo import run_demo

    return run_demo(bootstrap_servers=args.bootstrap_servers, records=args.records)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="connect-magics", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("broker", help="the embedded Apache Kafka broker")
    b.add_argument("action", choices=["start", "stop", "status"])
    b.add_argument("--data-dir", help=f"data directory (default {default_data_dir()})")
    b.add_argument("--port", type=int, help="listener port (default: the last one used, else a free one)")
    b.set_defaults(func=_broker)
    w = sub.add_parser("worker", help="a runtime with Kafka Connect's REST API, until SIGTERM")
    w.add_argument("--bootstrap-servers", help="the Kafka cluster (default: bootstrap.servers of --config)")
    w.add_argument("--group-id", help="the worker group: names the internal topics (default: group.id of --config, "
                                      "else connect-magics)")
    w.add_argument("--executor", choices=EXECUTORS, default="threads",
                   help="where tasks run: threads of the worker (default), a process per task (tasks then use "
                        "every core), or Spark jobs on a local SparkSession")
    w.add_argument("--rest-port", type=int, help="the REST listener's port (default: the first of listeners in "
                                                 "--config, else 8083; 0: a free one)")
    w.add_argument("--config", help="a Kafka Connect worker properties file")
    w.add_argument("--rest-host", help="the REST listener's address (default: the first of listeners in --config, "
                                       "else 127.0.0.1); any other than loopback requires authentication")
    w.add_argument("--rest-credentials", metavar="FILE", help="HTTP basic users, one user=password per line")
    w.add_argument("--rest-token-file", metavar="FILE", help="a file holding a bearer token")
    w.set_defaults(func=_worker)
    r = sub.add_parser("schema-registry", help="a local Schema Registry (Apicurio Registry, in memory, Confluent's "
                                               "API), until SIGTERM or Ctrl-C")
    r.add_argument("--port", type=int, help="its HTTP port (default: a free one)")
    r.add_argument("--version", help="the Apicurio Registry version (default: 3.3.3 on Java 21+, 3.0.9 on Java 17)")
    r.add_argument("--java", metavar="PATH", help="the java executable (default: the first Java 21+ found, else 17+)")
    r.add_argument("--compatibility", choices=COMPATIBILITY_LEVELS, type=str.upper,
                   help="the default compatibility of subjects (default: BACKWARD, as Confluent's; NONE on 3.0.x)")
    r.set_defaults(func=_schema_registry)
    d = sub.add_parser("demo", help="a whole pipeline on the embedded broker and a local SparkSession")
    d.add_argument("--bootstrap-servers", help="use this cluster instead of starting the embedded broker")
    d.add_argument("--records", type=int, default=1000)
    d.set_defaults(func=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (BrokerError, JavaNotFoundError, KafkaDownloadError, SchemaRegistryError, ConfigException,
            KafkaAccessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
