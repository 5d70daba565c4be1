"""The offsets editor with 100,000 partitions: how long until its first page shows, and a page change,
against reading the same offsets into a DataFrame (``rt.offsets_frame``, the editor's input) in the same run.

Run:  python bench/bench_offsets_editor.py [--partitions 100000] [--repeat 3] [--bootstrap HOST:PORT]

Starts an embedded broker unless --bootstrap is given, creates a STOPPED SequenceSource and alters its offsets
to ``--partitions`` partitions, then times (median of ``--repeat``):

* ``offsets_frame``: ``rt.offsets_frame(name)`` alone (read from Kafka + build the frame): the baseline;
* ``editor, first page``: ``OffsetsEditor(rt, name)``: the same read, the page's widgets and the first page;
* ``editor from the frame``: ``OffsetsEditor(rt, name, frame=df)`` on a frame read already (the editor's own cost);
* ``page change``: ``editor.show_page(n)`` (refill the page's widgets from the frame);
* ``edit + validate``: one cell edited, then ``editor.validate()`` (what Apply does before sending).

The issue's target: the first page shows in under 2 s with 100,000 partitions.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.notebook.offsets_editor import OffsetsEditor


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(bootstrap: str, partitions: int, repeat: int) -> None:
    with ConnectRuntime(bootstrap, f"bench-editor-{uuid.uuid4().hex[:8]}",
                        {"offset.storage.partitions": "25"}) as rt:
        name = "bench-editor"
        rt.create_connector(name, {"connector.class": "SequenceSource", "topic": name}, initial_state="STOPPED")
        start = time.perf_counter()
        rt.alter_offsets(name, {"offsets": [{"partition": {"task": i}, "offset": {"seq": i}}
                                            for i in range(partitions)]})
        print(f"altered {partitions:,} offsets in {time.perf_counter() - start:.1f} s (set-up, not measured)")
        frame = median_seconds(lambda: rt.offsets_frame(name), repeat)
        editors: list[OffsetsEditor] = []
        first = median_seconds(lambda: editors.append(OffsetsEditor(rt, name)), repeat)
        read = rt.offsets_frame(name)
        from_frame = median_seconds(lambda: editors.append(OffsetsEditor(rt, name, frame=read)), repeat)
        editor = editors[-1]
        pages = iter(range(1, editor.pages))
        page = median_seconds(lambda: editor.show_page(next(pages)), repeat)

        def edit_and_validate() -> None:
            editor.set_cell(7, "seq", "1")
            assert not editor.validate()[1]
        validate = median_seconds(edit_and_validate, repeat)
        print(f"{'operation':<22}{'seconds':>10}{'x offsets_frame':>18}")
        for label, seconds in (("offsets_frame", frame), ("editor, first page", first),
                               ("editor from the frame", from_frame), ("page change", page),
                               ("edit + validate", validate)):
            print(f"{label:<22}{seconds:>10.3f}{seconds / frame:>18.2f}")
        print(f"first page under 2 s: {'yes' if first < 2 else 'NO'} with the read from Kafka, "
              f"{'yes' if from_frame < 2 else 'NO'} from a frame read already ({editor.pages:,} pages of "
              f"{editor.page_size})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    broker = None
    if not args.bootstrap:
        broker = EmbeddedBroker(server_properties={"auto.create.topics.enable": "false"})
        broker.start()
    try:
        run(args.bootstrap or broker.bootstrap_servers, args.partitions, args.repeat)
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
