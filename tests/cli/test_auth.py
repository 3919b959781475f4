"""``mcpkit call|tools|info URL --auth...`` against a protected ``mcpkit run`` server and a local
authorization server (tests/auth/issuer.py) that approves at once: the whole flow as a user meets
it, with the test playing the browser (it opens the printed URL and follows the redirect to the
command's loopback listener), a browser launched through ``$BROWSER``, a step up for a tool's scope,
tokens kept in a 0600 file for the next run, the client credentials grant, and the exit status of a
failed authorization."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..auth._serve import protected
from ..auth.issuer import TestIssuer
from .conftest import ROOT, TIMEOUT, run_mcpkit

pytestmark = pytest.mark.e2e

_AUTHORIZE = re.compile(r"https?://\S+/authorize\?\S+")


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    # DPoP accepted: the issuer advertises it, so the command's tokens are DPoP-bound.
    with protected(issuer.url, "--auth-scope", "mcp", "--auth-dpop", "accepted") as served:
        yield served


def browse(url: str) -> None:
    """What the user's browser does: open the page (the issuer approves at once) and follow the
    redirect to the loopback listener."""
    landed = httpx.get(url, follow_redirects=True, timeout=60)
    assert landed.status_code == 200 and "Authorization complete" in landed.text, landed.text


def run_as_user(
    *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], int]:
    """``mcpkit ARGS`` with a person at the browser: every authorization URL it prints on stderr is
    opened as it appears. Returns the finished process and how many pages were opened."""
    err: list[str] = []
    opened = [0]
    with subprocess.Popen(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    ) as proc:
        assert proc.stderr is not None and proc.stdout is not None

        def watch() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                err.append(line)
                found = _AUTHORIZE.search(line)
                if found:
                    opened[0] += 1
                    browse(found[0])

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            out = proc.stdout.read()
            proc.wait(timeout=TIMEOUT)
        finally:
            proc.kill()
            watcher.join(10)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(err)), opened[0]


def test_call_signs_in_headless_and_keeps_the_tokens_for_the_next_run(
    url: str, issuer: TestIssuer, tmp_path: Path
) -> None:
    store = tmp_path / "config" / "oauth.json"
    before = issuer.authorizations
    done, opened = run_as_user("call", url, "whoami", "--auth-headless", "--auth-token-store", str(store))
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"alice via public-[0-9a-f]+ with mcp\n", done.stdout), done.stdout
    assert "Open this URL in a browser to authorize" in done.stderr
    assert opened == 1 and issuer.authorizations == before + 1
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    # The next run uses the kept (DPoP-bound) token: nobody is sent to the browser.
    again = run_mcpkit("call", url, "whoami_sync", "--auth-headless", "--auth-token-store", str(store))
    assert again.returncode == 0 and again.stdout.startswith("alice via public-"), again.stderr
    assert issuer.authorizations == before + 1


def test_a_launched_browser_and_a_step_up_for_a_tools_scope(
    url: str, issuer: TestIssuer, tmp_path: Path
) -> None:
    """``--auth`` starts the browser named by ``$BROWSER`` (here a script that does what a browser
    does); the tool needs notes:write, which the first token lacks (the tool list hides the tool):
    the 403 sends the user back once more for it, and the call goes through. The user takes longer
    over the step up than ``--timeout``: time at the browser does not count against the call."""
    fake = tmp_path / "browser.py"
    fake.write_text(
        "import sys, time, httpx\n"
        "if 'notes%3Awrite' in sys.argv[1]:\n"
        "    time.sleep(20)  # reading the consent page: longer than --timeout\n"
        "landed = httpx.get(sys.argv[1], follow_redirects=True, timeout=60)\n"
        "sys.exit(0 if landed.status_code == 200 else 1)\n"
    )
    env = {"BROWSER": f"{sys.executable} {fake} %s"}
    before = list(issuer.issued)
    done, opened = run_as_user(
        "call", url, "add_note", "text=from the CLI", "--auth", "--auth-token-store", "memory", "--timeout", "15",
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("saved 'from the CLI' for alice via public-")
    assert done.stdout.endswith(" with mcp notes:write\n")
    assert opened == 0  # nothing printed: the browser was started
    assert issuer.issued[len(before) :] == ["mcp", "mcp notes:write"]


def test_client_credentials_from_the_environment(url: str, issuer: TestIssuer) -> None:
    secret = {"MCPKIT_AUTH_CLIENT_SECRET": issuer.clients["machine"]}
    flags = [
        "--auth-grant",
        "client_credentials",
        "--auth-client-id",
        "machine",
        "--auth-token-store",
        "memory",
    ]
    listed = run_mcpkit("tools", url, *flags, "--json", env=secret)
    assert listed.returncode == 0, listed.stderr
    assert '"whoami"' in listed.stdout and '"add_note"' not in listed.stdout
    info = run_mcpkit("info", url, *flags, env=secret)
    assert info.returncode == 0 and "server: protected 1.0.0" in info.stdout, info.stderr


def test_a_failed_authorization_is_one_line_and_exit_status_5(url: str) -> None:
    flags = [
        "--auth-grant",
        "client_credentials",
        "--auth-client-id",
        "machine",
        "--auth-token-store",
        "memory",
    ]
    refused = run_mcpkit("call", url, "whoami", *flags, env={"MCPKIT_AUTH_CLIENT_SECRET": "wrong"})
    assert refused.returncode == 5, refused.stderr
    assert refused.stderr.startswith("mcpkit: authorization failed: ")
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    # Without --auth a protected server is one the command cannot get into; it says how to.
    closed = run_mcpkit("call", url, "whoami")
    assert closed.returncode == 3
    assert closed.stderr == f"mcpkit: {url}: HTTP 401: the server wants authorization (sign in with --auth)\n"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["call", "python3 server.py", "t", "--auth"], {}, "authorize to URL targets"),
        (["tools", "http://127.0.0.1:1/mcp", "--auth-grant", "client_credentials"], {}, "needs --auth-client-id"),
        (["tools", "http://127.0.0.1:1/mcp", "--auth-grant", "client_credentials", "--auth-client-id", "m",
          "--auth-headless"], {"MCPKIT_AUTH_CLIENT_SECRET": "s"}, "for a user signing in"),
    ],
)  # fmt: skip
def test_auth_options_that_do_not_go_together_are_usage_errors(
    args: list[str], env: dict[str, str], message: str
) -> None:
    done = run_mcpkit(*args, env={"MCPKIT_AUTH_CLIENT_SECRET": "", **env})
    assert done.returncode == 2 and message in done.stderr, done.stderr
