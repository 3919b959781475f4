"""The official MCP conformance suite against mcpkit, server and client, over real HTTP.

The harness (npm ``@modelcontextprotocol/conformance``, pinned in ``harness/package.json`` with the
Node 24 it needs) is installed once with ``npm ci`` into ``harness/node_modules``. The server suite
runs three ways against ``examples/everything.py``: every scenario (``--suite all``) at the
harness's default wire, then pinned to 2025-11-25 and to 2026-07-28. Every client scenario runs
``examples/conformance_client.py`` (the ``auth/*`` ones through ``examples/conformance_auth.py``). No
expected-failures list: each scenario must pass in full.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import EXAMPLES, free_port, http_server, node_project

HARNESS = Path(__file__).parent / "harness"

CLIENT_SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]

# Every authorization scenario of the suite, extensions included (client credentials, enterprise-managed
# authorization, DPoP, workload identity): mcpkit.client.auth.OAuth through examples/conformance_auth.py.
AUTH_SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
]


@pytest.fixture(scope="module")
def harness() -> list[str]:
    """``node conformance.js``: Node 24 and the suite, installed from the lock file if missing."""
    return list(node_project(HARNESS, "@modelcontextprotocol/conformance/dist/index.js"))


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "everything.py")]
    yield from http_server([*command, "--transport", "http", "--port", str(port)], port, 20.0)


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    return done.stdout + done.stderr


def _failed_checks(saved: Path) -> str:
    """What each failed check said, from the results the harness saved (its suite summary names
    only the scenarios)."""
    lines = []
    for checks in sorted(saved.rglob("checks.json")):
        for check in json.loads(checks.read_text()):
            if check.get("status") == "FAILURE":
                lines.append(f"{check.get('id')}: {check.get('errorMessage') or check.get('description')}")
    return "\n".join(lines) or "(no saved check failed)"


@pytest.mark.parametrize("wire", ["default", "2025-11-25", "2026-07-28"])
def test_server_suite(harness: list[str], everything: str, wire: str, tmp_path: Path) -> None:
    pinned = [] if wire == "default" else ["--spec-version", wire]
    saved = tmp_path / "results"
    command = [*harness, "server", "--url", everything, "--suite", "all", "-o", str(saved), *pinned]
    output = _run(command, tmp_path)
    planned = re.search(r"Running all suite \((\d+) scenarios\)", output)
    results = re.findall(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", output, re.MULTILINE)
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert planned and total, output[-3000:]
    failed = [name for mark, name, _, bad in results if mark != "✓" or bad != "0"]
    assert not failed, f"failing scenarios: {failed}\n{_failed_checks(saved)}\n{output[-3000:]}"
    assert len(results) == int(planned.group(1)), output[-3000:]
    assert int(total.group(2)) == 0 and int(total.group(1)) > 0
    if wire == "default":  # the figure the README quotes
        assert int(planned.group(1)) == 65


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS + AUTH_SCENARIOS)
def test_client_scenario(harness: list[str], scenario: str, tmp_path: Path) -> None:
    _client_scenario(harness, scenario, tmp_path)


# Scenarios of 2025-11-25 that check more at the 2026-07-28 wire (the scope union on step-up, DCR's
# application_type, the resource identifier sent exactly as published).
@pytest.mark.parametrize(
    "scenario", ["auth/scope-step-up", "auth/metadata-var2", "auth/token-endpoint-auth-basic"]
)
def test_client_auth_scenario_at_the_2026_wire(harness: list[str], scenario: str, tmp_path: Path) -> None:
    _client_scenario(harness, scenario, tmp_path, "--spec-version", "2026-07-28")


def _client_scenario(harness: list[str], scenario: str, tmp_path: Path, *pinned: str) -> None:
    client = f"{sys.executable} {EXAMPLES / 'conformance_client.py'}"
    output = _run([*harness, "client", "--command", client, "--scenario", scenario, *pinned], tmp_path)
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", output)
    assert summary, output[-3000:]
    passed, checks, failed, warnings = map(int, summary.groups())
    assert checks > 0 and passed == checks and failed == 0 and warnings == 0, output[-5000:]
