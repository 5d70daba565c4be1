"""The code in the docs runs: every code block of README.md's "Use it" and of docs/magics.md, in order, in an
IPython shell (as cells of one notebook), against the test's broker. What a reader would change is changed
the same way here, and only that: the broker's address, file paths and group ids (see ``SUBSTITUTIONS``).
Blocks that show output rather than code are skipped (their first line is not code)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

pytestmark = pytest.mark.broker

ROOT = Path(__file__).resolve().parents[2]
CODE_START = ("%", "from ", "import ", "rt.", "board")
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)


def code_blocks(text: str) -> list[str]:
    return [b for b in FENCE.findall(text) if b.lstrip().startswith(CODE_START)]


def substitutions(bootstrap: str, tmp: Path, group: str) -> dict[str, str]:
    """What a reader adapts: the broker, file paths, group ids."""
    broker = f"type('Broker', (), {{'bootstrap_servers': {bootstrap!r}}})()"  # the test's, already started
    return {"EmbeddedBroker().start()": broker,
            "%connect start --embedded": f"%connect start --bootstrap-servers {bootstrap}",
            '"broker:9092"': repr(bootstrap), 'group_id="nb"': f'group_id="{group}"',
            '"my-notebook"': repr(group), "/tmp/in.txt": str(tmp / "in.txt"), "/data/": f"{tmp}/"}


def run_blocks(blocks: list[str], subs: dict[str, str]) -> list[str]:
    ip = InteractiveShell.instance()
    ran = []
    try:
        for block in blocks:
            for old, new in subs.items():
                block = block.replace(old, new)
            if block.startswith("%%"):
                line, _, body = block.partition("\n")
                ip.run_cell_magic("connect", line.removeprefix("%%connect").strip(), body)
            else:
                result = ip.run_cell(block)
                result.raise_error()
            ran.append(block.splitlines()[0])
    finally:
        if getattr(ip, "_connect_magics", None) is not None:
            ip.run_line_magic("unload_ext", "connect_magics")
    return ran


@pytest.mark.parametrize("doc", ["README.md", "docs/magics.md"])
def test_the_code_in_the_docs_runs(doc: str, bootstrap: str, tmp_path: Path) -> None:
    text = (ROOT / doc).read_text()
    if doc == "README.md":
        text = text[text.index("## Use it"):text.index("## Documentation")]
    (tmp_path / "in.txt").write_text("a line\n")
    for name in ("orders-eu", "orders-us", *(str(i) for i in range(100))):
        (tmp_path / f"{name}.txt").write_text("")
    blocks = code_blocks(text)
    assert blocks, f"no code blocks found in {doc}"
    ran = run_blocks(blocks, substitutions(bootstrap, tmp_path, f"docs-{uuid.uuid4().hex[:8]}"))
    assert len(ran) == len(blocks)
