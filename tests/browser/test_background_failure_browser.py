"""A real kernel in JupyterLab (Chromium through Playwright): a task that fails in the background while
another cell runs prints nothing into that cell (nor any later one); the status board shows the failure.
In a kernel, Python's last-resort log handler writes warnings to sys.stderr, which Jupyter shows in
whichever cell is running: the extension sends its loggers to a file instead (connect_magics/notebook/
kernel_log.py). A screenshot is saved as ``test-artifacts/browser-background-failure.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from helpers import wait_until
from jupyter_browser import ARTIFACTS, CHROMIUM, KERNEL_IDLE, RUN_ALL

pytestmark = pytest.mark.browser

FAILING_SOURCE = '''
from connect_magics.api import ConfigDef, SourceConnector, SourceTask

class FailingTask(SourceTask):
    def version(self): return "1.0"
    def start(self, props): self.polls = 0
    def poll(self):
        self.polls += 1
        if self.polls > 20:
            raise RuntimeError("background failure on purpose")
        return None
    def stop(self): pass

class FailingSource(SourceConnector):
    def version(self): return "1.0"
    def start(self, props): self.props = props
    def task_class(self): return FailingTask
    def task_configs(self, max_tasks): return [dict(self.props)]
    def stop(self): pass
    def config(self): return ConfigDef()

rt.plugins.register(FailingSource)
'''


def notebook(bootstrap: str, group: str) -> nbformat.NotebookNode:
    cells = [
        "%load_ext connect_magics",
        f"%connect start --bootstrap-servers {bootstrap} --group-id {group} -o rt",
        FAILING_SOURCE,
        "%%connect create failing\nconnector.class=FailingSource",
        # runs while (or after) the task fails in the background
        "%%connect create other\nconnector.class=SequenceSource\ntopic=" + group + "-numbers\nrate=5\n"
        "topic.creation.default.partitions=1\ntopic.creation.default.replication.factor=1",
        "%connect list",
        "%connect board",
    ]
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


def test_a_background_failure_shows_in_the_board_and_in_no_cell(bootstrap: str, unique: str,
                                                                jupyter_lab: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, root = jupyter_lab
    nbformat.write(notebook(bootstrap, f"bgfail-{unique}"), root / "background.ipynb")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(f"{url}/lab/tree/background.ipynb")
            page.wait_for_function(KERNEL_IDLE, timeout=180_000)
            page.evaluate(RUN_ALL)
            refresh = page.get_by_role("button", name="Refresh").last
            expect(refresh).to_be_visible(timeout=180_000)
            board = page.locator(".jp-OutputArea-output").last

            def failed_on_the_board() -> bool:
                refresh.click()
                return "FAILED" in board.inner_text()
            wait_until(failed_on_the_board, 60, interval=0.5, message="the failed task on the board")
            page.screenshot(path=str(ARTIFACTS / "browser-background-failure.png"), full_page=True)
            outputs = page.locator(".jp-OutputArea").all_inner_texts()
        finally:
            browser.close()
    printed = "\n".join(o for o in outputs if "Refresh" not in o)  # every cell's output but the board's
    assert "Traceback" not in printed and "background failure on purpose" not in printed, printed
    assert "Created source connector 'other'" in printed
