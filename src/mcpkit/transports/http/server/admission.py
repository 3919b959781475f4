"""What of a POST a handshake-era session takes in: request ids in flight, and the in-flight cap.

Two rules of the session, checked before anything of the POST is delivered to it:

* "The request ID MUST NOT match the ID of any other request the sender has issued and not yet
  received a response for" (basic/index, every revision). A request reusing the id of one whose
  POST is still open is refused with -32600 *carrying that id*: JSON-RPC 2.0 says an answer's id
  "MUST be the same as the value of the id member in the Request Object", ``null`` only when the
  id could not be read, and here it was read. Alone on a POST the refusal is the POST's answer
  with status 400 (nothing was started); in a batch it is that member's answer in the array.
* At most *limit* requests of a session are handled at once (``max_requests_per_session``). One
  more, alone, is answered -32000 at once (200, ``Retry-After``). In a 2025-03-26 batch the members
  that fit are served and each member past the cap is answered -32000 with its own id, in the one
  array that answers the batch (``Retry-After`` on the POST).

Why a batch over the cap is answered member by member rather than refused whole with a 4xx:
JSON-RPC 2.0 answers a batch with "an Array containing the corresponding Response objects" ("A
Response object SHOULD exist for each Request object"), and keeps a single error object for a batch
that is not valid JSON or is an empty array; 2025-03-26 Streamable HTTP says that if the POST "contains
any number of JSON-RPC *requests*, the server MUST" answer with an event stream or JSON, an HTTP
error status being for input of notifications and responses alone. Over stdio and HTTP+SSE the
session layer applies ``Server(max_in_flight=)`` to a batch the same way, member by member
(:meth:`mcpkit.session.Peer._refusal`), and answers a reused id with that id too: a client that
reused an id broke the rule above, and an error it can match is better than one it cannot (a
``null``-id answer would leave its duplicate request waiting for ever).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from .... import _jsonrpc as jsonrpc
from ...._errors import INVALID_REQUEST, SERVER_BUSY, RemoteProtocolError
from ....session import error_response
from ._asgi import Send, error, send_json
from .sessions import HTTPSession
from .streams import ResponseStream

__all__ = ["Admitted", "admit_batch", "answerable_ids", "refuse_busy", "refuse_in_use"]

#: Sent with every answer that refused a request for the cap: when to try again, in seconds.
RETRY_AFTER: Final = (b"retry-after", b"1")

Member = jsonrpc.Event | RemoteProtocolError

logger = logging.getLogger("mcpkit.http")


def _log_busy(session: HTTPSession) -> None:
    logger.info("session %s: %d requests in flight, refusing more", session.id[:8], len(session.streams))


def answerable_ids(events: Sequence[Member]) -> list[jsonrpc.RequestId]:
    """The ids the answer to a POST will carry: its requests', and its bad members' that have one."""
    ids: list[jsonrpc.RequestId] = []
    for e in events:
        if isinstance(e, jsonrpc.Request):
            ids.append(e.id)
        elif isinstance(e, RemoteProtocolError) and e.request_id is not None:
            ids.append(e.request_id)
    return ids


def _in_use(request_id: jsonrpc.RequestId) -> bytes:
    return error_response(
        request_id, RemoteProtocolError(f"request id {request_id!r} is already in use", INVALID_REQUEST)
    )


def _busy(request_id: jsonrpc.RequestId, limit: int) -> bytes:
    text = f"Server busy: {limit} requests of this session are in flight"
    return jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error={"code": SERVER_BUSY, "message": text}))


async def refuse_in_use(send: Send, request_id: jsonrpc.RequestId) -> None:
    """A request alone on its POST whose id is in flight: 400, the error addressed to that id."""
    await error(
        send, 400, request_id, INVALID_REQUEST, f"Bad Request: request id {request_id!r} is already in use"
    )


async def refuse_busy(session: HTTPSession, send: Send, request_id: jsonrpc.RequestId, limit: int) -> None:
    """A request alone on its POST past the cap: answered -32000 now, nothing started."""
    _log_busy(session)
    await send_json(send, 200, _busy(request_id, limit), [RETRY_AFTER])


class _JoinedStream(ResponseStream):
    """The response stream of a batch some of whose members were answered here: those answers go
    into the array the session sends for the others (or make the array, if it owes none)."""

    __slots__ = ("refused",)

    def __init__(self, limit: int, refused: bytes) -> None:
        super().__init__(limit)
        self.refused = refused

    def put(self, message: bytes, final: bool) -> None:
        if final and not self.answered:
            # The session answers a batch with one array, or with nothing if all were cancelled.
            message = message[:-1] + b"," + self.refused + b"]" if message else b"[" + self.refused + b"]"
        super().put(message, final)


@dataclass(slots=True)
class Admitted:
    """A batch, sorted: what goes to the session, and what was answered here."""

    #: The members to deliver: the requests within the cap, notifications, answers, bad members.
    events: list[Member] = field(default_factory=list)
    #: The ids the session's answer will carry (its stream is registered under each).
    ids: list[jsonrpc.RequestId] = field(default_factory=list)
    #: Answers made here: reused ids, requests past the cap.
    refused: list[bytes] = field(default_factory=list)
    #: Whether a request was refused for the cap (the POST then says when to retry).
    busy: bool = False

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        return [RETRY_AFTER] if self.busy else []

    def open_stream(self, session: HTTPSession) -> ResponseStream:
        """The POST's response stream, registered under :attr:`ids`."""
        if not self.refused:
            return session.open_stream(self.ids)
        stream = _JoinedStream(session.queue_limit, b",".join(self.refused))
        for request_id in self.ids:
            session.streams[request_id] = stream
        return stream

    async def answer_now(self, session: HTTPSession, send: Send) -> None:
        """Nothing is left for the session to answer: deliver what needs no answer (notifications,
        answers to the server's requests), and answer the POST with the refusals (200: the batch
        had requests, so JSON-RPC owes an array)."""
        bad = [error_response(None, e) for e in self.events if isinstance(e, RemoteProtocolError)]
        rest: list[Member] = [e for e in self.events if not isinstance(e, RemoteProtocolError)]
        if rest:
            await session.served.peer.deliver(rest)
        await send_json(send, 200, b"[" + b",".join([*self.refused, *bad]) + b"]", self.headers)


def admit_batch(session: HTTPSession, events: Sequence[Member], limit: int) -> Admitted:
    """Sort a batch: requests in order while the session has room for them (*limit* in flight),
    each later one answered -32000 with its id; a member reusing an id in flight answered -32600
    with its id. (Ids repeated inside the batch are the session's to refuse, as over stdio.)"""
    admitted = Admitted()
    room = limit - len(session.streams)
    for e in events:
        if isinstance(e, jsonrpc.Request):
            if e.id in session.streams:
                admitted.refused.append(_in_use(e.id))
                continue
            if room <= 0:
                admitted.refused.append(_busy(e.id, limit))
                admitted.busy = True
                continue
            room -= 1
            admitted.ids.append(e.id)
        elif isinstance(e, RemoteProtocolError) and e.request_id is not None:
            if e.request_id in session.streams:  # answered here: its id must not take another's stream
                admitted.refused.append(error_response(e.request_id, e))
                continue
            admitted.ids.append(e.request_id)
        admitted.events.append(e)
    if admitted.busy:
        _log_busy(session)
    return admitted
