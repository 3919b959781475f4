"""MCP Apps in the inspector: a tool naming a ``ui://`` resource is shown with that resource's HTML in
a sandboxed iframe, which gets the tool's input and result, and whose own ``tools/call`` reaches the
server through the inspector (the answer shows in the app)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    Inspector,
    changed_fraction,
    keep_screenshot,
    open_inspector,
    screenshot_stats,
    start_dev,
    stop,
    wait_ready,
)

pytestmark = pytest.mark.e2e

# The server is built by hand with what the decorator API has (a resource with the app's MIME type,
# tools whose _meta names it), not with any helper for apps. Its app speaks the postMessage dialect
# without any SDK: ui/initialize, then it shows the input and result it is sent; its button calls
# an app-only tool through the host.
APP_SERVER = textwrap.dedent(
    '''
    from mcpkit import Server

    server = Server("counter", "1.0.0")
    count = 0

    VIEW = """<!doctype html>
    <html><head><style>
      body { font: 18px sans-serif; background: #fff3b0; margin: 0; padding: 12px; }
      button { font-size: 18px; background: #1a7f37; color: white; border: 0; padding: 8px 16px; }
    </style></head><body>
    <h1>Counter app</h1>
    <p id="input">waiting for the input</p>
    <p id="result">waiting for the result</p>
    <button id="bump">Bump by 2</button>
    <p id="answer"></p>
    <p id="refused"></p>
    <script>
      let next = 1;
      const pending = {};
      function request(method, params) {
        const id = next++;
        parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
        return new Promise((resolve, reject) => { pending[id] = { resolve, reject }; });
      }
      const show = (id, text) => { document.getElementById(id).textContent = text; };
      window.addEventListener("message", (event) => {
        const m = event.data;
        if (m.id !== undefined && pending[m.id]) {
          const p = pending[m.id];
          delete pending[m.id];
          if (m.error) p.reject(m.error); else p.resolve(m.result);
        } else if (m.method === "ui/notifications/tool-input") {
          show("input", "input: " + JSON.stringify(m.params.arguments));
        } else if (m.method === "ui/notifications/tool-result") {
          show("result", "result: " + m.params.content[0].text);
        }
      });
      document.getElementById("bump").addEventListener("click", async () => {
        const result = await request("tools/call", { name: "bump", arguments: { by: 2 } });
        show("answer", "server says: " + result.content[0].text);
        try {
          await request("tools/call", { name: "model_only", arguments: {} });
          show("refused", "model_only was called");
        } catch (error) {
          show("refused", "refused: " + error.message);
        }
      });
      request("ui/initialize", {
        appCapabilities: {}, appInfo: { name: "counter", version: "1.0.0" }, protocolVersion: "2026-01-26",
      }).then((result) => {
        document.body.dataset.host = result.hostInfo.name;
        parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
      });
    </script>
    </body></html>"""


    @server.resource("ui://counter/view.html", mime_type="text/html;profile=mcp-app")
    def view() -> str:
        """The counter's view."""
        return VIEW


    @server.tool(meta={"ui": {"resourceUri": "ui://counter/view.html"}})
    def show_counter(start: int = 0) -> str:
        """Start counting from *start*, and show the counter."""
        global count
        count = start
        return f"count is {count}"


    @server.tool(meta={"ui": {"resourceUri": "ui://counter/view.html", "visibility": ["app"]}})
    def bump(by: int = 1) -> str:
        """Add to the counter (for the app only)."""
        global count
        count += by
        return f"count is {count}"


    @server.tool(meta={"ui": {"visibility": ["model"]}})
    def model_only() -> str:
        """Not for apps."""
        return "called"
    '''
)


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    server = tmp_path_factory.mktemp("apps") / "counter.py"
    server.write_text(APP_SERVER)
    inspector = start_dev(str(server))
    try:
        yield inspector
    finally:
        stop(inspector)


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
def test_an_app_renders_gets_input_and_result_and_calls_the_server(
    page: Any, counter: Inspector, tmp_path: Path, revision: str
) -> None:
    open_inspector(page, counter)
    if revision != "auto":
        page.select_option("#revision", revision)
        page.click("#connect")
        wait_ready(page, revision)
    assert page.locator('.tool-item[data-name="show_counter"] .badge').all_inner_texts() == ["app"]
    assert page.locator('.tool-item[data-name="bump"] .badge').all_inner_texts() == ["app", "app only"]
    page.click('.tool-item[data-name="show_counter"]')
    page.fill('#tool-detail [data-field="start"] input', "5")
    before = page.screenshot()
    page.click("#call-tool")

    iframe = page.locator("#tool-output iframe.app-frame")
    iframe.wait_for()
    assert iframe.get_attribute("sandbox") == "allow-scripts"  # an opaque origin: no access to the page
    app = page.frame_locator("#tool-output iframe.app-frame")
    app.locator("#input").filter(has_text='input: {"start":5}').wait_for()
    app.locator("#result").filter(has_text="result: count is 5").wait_for()
    assert app.locator("body").get_attribute("data-host") == "mcpkit-inspector"

    app.locator("#bump").click()
    app.locator("#answer").filter(has_text="server says: count is 7").wait_for()
    # A tool not visible to apps is refused by the host; it never reaches the server.
    app.locator("#refused").filter(has_text="refused: tool model_only is not visible to apps").wait_for()
    calls = page.locator('#traffic li[data-dir="out"][data-method="tools/call"]').all_inner_texts()
    assert any("bump" in line for line in calls)
    assert not any("model_only" in line for line in calls)
    assert page.locator('#traffic li[data-dir="app→host"][data-method="tools/call"]').count() == 2

    # The app's own policy is the spec's restrictive default: no connections anywhere.
    policy = app.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "connect-src 'none'" in policy

    frame_png = iframe.screenshot()
    keep_screenshot(frame_png, "app-frame.png", tmp_path)
    (width, height), colours = screenshot_stats(frame_png)
    assert width > 300
    assert height > 100
    assert colours > 20  # text and a button, not an empty frame
    after = page.screenshot()
    keep_screenshot(after, "app-page.png", tmp_path)
    assert changed_fraction(before, after) > 0.05
