"""The inspector on the weather example: the tool list, a form from the input schema, a call, its
result and the raw traffic; reloading when the server's file changes; the backend's guards."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import (
    VIEWPORT,
    Inspector,
    changed_fraction,
    keep_screenshot,
    open_inspector,
    opened,
    running,
    screenshot_stats,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def weather() -> Iterator[Inspector]:
    with running("examples/weather.py") as inspector:
        yield inspector


def test_tools_listed_form_from_schema_call_result_and_traffic(
    page: Any, weather: Inspector, tmp_path: Path
) -> None:
    open_inspector(page, weather)
    names = page.locator(".tool-item").evaluate_all("els => els.map(e => e.dataset.name)")
    assert names == ["get_weather", "get_weather_data", "forecast"]
    assert page.locator("#status").get_attribute("data-version") == "2026-07-28"

    page.click('.tool-item[data-name="get_weather_data"]')
    location = page.locator('[data-field="location"]')
    assert location.locator(".required").count() == 1  # required in the schema
    unit = page.locator('[data-field="unit"] select')  # an enum: a select, its default chosen
    assert unit.locator("option").all_inner_texts() == ["(unset)", "celsius", "fahrenheit"]  # optional
    assert unit.evaluate("s => s.options[s.selectedIndex].textContent") == "celsius"
    assert page.locator('[data-field="unit"] .required').count() == 0

    page.click("#call-tool")  # the required field is empty: the page says so and sends nothing
    assert "location is required" in page.inner_text("#tool-detail .problem")
    before = page.screenshot()

    page.fill('[data-field="location"] input', "Paris")
    unit.select_option(label="fahrenheit")
    page.click("#call-tool")
    result = page.locator("#tool-output .result")
    result.wait_for()
    structured = json.loads(result.locator("pre.structured").inner_text())
    assert structured["location"] == "Paris"
    assert structured["unit"] == "fahrenheit"
    assert "is-error" not in (result.get_attribute("class") or "")

    # The raw traffic shows the call both ways, the arguments as sent.
    out = page.locator('#traffic li[data-dir="out"][data-method="tools/call"]')
    out.first.wait_for()
    out.first.locator(".summary").click()
    sent = json.loads(out.first.locator("pre").inner_text())
    assert sent["params"]["arguments"] == {"location": "Paris", "unit": "fahrenheit"}
    assert page.locator('#traffic li[data-dir="in"]').count() >= 3  # discover, tools/list, the call

    after = page.screenshot()
    keep_screenshot(after, "weather-call.png", tmp_path)
    size, colours = screenshot_stats(after)
    assert size == (VIEWPORT["width"], VIEWPORT["height"])
    assert colours > 50  # text, badges and panels, not an empty page
    assert changed_fraction(before, after) > 0.02  # the result and the traffic appeared


def test_a_tool_error_is_shown_as_an_error(page: Any, weather: Inspector) -> None:
    open_inspector(page, weather)
    page.click('.tool-item[data-name="forecast"]')
    page.fill('[data-field="location"] input', "Oslo")
    page.fill('[data-field="days"] input', "9")  # the tool refuses more than 7 days
    page.click("#call-tool")
    result = page.locator("#tool-output .result.is-error")
    result.wait_for()
    assert "days must be between 1 and 7" in result.inner_text()


SERVER_V1 = textwrap.dedent(
    '''
    from mcpkit import Server

    server = Server("reloading", "1.0.0")


    @server.tool
    def first() -> str:
        """The first tool."""
        return "one"
    '''
)
SERVER_V2 = SERVER_V1 + textwrap.dedent(
    '''

    @server.tool
    def second(word: str) -> str:
        """A tool added while mcpkit dev runs."""
        return word * 2
    '''
)


def test_editing_the_server_file_reloads_it_and_the_page_shows_the_new_tool(
    page: Any, tmp_path: Path
) -> None:
    server = tmp_path / "reloading.py"
    server.write_text(SERVER_V1)
    with opened(page, str(server)):
        page.locator('.tool-item[data-name="first"]').wait_for()
        assert page.locator(".tool-item").count() == 1
        before = page.screenshot()

        # The watcher may start a moment after the page connected: write until the change is seen.
        deadline = time.monotonic() + 90
        second = page.locator('.tool-item[data-name="second"]')
        while True:
            server.write_text(SERVER_V2)
            try:
                second.wait_for(timeout=5_000)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
        assert page.locator(".tool-item").count() == 2
        assert page.locator('#events li[data-kind="reload"]').count() >= 1

        # A file that no longer loads: the page says the connection failed and shows the traceback;
        # the next good save brings the server back.
        server.write_text(SERVER_V2 + "\ndef broken(:\n")
        page.wait_for_selector('#status[data-state="failed"]')
        page.locator('#events li[data-kind="stderr"]', has_text="SyntaxError").first.wait_for()
        server.write_text(SERVER_V2)
        page.wait_for_selector('#status[data-state="connected"]')
        second.wait_for()

        second.click()
        page.fill('#tool-detail [data-field="word"] input', "ab")
        page.click("#call-tool")
        page.locator("#tool-output .result").wait_for()
        assert "abab" in page.inner_text("#tool-output .result")
        after = page.screenshot()
        keep_screenshot(after, "reloaded.png", tmp_path)
        assert changed_fraction(before, after) > 0.01


SLOW_SERVER = textwrap.dedent(
    '''
    import asyncio

    from mcpkit import Server

    server = Server("slow", "1.0.0")


    @server.tool
    async def wait_long() -> str:
        """Takes a minute."""
        await asyncio.sleep(60)
        return "done"
    '''
)


def _children(pid: int) -> set[int]:
    """The processes whose parent is *pid* (from /proc)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.add(int(status.parent.name))
    return found


