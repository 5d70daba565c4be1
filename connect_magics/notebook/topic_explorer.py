"""``TopicCreationExplorer``: try KIP-158 topic creation settings on topic names as you type.

>>> explorer = TopicCreationExplorer(rt, "orders-source", topics=["orders", "orders.internal"])  # doctest: +SKIP
>>> explorer.settings.value += "\\ntopic.creation.default.partitions=6"  # doctest: +SKIP
>>> explorer.answer["topics"][0]["partitions"]  # doctest: +SKIP
6

Every answer is the runtime's explain API (``rt.explain_topic_creation``) called with the connector's
config whose ``topic.creation.*`` keys are replaced by the settings box: which group each name matches,
which include pattern matched and which exclude removed it (per group tried), and the partitions,
replication factor and configs it would be created with. Errors in the settings or names are shown in place
(the runtime's 400 message), and nothing else changes. Apply writes the settings into the connector's config
(``rt.update_connector``, which restarts it). Core ipywidgets only; ``repr`` is a plain-text table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as W
from IPython.core.error import UsageError

from connect_magics.errors import ConnectRestError
from connect_magics.notebook.html_text import error_html, escape
from connect_magics.notebook.parsing import parse_properties

__all__ = ["TopicCreationExplorer"]

PREFIX = "topic.creation."
COLUMNS = ("topic", "action", "group", "partitions", "replication_factor", "configs", "why")


def settings_text(config: Mapping[str, str]) -> str:
    """The ``topic.creation.*`` keys of a config as properties lines (``topic.creation.groups`` first).

    >>> print(settings_text({"topic.creation.default.partitions": "3", "topic": "x", "topic.creation.groups": "a"}))
    topic.creation.groups=a
    topic.creation.default.partitions=3
    """
    keys = sorted((k for k in config if k.startswith(PREFIX)), key=lambda k: (k != PREFIX + "groups", k))
    return "\n".join(f"{k}={config[k]}" for k in keys)


class TopicCreationExplorer(W.VBox):
    """Topic creation settings and candidate topic names in, the explain API's answer out, as you type.

    ``connector`` is a connector's name (Apply writes to it) or a connector config (a dict: explore only).
    :attr:`answer` is the last answer of ``rt.explain_topic_creation``, :attr:`error` the last error (or None).
    """

    def __init__(self, rt: Any, connector: str | Mapping[str, Any], topics: list[str] | tuple[str, ...] = (),
                 include_existing: bool = False, **kwargs: Any) -> None:
        self.rt = rt
        self.name = connector if isinstance(connector, str) else None
        base = rt.connector_config(connector) if isinstance(connector, str) else dict(connector)
        self.base = {str(k): str(v) for k, v in base.items()}
        self.answer: dict[str, Any] | None = None
        self.error: str | None = None
        self.settings = W.Textarea(value=settings_text(self.base), description="Settings",
                                   placeholder="topic.creation.default.partitions=3",
                                   layout=W.Layout(width="60em", height="8em"))
        if not topics and self.name is not None:  # the connector's own topics to start with
            topics = _own_topics(rt, self.name, self.base)
        self.topics = W.Textarea(value="\n".join(topics), description="Topics", placeholder="one name per line",
                                 layout=W.Layout(width="60em", height="5em"))
        self.include_existing = W.Checkbox(value=include_existing, description="and the broker's topics")
        self.table = W.HTML()
        self.message = W.HTML()
        self.apply_button = W.Button(description="Apply to connector", icon="check", button_style="primary",
                                     disabled=self.name is None, layout=W.Layout(width="auto"),
                                     tooltip="Write these settings into the connector's config (restarts it)")
        self.apply_button.on_click(lambda _b: self.apply())
        for widget in (self.settings, self.topics, self.include_existing):
            widget.observe(lambda _change: self.refresh(), names="value")
        title = f"Topic creation of {self.name}" if self.name else "Topic creation (a config, not a connector)"
        super().__init__(children=[W.HTML(f"<b>{escape(title)}</b>"), self.settings, self.topics,
                                   self.include_existing, self.apply_button, self.message, self.table], **kwargs)
        self.refresh()

    def topic_names(self) -> list[str]:
        """The names in the Topics box, one per line (blank lines skipped)."""
        return [line.strip() for line in self.topics.value.splitlines() if line.strip()]

    def config(self) -> dict[str, str]:
        """The connector config with its ``topic.creation.*`` keys replaced by the Settings box's.
        Raises ``UsageError`` naming the line when the box is not properties text."""
        settings = parse_properties(self.settings.value)
        stray = [k for k in settings if not k.startswith(PREFIX)]
        if stray:
            raise UsageError(f"Only topic.creation.* keys belong here, not {', '.join(stray)}")
        return {**{k: v for k, v in self.base.items() if not k.startswith(PREFIX)}, **settings}

    def refresh(self) -> None:
        """Ask the explain API again with the boxes' current values (what typing in them does)."""
        try:
            self.answer = self.rt.explain_topic_creation(self.config(), self.topic_names(),
                                                         include_existing=self.include_existing.value)
        except UsageError as e:
            self._fail(str(e))
            return
        except ConnectRestError as e:
            self._fail(e.message)
            return
        self.error = None
        self.message.value = escape(self.answer["reason"] if self.answer["enabled"] else
                                    f"Topic creation is off: {self.answer['reason']}")
        self.table.value = self._html()

    def _fail(self, message: str) -> None:
        self.error, self.answer = message, None
        self.message.value = error_html(escape(message).replace("\n", "<br>"))
        self.table.value = ""

    @staticmethod
    def _why(entry: dict[str, Any]) -> str:
        tried = "".join(f"<li>{escape(g['group'])}: {escape(g['reason'])}</li>" for g in entry.get("groups_tried", []))
        if not tried:
            return escape(entry["reason"])
        return f"<details><summary>{escape(entry['reason'])}</summary><ul>{tried}</ul></details>"

    def _html(self) -> str:
        assert self.answer is not None
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{c}</th>" for c in COLUMNS)
        rows = []
        for e in self.answer["topics"]:
            configs = ", ".join(f"{k}={v}" for k, v in (e.get("configs") or {}).items())
            check = f"<br><span style='color:#c62828'>{escape(e['broker_check'])}</span>" if e.get("broker_check") else ""
            cells = [escape(e["topic"]), escape(e["action"]), escape(str(e.get("group") or "")),
                     escape(str(e["partitions"])), escape(str(e["replication_factor"])), escape(configs),
                     self._why(e) + check]
            rows.append("<tr>" + "".join(f"<td style='padding:2px 8px;vertical-align:top'>{c}</td>" for c in cells)
                        + "</tr>")
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"

    def apply(self) -> bool:
        """Write the settings into the connector's config (what Apply does); True when the runtime took them."""
        if self.name is None:
            self.message.value = error_html("This explorer was given a config, not a connector: nothing to apply")
            return False
        try:
            config = self.config()
            self.rt.update_connector(self.name, config)
        except UsageError as e:
            self._fail(str(e))
            return False
        except ConnectRestError as e:
            self._fail(f"{e.message} (HTTP {e.status})")
            return False
        self.base = config
        self.message.value = escape(f"Applied to {self.name}: its config now has these topic.creation settings "
                                    "and it restarted.")
        return True

    def __repr__(self) -> str:
        lines = [f"TopicCreationExplorer: {self.name or 'a config'}"]
        if self.error is not None:
            return "\n".join([*lines, f"  error: {self.error}"])
        for e in (self.answer or {}).get("topics", []):
            lines.append(f"  {e['topic']}: {e['action']}, group {e.get('group')}, partitions {e['partitions']}, "
                         f"replication factor {e['replication_factor']} ({e['reason']})")
        return "\n".join(lines)


def _own_topics(rt: Any, name: str, config: Mapping[str, str]) -> list[str]:
    """The topics connector ``name`` has used (KIP-558), else those its config names (``topic``, ``topics``)."""
    try:
        used = rt.connector_topics(name).get(name, {}).get("topics", [])
    except Exception:  # noqa: BLE001 - topic tracking off, or a cluster without it: the config is enough
        used = []
    named = [t.strip() for key in ("topic", "topics") for t in config.get(key, "").split(",") if t.strip()]
    return sorted(set(used)) or named
