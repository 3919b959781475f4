"""The browser step without a test hook: the loopback listener, the browser it opens, the headless
mode that prints the URL."""

from __future__ import annotations

import asyncio
import threading
import webbrowser

import httpx
import pytest

from mcpkit import Client
from mcpkit.client.auth import LoopbackRedirect, OAuth

from ._servers import Protected, run

pytestmark = pytest.mark.e2e


def test_the_listener_takes_the_redirect_and_ignores_other_requests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def main() -> tuple[str, str]:
        async with LoopbackRedirect(open_browser=False, timeout=60).listening() as (redirect_uri, complete):
            assert redirect_uri.startswith("http://127.0.0.1:") and redirect_uri.endswith("/callback")

            async def browser() -> None:
                await asyncio.sleep(0.1)
                async with httpx.AsyncClient() as http:
                    assert (
                        await http.get(redirect_uri.replace("/callback", "/favicon.ico"))
                    ).status_code == 404
                    assert (await http.get(f"{redirect_uri}?code=abc&state=xyz")).status_code == 200

            answer, _ = await asyncio.gather(complete("https://as.example/authorize?x=1"), browser())
            return redirect_uri, answer

    redirect_uri, answer = run(main())
    assert answer == f"{redirect_uri}?code=abc&state=xyz"
    assert "https://as.example/authorize?x=1" in capsys.readouterr().err  # headless: the URL is printed


def test_the_default_flow_opens_the_browser_on_a_loopback_redirect(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    def fake_browser(url: str) -> bool:  # a browser that follows the redirects, as a user's would
        opened.append(url)
        threading.Thread(target=httpx.get, args=(url,), kwargs={"follow_redirects": True}).start()
        return True

    monkeypatch.setattr(webbrowser, "open", fake_browser)

    async def main() -> Protected:
        server = Protected()
        async with (
            server.running(),
            Client(server.mcp_url, protocol_version="2026-07-28", auth=OAuth()) as client,
        ):
            await client.list_tools()
        return server

    server = run(main())
    [authorization] = server.authorizations
    assert opened and opened[0].startswith(f"{server.base}/authorize?")
    assert authorization["redirect_uri"].startswith("http://127.0.0.1:")


def test_a_pasted_redirect_is_read_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from mcpkit.client.auth import paste_redirect

    monkeypatch.setattr("sys.stdin", io.StringIO("  http://127.0.0.1/callback?code=c&state=s \n"))
    assert (
        run(paste_redirect("https://as.example/authorize?q=1")) == "http://127.0.0.1/callback?code=c&state=s"
    )
    assert "https://as.example/authorize?q=1" in capsys.readouterr().err
