"""The inspector's browser tests: Debian's chromium driven by Playwright, ``mcpkit dev`` as a real process.

The browser is the machine's own (``/usr/bin/chromium``, installed by ``.ci/run``); Playwright's
downloaded browsers are never used. One browser per test module, a fresh page per test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from .._dev_address import dev_address
from ..conftest import ROOT, free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Generous: a loaded 2-core machine starts Python processes slowly.
STARTUP_SECONDS = 90.0
#: How long the page may take to show what a test waits for.
WAIT_MS = 60_000
VIEWPORT: Final = {"width": 1280, "height": 800}


@dataclass
class Inspector:
    """A running ``mcpkit dev``: its process, its URL, the page's address parts."""

    process: subprocess.Popen[str]
    url: str
    port: int

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]


def start_dev(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, browser: bool = False
) -> Inspector:
    """Start ``mcpkit dev ARGS --no-browser --port P`` (without ``--no-browser`` if *browser*) and
    wait for the address it prints."""
    port = free_port()
    env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    flags = [] if browser else ["--no-browser"]
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "dev", *args, *flags, "--port", str(port)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    return Inspector(process, dev_address(process, STARTUP_SECONDS), port)


def stop(inspector: Inspector) -> None:
    inspector.process.terminate()
    try:
        inspector.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        inspector.process.kill()
        inspector.process.wait()
    if inspector.process.stdout is not None:
        inspector.process.stdout.close()


@contextmanager
def running(*args: str) -> Iterator[Inspector]:
    """``mcpkit dev ARGS`` for the length of a ``with`` block, stopped however the block ends."""
    inspector = start_dev(*args)
    try:
        yield inspector
    finally:
        stop(inspector)


@contextmanager
def opened(page: Any, *args: str, connected: bool = True) -> Iterator[Inspector]:
    """``mcpkit dev ARGS`` with *page* loaded on it (see `open_inspector`), for a ``with`` block."""
    with running(*args) as inspector:
        open_inspector(page, inspector, connected=connected)
        yield inspector


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's chromium, headless, with a fresh profile; never a downloaded browser."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does)"
        )
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": VIEWPORT["width"], "height": VIEWPORT["height"]},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    try:
        yield page
    finally:
        page.close()
    assert not errors, f"the page threw: {errors}"


def open_inspector(page: Any, inspector: Inspector, *, connected: bool = True) -> None:
    """Load the inspector's page; if *connected*, wait until it has connected to the dev server and
    listed what it offers."""
    page.goto(inspector.url)
    if connected:
        try:
            page.wait_for_selector("body[data-ready]", state="attached")
        except Exception as exc:
            raise AssertionError(
                f"the page did not connect: status {page.inner_text('#status')!r}, "
                f"events {page.inner_text('#events')!r}"
            ) from exc


def wait_ready(page: Any, version: str) -> None:
    """Wait until the page has connected at *version* and listed what the server offers; say what
    the page showed if it does not."""
    try:
        page.wait_for_selector(f'body[data-ready="{version}"]', state="attached")
    except Exception as exc:
        raise AssertionError(
            f"the page did not connect at {version}: status {page.inner_text('#status')!r}, "
            f"events {page.inner_text('#events')!r}"
        ) from exc


def at_revision(page: Any, revision: str) -> None:
    """Reconnect the page at *revision* and wait until it is ready; ``"auto"`` keeps the connection
    the page made on its own (it picks the newest revision both sides speak)."""
    if revision != "auto":
        page.select_option("#revision", revision)
        page.click("#connect")
        wait_ready(page, revision)


def screenshot_stats(png: bytes) -> tuple[tuple[int, int], int]:
    """A screenshot's size and how many distinct colours it has (a blank page has one)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    return image.size, len(colours) if colours is not None else 1 << 20


def dominant_colour(png: bytes) -> tuple[tuple[int, int, int], float]:
    """A screenshot's commonest colour and the share of pixels that have it."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    count, colour = max(colours)
    assert isinstance(colour, tuple)
    return (colour[0], colour[1], colour[2]), count / (image.size[0] * image.size[1])


def changed_fraction(before: bytes, after: bytes) -> float:
    """The share of pixels that differ between two screenshots of the same size."""
    import io

    from PIL import Image, ImageChops

    a = Image.open(io.BytesIO(before)).convert("RGB")
    b = Image.open(io.BytesIO(after)).convert("RGB")
    assert a.size == b.size
    difference = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v else 0)
    histogram = difference.histogram()
    return histogram[255] / (a.size[0] * a.size[1])


def keep_screenshot(png: bytes, name: str, folder: Path) -> None:
    """Save a screenshot beside the test's other files, for a person to look at after a failure."""
    (folder / name).write_bytes(png)
