"""URL-mode elicitation and roots, end to end over real stdio, in both protocol eras.

The server is a script written to ``tmp_path``: one tool sends the user to a URL
(``ctx.elicit_url``), one lists the client's roots (``ctx.list_roots``), and a notification handler
counts ``notifications/roots/list_changed``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, MethodNotFound, MissingClientCapability
from mcpkit._versions import HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS, has
from mcpkit.types import ElicitResult, Root

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]

SERVER = textwrap.dedent("""
    from typing import Any

    from mcpkit import Context, Server

    server = Server("links", "1.0.0")
    CHANGES: list[dict[str, Any]] = []


    @server.notification_handler("notifications/roots/list_changed")
    async def roots_changed(params: dict[str, Any]) -> None:
        CHANGES.append(params)


    @server.tool
    async def link(service: str, ctx: Context) -> str:
        \"\"\"Send the user to a page that links their account; say what they chose.\"\"\"
        answer = await ctx.elicit_url(
            f"Link your {service} account.", f"https://auth.example.com/link/{service}"
        )
        return f"{answer.action} {answer.content!r}"


    @server.tool
    async def link_and_report(service: str, ctx: Context) -> str:
        \"\"\"The same with an elicitation id of our own, announced as complete when accepted.\"\"\"
        eid = f"link-{service}"
        answer = await ctx.elicit_url(
            f"Link your {service} account.",
            f"https://auth.example.com/link?elicitationId={eid}",
            elicitation_id=eid,
        )
        if answer.action == "accept" and not ctx.scope.stateless:
            await ctx.peer.notify("notifications/elicitation/complete", {"elicitationId": eid})
        return answer.action


    @server.tool
    async def roots(ctx: Context) -> list[str]:
        \"\"\"The client's roots, as name=uri.\"\"\"
        return [f"{root.name}={root.uri}" for root in await ctx.list_roots()]


    @server.tool
    def roots_changes() -> list[dict[str, Any]]:
        \"\"\"The params of every notifications/roots/list_changed received so far.\"\"\"
        return list(CHANGES)


    if __name__ == "__main__":
        server.run()
""")


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    path = tmp_path / "links_server.py"
    path.write_text(SERVER)
    return [sys.executable, "-m", "mcpkit", "run", str(path)]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def text(result: Any) -> str:
    assert result.is_error is not True, result
    return str(result.content[0].text)


class User:
    """The host's side of a URL elicitation: records what it was shown and answers *action*."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, params: dict[str, Any]) -> ElicitResult:
        self.asked.append(params)
        return ElicitResult(action=self.action)  # type: ignore[arg-type]


# -- URL-mode elicitation --------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
def test_the_url_reaches_the_user_and_the_answer_the_tool(
    server: list[str], version: str, action: str
) -> None:
    user = User(action)

    async def main() -> None:
        async with Client(server, protocol_version=version, elicitation=user) as client:
            assert client.protocol_version == version
            assert text(await client.call_tool("link", {"service": "github"})) == f"{action} None"
        (asked,) = user.asked  # asked once, also in 2026-07-28 where the tool runs twice
        expected = {
            "mode": "url",
            "message": "Link your github account.",
            "url": "https://auth.example.com/link/github",
        }
        if version == "2025-11-25":
            # The handshake era correlates completion by an id, unique per elicitation.
            eid = asked.pop("elicitationId")
            assert isinstance(eid, str) and eid
        assert asked == expected  # 2026-07-28 has no elicitationId

    run(main())


def test_each_handshake_era_elicitation_gets_its_own_id(server: list[str]) -> None:
    user = User()

    async def main() -> None:
        async with Client(server, protocol_version="2025-11-25", elicitation=user) as client:
            for service in ("github", "gitlab"):
                assert text(await client.call_tool("link", {"service": service})) == "accept None"
        ids = [asked["elicitationId"] for asked in user.asked]
        assert len(ids) == 2 and ids[0] != ids[1]

    run(main())


def test_the_completion_notification_names_the_elicitation(server: list[str]) -> None:
    # 2025-11-25: notifications/elicitation/complete carries the elicitationId of the request; the
    # tool chose the id, put it in the URL and announces it once the user accepted.
    user = User()
    seen: list[tuple[str, dict[str, Any]]] = []
    completed = asyncio.Event()

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        seen.append((method, params))
        if method == "notifications/elicitation/complete":
            completed.set()

    async def main() -> None:
        async with Client(
            server, protocol_version="2025-11-25", elicitation=user, on_notification=on_notification
        ) as client:
            assert text(await client.call_tool("link_and_report", {"service": "jira"})) == "accept"
            await asyncio.wait_for(completed.wait(), 60)
        (asked,) = user.asked
        assert asked["elicitationId"] == "link-jira"
        assert asked["url"] == "https://auth.example.com/link?elicitationId=link-jira"
        assert seen == [("notifications/elicitation/complete", {"elicitationId": "link-jira"})]

    run(main())


