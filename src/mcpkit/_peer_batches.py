"""JSON-RPC batches: each member a task of its own, the answers sent back together in one array."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from . import _jsonrpc as jsonrpc
from ._peer_answers import NO_ANSWER, close_unawaited, error_response, ready, result_response
from ._peer_incoming import Incoming

__all__ = ["Batches", "outcome", "settled"]


class Batches(Incoming):
    """A batch's requests, started as members (the read loop routes the batch: ``Peer._route_batch``)."""

    def _batch_member(self, request: jsonrpc.Request) -> Awaitable[bytes | None]:
        refusal = self._refusal(request)
        if refusal is not None:
            return ready(refusal)
        try:
            work = self._handle(request)
        except Exception as exc:  # as in _start: a bug in on_request must not end the read loop
            return ready(error_response(request.id, exc))
        request_id = request.id
        task = self._spawn(outcome(request_id, work))
        self._running[request_id] = task

        def forget(_: asyncio.Task[Any]) -> None:
            self._running.pop(request_id, None)
            close_unawaited(work)

        task.add_done_callback(forget)
        return settled(task)

    async def _send_batch(
        self, answers: list[Awaitable[bytes | None]], first: jsonrpc.RequestId | None
    ) -> None:
        parts = [part for part in await asyncio.gather(*answers) if part is not None]
        if parts:
            await self._send_quietly(b"[" + b",".join(parts) + b"]", first, True)
        elif first is not None and self._routed is not None:
            await self._send_quietly(NO_ANSWER, first, True)


async def outcome(request_id: jsonrpc.RequestId, work: Awaitable[Any]) -> bytes | None:
    """The encoded answer to one request: its result, or its error; ``None`` if it was cancelled
    (by the peer, when no answer is owed, or by our own shutdown). The one place a handler's
    failure becomes a JSON-RPC error, for every transport."""
    try:
        result = await work
    except asyncio.CancelledError:
        return None
    except Exception as exc:
        return error_response(request_id, exc)
    return result_response(request_id, result)


async def settled(task: asyncio.Task[bytes | None]) -> bytes | None:
    try:
        return await task
    except asyncio.CancelledError:
        return None
