"""The inspector as a user meets a connection going wrong, and a server that says little about itself:
no "null" on any view, a failed connection clearing what the page showed and saying why in one line,
and a command target's arguments, environment and request timeout."""

from __future__ import annotations

import shlex
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import free_port
from .conftest import at_revision, dominant_colour, keep_screenshot, opened, wait_ready

pytestmark = pytest.mark.e2e

#: A server that gives only what the protocol requires: no titles, descriptions, MIME types or
#: versions of its own, a tool without a description, a template and a prompt with no arguments.
SPARSE = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("sparse")


    @server.resource("sparse://bare")
    def bare() -> bytes:
        return b"\\x00\\x01"


    @server.resource("sparse://item/{id}")
    def item(id: str) -> str:
        return id


    @server.prompt
    def hello() -> str:
        return "hi"


    @server.tool
    def nothing(x) -> None:
        return None
    """
)


def _walk_every_view(page: Any) -> list[str]:
    """Open every tab and pick every item in it; the page's text after each step."""
    texts = []
    for tab, items in [
        ("tools", [".tool-item"]),
        ("resources", [".resource-item", ".template-item"]),
        ("prompts", [".prompt-item"]),
        ("server", []),
    ]:
        page.click(f"#tabs [data-tab={tab}]")
        texts.append(page.inner_text("body"))
        for selector in items:
            found = page.locator(f"#panel-{tab} {selector}")
            assert found.count() >= 1, selector
            for index in range(found.count()):
                found.nth(index).click()
                texts.append(page.inner_text("body"))
    return texts


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
def test_no_null_text_on_any_view_of_a_sparse_server(page: Any, tmp_path: Path, revision: str) -> None:
    server = tmp_path / "sparse.py"
    server.write_text(SPARSE)
    with opened(page, str(server)):
        at_revision(page, revision)
        texts = _walk_every_view(page)
        for text in texts:
            assert "null" not in text.lower()
            assert "undefined" not in text

        # What a person sees beside the resource's URI is nothing at all (it was "nullnullnull").
        page.click("#tabs [data-tab=resources]")
        page.click('.resource-item[data-uri="sparse://bare"]')
        page.locator("#resource-output .contents").wait_for()
        uri = page.locator("#resource-detail > code.name").bounding_box()
        assert uri is not None
        shot = page.screenshot(
            clip={"x": uri["x"] + uri["width"] + 2, "y": uri["y"], "width": 240, "height": uri["height"]}
        )
        keep_screenshot(page.screenshot(), "sparse.png", tmp_path)
        _, share = dominant_colour(shot)
        assert share == 1.0  # one colour: the background, no text


def test_a_refused_url_clears_the_page_and_says_why_in_one_line(page: Any, tmp_path: Path) -> None:
    with opened(page, "examples/weather.py"):
        page.click('.tool-item[data-name="get_weather"]')
        page.fill('#tool-detail [data-field="location"] input', "Paris")
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()
        assert page.inner_text("#tools-count") == "3"

        port = free_port()  # nothing listens there
        page.select_option("#target-kind", "url")
        page.fill("#target-value", f"http://127.0.0.1:{port}/mcp")
        page.click("#connect")
        page.wait_for_selector('#status[data-state="failed"]')
        status = page.inner_text("#status")
        assert (
            status
            == f"failed: nothing is listening at 127.0.0.1:{port}: is the server running, on that port?"
        )
        assert "\n" not in status and "Errno" not in status and "-32600" not in status

        # Nothing of the weather server is left beside the failure.
        for count in ("#tools-count", "#resources-count", "#prompts-count"):
            assert page.inner_text(count) == ""
        assert page.locator(".tool-item").count() == 0
        assert page.locator("#tool-output").count() == 0
        assert page.locator("#tool-detail [data-field]").count() == 0
        assert page.inner_text("#tool-detail") == "Pick a tool."
        page.click("#tabs [data-tab=server]")
        assert page.inner_text("#server-detail") == "Not connected."

        badge = page.locator("#status").screenshot()
        keep_screenshot(page.screenshot(), "refused.png", tmp_path)
        colour, share = dominant_colour(badge)
        assert colour == (0xFB, 0xE0, 0xE0) and share > 0.5  # the failure's red badge, not green