def test_a_declined_link_sends_no_completion(server: list[str]) -> None:
    seen: list[str] = []

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        seen.append(method)

    async def main() -> None:
        async with Client(
            server,
            protocol_version="2025-11-25",
            elicitation=User("decline"),
            on_notification=on_notification,
        ) as client:
            assert text(await client.call_tool("link_and_report", {"service": "jira"})) == "decline"
            await client.ping()  # anything sent before the answer has arrived by now
        assert seen == []

    run(main())


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize(
    "declared",
    [{}, {"form": {}}, None],
    ids=["empty-means-form", "form-only", "no-elicitation"],
)
def test_a_client_without_url_mode_gets_a_clear_error_not_a_hang(
    server: list[str], version: str, declared: dict[str, Any] | None
) -> None:
    user = User()
    capabilities = {} if declared is None else {"elicitation": declared}

    async def main() -> None:
        async with Client(
            server, protocol_version=version, elicitation=user, capabilities=capabilities, timeout=60
        ) as client:
            with pytest.raises(MissingClientCapability) as info:
                await client.call_tool("link", {"service": "github"})
            assert info.value.code == -32021
            # What is missing is URL mode in particular, whatever else was declared.
            assert info.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}
        assert user.asked == []  # never asked in a mode it did not declare

    run(main())


@pytest.mark.parametrize(
    "version", [v for v in SUPPORTED_VERSIONS if has(v, "elicitation") and not has(v, "elicitation_url")]
)
def test_url_mode_before_it_existed_is_method_not_found(server: list[str], version: str) -> None:
    user = User()

    async def main() -> None:
        async with Client(server, protocol_version=version, elicitation=user, timeout=60) as client:
            with pytest.raises(
                MethodNotFound, match=f"URL elicitation does not exist in protocol revision {version}"
            ):
                await client.call_tool("link", {"service": "github"})
        assert user.asked == []

    run(main())


# -- roots -----------------------------------------------------------------------------------------


class Roots:
    """The host's roots, which the user can change while connected."""

    def __init__(self) -> None:
        self.roots = [Root(uri="file:///home/me/project", name="project")]
        self.listed = 0

    async def __call__(self) -> list[Root]:
        self.listed += 1
        return list(self.roots)

    def add(self, uri: str, name: str) -> None:
        self.roots.append(Root(uri=uri, name=name))


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_the_tool_lists_the_clients_roots_as_they_are_now(server: list[str], version: str) -> None:
    roots = Roots()

    async def main() -> None:
        async with Client(server, protocol_version=version, roots=roots) as client:
            first = await client.call_tool("roots")
            assert json.loads(text(first)) == ["project=file:///home/me/project"]
            roots.add("file:///srv/data", "data")
            second = await client.call_tool("roots")
            assert json.loads(text(second)) == ["project=file:///home/me/project", "data=file:///srv/data"]
            assert roots.listed == 2  # asked again each time, nothing cached
            if has(version, "structured_content"):
                assert second.structured_content == {
                    "result": ["project=file:///home/me/project", "data=file:///srv/data"]
                }

    run(main())


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_the_server_hears_roots_list_changed(server: list[str], version: str) -> None:
    roots = Roots()

    async def main() -> None:
        async with Client(server, protocol_version=version, roots=roots) as client:
            assert json.loads(text(await client.call_tool("roots_changes"))) == []
            roots.add("file:///srv/data", "data")
            await client.roots_changed()
            # The notification is handled before the next request is read: no polling needed.
            assert json.loads(text(await client.call_tool("roots_changes"))) == [{}]
            await client.roots_changed()
            assert json.loads(text(await client.call_tool("roots_changes"))) == [{}, {}]
            assert json.loads(text(await client.call_tool("roots")))[-1] == "data=file:///srv/data"

    run(main())


def test_roots_changed_sends_nothing_in_2026_07_28(server: list[str]) -> None:
    # The stateless era has no notifications/roots/list_changed: each request asks afresh.
    roots = Roots()

    async def main() -> None:
        async with Client(server, protocol_version="2026-07-28", roots=roots) as client:
            roots.add("file:///srv/data", "data")
            await client.roots_changed()
            assert json.loads(text(await client.call_tool("roots_changes"))) == []
            assert json.loads(text(await client.call_tool("roots")))[-1] == "data=file:///srv/data"

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_a_client_without_roots_gets_a_clear_error_not_a_hang(server: list[str], version: str) -> None:
    async def main() -> None:
        async with Client(server, protocol_version=version, timeout=60) as client:
            with pytest.raises(MissingClientCapability) as info:
                await client.call_tool("roots")
            assert info.value.code == -32021
            assert info.value.data == {"requiredCapabilities": {"roots": {}}}

    run(main())