def test_cancel_stops_a_call_and_stopping_mcpkit_dev_stops_its_servers(page: Any, tmp_path: Path) -> None:
    server = tmp_path / "slow.py"
    server.write_text(SLOW_SERVER)
    with opened(page, str(server)) as inspector:
        page.click('.tool-item[data-name="wait_long"]')
        page.click("#call-tool")
        page.locator("#tool-output progress").wait_for()
        page.click("#cancel-tool")
        error = page.locator("#tool-output .result.is-error")
        error.wait_for()
        assert "cancelled" in error.inner_text()
        page.locator('#traffic li[data-method="notifications/cancelled"]').wait_for()
        children = _children(inspector.process.pid)
        assert children, "the page's server runs as a child of mcpkit dev"
    deadline = time.monotonic() + 60
    while any(Path(f"/proc/{pid}").exists() for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [pid for pid in children if Path(f"/proc/{pid}/status").exists()]
    assert not alive or all("zombie" in Path(f"/proc/{pid}/status").read_text() for pid in alive), (
        f"servers left running after mcpkit dev stopped: {alive}"
    )


def test_only_the_inspectors_own_page_may_drive_it(weather: Inspector) -> None:
    base = f"http://127.0.0.1:{weather.port}"
    token = weather.token
    with httpx.Client(base_url=base, timeout=10) as http:
        assert http.get(f"/?token={token}").status_code == 200
        assert http.get("/").status_code == 403  # no token
        assert http.get("/?token=wrong").status_code == 403
        assert http.get(f"/api/events?token={token[:-1]}").status_code == 403
        # DNS rebinding: a page on another name that resolves to 127.0.0.1 carries that name.
        assert (
            http.get(f"/?token={token}", headers={"Host": f"evil.example:{weather.port}"}).status_code == 421
        )
        # Another local page (another port, or another site) cannot post operations, token or not.
        for headers in ({"Origin": "http://127.0.0.1:1"}, {"Sec-Fetch-Site": "cross-site"}):
            reply = http.post(f"/api/op?token={token}&session=x", json={"op": "disconnect"}, headers=headers)
            assert reply.status_code == 403, headers
        # The page's own origin gets through to the session check.
        reply = http.post(
            f"/api/op?token={token}&session=nope",
            json={"op": "disconnect"},
            headers={"Origin": base, "Sec-Fetch-Site": "same-origin"},
        )
        assert reply.status_code == 404
        page = http.get(f"/?token={token}")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer"
