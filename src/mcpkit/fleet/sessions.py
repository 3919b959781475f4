"""Handshake-era sessions across a fleet: any process serves any session, no sticky routing.

:class:`SessionFleet` is the HTTP app's :class:`~mcpkit.transports.http.server.seams.SessionStrategy`
for a node of a fleet (:meth:`mcpkit.LowLevelServer.http_app` builds it with ``redis=``): the app
asks it at the strategy's named points, and never asks whether it is in a fleet.

Clients of the handshake era name their session with ``Mcp-Session-Id`` on every request, and a
load balancer sends each request wherever it likes (clients such as Cursor and Claude Code keep no
cookies). So a session lives in the fleet's shared state, and each process that gets a request of
it serves it from a *replica*:

* **the record** (``sess:<id>``: the ``initialize`` parameters, the owner, the log level) is written
  when the session opens and kept alive by use (it expires after the session's idle time). A
  process that gets a request for a session it does not hold restores a replica from it by
  replaying the handshake on a fresh peer: same revision, same client capabilities, same id.
* **requests** are served where they land; their answers, progress and server-to-client requests
  go back on that POST's own response, as in one process.
* **the client's answers** to server-to-client requests, and its ``notifications/cancelled``, may
  land anywhere: they are published on the session's channel, and the replica waiting for that id
  (or running that request) takes them; the others find nothing to settle.
* **the GET stream** is held by one process at a time (``sess:<id>:get`` names it). What another
  replica sends there (a resource update, a task's status, a request with no POST to ride on) is
  queued in the shared state and the holder is woken to take it; while no stream is open the queue
  keeps the last :data:`~.sessions.BACKLOG` messages for the next one. A list change is heard by
  every replica (each node listens for changes made anywhere): the replica holding the GET stream
  tells it, and while no live process holds one, every replica queues it (the copies coalesce into
  one when the next stream takes them). So list changes reach the session whichever of its nodes
  are alive, its home (where ``initialize`` was answered) or not. A holder that died holds
  nothing, from the moment it died (:mod:`.claims`): a client reconnecting its GET stream
  to another node is served at once, and of two nodes it reaches at the same moment one wins.
* ``logging/setLevel`` and ``resources/unsubscribe`` are replayed on every replica (a
  subscription made on one replica must end wherever the unsubscribe lands); DELETE ends every
  replica.
* **HTTP+SSE** (2024-11-05) sessions stay on the process holding their one stream: a message
  POSTed elsewhere is forwarded there over the channel.

Resumable streams' events are in the shared event store, so ``Last-Event-ID`` replays on any
process (:mod:`mcpkit.transports.http.server.resume`). And if the process doing a request's work dies mid-stream (its heartbeat
``node:<id>`` lapses), the process the client reconnected to **takes the request over**, at most
once by default: a request that is not safe to run twice (a ``tools/call`` of a tool that does not
say it is, see :mod:`.takeover`) is not run again, and its stream ends with an answer saying the
server stopped during it. A request that is safe to repeat is run again from its start (kept as
``run:<stream id>`` when the stream began) and, of what the rerun sends, appended to the stream is
only what comes after the events already there. For a handler that sends the same things in the
same order each time it runs (progress steps, say), the client sees every message once: none lost,
none twice.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import secrets
import time
from collections.abc import Awaitable
from typing import Any, Final

from .. import _jsonrpc as jsonrpc
from .._connection import LOG_LEVELS
from .._errors import ConnectionClosed, RemoteProtocolError
from ..kernel import Endpoint
from ..transports.http.server.event_store import FollowedEventStore
from ..transports.http.server.seams import Member
from ..transports.http.server.sessions import HTTPSession, SessionTable
from ..transports.http.server.streams import BACKLOG, CLOSE
from . import claims
from .membership import Membership
from .node import Node, alive
from .state import SharedState, StateUnavailable, Unsubscribe
from .takeover import may_repeat, not_repeated

__all__ = ["SessionFleet"]

logger = logging.getLogger("mcpkit.fleet")

#: How long the record of the GET stream's holder lasts without a refresh (a killed process's claim
#: lapses after it), and how often a live holder refreshes it.
HOLD_TTL: Final = 30.0
HOLD_REFRESH: Final = 10.0
#: Requests whose effect every replica must see (replayed there, their answers dropped).
REPLAYED: Final = frozenset({"logging/setLevel", "resources/unsubscribe"})

# Channel message kinds: the first byte, then this process's id, "|", the payload.
_IN, _WAKE, _END, _REPLAY = b"i", b"w", b"e", b"r"


class SessionFleet(Membership):
    """This process's part in serving handshake-era sessions across the fleet sharing *state*, as
    *node* (the app is handed it, and binds it to its session table)."""

    table: SessionTable

    def __init__(self, state: SharedState, endpoint: Endpoint, node: Node) -> None:
        super().__init__(node)
        self.state = state
        self.endpoint = endpoint
        #: This process's id in the fleet (its :class:`~mcpkit.fleet.node.Node`'s,
        #: whose heartbeat tells the others it is alive).
        self.node = node.id.encode()
        self._records: dict[str, bytes] = {}  # what each replica's record says, to refresh it
        self._refreshed: dict[str, float] = {}
        self._channels: dict[str, Unsubscribe] = {}
        self._restoring: dict[str, asyncio.Task[HTTPSession | None]] = {}
        self._holding: dict[str, asyncio.Task[None] | None] = {}  # None: being claimed
        self._chores: set[asyncio.Task[Any]] = set()
        # Present once joined: a claim of ours is taken over when we die.
        node.on_join.append(functools.partial(claims.present, state, node.id))

    def bind(self, table: SessionTable) -> None:
        self.table = table

    # -- records -----------------------------------------------------------------------------------

    async def open(self, session: HTTPSession, init: jsonrpc.Request | None) -> None:
        """*session* was just opened here (its home): write its record, listen to its channel."""
        params = init.params if init is not None and isinstance(init.params, dict) else {}
        record = {"init": params, "owner": session.owner, "client": session.client, "legacy": session.legacy}
        try:
            await self._keep(session, json.dumps(record).encode(), home=True)
        except StateUnavailable as exc:  # no record, no session: the other nodes could not serve it
            exc.request_id = init.id if init is not None else None
            raise

    async def _keep(self, session: HTTPSession, record: bytes, home: bool) -> None:
        self._records[session.id] = record
        self._refreshed[session.id] = time.monotonic()
        await self.state.put(_record(session.id), record, self.table.idle_seconds)
        if not session.legacy:  # an HTTP+SSE session's one stream is always here
            session.join_fleet(self, home)
        self._channels[session.id] = await self.state.subscribe(_channel(session.id), self._heard(session))

    def touch(self, session: HTTPSession) -> None:
        """A request of *session* came here: keep its record alive (written at most every few
        seconds per process, so a busy session costs no store write per request)."""
        record = self._records.get(session.id)
        now = time.monotonic()
        if record is None or now - self._refreshed.get(session.id, 0.0) < min(
            30.0, self.table.idle_seconds / 4
        ):
            return
        self._refreshed[session.id] = now
        self._chore(self.state.put(_record(session.id), record, self.table.idle_seconds))

    async def find(self, session_id: str) -> HTTPSession | None:
        """The session *session_id* as this process serves it: its copy here, restored from the
        shared record if need be; ``None`` if the fleet has no such (streamable HTTP) session."""
        local = self.table.sessions.get(session_id)
        if local is not None:
            return local
        task = self._restoring.get(session_id)
        if task is None:  # one restore at a time per session, however many requests wait for it
            task = asyncio.ensure_future(self._restore(session_id))
            self._restoring[session_id] = task
            task.add_done_callback(lambda _: self._restoring.pop(session_id, None))
        return await asyncio.shield(task)

    async def _restore(self, session_id: str) -> HTTPSession | None:
        data = await self.state.get(_record(session_id))
        if data is None:
            return None
        record = json.loads(data)
        if record.get("legacy"):
            return None  # an HTTP+SSE session lives where its stream is
        session = HTTPSession(
            self.endpoint,
            queue_limit=self.table.queue_limit,
            client=record.get("client", ""),
            session_id=session_id,
        )
        session.owner = record.get("owner")
        # The handshake, replayed on this replica's peer: same revision, same client capabilities.
        rid = f"fleet-{secrets.token_hex(4)}"
        stream = session.open_stream([rid])
        await session.served.peer.deliver(jsonrpc.Request(id=rid, method="initialize", params=record["init"]))
        await stream.wait()
        session.close_response(stream, [rid])
        if session.version is None:
            session.end()
            self.endpoint.disconnect(session.served)
            return None
        await session.served.peer.deliver(jsonrpc.Notification(method="notifications/initialized"))
        for request in record.get("replayed", []):
            await self._replay(session, request)
        self.table.add(session)
        await self._keep(session, data, home=False)
        return session

    async def held_elsewhere(self, session_id: str, owner: str | None) -> bool:
        """Whether *session_id* is an HTTP+SSE session of the fleet that *owner* opened."""
        data = await self.state.get(_record(session_id))
        if data is None:
            return False
        record = json.loads(data)
        return bool(record.get("legacy")) and record.get("owner") == owner

    async def end(self, session: HTTPSession) -> None:
        """DELETE: the session ends on every process."""
        await self.state.delete(_record(session.id))
        await self.state.delete(_queue(session.id))
        await self._publish(session.id, _END, b"")

    def ended(self, session: HTTPSession) -> None:
        self._records.pop(session.id, None)
        self._refreshed.pop(session.id, None)
        holding = self._holding.pop(session.id, None)
        if holding is not None:
            holding.cancel()
        stop = self._channels.pop(session.id, None)
        if stop is not None:
            self._chore(stop())
        if session.legacy:
            self._chore(self.state.delete(_record(session.id)))

    # -- what the client sends ---------------------------------------------------------------------

    async def take_in(self, session: HTTPSession, members: list[Member]) -> list[Member]:
        """Answers to the server's requests and cancellations may concern a copy in another
        process: they travel to every copy (this one hears them too); the rest is delivered here."""
        travel = [e for e in members if _for_any_copy(e)]
        if not travel:
            return members
        await self.forward(
            session.id, [jsonrpc.encode(e) for e in travel if not isinstance(e, RemoteProtocolError)]
        )
        return [e for e in members if e not in travel]

    async def replicate(self, session: HTTPSession, request: jsonrpc.Request) -> None:
        """The requests of :data:`REPLAYED` run on every copy: first there (while the shared state
        is away the request is refused whole, not done here alone)."""
        if request.method in REPLAYED:
            try:
                await self.replay_elsewhere(session, request)
            except StateUnavailable as exc:
                exc.request_id = request.id
                raise

    async def forward(self, session_id: str, messages: list[bytes]) -> None:
        """Answers and cancellations (or, for HTTP+SSE, any message): to every replica."""
        for message in messages:
            await self._publish(session_id, _IN, message)

    async def replay_elsewhere(self, session: HTTPSession, request: jsonrpc.Request) -> None:
        """A request whose effect every replica must see (:data:`REPLAYED`): the others run it too,
        and replicas restored later replay it from the record."""
        params = request.params if isinstance(request.params, dict) else {}
        body = json.dumps({"method": request.method, "params": params}).encode()
        await self._publish(session.id, _REPLAY, body)
        record = json.loads(self._records.get(session.id, b"{}"))
        if record:
            replayed = [r for r in record.get("replayed", []) if r.get("method") != "logging/setLevel"]
            if request.method == "logging/setLevel":
                replayed.append({"method": request.method, "params": params})
            record["replayed"] = replayed
            self._records[session.id] = data = json.dumps(record).encode()
            await self.state.put(_record(session.id), data, self.table.idle_seconds)

    async def _replay(self, session: HTTPSession, request: dict[str, Any]) -> None:
        rid = f"fleet-{secrets.token_hex(4)}"
        stream = session.open_stream([rid])  # its answer is nobody's
        await session.served.peer.deliver(
            jsonrpc.Request(id=rid, method=request["method"], params=request.get("params", {}))
        )
        await stream.wait()
        session.close_response(stream, [rid])

    # -- the GET stream ----------------------------------------------------------------------------

    async def holder(self, session: HTTPSession) -> bytes | None:
        """The live process holding the session's GET stream, if any (a process that died holds
        nothing: it died with the stream)."""
        node = await self.state.get(_holder(session.id))
        if node is None or (node != self.node and await claims.gone(self.state, node.decode())):
            return None
        return node

    async def hold(self, session: HTTPSession) -> bool:
        """Claim the session's GET stream for a stream opening here, unless a live process holds
        it (this one included): whether it did. Then keep the claim and take what waits."""
        if session.attached or session.id in self._holding:
            return False
        self._holding[session.id] = None  # taken here before the store answers: one GET wins
        try:
            holder = await claims.claim(self.state, _holder(session.id), self.node, HOLD_TTL)
        except BaseException:
            self._holding.pop(session.id, None)
            raise
        if holder is not None:
            self._holding.pop(session.id, None)
            return False
        self._holding[session.id] = asyncio.ensure_future(self._keep_holding(session))
        return True

    async def _keep_holding(self, session: HTTPSession) -> None:
        try:
            await self._drain(session)
            while True:
                await asyncio.sleep(HOLD_REFRESH)
                if not await claims.refresh(self.state, _holder(session.id), self.node, HOLD_TTL):
                    # Judged gone while cut off from the store, and another node took the stream
                    # over: the client opened a new one there, which now gets what is queued.
                    logger.warning(
                        "session %s: its GET stream was taken over by another node", session.id[:8]
                    )
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("session %s: cannot keep its stream's claim: %s", session.id[:8], exc)

    async def release(self, session: HTTPSession) -> None:
        """The GET stream held here closed."""
        task = self._holding.pop(session.id, None)
        if task is not None:
            task.cancel()
        await claims.release(self.state, _holder(session.id), self.node)

    async def route_out(self, session: HTTPSession, message: bytes) -> None:
        """A message for the GET stream while none is open here: queued in the shared state for
        the process holding it (or the next to)."""
        if b'/list_changed"' in message[:72]:
            holder = await self.holder(session)
            if holder is not None and holder != self.node:
                return  # its replica heard the change too, and tells it
            # Held here: a stream claimed but not yet attached (the GET is opening). Dropped, the
            # change was lost, for every other replica leaves it to this one: it waits in the queue,
            # which the stream drains once attached.
        elif isinstance(jsonrpc.decode(message), jsonrpc.Request) and await self.holder(session) is None:
            raise ConnectionClosed("no open stream to the client (open one with GET)")
        await self.state.push(_queue(session.id), message, BACKLOG, self.table.idle_seconds)
        await self._publish(session.id, _WAKE, b"")

    async def _drain(self, session: HTTPSession) -> None:
        if session.attached:
            for message in await self.state.pop_all(_queue(session.id)):
                await session.send_related(message, None, False)

    # -- taking over the work of a process that died ------------------------------------------------

    def running(self, stream_id: str, request: jsonrpc.Event | list[Member]) -> None:
        """*request*'s answer is becoming the resumable stream *stream_id*, written here: kept for
        a takeover (a request alone on its POST; a batch is not taken over)."""
        if isinstance(request, jsonrpc.Request):
            self._running(stream_id, jsonrpc.encode(request))

    def _running(self, stream_id: str, request: bytes) -> None:
        run = json.dumps({"node": self.node.decode(), "request": request.decode()}).encode()
        self._chore(self.state.put(f"run:{stream_id}", run, self.table.idle_seconds))

    async def take_over(self, session: HTTPSession, stream_id: str) -> None:
        """A follower of *stream_id* heard nothing for a while: if the process writing it is dead,
        run its request again here (once in the fleet), continuing the stream where it stopped."""
        data = await self.state.get(f"run:{stream_id}")
        if data is None or not isinstance(self.state.events, FollowedEventStore):
            return
        run = json.loads(data)
        if await alive(self.state, run["node"]):
            return  # alive, only slow
        if not await self.state.claim(f"takeover:{stream_id}", self.node, self.table.idle_seconds):
            return  # another process took it
        request = jsonrpc.decode(run["request"].encode())
        if not isinstance(request, jsonrpc.Request):
            return
        if not may_repeat(self.endpoint, request):
            logger.warning("session %s: %s of a process that died is not run again (stream %s)",
                           session.id[:8], request.method, stream_id)  # fmt: skip
            await self.state.events.append(stream_id, not_repeated(request))
            await self.state.events.end(stream_id)
            return
        logger.warning("session %s: taking over stream %s of a process that died", session.id[:8], stream_id)
        self._running(stream_id, run["request"].encode())  # ours now: if we die too, another takes it
        self._chore(self._rerun(session, self.state.events, stream_id, request))

    async def _rerun(
        self, session: HTTPSession, store: FollowedEventStore, stream_id: str, request: jsonrpc.Request
    ) -> None:
        told = await store.count(stream_id)  # what the client has (or can replay) already
        stream = session.open_stream([request.id])
        try:
            await session.served.peer.deliver(request)
            sent = 0
            while (message := await stream.next()) is not None:
                if message is CLOSE:
                    continue
                sent += 1
                if sent > told:
                    await store.append(stream_id, message)
        finally:
            session.close_response(stream, [request.id])
            await store.end(stream_id)

    # -- the channel -------------------------------------------------------------------------------

    async def _publish(self, session_id: str, kind: bytes, payload: bytes) -> None:
        await self.state.publish(_channel(session_id), kind + self.node + b"|" + payload)

    def _heard(self, session: HTTPSession) -> Any:
        def heard(data: bytes) -> None:
            kind, sender, payload = data[:1], data[1:].partition(b"|")[0], data[1:].partition(b"|")[2]
            if session.ended.is_set():
                return
            if kind == _IN:
                self._chore(self._deliver(session, payload))
            elif kind == _WAKE and session.attached:
                self._chore(self._drain(session))
            elif kind == _END:
                self.table.end(session)
            elif kind == _REPLAY and sender != self.node:
                replayed = json.loads(payload)
                _set_level_now(session, replayed)
                self._chore(self._replay(session, replayed))

        return heard

    async def _deliver(self, session: HTTPSession, payload: bytes) -> None:
        session.touched = self.table.clock()  # in use, though through another process
        try:
            message = session.served.peer.decode(payload)
        except RemoteProtocolError:
            return
        await session.served.peer.deliver(message)

    def _chore(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._chores.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._chores.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("fleet session upkeep failed: %s", task.exception())


def _for_any_copy(event: Member) -> bool:
    """An answer to a server request, or a cancellation: the copy that sent that request (or runs
    the one cancelled) may be in another process."""
    if isinstance(event, (jsonrpc.Response, jsonrpc.ErrorResponse)):
        return True
    return isinstance(event, jsonrpc.Notification) and event.method == "notifications/cancelled"


def _set_level_now(session: HTTPSession, request: dict[str, Any]) -> None:
    """A replayed ``logging/setLevel`` takes effect as it is heard, not when its replay (a task,
    a stream, the whole dispatch) gets its turn: the session's next request may come to this process
    first (measured: under load the level was missed by a request 1 to 2 times in 10)."""
    params = request.get("params")
    level = (
        params.get("level")
        if request.get("method") == "logging/setLevel" and isinstance(params, dict)
        else None
    )
    if level in LOG_LEVELS:
        session.served.connection.set_log_level(level)


def _record(session_id: str) -> str:
    return f"sess:{session_id}"


def _holder(session_id: str) -> str:
    return f"sess:{session_id}:get"


def _queue(session_id: str) -> str:
    return f"sess:{session_id}:out"


def _channel(session_id: str) -> str:
    return f"sess:{session_id}"
