"""``OffsetsEditor``: a connector's offsets (KIP-875) as an editable, paged table of core ipywidgets.

>>> editor = OffsetsEditor(rt, "lines")  # or: %connect offsets lines --edit  # doctest: +SKIP
>>> editor.cells[0]["position"].value = "0"; editor.apply_button.click()  # doctest: +SKIP

One page (``page_size`` rows, 50 by default) is drawn at a time from the pandas frame that
``rt.offsets_frame`` gives, so 100,000 partitions cost no more widgets than 50: the page's widgets are
made once and refilled when the page changes. Partition cells are labels, offset cells are text boxes;
an edited cell gets an orange border and is kept in :attr:`edits` across pages. Apply sends only the
edited rows (``rt.alter_offsets``: other partitions keep their offsets), Reset forgets every offset
(``rt.reset_offsets``). Edits are validated first (types, negative numbers, and for sinks partitions
that do not exist on the broker): a bad edit is refused with a message naming the row and column, and
nothing is sent. Both need the connector STOPPED: for a running or paused connector the editor asks
first, then stops it, acts, and puts it back in its previous state. The runtime's answer is shown word
for word (including the "framework-managed offsets" caveat). Nothing runs in the background; results go
to the message line, never to stdout. ``repr(editor)`` is a plain-text view of the current page.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import ipywidgets as W
import pandas as pd

from connect_magics.errors import ConnectRestError
from connect_magics.notebook.html_text import error_html, escape
from connect_magics.notebook.offset_cells import cell_text, column_kinds, parse_cell
from connect_magics.notebook.tables import empty_offsets_reason
from connect_magics.runtime.stopped import stopped_for
from connect_magics.spark.offsets_frame import META_KEY, frame_to_request

__all__ = ["OffsetsEditor"]

EDITED_BORDER = "2px solid #f9a825"
_DURATION = re.compile(r"^(P|\d+(\.\d+)?\s*[a-zA-Z])")  # "15m", "2 days", "PT1H": not a time


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Rows in partition order (stable, as read when the values cannot be compared, e.g. mixed types)."""
    try:
        ordered = frame.sort_values(columns, ignore_index=True, kind="stable") if columns else frame
    except TypeError:
        return frame
    ordered.attrs = dict(frame.attrs)
    return ordered


def _loaded(name: str) -> property:
    """An attribute that exists once the offsets are read: reading it while they are read in the background
    waits for them (:meth:`OffsetsEditor.wait`), so that code driving the editor sees the loaded table."""
    key = "_" + name

    def get(self: OffsetsEditor) -> Any:
        if threading.current_thread() is not self._loader:
            self.wait()
        return self.__dict__[key]

    def set_(self: OffsetsEditor, value: Any) -> None:
        self.__dict__[key] = value

    return property(get, set_)


