"""Resource subscriptions reach mounted servers: a caller of a server that mounts a proxy subscribes
(``resources/subscribe`` in 2025-11-25, a ``subscriptions/listen`` stream in 2026-07-28), the proxy
subscribes upstream, and the upstream's ``notifications/resources/updated`` comes back to the caller
under the URI it subscribed to; when the caller stops listening the proxy unsubscribes. In process
over ``Client(app)``, and over a real stdio process and real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit import Client, Server
from mcpkit.compose.proxy import proxy

from ._util import SERVERS, check_over_http, run

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]
SHELF = [sys.executable, "-m", "mcpkit", "run", str(SERVERS / "shelf.py")]


def _app() -> Server:
    app = Server("app")
    app.mount(proxy(SHELF, protocol_version="2025-11-25"), namespace="shelf")
    return app


async def _updated_after_touch(client: Client) -> None:
    subscription = await client.listen(uris=["shelf://motto"])
    heard = asyncio.Event()

    async def first() -> None:
        async for method, params in subscription:
            if method == "notifications/resources/updated" and params.get("uri") == "shelf://motto":
                heard.set()
                return

    listening = asyncio.ensure_future(first())
    assert (await client.call_tool("shelf__touch")).content[0].text == "touched"  # type: ignore[union-attr]
    await asyncio.wait_for(heard.wait(), 30)
    await listening
    await subscription.close()


@pytest.mark.parametrize("version", ERAS)
def test_a_mounted_proxy_relays_subscriptions_in_process(version: str) -> None:
    app = _app()
    forwarder = app._mounts[0].server._mounts[0].server  # type: ignore[attr-defined]  # the proxy's

    async def main() -> None:
        async with Client(app, protocol_version=version, timeout=120) as client:
            await _updated_after_touch(client)
            async with asyncio.timeout(20):  # the stream closed: the proxy unsubscribes upstream
                while forwarder.link.host.subscribed:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)

    run(main(), 180)


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "app.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from mcpkit import Server
            from mcpkit.compose.proxy import proxy

            app = Server("app")
            app.mount(proxy({SHELF!r}, protocol_version="2025-11-25"), namespace="shelf")

            if __name__ == "__main__":
                app.run()
            """
        )
    )
    return script


@pytest.mark.parametrize("version", ERAS)
def test_a_mounted_proxy_relays_subscriptions_over_stdio(tmp_path: Path, version: str) -> None:
    async def main() -> None:
        command = [sys.executable, "-m", "mcpkit", "run", str(_script(tmp_path))]
        async with Client(command, protocol_version=version, timeout=120) as client:
            await _updated_after_touch(client)

    run(main(), 240)


def test_a_mounted_proxy_relays_subscriptions_over_http(tmp_path: Path) -> None:
    check_over_http(
        [sys.executable, "-m", "mcpkit", "run", str(_script(tmp_path))], _updated_after_touch, ERAS
    )
