"""The inspector's Server tab: ping, the host config entry for the server (which a host can start),
and 2026-07-28 ``subscriptions/listen``: list changes and resource updates arriving on it."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client

from ..conftest import ROOT
from .conftest import at_revision, keep_screenshot, opened

pytestmark = pytest.mark.e2e


def _has_colour(png: bytes, rgb: tuple[int, int, int], tolerance: int = 40) -> bool:
    """Whether some pixel of the screenshot is close to *rgb* (text drawn in that colour)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    for _, colour in colours:
        assert isinstance(colour, tuple)
        if sum(abs(int(a) - b) for a, b in zip(colour, rgb, strict=True)) <= tolerance:
            return True
    return False


@pytest.mark.parametrize(("revision", "method"), [("auto", "server/discover"), ("2025-11-25", "ping")])
def test_ping_and_a_host_entry_that_a_host_can_start(
    page: Any, tmp_path: Path, revision: str, method: str
) -> None:
    with opened(page, "examples/notes.py"):
        at_revision(page, revision)
        page.click("#tabs [data-tab=server]")
        page.click("#ping")
        result = page.locator('#ping-result[data-ok="true"]')
        result.wait_for()
        assert result.inner_text().startswith("answered in ")
        assert result.inner_text().endswith(f" ms ({method})")
        assert _has_colour(result.screenshot(), (0x1B, 0x7F, 0x3A))  # drawn in the success green
        sent = page.locator(f'#traffic li[data-dir="out"][data-method="{method}"]')
        assert sent.count() >= 1

        page.click("#copy-entry")
        page.locator("#host-entry").wait_for()
        keep_screenshot(page.screenshot(), "server-tab.png", tmp_path)
        entry = json.loads(page.inner_text("#host-entry"))["mcpServers"]["notes"]
        assert entry["command"] == sys.executable
        assert entry["args"] == ["-m", "mcpkit", "run", str(ROOT / "examples" / "notes.py")]

        async def start_it() -> list[str]:
            # As a host would: the entry's command, from another folder.
            async with Client([entry["command"], *entry["args"]], cwd=str(tmp_path)) as client:
                return [tool.name for tool in await client.list_tools()]

        # (in a thread of its own: Playwright's loop runs in this one)
        with ThreadPoolExecutor(1) as pool:
            names = pool.submit(asyncio.run, asyncio.wait_for(start_it(), 90)).result()
        assert "create_notebook" in names


GROWER = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("grower", "1.0.0")


    @server.tool
    def grow(name: str) -> str:
        "Add a tool called NAME."
        server.add_tool(lambda: name, name=name, description="made by grow")
        return f"added {name}"
    """
)


def test_listen_shows_list_changes_in_2026_07_28(page: Any, tmp_path: Path) -> None:
    server = tmp_path / "grower.py"
    server.write_text(GROWER)
    with opened(page, str(server), "--no-reload"):
        page.click("#tabs [data-tab=server]")
        page.check("#listen-tools")
        page.click("#listen-apply")
        page.wait_for_selector("#listen-status:has-text('listening for toolsListChanged')")
        assert page.locator('#traffic li[data-dir="out"][data-method="subscriptions/listen"]').count() == 1

        page.click("#tabs [data-tab=tools]")
        page.click('.tool-item[data-name="grow"]')
        page.fill('#tool-detail [data-field="word"] input, #tool-detail [data-field="name"] input', "sprout")
        page.click("#call-tool")
        # The change arrives on the listen stream, and the list is read again.
        sprout = page.locator('.tool-item[data-name="sprout"]')
        sprout.wait_for()
        assert sprout.locator(".item-description").inner_text() == "made by grow"
        assert page.inner_text("#tools-count") == "2"
        page.click("#tabs [data-tab=server]")
        arrived = page.locator('#listen-log li[data-method="notifications/tools/list_changed"]')
        arrived.first.wait_for()
        shown = page.locator('#events li[data-kind="notification"]', has_text="(subscriptions/listen)")
        assert shown.count() >= 1
        keep_screenshot(page.screenshot(), "listen.png", tmp_path)

        # Listening for nothing ends the stream.
        page.uncheck("#listen-tools")
        page.click("#listen-apply")
        page.wait_for_selector("#listen-status:has-text('not listening')")


def test_subscribe_to_a_resource_in_2026_07_28_uses_listen(page: Any) -> None:
    with opened(page, "examples/notes.py"):
        page.click('.tool-item[data-name="create_notebook"]')
        page.click("#call-tool")
        result = page.locator("#tool-output .result")
        result.wait_for()
        notebook_id = json.loads(result.locator("pre.structured").inner_text())["notebook_id"]

        page.click("#tabs [data-tab=resources]")
        page.click('.template-item[data-uri="notes://{notebook_id}"]')
        page.fill('#resource-detail [data-field="notebook_id"] input', notebook_id)
        page.click("#subscribe-resource")
        page.wait_for_selector('#subscribe-resource[data-subscribed="true"]')
        listen = page.locator('#traffic li[data-dir="out"][data-method="subscriptions/listen"]')
        assert listen.count() == 1
        listen.locator(".summary").click()
        sent = json.loads(listen.locator("pre").inner_text())
        assert sent["params"]["notifications"]["resourceSubscriptions"] == [f"notes://{notebook_id}"]

        page.click("#tabs [data-tab=tools]")
        page.click('.tool-item[data-name="add_note"]')
        page.fill('#tool-detail [data-field="notebook_id"] input', notebook_id)
        page.fill('#tool-detail [data-field="text"] input', "hello")
        page.click("#call-tool")
        update = page.locator(
            '#events li[data-kind="notification"]', has_text="notifications/resources/updated"
        )
        update.first.wait_for()
        update.first.locator(".summary").click()
        params = json.loads(update.first.locator("pre").inner_text())
        assert params["uri"] == f"notes://{notebook_id}"