class OffsetsEditor(W.VBox):
    """Edit connector ``name``'s offsets page by page; Apply alters the edited partitions, Reset forgets all.

    ``frame`` is the connector's offsets already read with ``rt.offsets_frame`` (default: read them now).
    With ``background`` (the default) they are read on a thread: the editor shows at once with a progress
    line and fills its first page when the read is done, so the kernel is never blocked by a long read
    (100,000 partitions read from Kafka). Reading :attr:`frame`, :attr:`cells` or :attr:`labels` meanwhile
    waits for it (:meth:`wait`). :attr:`frame` holds the offsets as last read (plus rows added with
    :meth:`add_row`), :attr:`edits` the typed texts by ``(row, column)``, :attr:`answer` the runtime's last
    answer (``{"message": ...}``).
    """

    frame = _loaded("frame")
    cells = _loaded("cells")
    labels = _loaded("labels")
    roles = _loaded("roles")
    kinds = _loaded("kinds")
    sink = _loaded("sink")

    def __init__(self, rt: Any, name: str, page_size: int = 50, frame: pd.DataFrame | None = None,
                 background: bool = True, **kwargs: Any) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be 1 or more, not {page_size}")
        self.rt, self.name, self.page_size, self.background = rt, name, page_size, background
        self._loader: threading.Thread | None = None
        self._done = threading.Event()
        self._load_error: BaseException | None = None
        self.edits: dict[tuple[int, str], str] = {}
        self.answer: dict[str, str] | None = None
        self.page = 0
        self._pending: str | None = None
        self._filling = False
        self.title = W.HTML()
        self.grid = W.GridBox()
        self.prev_button = W.Button(description="Previous", icon="chevron-left", layout=W.Layout(width="auto"))
        self.next_button = W.Button(description="Next", icon="chevron-right", layout=W.Layout(width="auto"))
        self.page_label = W.Label()
        self.prev_button.on_click(lambda _b: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _b: self.show_page(self.page + 1))
        self.apply_button = W.Button(description="Apply", icon="check", button_style="primary",
                                     tooltip="Alter the edited partitions' offsets")
        self.reset_button = W.Button(description="Reset", icon="undo", button_style="danger",
                                     tooltip="Forget every offset: the connector starts from the beginning")
        self.discard_button = W.Button(description="Discard edits", tooltip="Undo every edit not applied yet")
        self.reload_button = W.Button(description="Reload", icon="refresh", tooltip="Read the offsets again")
        self.apply_button.on_click(lambda _b: self.apply())
        self.reset_button.on_click(lambda _b: self.reset())
        self.discard_button.on_click(lambda _b: self.discard())
        self.reload_button.on_click(lambda _b: self.reload(background=self.background))
        self.confirm_text = W.HTML()
        self.confirm_button = W.Button(description="Stop, then continue", button_style="warning",
                                       layout=W.Layout(width="auto"))
        self.cancel_button = W.Button(description="Cancel")
        self.confirm_button.on_click(lambda _b: self.confirm())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.confirm_box = W.HBox([self.confirm_text, self.confirm_button, self.cancel_button],
                                  layout=W.Layout(display="none"))
        self.message = W.HTML()
        self.new_row: dict[str, W.Text] = {}
        self.add_button = W.Button(description="Add partition", icon="plus", layout=W.Layout(width="auto"))
        self.add_button.on_click(lambda _b: self._add_from_inputs())
        self.add_box = W.HBox()
        self.rewind_text = W.Text(placeholder="2026-11-26T10:00:00Z, or 15m", description="Rewind to",
                                  layout=W.Layout(width="24em"))
        self.rewind_button = W.Button(description="Load offsets for that time", icon="history",
                                      layout=W.Layout(width="auto"),
                                      tooltip="A sink's offsets at that time (or that long ago), as edits to review")
        self.rewind_button.on_click(lambda _b: self.rewind_to(self.rewind_text.value))
        super().__init__(children=[
            self.title, self.grid, W.HBox([self.prev_button, self.page_label, self.next_button]), self.add_box,
            W.HBox([self.rewind_text, self.rewind_button]),
            W.HBox([self.apply_button, self.reset_button, self.discard_button, self.reload_button]),
            self.confirm_box, self.message], **kwargs)
        self.reload(frame, background=background and frame is None)

    # -- reading and paging -------------------------------------------------------------------------
    def reload(self, frame: pd.DataFrame | None = None, background: bool = False) -> None:
        """Read the offsets again (or take ``frame``, as ``rt.offsets_frame`` gave it), forget the edits, and
        show the first page; with ``background``, read on a thread and return at once (see :meth:`wait`)."""
        self.wait()  # one read at a time
        self.edits = {}
        if frame is not None or not background:
            self._show(self.rt.offsets_frame(self.name) if frame is None else frame)
            return
        self._done.clear()
        self._load_error = None
        self._set_busy(True)
        started = time.monotonic()
        read: dict[str, Any] = {}

        def read_offsets() -> None:
            try:
                read["frame"] = self.rt.offsets_frame(self.name)
            except BaseException as e:  # noqa: BLE001 - handed to load()
                read["error"] = e

        def load() -> None:
            try:
                reader = threading.Thread(target=read_offsets, name=f"offsets-editor-read-{self.name}", daemon=True)
                reader.start()
                while True:  # the read reports nothing: show that it goes on, and for how long
                    self.title.value = (f"<b>Offsets of {escape(self.name)}</b>: reading them from Kafka... "
                                        f"{time.monotonic() - started:.1f} s")
                    reader.join(0.25)
                    if not reader.is_alive():
                        break
                if "error" in read:
                    raise read["error"]
                self._show(read["frame"])
            except BaseException as e:  # noqa: BLE001 - shown in the editor and raised by wait()
                self._load_error = e
                detail = f"{e.message} (HTTP {e.status})" if isinstance(e, ConnectRestError) else repr(e)
                self.title.value = f"<b>Offsets of {escape(self.name)}</b>"
                self.message.value = error_html(escape(f"Could not read the offsets: {detail}"))
            finally:
                self._set_busy(False)
                self._done.set()

        self._loader = threading.Thread(target=load, name=f"offsets-editor-{self.name}", daemon=True)
        self._loader.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait until offsets being read in the background are shown; raise what made the read fail."""
        loader = self._loader
        if loader is None or loader is threading.current_thread():
            return
        if not self._done.wait(timeout):
            raise TimeoutError(f"The offsets of {self.name} were not read within {timeout} s")
        if self._load_error is not None:
            raise self._load_error

    @property
    def loading(self) -> bool:
        """True while the offsets are read in the background."""
        return self._loader is not None and not self._done.is_set()

    def _set_busy(self, busy: bool) -> None:
        """Disable the buttons while reading; afterwards the actions come back, and Previous / Next as the
        page shown allows (both stay disabled when the read failed)."""
        for button in (self.apply_button, self.reset_button, self.discard_button, self.reload_button,
                       self.add_button):
            button.disabled = busy
        if busy:
            self.prev_button.disabled = self.next_button.disabled = True
            self.page_label.value = "reading..."

    def _show(self, frame: pd.DataFrame) -> None:
        """Take a frame as ``rt.offsets_frame`` gives it, and show its first page."""
        meta = frame.attrs.get(META_KEY, {})
        self.roles: dict[str, tuple[str, str]] = {c: tuple(r) for c, r in meta.get("columns", {}).items()}
        self.frame = _sorted(frame, [c for c in frame.columns if not self._is_offset(str(c))])
        self.sink = meta.get("type") == "sink"
        self.kinds = column_kinds(self.frame)
        self._build_grid()
        self._build_add_box()
        self.show_page(0)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def _is_offset(self, column: str) -> bool:
        return self.roles.get(column, ("offset",))[0] == "offset"

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.frame) // self.page_size))

    def _build_grid(self) -> None:
        """Make the page's widgets once: a header, then ``page_size`` rows of labels and text boxes."""
        columns = self.columns
        header = [W.HTML(f"<b>{escape(c)}</b>") for c in columns]
        self.labels: list[dict[str, W.Label]] = []
        self.cells: list[dict[str, W.Text]] = []
        children: list[W.Widget] = list(header)
        for slot in range(min(self.page_size, max(len(self.frame), 1))):
            labels, cells = {}, {}
            for column in columns:
                if self._is_offset(column):
                    box = W.Text(layout=W.Layout(width="auto"), continuous_update=False)
                    box.observe(lambda ch, s=slot, c=column: self._typed(s, c, ch["new"]), names="value")
                    cells[column] = box
                    children.append(box)
                else:
                    labels[column] = W.Label()
                    children.append(labels[column])
            self.labels.append(labels)
            self.cells.append(cells)
        self.grid.children = children
        self.grid.layout = W.Layout(grid_template_columns=" ".join(["auto"] * len(columns)) or "auto",
                                    grid_gap="2px 12px")

    def show_page(self, page: int) -> None:
        """Fill the page's widgets with rows ``page * page_size`` onwards (clamped to the pages there are)."""
        self.page = min(max(page, 0), self.pages - 1)
        first = self.page * self.page_size
        self._filling = True
        try:
            for slot in range(len(self.cells)):
                row = first + slot
                visible = row < len(self.frame)
                for column, label in self.labels[slot].items():
                    label.value = cell_text(self.frame.iat[row, self.frame.columns.get_loc(column)]) if visible else ""
                    label.layout.visibility = "visible" if visible else "hidden"
                for column, box in self.cells[slot].items():
                    box.value = self._text(row, column) if visible else ""
                    box.layout.border = EDITED_BORDER if (row, column) in self.edits else ""
                    box.disabled = not visible
                    box.layout.visibility = "visible" if visible else "hidden"
        finally:
            self._filling = False
        shown = min(first + self.page_size, len(self.frame))
        self.page_label.value = (f"rows {first + 1}-{shown} of {len(self.frame)} (page {self.page + 1} of "
                                 f"{self.pages})" if len(self.frame) else "no offsets")
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= self.pages - 1
        self._update_title()

    def _original(self, row: int, column: str) -> str:
        return cell_text(self.frame.iat[row, self.frame.columns.get_loc(column)])

    def _text(self, row: int, column: str) -> str:
        return self.edits.get((row, column), self._original(row, column))

    def _update_title(self) -> None:
        kind = "sink" if self.sink else "source"
        n = len(self.frame)
        edited = len({row for row, _ in self.edits})
        note = (f"; {edited} edited row{'s' if edited != 1 else ''} not applied yet" if edited else "")
        empty = ""
        if not n:
            empty = f"<br><i>{escape(empty_offsets_reason(self.rt, self.name))}</i>"
        self.title.value = (f"<b>Offsets of {escape(self.name)}</b> ({kind}, {n} partition"
                            f"{'s' if n != 1 else ''}{escape(note)}){empty}")

    # -- editing ----------------------------------------------------------------------------------------
    def _typed(self, slot: int, column: str, text: str) -> None:
        if self._filling or self.loading:
            return
        self.set_cell(self.page * self.page_size + slot, column, text)

    def set_cell(self, row: int, column: str, text: str) -> None:
        """Type ``text`` into an offset cell (what editing its text box does); the original text undoes it."""
        if not self._is_offset(column) or column not in self.columns:
            raise ValueError(f"Column '{column}' is not an offset column of this table: only "
                             f"{[c for c in self.columns if self._is_offset(c)]} can be edited")
        if not 0 <= row < len(self.frame):
            raise ValueError(f"Row {row} is not in this table of {len(self.frame)} rows")
        if text == self._original(row, column) and not self._added(row):
            self.edits.pop((row, column), None)
        else:
            self.edits[(row, column)] = text
        slot = row - self.page * self.page_size
        if 0 <= slot < len(self.cells):
            box = self.cells[slot][column]
            box.layout.border = EDITED_BORDER if (row, column) in self.edits else ""
            if box.value != text:
                self._filling = True
                box.value, self._filling = text, False
        self._update_title()

    def row_of(self, **partition: Any) -> int:
        """The row of the partition with these partition fields, e.g. ``editor.row_of(task=0)``.

        Raises ``KeyError`` when no row (or more than one) matches."""
        matches = [row for row in range(len(self.frame))
                   if all(self._original(row, c) == cell_text(v) for c, v in partition.items())]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} rows have {partition}; expected exactly one")
        return matches[0]

    def _added(self, row: int) -> bool:
        return bool(self.frame.attrs.get("added_rows")) and row in self.frame.attrs["added_rows"]

    def _build_add_box(self) -> None:
        self.new_row = {c: W.Text(placeholder=c, layout=W.Layout(width="10em")) for c in self.columns}
        self.add_box.children = [*self.new_row.values(), self.add_button] if self.columns else []

    def _add_from_inputs(self) -> None:
        try:
            self.add_row({c: box.value for c, box in self.new_row.items()})
        except ValueError as e:
            self.message.value = error_html(escape(str(e)))
            return
        for box in self.new_row.values():
            box.value = ""

    def add_row(self, texts: dict[str, str]) -> int:
        """Add a partition that has no offset yet (what the Add partition row does); returns its row.

        Partition cells are checked now, offset cells with the other edits when applying."""
        unknown = set(texts) - set(self.columns)
        if unknown:
            raise ValueError(f"Unknown column(s) {sorted(unknown)}: the columns are {self.columns}")
        values = {}
        for column in self.columns:
            text = texts.get(column, "")
            if not self._is_offset(column):
                values[column] = parse_cell(text, self.kinds[column], column)
                if values[column] is None:
                    raise ValueError(f"{column}: a new partition needs a value in every partition column")
        row = len(self.frame)
        attrs = dict(self.frame.attrs)
        self.frame = self.frame.reindex(range(row + 1))  # a new row of missing values, the dtypes kept
        for column, value in values.items():
            self.frame.iat[row, self.frame.columns.get_loc(column)] = value
        self.frame.attrs = {**attrs, "added_rows": [*attrs.get("added_rows", []), row]}
        for column in self.columns:
            if self._is_offset(column):
                self.edits[(row, column)] = texts.get(column, "")
        self._build_grid()
        self.show_page(row // self.page_size)
        return row

    def rewind_to(self, when: str) -> bool:
        """Fill a sink's offset cells with its offsets at time ``when`` (ISO 8601, epoch ms) or that long ago
        (``15m``, ``PT1H``), as ``rt.rewind(..., apply=False)`` computes them: edits to review, then Apply."""
        when = when.strip()
        duration = _DURATION.match(when) is not None
        try:
            plan = self.rt.rewind(self.name, to=None if duration else (int(when) if when.isdigit() else when),
                                  by=when if duration else None, apply=False)
        except ConnectRestError as e:
            self.message.value = error_html(escape(f"{e.message} (HTTP {e.status})"))
            return False
        for entry in plan.to_dict("records"):
            partition = {"kafka_topic": entry["kafka_topic"], "kafka_partition": entry["kafka_partition"]}
            offset = str(entry["kafka_offset"])
            try:
                self.set_cell(self.row_of(**partition), "kafka_offset", offset)
            except KeyError:  # a partition with no offset yet
                self.add_row({**{k: cell_text(v) for k, v in partition.items()}, "kafka_offset": offset})
        self.message.value = escape(f"Offsets for {plan.attrs['rewind_to']} loaded as edits: review them, then "
                                    "Apply (or Discard edits).")
        return True

    def discard(self) -> None:
        """Forget every edit and added row (what Discard edits does)."""
        self.reload()
        self.message.value = "Edits discarded."

    # -- validation and requests ----------------------------------------------------------------------
    def _describe(self, row: int) -> str:
        parts = [f"{c}={self._original(row, c)}" for c in self.columns if not self._is_offset(c)]
        return f"row {row + 1} ({', '.join(parts)})"

    def validate(self) -> tuple[pd.DataFrame, list[str]]:
        """The edited rows with their new values, and the problems found (empty when they can be sent)."""
        rows = sorted({row for row, _ in self.edits})
        edited = self.frame.iloc[rows].copy()
        edited.attrs = {META_KEY: self.frame.attrs.get(META_KEY, {})}
        for column in self.columns:
            if self._is_offset(column) and self.kinds[column] in ("int", "bool", "float"):
                edited[column] = edited[column].astype(object)
        problems = []
        for (row, column), text in sorted(self.edits.items()):
            try:
                value = parse_cell(text, self.kinds[column], column)
            except ValueError as e:
                problems.append(f"{self._describe(row)}: {e}")
                continue
            edited.iat[rows.index(row), edited.columns.get_loc(column)] = value
        if self.sink and not problems:
            problems += self._unknown_partitions(edited)
        return edited, problems

    def _unknown_partitions(self, edited: pd.DataFrame) -> list[str]:
        """Sink rows naming a topic or partition the broker does not have."""
        wanted = {(str(t), int(p)) for t, p in zip(edited["kafka_topic"], edited["kafka_partition"], strict=True)}
        metadata = self.rt.admin.list_topics(timeout=10).topics
        problems = []
        for topic, partition in sorted(wanted):
            meta = metadata.get(topic)
            if meta is None or meta.error is not None:
                problems.append(f"kafka_topic={topic}: no such topic on the broker")
            elif partition not in meta.partitions:
                problems.append(f"kafka_topic={topic}, kafka_partition={partition}: the topic has "
                                f"{len(meta.partitions)} partition(s), 0 to {len(meta.partitions) - 1}")
        return problems

    # -- actions ------------------------------------------------------------------------------------
    def apply(self) -> bool:
        """Validate the edits and alter those partitions' offsets (what Apply does). True when sent now;
        False when refused, or when the connector must be stopped first (see :meth:`confirm`)."""
        if not self.edits:
            self.message.value = "Nothing to apply: no cell was edited."
            return False
        _, problems = self.validate()
        if problems:
            self.message.value = error_html("Not applied, nothing was changed:<br>" +
                                               "<br>".join(escape(p) for p in problems))
            return False
        return self._ask_or_run("alter")

    def reset(self) -> bool:
        """Forget every offset of the connector (what Reset does); True when sent now."""
        return self._ask_or_run("reset")

    def _ask_or_run(self, action: str) -> bool:
        state = self.rt.connector_status(self.name)["connector"]["state"]
        if state == "STOPPED":
            self._run(action)
            return True
        self._pending = action
        done = "altered" if action == "alter" else "reset"
        self.confirm_text.value = (f"Connector {escape(self.name)} is {escape(state)}; offsets can "
                                   f"only be {done} while it is STOPPED. Stop it, {action} the offsets, and "
                                   f"{'pause' if state == 'PAUSED' else 'resume'} it after?")
        self.confirm_box.layout.display = "flex"
        self.message.value = ""
        return False

    def confirm(self) -> None:
        """Stop the connector, do what was asked, and put it back in its state (what "Stop, then continue" does)."""
        action, self._pending = self._pending, None
        self.confirm_box.layout.display = "none"
        if action is not None:
            self._run(action)

    def cancel(self) -> None:
        """Drop the pending Apply or Reset; the edits stay."""
        self._pending = None
        self.confirm_box.layout.display = "none"
        self.message.value = "Cancelled: nothing was changed."

    def _run(self, action: str) -> None:
        if action == "alter":
            request = frame_to_request(self.validate()[0])
            call = lambda: self.rt.alter_offsets(self.name, request)  # noqa: E731
        else:
            call = lambda: self.rt.reset_offsets(self.name)  # noqa: E731
        try:
            self.answer, note = stopped_for(self.rt, self.name, call)
        except ConnectRestError as e:
            self.answer = None
            self.message.value = error_html(escape(f"{e.message} (HTTP {e.status})"))
            return
        self.reload()
        self.message.value = escape(self.answer["message"]) + (f"<br><i>{escape(note)}</i>" if note else "")

    # -- plain text ---------------------------------------------------------------------------------
    def __repr__(self) -> str:
        if self.loading:  # never wait here: frontends call it to display the widget
            return f"OffsetsEditor: {self.name}, reading its offsets from Kafka..."
        if self._load_error is not None:
            return f"OffsetsEditor: {self.name}, the offsets could not be read: {self._load_error}"
        kind = "sink" if self.sink else "source"
        n = len(self.frame)
        lines = [f"OffsetsEditor: {self.name} ({kind}), {n} partition{'s' if n != 1 else ''}, "
                 f"{len(self.edits)} edited cell{'s' if len(self.edits) != 1 else ''}, page {self.page + 1} "
                 f"of {self.pages}"]
        first = self.page * self.page_size
        for row in range(first, min(first + self.page_size, n, first + 10)):
            cells = [f"{c}={self._text(row, c)}{'*' if (row, c) in self.edits else ''}" for c in self.columns]
            lines.append("  " + "  ".join(cells))
        if n > first + 10 and self.page_size > 10:
            lines.append(f"  ... {min(first + self.page_size, n) - first - 10} more rows on this page")
        return "\n".join(lines)
