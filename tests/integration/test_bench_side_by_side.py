"""bench/bench_side_by_side.py runs end to end in its --quick mode (without the Java worker: its start-up
alone takes longer than the whole run). Speed is not checked here: it goes to the bench's table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_side_by_side.py"


def test_quick_run_prints_the_table(bootstrap: str, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("bench_side_by_side", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_side_by_side", bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    bench.main(["--quick", "--no-java", "--bootstrap", bootstrap])
    out = capsys.readouterr().out
    header = [cell.strip() for cell in next(line for line in out.splitlines() if line.startswith("| path |")).split("|")]
    for case in bench.QUICK:
        row = next(line for line in out.splitlines() if line.startswith(f"| {case.label} |")).split("|")
        bare, ours, proc = (float(row[header.index(system)].replace(",", "")) for system in ("bare", "ours", "ours/proc"))
        assert bare > 0 and not ours <= 0 and not proc <= 0  # NaN: every record came before the first count
