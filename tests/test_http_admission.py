"""transports/http/admission.py: how a batch is sorted against a session's ids in flight and its cap,
and how the answers made there join the array the session sends for the rest."""

from __future__ import annotations

import asyncio
import json

from mcpkit import Server
from mcpkit._errors import RemoteProtocolError
from mcpkit._jsonrpc import Event, Notification, Request
from mcpkit.transports.http.server.admission import admit_batch
from mcpkit.transports.http.server.sessions import HTTPSession


def _session() -> HTTPSession:
    return HTTPSession(Server("admission"))


def test_a_batch_is_sorted_in_order_against_the_room_left() -> None:
    async def main() -> None:
        session = _session()
        session.open_stream(["running"])
        events: list[Event | RemoteProtocolError] = [
            Request(id=1, method="ping"),
            Notification(method="notifications/x"),
            Request(id="running", method="ping"),  # reuses an id in flight
            RemoteProtocolError("bad", -32600, "bad-1"),
            Request(id=2, method="ping"),
            Request(id=3, method="ping"),  # past the cap: 3 in flight with "running", 1 and 2
        ]
        admitted = admit_batch(session, events, limit=3)
        assert admitted.ids == [1, "bad-1", 2]
        assert [type(e).__name__ for e in admitted.events] == [
            "Request",
            "Notification",
            "RemoteProtocolError",
            "Request",
        ]
        refused = [json.loads(r) for r in admitted.refused]
        assert [(r["id"], r["error"]["code"]) for r in refused] == [("running", -32600), (3, -32000)]
        assert admitted.busy and admitted.headers == [(b"retry-after", b"1")]

    asyncio.run(main())


def test_the_refusals_join_the_sessions_array_or_make_one_when_it_owes_none() -> None:
    async def main() -> None:
        session = _session()
        session.open_stream(["running"])
        batch = [Request(id=1, method="ping"), Request(id="running", method="ping")]
        stream = admit_batch(session, batch, limit=10).open_stream(session)
        assert session.streams[1] is stream and session.streams["running"] is not stream
        stream.put(b'[{"jsonrpc":"2.0","id":1,"result":{}}]', True)
        assert [m["id"] for m in json.loads(stream.answer)] == [1, "running"]
        # Every member it delivered was cancelled (the session owes nothing): the refusals remain.
        cancelled = admit_batch(
            session, [Request(id=2, method="ping"), Request(id="running", method="ping")], 10
        )
        alone = cancelled.open_stream(session)
        alone.put(b"", True)
        assert [m["id"] for m in json.loads(alone.answer)] == ["running"]

    asyncio.run(main())
