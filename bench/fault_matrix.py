"""The fault matrix as a script: FileStream connectors through broker faults, on connect_magics' executors and
on Apache Kafka Connect's Java worker, counted end to end (tests/faults/matrix.py).

Run:  python bench/fault_matrix.py [--faults stop,kill,pause,coordinator,slow-fsync]
      [--executors threads,processes,spark,java] [--kinds source,sink] [--eos no,yes] [--records 50000]
      [--outage 30] [--feed 20] [--repeat 1] [--patient]
      python bench/fault_matrix.py --loop 20     # issue 31's reproduction, 20 times

Prints one line per case as it ends, then a markdown table: case x executor x connector type x eos ->
records lost, duplicated, time to recover (from the fault's end until the count grows again), the tasks'
final states, whether every record arrived within the deadline.

``--loop N``: 300,000 lines through a FileStreamSource and a FileStreamSink on the threads executor (default
worker and consumer settings), the broker stopped for 30 s after about 40 % of the lines reached the topic
and started again on the same directory and port; N runs, then "k of N runs ended with every line exactly
once and both tasks RUNNING".
"""

from __future__ import annotations

import argparse
import itertools
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from faults.matrix import EXECUTORS, FAULTS, KINDS, CaseResult, run_case, run_root, runtime_state, table  # noqa: E402

LOOP_RECORDS = 300_000
LOOP_OUTAGE_S = 30.0


def choices(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    picked = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in picked if c not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (one of {', '.join(allowed)})")
    return picked


def loop(runs: int, args: argparse.Namespace) -> int:
    results: list[CaseResult] = []
    for i in range(1, runs + 1):
        r = run_case("stop", "threads", "pipeline", False, args.records or LOOP_RECORDS,
                     args.outage if args.outage is not None else LOOP_OUTAGE_S, feed_s=None,
                     sink_session_timeout_ms=None, bound_s=args.bound, deadline_s=args.deadline,
                     patient=args.patient)
        results.append(r)
        good = exactly_once_and_running(r)
        print(f"run {i}/{runs}: {'OK' if good else 'FAILED'}: {r.summary()}", flush=True)
    good = sum(exactly_once_and_running(r) for r in results)
    print(f"\n{good} of {runs} runs ended with every line exactly once and both tasks RUNNING")
    print("\n" + table(results))
    return 0 if good == runs else 1


def exactly_once_and_running(r: CaseResult) -> bool:
    return (not r.error and r.completed and r.lost == 0 and r.duplicated == 0 and len(r.tasks) == 2
            and all(s == "RUNNING" for s in r.states))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--executors", default="threads,processes,java")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--eos", default="no,yes", help="no, yes or no,yes (exactly.once.source.support)")
    parser.add_argument("--records", type=int, default=None, help="default 50,000 (--loop: 300,000)")
    parser.add_argument("--outage", type=float, default=None, help="seconds (default 30)")
    parser.add_argument("--feed", type=float, default=20.0,
                        help="seconds over which the input is fed (0: all of it before the connectors start)")
    parser.add_argument("--bound", type=float, default=60.0,
                        help="seconds after the fault within which tasks must progress or fail visibly")
    parser.add_argument("--deadline", type=float, default=240.0,
                        help="seconds after the fault within which every record must arrive")
    parser.add_argument("--patient", action="store_true",
                        help="wait until the deadline even for a case that stalled")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--loop", type=int, default=0, metavar="N", help="issue 31's reproduction, N runs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that atexit stops the brokers it started
    print(f"connect_magics {runtime_state()}; cases run in {run_root()}", flush=True)
    if args.loop:
        return loop(args.loop, args)
    faults = choices(args.faults, FAULTS, "fault")
    executors = choices(args.executors, EXECUTORS, "executor")
    kinds = choices(args.kinds, KINDS, "kind")
    eos = [{"no": False, "yes": True}[e] for e in choices(args.eos, ("no", "yes"), "--eos value")]
    records = args.records or 50_000
    outage = args.outage if args.outage is not None else 30.0
    print(f"{records} records fed over {args.feed:.0f} s, outage {outage:.0f} s, fault after 40 %", flush=True)
    results = []
    for _ in range(args.repeat):
        for fault, executor, kind, exactly_once in itertools.product(faults, executors, kinds, eos):
            r = run_case(fault, executor, kind, exactly_once, records, outage, feed_s=args.feed or None,
                         bound_s=args.bound, deadline_s=args.deadline, patient=args.patient)
            results.append(r)
            print(r.summary(), flush=True)
    print("\n" + table(results))
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
