"""The package as a user gets it: build the wheel and sdist, install the wheel into a fresh venv, and
use the installed ``mcpkit`` from a folder outside the repository: the demo, a user's own server, a
typed signature, a server file whose path has spaces, shell completion, the exit code of a missing
file, and ``mcpkit dev`` serving the inspector (its page and every script the page loads)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from .._dev_address import dev_address
from ..conftest import free_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e

USER_SERVER = '''
from mcpkit import Server

server = Server("mine")


@server.tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper() + "!"
'''

#: A typed argument (a dataclass: the wheel's own dependencies, no pydantic needed).
TYPED_SERVER = '''
from dataclasses import dataclass

from mcpkit import Server

server = Server("post office")


@dataclass
class Address:
    city: str
    zip: str = ""


@server.tool
def send(to: Address, weight: int, note: str | None = None) -> str:
    """Send a parcel."""
    return f"{weight} g to {to.city}"
'''

#: Generous: a loaded 2-core machine starts Python processes slowly.
STARTUP_SECONDS = 120.0


@dataclass
class Installed:
    """The installed ``mcpkit`` and the user's folder it is run from."""

    mcpkit: Path
    home: Path

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.mcpkit), *args], cwd=self.home, capture_output=True, text=True, timeout=timeout
        )


def uv(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "uv", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built from this checkout, installed into a fresh venv (once for the module)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    dist = tmp_path / "dist"
    uv("build", "--quiet", "-o", str(dist), cwd=ROOT)
    wheels, sdists = list(dist.glob("mcpkit-*.whl")), list(dist.glob("mcpkit-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "mcpkit/py.typed" in names and "mcpkit/_examples/weather.py" in names
    assert "mcpkit/inspector/static/index.html" in names

    venv = tmp_path / "venv"
    uv("venv", "--quiet", "--python", sys.executable, str(venv))
    uv("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheels[0]))
    home = tmp_path / "project"  # the user's folder: nothing of the repository around
    home.mkdir()
    return Installed(venv / "bin" / "mcpkit", home)


def test_the_wheel_installs_and_runs_the_demo_and_a_user_server(installed: Installed) -> None:
    demo = installed.run("demo")
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "get_weather" in demo.stdout and "done" in demo.stdout

    (installed.home / "myserver.py").write_text(USER_SERVER)
    called = installed.run("call", "myserver.py", "shout", '{"text": "hi"}', timeout=60)
    assert called.returncode == 0 and "HI!" in called.stdout, called.stdout + called.stderr


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_typed_signature_from_a_server_file_whose_path_has_spaces(
    installed: Installed, version: str
) -> None:
    folder = installed.home / "my servers"
    folder.mkdir(exist_ok=True)
    (folder / "post office.py").write_text(TYPED_SERVER)
    target = "my servers/post office.py"

    listed = installed.run("tools", "--protocol-version", version, target)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("send(to: Address{city: str, zip?: str}, weight: int, note?: str)")

    detail = installed.run("tools", "--protocol-version", version, target, "send")
    assert detail.returncode == 0, detail.stderr
    assert "  to: Address (required)\n    city: str (required)\n" in detail.stdout

    called = installed.run(
        "call", "--protocol-version", version, target, "send", "to.city=Paris", "weight=250"
    )
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "250 g to Paris"


def test_the_bash_completion_script_is_sourced_by_a_real_bash(installed: Installed) -> None:
    printed = installed.run("completion", "bash")
    assert printed.returncode == 0, printed.stderr
    script = installed.home / "mcpkit.bash"
    script.write_text(printed.stdout)
    (installed.home / "weather app.py").write_text(USER_SERVER)
    for words, offered in ((["to"], "tools"), (["tools", "weat"], "weather app.py")):
        line = " ".join(["mcpkit", *(f"'{w}'" for w in words)])
        program = (
            f"source '{script}'\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}\n"
            '_mcpkit; printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], cwd=installed.home,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert done.stdout.splitlines() == [offered]


@pytest.mark.parametrize(
    "command",
    [
        ["tools", "TARGET"],
        ["call", "TARGET", "shout"],
        ["run", "TARGET"],
        ["dev", "TARGET", "--no-browser"],
        ["install", "cursor", "TARGET", "--print"],
    ],
    ids=["tools", "call", "run", "dev", "install"],
)
def test_a_missing_file_is_a_usage_error_from_every_command(installed: Installed, command: list[str]) -> None:
    missing = "no such server.py"
    done = installed.run(*(missing if word == "TARGET" else word for word in command), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr  # docs/cli.md: "the command line is wrong"
    assert done.stderr.strip() == f"mcpkit: no such file: {missing}"


def _start_dev(installed: Installed, *args: str) -> tuple[subprocess.Popen[str], str]:
    """The installed ``mcpkit dev ARGS --no-browser`` and the address it prints."""
    process = subprocess.Popen(
        [str(installed.mcpkit), "dev", *args, "--no-browser", "--port", str(free_port())],
        cwd=installed.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return process, dev_address(process, STARTUP_SECONDS)


@pytest.fixture
def dev(installed: Installed) -> Iterator[str]:
    (installed.home / "myserver.py").write_text(USER_SERVER)
    process, url = _start_dev(installed, "myserver.py")
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_mcpkit_dev_serves_the_inspector_page_and_its_scripts(dev: str) -> None:
    base = dev.split("/?", 1)[0]
    with httpx.Client(timeout=60) as http:
        page = http.get(dev)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "<title>mcpkit inspector</title>" in page.text
        # Every script and style the page loads, and every module those scripts import, is in the wheel.
        pending = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
        fetched: set[str] = set()
        while pending:
            path = pending.pop()
            if path in fetched:
                continue
            fetched.add(path)
            asset = http.get(base + path)
            assert asset.status_code == 200, path
            if path.endswith(".js"):
                pending += [
                    "/static/" + name
                    for name in re.findall(r"""from\s+["']\./([\w.-]+\.js)["']""", asset.text)
                ]
        assert {"/static/main.js", "/static/style.css", "/static/tools.js"} <= fetched


def test_the_inspector_of_the_installed_mcpkit_lists_the_tools_in_chromium(dev: str) -> None:
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(chromium), headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(dev)
            page.wait_for_selector("body[data-ready]", state="attached")
            names = page.locator(".tool-item").evaluate_all("els => els.map(e => e.dataset.name)")
            assert names == ["shout"]
            assert not errors, errors
        finally:
            browser.close()
