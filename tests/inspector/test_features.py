"""The inspector on the notes and travel examples: resources, templates, prompts and completion;
elicitation and sampling answered in the page, in both eras; a URL target at a handshake revision."""

from __future__ import annotations

import json
import shlex
import socket
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import free_port, http_server, mcpkit_run
from .conftest import (
    Inspector,
    at_revision,
    changed_fraction,
    dominant_colour,
    keep_screenshot,
    open_inspector,
    opened,
    running,
    wait_ready,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def notes() -> Iterator[Inspector]:
    with running("examples/notes.py") as inspector:
        yield inspector


def _call(page: Any, tool: str, **fields: str) -> Any:
    page.click("#tabs [data-tab=tools]")
    page.click(f'.tool-item[data-name="{tool}"]')
    for name, value in fields.items():
        page.fill(f'#tool-detail [data-field="{name}"] input', value)
    page.click("#call-tool")
    result = page.locator("#tool-output .result")
    result.wait_for()
    return result


def test_resources_templates_prompts_and_completion(page: Any, notes: Inspector, tmp_path: Path) -> None:
    open_inspector(page, notes)
    result = _call(page, "create_notebook", title="groceries")
    notebook_id = json.loads(result.locator("pre.structured").inner_text())["notebook_id"]
    _call(page, "add_note", notebook_id=notebook_id, text="buy apples")

    page.click("#tabs [data-tab=resources]")
    page.click('.resource-item[data-uri="notes://about"]')  # a fixed resource is read at once
    page.locator("#resource-output .contents").wait_for()
    assert "Notebooks of short notes" in page.inner_text("#resource-output")

    page.click('.template-item[data-uri="notes://{notebook_id}"]')
    field = page.locator('#resource-detail [data-field="notebook_id"] input')
    field.fill(notebook_id[:4])  # completion: the server knows the notebook ids
    options = page.locator('#resource-detail [data-field="notebook_id"] datalist option')
    options.first.wait_for(state="attached")
    assert notebook_id in options.evaluate_all("os => os.map(o => o.value)")
    field.fill(notebook_id)
    assert page.inner_text("#expanded-uri") == f"notes://{notebook_id}"
    page.click("#read-resource")
    page.locator("#resource-output .contents").wait_for()
    assert page.inner_text("#resource-output pre") == "# groceries\n- buy apples"
    assert page.locator("#resource-output .badge").inner_text() == "text/markdown"

    page.click("#tabs [data-tab=prompts]")
    page.click('.prompt-item[data-name="summarize"]')
    assert page.locator('#prompt-detail [data-field="notebook_id"] .required').count() == 1
    style = page.locator('#prompt-detail [data-field="style"] input')
    style.fill("d")
    options = page.locator('#prompt-detail [data-field="style"] datalist option')
    options.first.wait_for(state="attached")
    assert options.evaluate_all("os => os.map(o => o.value)") == ["detailed"]
    before = page.screenshot()
    style.fill("detailed")
    page.fill('#prompt-detail [data-field="notebook_id"] input', notebook_id)
    page.click("#get-prompt")
    page.locator("#prompt-output .message").wait_for()
    text = page.inner_text("#prompt-output")
    assert "Summarize these notes (detailed):" in text
    assert "buy apples" in text
    assert page.locator("#prompt-output .message .badge").inner_text() == "user"
    after = page.screenshot()
    keep_screenshot(after, "prompt.png", tmp_path)
    assert changed_fraction(before, after) > 0.005


def test_progress_and_logs_of_a_call_appear_live(page: Any, notes: Inspector) -> None:
    open_inspector(page, notes)
    notebook_id = json.loads(_call(page, "create_notebook").locator("pre.structured").inner_text())[
        "notebook_id"
    ]
    _call(page, "add_note", notebook_id=notebook_id, text="one")
    _call(page, "add_note", notebook_id=notebook_id, text="two")
    _call(page, "export", notebook_id=notebook_id)
    page.locator('#events li[data-kind="progress"]').nth(1).wait_for()
    progress = page.locator('#events li[data-kind="progress"]').all_inner_texts()
    assert any("progress 2/2 exported n2" in line for line in progress), progress
    log = page.locator('#events li[data-kind="log"]')
    log.first.wait_for()
    assert f"exported 2 notes from {notebook_id}" in log.first.inner_text()


@pytest.mark.parametrize(
    ("revision", "era_marker"),
    [
        # 2026-07-28: the questions come back as input_required, and the call is sent again.
        ("auto", "tools/call"),
        # the handshake era: the server sends elicitation/create as a request of its own.
        ("2025-06-18", "elicitation/create"),
    ],
)
def test_elicitation_and_sampling_are_answered_in_the_page(
    page: Any, tmp_path: Path, revision: str, era_marker: str
) -> None:
    with opened(page, "examples/travel.py"):
        at_revision(page, revision)
        page.click('.tool-item[data-name="plan_trip"]')
        page.fill('#tool-detail [data-field="destination"] input', "Rome")
        page.click("#call-tool")

        dialog = page.locator('dialog#question[data-method="elicitation/create"][open]')
        dialog.wait_for()
        assert "Plan a trip to Rome?" in dialog.inner_text()
        assert dialog.locator('[data-field="travellers"] input').input_value() == "1"  # the default
        assert dialog.locator('[data-field="confirm"] .required').count() == 1
        dialog.locator('[data-field="budget"] select').select_option(label="high")
        dialog.locator('[data-field="confirm"] input').check()
        keep_screenshot(page.screenshot(), "elicitation.png", tmp_path)
        page.click("#elicit-accept")

        sampling = page.locator('dialog#question[data-method="sampling/createMessage"][open]')
        sampling.wait_for()
        assert "Suggest one thing to do in Rome." in sampling.inner_text()
        page.fill("#sampling-text", "See the Colosseum")
        page.click("#sampling-send")

        result = page.locator("#tool-output .result")
        result.wait_for()
        assert "Trip to Rome for 1 (high budget). Idea: See the Colosseum" in result.inner_text()
        assert page.locator("dialog#question[open]").count() == 0
        marker = page.locator(f'#traffic li[data-method="{era_marker}"]')
        assert marker.count() >= (2 if era_marker == "tools/call" else 1)


def test_declining_an_elicitation_reaches_the_tool(page: Any) -> None:
    with opened(page, "examples/travel.py"):
        page.click('.tool-item[data-name="plan_trip"]')
        page.fill('#tool-detail [data-field="destination"] input', "Lima")
        page.click("#call-tool")
        page.locator("dialog#question[open]").wait_for()
        page.click("#elicit-decline")
        result = page.locator("#tool-output .result.is-error")
        result.wait_for()
        assert "The trip to Lima was not confirmed (decline)." in result.inner_text()


@pytest.fixture(scope="module")
def weather_over_http() -> Iterator[str]:
    port = free_port()
    for url in http_server(mcpkit_run("weather.py", "--transport", "http", "--port", str(port)), port, 60.0):
        # http_server hands over after its wait whether or not the port opened: be sure it did.
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        except OSError:
            pytest.fail(f"the HTTP server did not open port {port} within 60 s")
        yield url


def test_a_url_target_at_a_handshake_revision(page: Any, weather_over_http: str) -> None:
    with opened(page, connected=False):  # no dev file: the page connects to what it is given
        page.locator("#revision option[value='2025-03-26']").wait_for(state="attached")
        assert page.locator("#target-kind option[value=dev]").is_disabled()
        page.select_option("#target-kind", "url")
        page.fill("#target-value", weather_over_http)
        page.select_option("#revision", "2025-03-26")
        page.click("#connect")
        wait_ready(page, "2025-03-26")
        assert "weather 1.0.0 · 2025-03-26" in page.inner_text("#status")
        assert page.locator(".tool-item").count() == 3
        out = page.locator('#traffic li[data-dir="out"][data-method="initialize"]')
        out.locator(".summary").click()
        initialize = json.loads(out.locator("pre").inner_text())
        assert initialize["params"]["protocolVersion"] == "2025-03-26"
        # The inspector renders MCP Apps, and says so in every era.
        assert "io.modelcontextprotocol/ui" in initialize["params"]["capabilities"]["extensions"]

        page.click('.tool-item[data-name="get_weather"]')
        page.fill('#tool-detail [data-field="location"] input', "Berlin")
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()
        assert "Current weather in Berlin" in page.inner_text("#tool-output .result")

        # At 2026-07-28 over HTTP, forecast's location travels in a header too (x-mcp-header): the
        # page's own tools/list tells the transport which, so the first call is right.
        page.select_option("#revision", "auto")
        page.click("#connect")
        wait_ready(page, "2026-07-28")
        page.click('.tool-item[data-name="forecast"]')
        page.fill('#tool-detail [data-field="location"] input', "Oslo")
        page.fill('#tool-detail [data-field="days"] input', "2")
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()
        assert "day 2:" in page.inner_text("#tool-output .result")
        assert "is-error" not in (page.locator("#tool-output .result").get_attribute("class") or "")
        calls = page.locator('#traffic li[data-dir="out"][data-method="tools/call"]', has_text="forecast")
        assert calls.count() == 1


def test_an_old_http_sse_endpoint_is_recognised(page: Any, weather_over_http: str) -> None:
    with opened(page, connected=False):
        page.select_option("#target-kind", "url")
        page.fill("#target-value", weather_over_http.removesuffix("/mcp") + "/sse")
        page.click("#connect")
        wait_ready(page, "2024-11-05")
        assert page.locator(".tool-item").count() == 3
        # The refused POST is in the traffic too: everything that was sent is shown.
        assert page.locator('#traffic li[data-dir="out"][data-method="server/discover"]').count() == 1


def test_roots_set_in_the_page_reach_the_server(page: Any) -> None:
    with opened(page, "examples/travel.py"):
        page.click("#tabs [data-tab=server]")
        page.fill("#roots", "file:///tmp/trips\nfile:///home/me/plans")
        page.click("#apply-roots")
        page.click("#tabs [data-tab=tools]")
        page.click('.tool-item[data-name="where_to_save"]')
        page.click("#call-tool")
        result = page.locator("#tool-output .result")
        result.wait_for()
        assert json.loads(result.locator("pre.structured").inner_text()) == {
            "result": ["file:///tmp/trips", "file:///home/me/plans"]
        }


def test_a_subscription_shows_resource_updates_in_the_handshake_era(page: Any, notes: Inspector) -> None:
    open_inspector(page, notes)
    page.select_option("#revision", "2025-06-18")
    page.click("#connect")
    wait_ready(page, "2025-06-18")
    notebook_id = json.loads(_call(page, "create_notebook").locator("pre.structured").inner_text())[
        "notebook_id"
    ]
    page.click("#tabs [data-tab=resources]")
    page.click('.template-item[data-uri="notes://{notebook_id}"]')
    page.fill('#resource-detail [data-field="notebook_id"] input', notebook_id)
    page.click("#subscribe-resource")
    page.wait_for_selector('#subscribe-resource[data-subscribed="true"]')
    _call(page, "add_note", notebook_id=notebook_id, text="hello")
    update = page.locator('#events li[data-kind="notification"]', has_text="notifications/resources/updated")
    update.first.wait_for()
    update.first.locator(".summary").click()
    assert json.loads(update.first.locator("pre").inner_text()) == {"uri": f"notes://{notebook_id}"}


IMAGE_SERVER = textwrap.dedent(
    '''
    import base64
    import struct
    import sys
    import zlib

    from mcpkit import ImageContent, Server, TextContent

    server = Server("painter", "1.0.0")


    def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        rows = b"".join(b"\\x00" + bytes(rgb) * width for _ in range(height))
        header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
        return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


    @server.tool
    def paint(width: int = 40, height: int = 20) -> list[TextContent | ImageContent]:
        """A red rectangle."""
        print(f"painting {width}x{height}", file=sys.stderr)
        data = base64.b64encode(_png(width, height, (220, 30, 30))).decode()
        return [TextContent(text=f"{width}x{height}"), ImageContent(data=data, mime_type="image/png")]
    '''
)


def test_a_command_line_target_and_an_image_result(page: Any, tmp_path: Path) -> None:
    server = tmp_path / "painter.py"
    server.write_text(IMAGE_SERVER)
    with opened(page, connected=False):
        page.select_option("#target-kind", "command")
        page.fill("#target-value", f"{shlex.quote(sys.executable)} -m mcpkit run {shlex.quote(str(server))}")
        page.click("#connect")
        wait_ready(page, "2026-07-28")
        page.click('.tool-item[data-name="paint"]')
        page.fill('#tool-detail [data-field="width"] input', "64")
        page.click("#call-tool")
        image = page.locator("#tool-output .result img")
        image.wait_for()
        assert image.evaluate("img => img.decode().then(() => img.naturalWidth)") == 64
        assert image.evaluate("img => img.naturalHeight") == 20
        assert page.inner_text("#tool-output .result pre.text") == "64x20"
        # The server's stderr is in the events, not lost.
        page.locator('#events li[data-kind="stderr"]', has_text="painting 64x20").wait_for()
        shot = image.screenshot()
        keep_screenshot(shot, "image.png", tmp_path)
        colour, share = dominant_colour(shot)
        assert colour == (220, 30, 30)  # the server's red rectangle, drawn
        assert share > 0.6  # (the rest is the image's border)
