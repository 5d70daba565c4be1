"""``PluginVersionPicker``: choose the version of a connector's plugins (KIP-891) with a Maven range.

>>> picker = PluginVersionPicker(rt, "greetings")  # doctest: +SKIP
>>> picker.range.value = "[1.0,2.0)"; picker.chosen  # doctest: +SKIP
'1.1.0'
>>> picker.apply_button.click()  # connector.plugin.version=[1.0,2.0): restarts on 1.1.0  # doctest: +SKIP

For the connector class and each converter the connector's config names, it lists the installed versions
and, as the range is typed, marks those inside it and the one the runtime would load: the answer comes
from the runtime's own plugin registry (``rt.plugins.find``, the call the runtime makes when it starts
the connector), with Maven's message when a range is invalid and Kafka Connect's when no installed
version matches. Apply patches the connector's config (``connector.plugin.version``,
``key.converter.plugin.version``, ...; an empty range removes the key: the newest version), which
restarts it on that version. Core ipywidgets only; ``repr`` is plain text.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from connect_magics.errors import ConnectRestError
from connect_magics.notebook.html_text import error_html, escape
from connect_magics.runtime.plugins.registry import PluginNotFoundError, to_version_range
from connect_magics.runtime.plugins.versions import InvalidVersionSpecificationError

__all__ = ["PluginVersionPicker", "version_targets"]

#: What a connector config can choose a version of: config key of the class -> plugin types.
TARGETS = {"connector.class": ("source", "sink"), "key.converter": ("converter",),
           "value.converter": ("converter",), "header.converter": ("header_converter",)}


def version_targets(config: dict[str, str]) -> dict[str, tuple[str, tuple[str, ...], str]]:
    """``{class key: (class, plugin types, version key)}`` for the plugins this connector config names.

    >>> version_targets({"connector.class": "FileStreamSource", "value.converter": "JsonConverter"})["value.converter"]
    ('JsonConverter', ('converter',), 'value.converter.plugin.version')
    """
    out = {}
    for key, types in TARGETS.items():
        if config.get(key):
            base = "connector" if key == "connector.class" else key
            out[key] = (config[key], types, f"{base}.plugin.version")
    return out


class PluginVersionPicker(W.VBox):
    """Installed versions of connector ``name``'s plugins, a Maven range, and the version it selects.

    :attr:`versions` are the installed versions (ascending), :attr:`matching` those in the range,
    :attr:`chosen` the one the runtime would load (None with :attr:`error` set when none can be).
    """

    def __init__(self, rt: Any, name: str, **kwargs: Any) -> None:
        self.rt, self.name = rt, name
        self.config = rt.connector_config(name)
        self.targets = version_targets(self.config)
        self.versions: list[str] = []
        self.matching: list[str] = []
        self.chosen: str | None = None
        self.error: str | None = None
        self.target = W.Dropdown(options=list(self.targets), description="Plugin of")
        self.range = W.Text(description="Version", placeholder="latest, 1.2 (exactly), [1.0,2.0), (,2.0)",
                            layout=W.Layout(width="40em"))
        self.listing = W.HTML()
        self.message = W.HTML()
        self.apply_button = W.Button(description="Apply to connector", icon="check", button_style="primary",
                                     layout=W.Layout(width="auto"),
                                     tooltip="Set this version in the connector's config (restarts it)")
        self.apply_button.on_click(lambda _b: self.apply())
        self.target.observe(lambda _c: self._target_changed(), names="value")
        self.range.observe(lambda _c: self.evaluate(), names="value")
        super().__init__(children=[W.HTML(f"<b>Plugin versions of {escape(name)}</b>"), self.target, self.range,
                                   self.listing, self.apply_button, self.message], **kwargs)
        self._target_changed()

    def _current(self) -> tuple[str, tuple[str, ...], str]:
        return self.targets[self.target.value]

    def _target_changed(self) -> None:
        _, _, version_key = self._current()
        if self.range.value == self.config.get(version_key, ""):
            self.evaluate()
        else:
            self.range.value = self.config.get(version_key, "")  # evaluates through the observer

    def evaluate(self) -> None:
        """Which installed versions the typed range allows and which one would be loaded (what typing does)."""
        cls, types, _ = self._current()
        spec = self.range.value.strip() or None
        self.versions = self.rt.plugins.versions(cls, types)
        self.matching, self.chosen, self.error = [], None, None
        try:
            rng = to_version_range(spec)
            self.matching = [v for v in self.versions if rng is None or rng.contains_version(v)]
            self.chosen = self.rt.plugins.find(cls, types, spec).version
        except InvalidVersionSpecificationError as e:
            self.error = f"Invalid version specification {spec!r}: {e}"
        except PluginNotFoundError as e:  # VersionedPluginLoadingError: Kafka Connect's message
            self.error = str(e)
        self.listing.value = self._html(cls)
        self.message.value = error_html(escape(self.error)) if self.error else ""
        self.apply_button.disabled = self.error is not None

    def _html(self, cls: str) -> str:
        items = []
        for v in self.versions:
            mark = "&#9733; chosen" if v == self.chosen else "&#10003; in range" if v in self.matching else "not in range"
            style = "font-weight:bold" if v == self.chosen else "color:#757575" if v not in self.matching else ""
            items.append(f"<li style='{style}'>{escape(v)} &mdash; {mark}</li>")
        return f"{escape(cls)}: installed versions<ul>{''.join(items) or '<li>none</li>'}</ul>"

    def apply(self) -> bool:
        """Set the range in the connector's config (what Apply does): it restarts on :attr:`chosen`."""
        _, _, version_key = self._current()
        spec = self.range.value.strip() or None
        try:
            self.rt.patch_connector_config(self.name, {version_key: spec})
        except ConnectRestError as e:
            self.message.value = error_html(escape(f"{e.message} (HTTP {e.status})"))
            return False
        self.config = self.rt.connector_config(self.name)
        what = f"{version_key}={spec}" if spec else f"{version_key} removed (the newest version)"
        self.message.value = escape(f"Applied: {what}; {self.name} restarts on {self.chosen}.")
        return True

    def __repr__(self) -> str:
        cls, _, version_key = self._current()
        spec = self.range.value.strip() or "latest"
        outcome = f"chosen {self.chosen}" if self.error is None else f"error: {self.error}"
        return (f"PluginVersionPicker: {self.name} {version_key}={spec}\n  {cls}: installed "
                f"{', '.join(self.versions) or 'none'}; in range {', '.join(self.matching) or 'none'}; {outcome}")
