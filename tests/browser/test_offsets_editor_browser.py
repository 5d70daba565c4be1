"""A real browser: JupyterLab served locally, Debian's Chromium driven by Playwright, the offsets tutorial
run up to its editor, an offset typed into the editor and Apply clicked, and the new offset read from Kafka.

Needs ``apt-get install chromium`` and the ``browser`` extra (``pip install -e ".[browser]"``: Playwright,
JupyterLab). Playwright's own browser download is never used: it launches the system executable. A
screenshot of the editor after Apply is saved as ``test-artifacts/browser-offsets-editor.png`` (or under
``$TEST_ARTIFACTS``).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from confluent_kafka import Consumer, TopicPartition
from jupyter_browser import ARTIFACTS, CHROMIUM, KERNEL_IDLE, ROOT, RUN_ALL

pytestmark = pytest.mark.browser



def tutorial_up_to_the_editor(bootstrap: str, group: str) -> nbformat.NotebookNode:
    """notebooks/02-offsets.ipynb up to the cell that shows the editor, on the test's broker and group."""
    nb = nbformat.read(ROOT / "notebooks" / "02-offsets.ipynb", as_version=4)
    last = next(i for i, c in enumerate(nb.cells) if "--edit" in c.source)
    nb.cells = nb.cells[:last + 1]
    for cell in nb.cells:
        cell.source = (cell.source.replace("%connect start --embedded", f"%connect start --bootstrap-servers {bootstrap}")
                       .replace('"offsets-tutorial"', f'"{group}"'))
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def committed_seq(bootstrap: str, offsets_topic: str, connector: str, task: int) -> int | None:
    """The last offset of ``{"task": task}`` written to the worker's offsets topic, read to its end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{offsets_topic}",
                         "enable.auto.commit": False})
    try:
        metadata = consumer.list_topics(offsets_topic, timeout=10).topics[offsets_topic]
        parts = [TopicPartition(offsets_topic, p, 0) for p in metadata.partitions]
        ends = {p.partition: consumer.get_watermark_offsets(p, timeout=10)[1] for p in parts}
        consumer.assign(parts)
        seen, last = {p: 0 for p in ends}, None
        while any(seen[p] < ends[p] for p in ends):
            for m in consumer.consume(500, timeout=1):
                if m.error():
                    continue
                if json.loads(m.key()) == [connector, {"task": task}]:
                    last = None if m.value() is None else json.loads(m.value())["seq"]
            for tp in consumer.position(parts):  # past transaction markers (tasks commit in transactions)
                seen[tp.partition] = max(seen[tp.partition], tp.offset)
        return last
    finally:
        consumer.close()


def test_edit_and_apply_in_jupyterlab_changes_the_offset_in_kafka(bootstrap: str, unique: str,
                                                                   jupyter_lab: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, root = jupyter_lab
    group = f"browser-{unique}"
    nbformat.write(tutorial_up_to_the_editor(bootstrap, group), root / "02-offsets.ipynb")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/lab/tree/02-offsets.ipynb")
            page.wait_for_function(KERNEL_IDLE, timeout=180_000)
            page.evaluate(RUN_ALL)  # Run > Run All Cells (not awaited: it resolves only when every cell ran)
            grid = page.locator(".widget-gridbox").last
            expect(grid).to_be_visible(timeout=180_000)
            seq = grid.locator("input[type=text]").first  # rows are in partition order: task 0 first
            expect(seq).to_have_value("19", timeout=30_000)
            seq.fill("7")
            seq.press("Enter")
            page.get_by_role("button", name="Apply").last.click()
            expect(page.get_by_text("have been altered successfully")).to_be_visible(timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "browser-offsets-editor.png"), full_page=True)
        finally:
            browser.close()
    assert committed_seq(bootstrap, f"{group}-offsets", "numbers", 0) == 7
    assert committed_seq(bootstrap, f"{group}-offsets", "numbers", 1) == 19
