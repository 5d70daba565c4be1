"""The ``connect-magics`` command: the embedded broker, a worker with its REST API, and the demo."""

from __future__ import annotations

import argparse
import sys

from connect_magics.local import BrokerError, EmbeddedBroker, JavaNotFoundError, KafkaDownloadError
from connect_magics.local.broker import default_data_dir


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
    d = sub.add_parser("demo", help="a whole pipeline on the embedded broker and a local SparkSession")
    d.add_argument("--bootstrap-servers", help="use this cluster instead of starting the embedded broker")
    d.add_argument("--records", type=int, default=1000)
    d.set_defaults(func=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (BrokerError, JavaNotFoundError, KafkaDownloadError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