SERVER_V1 = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("reloading")


    @server.tool
    def echo(word: str) -> str:
        "Say the word back."
        return word
    """
)


def test_a_reload_that_hits_a_syntax_error_clears_the_page(page: Any, tmp_path: Path) -> None:
    server = tmp_path / "reloading.py"
    server.write_text(SERVER_V1)
    with opened(page, str(server)):
        page.click('.tool-item[data-name="echo"]')
        page.fill('#tool-detail [data-field="word"] input', "hi")
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()

        # The watcher may start a moment after the page connected: write until the failure shows.
        deadline = time.monotonic() + 90
        while True:
            server.write_text(SERVER_V1 + "\ndef broken(:\n")
            try:
                page.wait_for_selector('#status[data-state="failed"]', timeout=5_000)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
        assert "stopped before answering" in page.inner_text("#status")
        assert page.inner_text("#tools-count") == ""
        assert page.locator(".tool-item").count() == 0
        assert page.locator("#tool-output").count() == 0
        assert page.inner_text("#tool-detail") == "Pick a tool."
        page.locator('#events li[data-kind="stderr"]', has_text="SyntaxError").first.wait_for()

        server.write_text(SERVER_V1)
        page.wait_for_selector('#status[data-state="connected"]')
        page.locator('.tool-item[data-name="echo"]').wait_for()


#: Run as ``python greeter.py ARGS``: a tool reports its arguments and environment, another sleeps.
GREETER = textwrap.dedent(
    """
    import asyncio
    import os
    import sys

    from mcpkit import Server

    server = Server("greeter", "2.0.0")


    @server.tool
    def greet() -> str:
        "Greet with the environment's word, and say the arguments."
        return f"{os.environ.get('GREETING', '-')} {sys.argv[1:]}"


    @server.tool
    async def slow() -> str:
        "Take half a minute."
        await asyncio.sleep(30)
        return "done"


    if __name__ == "__main__":
        server.run()
    """
)


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
def test_a_command_target_with_arguments_environment_and_a_timeout(
    page: Any, tmp_path: Path, revision: str
) -> None:
    server = tmp_path / "greeter.py"
    server.write_text(GREETER)
    with opened(page, connected=False):
        page.select_option("#target-kind", "command")
        page.fill("#target-value", f"{shlex.quote(sys.executable)} {shlex.quote(str(server))}")
        page.click("#settings summary")
        assert page.locator("#opt-headers").is_hidden()  # a URL's settings are not a command's
        page.fill("#opt-args", "--name 'Ada Lovelace'")
        page.fill("#opt-env", "# a comment\nGREETING=hello\n")
        page.fill("#opt-timeout", "2")
        page.select_option("#revision", revision)
        page.click("#connect")
        wait_ready(page, "2026-07-28" if revision == "auto" else revision)

        description = page.locator('.tool-item[data-name="greet"] .item-description')
        assert description.inner_text() == "Greet with the environment's word, and say the arguments."

        page.click('.tool-item[data-name="greet"]')
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()
        assert page.inner_text("#tool-output .result pre.text") == "hello ['--name', 'Ada Lovelace']"

        page.click('.tool-item[data-name="slow"]')
        page.click("#call-tool")
        error = page.locator("#tool-output .result.is-error")
        error.wait_for()
        assert "within 2 s" in error.inner_text()
        keep_screenshot(error.screenshot(), "timeout.png", tmp_path)


def test_bad_settings_are_refused_with_the_line_that_is_wrong(page: Any) -> None:
    with opened(page, "examples/weather.py"):
        page.click("#settings summary")
        page.fill("#opt-env", "GOOD=1\nnot a pair\n")
        page.click("#connect")
        page.wait_for_selector('#status[data-state="failed"]')
        assert "environment variables, line 2: expected NAME=value" in page.inner_text("#status")
        assert page.input_value("#opt-env") == "GOOD=1\nnot a pair\n"  # what was typed stays
        page.fill("#opt-env", "GOOD=1\n")
        page.click("#connect")
        wait_ready(page, "2026-07-28")


def _backend(page: Any, op: str, params: dict[str, Any]) -> str:
    """What the inspector's backend answers the page's own line to it: ``ok`` or the error's message."""
    return str(
        page.evaluate(
            """async ([op, params]) => {
                const { api } = await import("/static/state.js");
                try { await api.op(op, params); return "ok"; } catch (error) { return error.message; }
            }""",
            [op, params],
        )
    )


@pytest.mark.parametrize(
    ("kind", "value", "setting", "text", "said"),
    [
        ("dev", "", "#opt-env", "not a pair", "environment variables, line 1: expected NAME=value"),
        ("url", "ftp://127.0.0.1/mcp", "#opt-headers", "", "a URL target starts with http:// or https://"),
    ],
    ids=["bad-environment", "bad-url"],
)
def test_a_connect_refused_for_its_settings_leaves_no_connection_behind(
    page: Any, tmp_path: Path, kind: str, value: str, setting: str, text: str, said: str
) -> None:
    with opened(page, "examples/weather.py"):
        assert _backend(page, "request", {"method": "tools/list"}) == "ok"  # connected to weather

        page.click("#settings summary")
        page.select_option("#target-kind", kind)
        if value:
            page.fill("#target-value", value)
        if text:
            page.fill(setting, text)
        page.click("#connect")
        page.wait_for_selector('#status[data-state="failed"]')
        assert said in page.inner_text("#status")
        assert page.locator(".tool-item").count() == 0 and page.inner_text("#tools-count") == ""

        # The page shows no server, and the backend has none either: nothing reaches the old one.
        assert _backend(page, "request", {"method": "tools/list"}) == "not connected"
        assert _backend(page, "ping", {}) == "not connected"
        assert _backend(page, "hostEntry", {}) == "connect to a server first"
        page.click("#tabs [data-tab=server]")
        assert page.inner_text("#server-detail") == "Not connected."
        keep_screenshot(page.screenshot(), f"refused-{kind}.png", tmp_path)
