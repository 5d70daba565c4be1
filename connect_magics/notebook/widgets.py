"""``StatusBoard``: connectors and task states in core ipywidgets, refreshed on demand only.

>>> from connect_magics.notebook.widgets import StatusBoard  # doctest: +SKIP
>>> board = StatusBoard(rt); board  # doctest: +SKIP
StatusBoard: 1 connector
  lines: RUNNING (source) tasks 0:RUNNING

Only core widgets (``HTML``, ``Button``, boxes) are used, so it renders on Databricks; buttons talk to
the kernel over widget comms, never over the REST API. Nothing runs in the background: the table changes
only when Refresh or an action button is clicked (or :meth:`refresh` is called). Action results and
errors are shown in the board's message line, never printed. ``repr(board)`` is a stable plain-text
listing for nbval and frontends without widgets (EMR).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W

from connect_magics.errors import ConnectRestError
from connect_magics.notebook.tables import tasks_summary

__all__ = ["StatusBoard", "state_html"]

_COLORS = {"RUNNING": "#2e7d32", "PAUSED": "#f9a825", "STOPPED": "#616161", "FAILED": "#c62828",
           "UNASSIGNED": "#1565c0", "RESTARTING": "#1565c0"}


def state_html(state: str) -> str:
    """A connector or task state in its colour (RUNNING green, FAILED red, ...)."""
    color = _COLORS.get(state, "#000")
    return f'<span style="color:{color};font-weight:bold">{html.escape(state)}</span>'


class StatusBoard(W.VBox):
    """Connectors and their tasks in an HTML table, with Refresh and per-connector Pause/Resume/Stop buttons.

    ``statuses`` holds the status JSON of each connector as of the last refresh.
    """

    def __init__(self, rt: Any, **kwargs: Any) -> None:
        self.rt = rt
        self.statuses: dict[str, dict[str, Any]] = {}
        self.refresh_button = W.Button(description="Refresh", icon="refresh", tooltip="Read the states again")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.table = W.HTML()
        self.actions = W.VBox()
        self.message = W.HTML()
        self.action_buttons: dict[str, dict[str, W.Button]] = {}
        super().__init__(children=[self.refresh_button, self.table, self.actions, self.message], **kwargs)
        self.refresh()

    def refresh(self) -> None:
        """Read every connector's status and redraw the table and buttons."""
        statuses: dict[str, dict[str, Any]] = {}
        for name in sorted(self.rt.connectors()):
            try:
                statuses[name] = self.rt.connector_status(name)
            except ConnectRestError as e:  # deleted meanwhile, or no status yet
                statuses[name] = {"name": name, "connector": {"state": "UNKNOWN", "trace": e.message},
                                  "tasks": [], "type": ""}
        self.statuses = statuses
        self.table.value = self._html()
        self._build_actions()

    def _group_html(self) -> str:
        """Which part this runtime plays in its group (a remote runtime has none to show)."""
        role = getattr(self.rt, "role", None)
        if role is None:
            return ""
        group = html.escape(str(self.rt.worker_config["group.id"]))
        what = {"leader": "the <b>leader</b> of group {g}: it runs the connectors and tasks",
                "follower": "a <b>follower</b> in group {g}: the leader runs the tasks and applies changes",
                }.get(role, "joining group {g}")
        return f"<p style='margin:2px 0'>This runtime is {what.format(g=group)}.</p>"

    def _html(self) -> str:
        if not self.statuses:
            return self._group_html() + "<p><i>No connectors.</i></p>"
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{h}</th>"
                       for h in ("connector", "type", "task", "state", "worker", "trace"))
        rows = []
        for name, st in self.statuses.items():
            entries = [("connector", st.get("connector", {}))] + [(str(t.get("id")), t) for t in st.get("tasks", [])]
            for i, (ident, s) in enumerate(entries):
                trace = (s.get("trace") or "").strip().splitlines()
                cells = [html.escape(name) if i == 0 else "", html.escape(st.get("type", "")) if i == 0 else "",
                         html.escape(ident), state_html(s.get("state", "")), html.escape(s.get("worker_id", "")),
                         html.escape(trace[0][:200]) if trace else ""]
                rows.append("<tr>" + "".join(f"<td style='padding:2px 8px'>{c}</td>" for c in cells) + "</tr>")
        return self._group_html() + f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"

    def _build_actions(self) -> None:
        rows, self.action_buttons = [], {}
        for name in self.statuses:
            buttons = {}
            for verb in ("pause", "resume", "stop"):
                b = W.Button(description=verb.capitalize(), tooltip=f"{verb} connector {name}",
                             layout=W.Layout(width="auto"))
                b.on_click(lambda _b, n=name, v=verb: self.act(n, v))
                buttons[verb] = b
            self.action_buttons[name] = buttons
            rows.append(W.HBox([W.Label(name, layout=W.Layout(min_width="12em")), *buttons.values()]))
        self.actions.children = rows

    def act(self, name: str, verb: str) -> None:
        """Pause, resume or stop connector ``name`` (what its buttons do), then refresh."""
        method = {"pause": self.rt.pause_connector, "resume": self.rt.resume_connector,
                  "stop": self.rt.stop_connector}[verb]
        try:
            method(name)
            self.message.value = html.escape(f"{verb.capitalize()} requested for connector '{name}'.")
        except ConnectRestError as e:
            self.message.value = (f"<span style='color:#c62828'>{html.escape(verb)} {html.escape(name)} failed: "
                                  f"{html.escape(e.message)}</span>")
        self.refresh()

    def __repr__(self) -> str:
        n = len(self.statuses)
        lines = [f"StatusBoard: {n} connector{'s' if n != 1 else ''}"]
        for name, st in self.statuses.items():
            kind = f" ({st['type']})" if st.get("type") else ""
            tasks = tasks_summary(st)
            lines.append(f"  {name}: {st.get('connector', {}).get('state', '')}{kind}"
                         + (f" tasks {tasks}" if tasks else " no tasks"))
        return "\n".join(lines)
