"""Small HTML helpers shared by the widgets (their messages and tables are ``ipywidgets.HTML`` values).

>>> escape("it's <b>"), error_html("bad")
("it's &lt;b&gt;", "<span style='color:#c62828'>bad</span>")
"""

from __future__ import annotations

from html import escape as _html_escape

__all__ = ["error_html", "escape"]


def escape(text: str) -> str:
    """HTML-escape text shown in an element (quotes stay as typed, so messages read as the runtime wrote them)."""
    return _html_escape(text, quote=False)


def error_html(text_html: str) -> str:
    """Already-escaped HTML shown in red, as every widget shows errors."""
    return f"<span style='color:#c62828'>{text_html}</span>"
