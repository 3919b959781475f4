"""An MCP App's Content Security Policy holds whatever its HTML looks like before or around its
<head>: a <header> first, a "<head>" in a comment or a script, or no <head> at all. The inspector
must put the policy's <meta> in the head the browser builds (one outside it is ignored; one after a
script does not cover that script). Each app here runs an inline script (its policy allows those),
then opens a frame, which its policy forbids: the browser must report the violation."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import Inspector, open_inspector, start_dev, stop

pytestmark = pytest.mark.e2e

# Shows that the script ran, then whether the policy refused a frame of a data: URL. The app's
# policy has frame-src 'none' (it declares no frameDomains); the inspector page's own policy, which
# the sandboxed srcdoc frame inherits, allows data: frames: only the app's policy can refuse it.
PROBE = """<p id="ran">script did not run</p><p id="seen">no violation</p>
<script>
  document.addEventListener("securitypolicyviolation", (event) => {
    document.getElementById("seen").textContent = "blocked by " + event.effectiveDirective;
  });
  document.getElementById("ran").textContent = "script ran";
  const frame = document.createElement("iframe");
  frame.src = "data:text/html,<p>framed</p>";
  document.body.append(frame);
</script>"""

PAGES = {
    "header-before-head": (
        "<!doctype html>\\n<header><h1>Policy app</h1></header>\\n"
        "<html><head><title>app</title></head><body>" + PROBE + "</body></html>"
    ),
    "head-in-a-comment-first": (
        "<!doctype html><!-- the <head> comes below -->\\n"
        "<html><head><title>app</title></head><body>" + PROBE + "</body></html>"
    ),
    "head-in-a-script-first": (
        '<!doctype html><script>window.template = "<head>";</script>\\n'
        "<html><head><title>app</title></head><body>" + PROBE + "</body></html>"
    ),
    "no-head-no-html": "<!doctype html><body>" + PROBE + "</body>",
    "a-plain-document": "<!doctype html><html><head><title>app</title></head><body>"
    + PROBE
    + "</body></html>",
}

SERVER = textwrap.dedent(
    """
    import json

    from mcpkit import Server

    server = Server("policies", "1.0.0")
    PAGES = json.loads({pages!r})
    CSP = {{"connectDomains": ["https://api.example.com"]}}  # declared: 127.0.0.1:9 is not in it


    def add(case, html):
        uri = f"ui://policies/{{case}}.html"
        server.ui_resource(uri, html, csp=CSP)
        server.add_tool(lambda: case, name=case.replace("-", "_"), meta={{"ui": {{"resourceUri": uri}}}})


    for case, html in PAGES.items():
        add(case, html)
    """
)


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    import json

    server = tmp_path_factory.mktemp("policies") / "policies.py"
    server.write_text(SERVER.format(pages=json.dumps(PAGES)))
    inspector = start_dev(str(server))
    try:
        yield inspector
    finally:
        stop(inspector)


@pytest.mark.parametrize("case", list(PAGES))
def test_an_app_runs_under_its_declared_policy_whatever_precedes_its_head(
    page: Any, policies: Inspector, case: str
) -> None:
    open_inspector(page, policies)
    page.click(f'.tool-item[data-name="{case.replace("-", "_")}"]')
    page.click("#call-tool")
    page.locator("#tool-output iframe.app-frame").wait_for()
    app = page.frame_locator("#tool-output iframe.app-frame")
    app.locator("#ran").filter(has_text="script ran").wait_for()
    app.locator("#seen").filter(has_text="blocked by frame-src").wait_for()
    # The policy is the first element of the head the browser built, and the declared domain is in it.
    first = app.locator("head > :first-child")
    assert first.get_attribute("http-equiv") == "Content-Security-Policy"
    assert "connect-src https://api.example.com" in (first.get_attribute("content") or "")
