"""``LiveDashboard``: connectors, tasks, topics, consumer lag and throughput, refreshed in the background.

>>> dash = LiveDashboard(rt, interval=2.0); dash  # or: %connect dashboard  # doctest: +SKIP
LiveDashboard: refreshing every 2.0 s, 1 connector
  lines: RUNNING (source) version 4.1.0, tasks 0:RUNNING, topics lines

A daemon thread reads the runtime every ``interval`` seconds (statuses, ``rt.metrics()``, active topics,
and for sinks the consumer group's committed offsets against the topics' end offsets) and updates the
widgets in place: an HTML table (traces collapsed in ``<details>``) and a PNG of throughput and lag over
time drawn by matplotlib (the Agg canvas, no pyplot state), shown in a core ``ipywidgets.Image`` so it
renders wherever core widgets do (JupyterLab, VS Code, Databricks) and needs no third-party JavaScript.
Nothing is printed from the thread: errors go to the message line. The thread stops when the dashboard is
closed (``close()`` or its Stop button) or when the runtime closes. ``repr`` is plain text (EMR, nbval).
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W

from connect_magics.errors import ConnectRestError
from connect_magics.notebook.html_text import error_html, escape
from connect_magics.notebook.tables import task_metrics_frame, tasks_summary
from connect_magics.notebook.widgets import state_html, with_waiting_tasks
from connect_magics.remote import RemoteUnsupportedError
from connect_magics.storage.offset_queries import LATEST, query_offsets

log = logging.getLogger(__name__)

__all__ = ["ConnectorView", "LiveDashboard", "end_offsets", "sink_lag"]

RATE_COLUMNS = {"source": "source-record-write-rate", "sink": "sink-record-read-rate"}


@dataclass
class ConnectorView:
    """One connector as of one refresh."""

    status: dict[str, Any]
    topics: list[str] = field(default_factory=list)
    lag: int | None = None
    rate: float = 0.0


def end_offsets(queries: Any, partitions: list[tuple[str, int]], timeout: float = 10.0) -> dict[tuple[str, int], int]:
    """The end offset of each topic-partition, asked of ``queries`` (a runtime's ``offset_queries`` consumer) in
    one request per leader."""
    return query_offsets(queries, dict.fromkeys(partitions, LATEST), timeout)


def sink_lag(rt: Any, name: str) -> int:
    """Records not yet committed by sink connector ``name``: end offsets minus committed ones, summed over
    the partitions it has committed (``rt.get_offsets``, i.e. its consumer group in Kafka)."""
    committed = {(o["partition"]["kafka_topic"], o["partition"]["kafka_partition"]): o["offset"]["kafka_offset"]
                 for o in rt.get_offsets(name)["offsets"]}
    ends = end_offsets(rt.offset_queries, list(committed))
    return sum(max(0, ends[tp] - off) for tp, off in committed.items() if tp in ends)


class LiveDashboard(W.VBox):
    """Connectors at a glance, refreshed every ``interval`` s by a background thread until closed.

    :attr:`views` holds the last refresh, :attr:`history` ``(seconds since start, {name: rate}, {name: lag})``
    samples (at most ``history`` of them), :attr:`refreshes` counts refreshes done.
    """

    def __init__(self, rt: Any, interval: float = 2.0, history: int = 150, start: bool = True,
                 **kwargs: Any) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be more than 0 seconds, not {interval}")
        self.rt, self.interval = rt, interval
        self.views: dict[str, ConnectorView] = {}
        self.history: deque[tuple[float, dict[str, float], dict[str, int]]] = deque(maxlen=history)
        self.refreshes = 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.status_line = W.HTML()
        self.table = W.HTML()
        self.plot = W.Image(format="png", layout=W.Layout(max_width="900px"))
        self.message = W.HTML()
        self.stop_button = W.Button(description="Stop refreshing", icon="stop", layout=W.Layout(width="auto"))
        self.stop_button.on_click(lambda _b: self.stop())
        super().__init__(children=[W.HBox([self.status_line, self.stop_button]), self.table, self.plot,
                                   self.message], **kwargs)
        self.refresh()
        if start:
            self.start()

    # -- the background thread -----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start refreshing in the background (again, after :meth:`stop`)."""
        if self.running or getattr(self.rt, "closed", False):
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="connect-magics-dashboard", daemon=True)
        self._thread.start()
        self._update_status_line()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the background refresh (the widgets keep their last values)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._update_status_line()

    def close(self) -> None:
        """Stop refreshing and close the widgets."""
        self.stop()
        super().close()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            if getattr(self.rt, "closed", False):
                self.message.value = escape("The Connect runtime was closed: refreshing stopped.")
                break
            self.refresh()
        self._stop.set()
        self._update_status_line()

    def _update_status_line(self) -> None:
        state = f"refreshing every {self.interval:g} s" if self.running and not self._stop.is_set() else "stopped"
        self.status_line.value = f"<b>Connect dashboard</b> ({escape(state)})"
        self.stop_button.disabled = state == "stopped"

    # -- reading ------------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the runtime once and redraw (what the thread does every ``interval`` s)."""
        with self._lock:
            try:
                self.views = self._read()
            except Exception as e:  # noqa: BLE001 - shown, never printed into another cell
                log.debug("dashboard refresh failed", exc_info=True)
                self.message.value = error_html(escape(f"Refresh failed: {e}"))
                return
            rates = {n: v.rate for n, v in self.views.items()}
            lags = {n: v.lag for n, v in self.views.items() if v.lag is not None}
            self.history.append((time.monotonic() - self._started, rates, lags))
            self.refreshes += 1
            self.table.value = self._html()
            self.plot.value = self._png()
            self._update_status_line()

    def _read(self) -> dict[str, ConnectorView]:
        try:
            metrics = task_metrics_frame(self.rt.metrics())
        except RemoteUnsupportedError:  # a Kafka Connect REST API serves no metrics: no records/s shown
            metrics = task_metrics_frame({})
        views = {}
        for name in sorted(self.rt.connectors()):
            try:
                status = with_waiting_tasks(self.rt, name, self.rt.connector_status(name))
            except ConnectRestError:  # deleted meanwhile, or no status yet
                continue
            view = ConnectorView(status)
            try:
                view.topics = self.rt.connector_topics(name)[name]["topics"]
            except ConnectRestError:  # topic tracking disabled (403)
                view.topics = []
            column = RATE_COLUMNS.get(status.get("type", ""))
            if column and column in metrics.columns:  # running tasks only: a failed task moves nothing
                running = [t["id"] for t in status.get("tasks", []) if t.get("state") == "RUNNING"]
                rows = metrics[(metrics["connector"] == name) & metrics["task"].isin(running)]
                view.rate = float(rows[column].fillna(0).sum())
            if status.get("type") == "sink":
                try:
                    view.lag = sink_lag(self.rt, name)
                except RemoteUnsupportedError:  # a remote cluster without its bootstrap servers: no lag shown
                    pass
            views[name] = view
        return views

    # -- drawing ----------------------------------------------------------------------------------------
    @staticmethod
    def _trace(text: str | None) -> str:
        lines = (text or "").strip().splitlines()
        if not lines:
            return ""
        return (f"<details><summary>{escape(lines[0][:160])}</summary>"
                f"<pre style='font-size:80%'>{escape(chr(10).join(lines))}</pre></details>")

    def _html(self) -> str:
        if not self.views:
            return "<p><i>No connectors.</i></p>"
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{h}</th>" for h in
                       ("connector", "task", "state", "version", "topics", "lag", "records/s", "trace"))
        rows = []
        for name, view in self.views.items():
            entries = [("connector", view.status["connector"])] + [(str(t["id"]), t) for t in view.status["tasks"]]
            for i, (ident, s) in enumerate(entries):
                first = i == 0
                cells = [escape(name) if first else "", escape(ident), state_html(s.get("state", "")),
                         escape(s.get("version", "")), escape(", ".join(view.topics)) if first else "",
                         "" if not first or view.lag is None else str(view.lag),
                         f"{view.rate:.1f}" if first else "", self._trace(s.get("trace"))]
                rows.append("<tr>" + "".join(f"<td style='padding:2px 8px;vertical-align:top'>{c}</td>"
                                             for c in cells) + "</tr>")
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"

    def _png(self) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(9, 3.2), dpi=80)
        FigureCanvasAgg(fig)
        rate_ax, lag_ax = fig.subplots(1, 2)
        times = [t for t, _, _ in self.history]
        for ax, index, title in ((rate_ax, 1, "throughput (records/s)"), (lag_ax, 2, "sink consumer lag (records)")):
            names = sorted({n for sample in self.history for n in sample[index]})
            for n in names:
                ax.plot(times, [sample[index].get(n, float("nan")) for sample in self.history], label=n)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("seconds since the dashboard started", fontsize=8)
            ax.tick_params(labelsize=8)
            if names:
                ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()

    def __repr__(self) -> str:
        state = f"refreshing every {self.interval:g} s" if self.running else "stopped"
        n = len(self.views)
        lines = [f"LiveDashboard: {state}, {n} connector{'s' if n != 1 else ''}"]
        for name, view in self.views.items():
            c = view.status["connector"]
            parts = [f"{c.get('state')} ({view.status.get('type', '')})"]
            if c.get("version"):
                parts[0] += f" version {c['version']}"
            parts.append(f"tasks {tasks_summary(view.status) or 'none'}")
            parts.append(f"topics {', '.join(view.topics) or 'none'}")
            if view.lag is not None:
                parts.append(f"lag {view.lag}")
            lines.append(f"  {name}: {', '.join(parts)}")
        return "\n".join(lines)
