"""The requests a peer handles: started, refused, answered, cancelled, drained.

Each request runs in a task of its own (so a slow tool never holds up the others), and the
handler's return value or error goes back as the answer. A handler that is a future already (a
``def`` tool's worker-thread job) needs no task: it is answered from its done-callback, or by the
worker thread itself for a lone call (:meth:`Incoming.thread_answerer`). A cancelled request is
owed no answer, as the spec requires; a routed transport is told so (``NO_ANSWER``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from . import _jsonrpc as jsonrpc
from ._errors import SERVER_BUSY, MethodNotFound, RemoteProtocolError, RPCError
from ._peer_answers import NO_ANSWER, close_unawaited, error_response, first_step, result_response
from ._peer_core import PeerCore, logger

__all__ = ["Incoming"]


class Incoming(PeerCore):
    """The requests this peer handles, in ``_running`` from their start to their answer."""

    def cancel_incoming(self, request_id: jsonrpc.RequestId) -> bool:
        """Stop handling the incoming request *request_id* (no answer will be sent); what
        ``notifications/cancelled`` does, for transports that learn of it otherwise (a dropped
        HTTP response). Returns whether it was running."""
        task = self._running.get(request_id)
        if task is None:
            return False
        self._unstarted(request_id, task)
        task.cancel()
        return True

    def cancel_all(self) -> None:
        """Stop handling every incoming request (the session is gone)."""
        for request_id, task in list(self._running.items()):
            self._unstarted(request_id, task)
            task.cancel()

    async def drain(self, grace: float) -> None:
        """Let requests still being handled finish for up to *grace* seconds, then cancel them."""
        working = self._tasks.union(self._running.values())
        if working:
            _, pending = await asyncio.wait(working, timeout=grace)
            for request_id, task in list(self._running.items()):
                if task in pending:
                    self._unstarted(request_id, task)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    async def answer_here(self, request: jsonrpc.Request) -> bytes:
        """Handle *request* in the caller's task rather than a task of its own (one request
        delivered alone, whose transport sends its answer itself: an HTTP POST), and return its
        answer instead of sending it: ``b""`` when none is owed (it was cancelled).

        Otherwise as :meth:`deliver`: the same refusals and answers, and while the handler runs
        the caller's task is the request's, so ``notifications/cancelled``, :meth:`cancel_incoming`,
        :meth:`cancel_all` and :meth:`drain` reach it (their cancellation ends here)."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        request_id = request.id
        try:
            work = self._on_request(request) if self._on_request is not None else self._handle(request)
        except Exception as exc:  # as in _start
            return error_response(request_id, exc)
        # Its first step here: most handlers answer in it, and then nothing could have reached them
        # in between (a cancellation, a repeated id) and nothing need be registered.
        try:
            finished, outcome = first_step(work)
        except asyncio.CancelledError:
            return NO_ANSWER
        except Exception as exc:
            return error_response(request_id, exc)
        if finished:
            return result_response(request_id, outcome)
        work = outcome
        task = asyncio.current_task()
        assert task is not None
        self._running[request_id] = task
        try:
            result = await work
        except asyncio.CancelledError:
            task.uncancel()  # the request's cancellation, not the caller's: it answers "nothing"
            return NO_ANSWER
        except Exception as exc:
            return error_response(request_id, exc)
        finally:
            self._running.pop(request_id, None)
        return result_response(request_id, result)

    def _refusal(self, request: jsonrpc.Request) -> bytes | None:
        """The answer refusing *request* before it starts, if it must be refused."""
        if request.id in self._running:
            # "The request ID MUST NOT match the ID of any other request the sender has issued and
            # not yet received a response for."
            return error_response(
                request.id, RemoteProtocolError(f"request id {request.id!r} is already in use")
            )
        if self.max_in_flight is not None and len(self._running) >= self.max_in_flight:
            busy = RPCError(SERVER_BUSY, f"Server busy: {self.max_in_flight} requests in flight, retry later")
            return error_response(request.id, busy)
        return None

    def _start(self, request: jsonrpc.Request) -> None:
        refusal = self._refusal(request)
        if refusal is not None:
            self._send_answer(refusal, request.id)
            return
        try:
            work = self._on_request(request) if self._on_request is not None else self._handle(request)
        except Exception as exc:  # an RPCError is the answer; anything else a bug, answered -32603
            self._send_answer(error_response(request.id, exc), request.id)
            return
        request_id = request.id
        if isinstance(work, asyncio.Future):
            # A handler that is already a future (a def tool on a worker thread) needs no task:
            # its answer is sent from its done-callback.
            self._running[request_id] = work
            work.add_done_callback(self._answerer(request_id))
            return
        # Not _spawn: a request's task is kept (and waited for by drain) through _running already.
        # No done-callback either (one cost a handle and a turn of the loop per request): _answer
        # takes its entry out itself; a task that never runs _answer is seen to by _unstarted.
        self._unstarted_work[request_id] = work
        self._running[request_id] = (self._loop or self._event_loop()).create_task(
            self._answer(request_id, work)
        )

    def thread_answerer(
        self, request_id: jsonrpc.RequestId
    ) -> Callable[[asyncio.Future[Any], Callable[[], Any]], bool] | None:
        """Where the transport can take an answer from another thread: a function a worker thread
        calls, once the job that handles *request_id* is done, to send its answer itself, now,
        where the loop would send it at once as well (a lone call: no other request running, when
        it came or now). It is given the job's future and a function that makes the result, called
        only then, and returns whether it sent the answer. If it did, the request no longer runs
        here (its job's future is never settled: see ``run_sync``); else it did nothing (what the
        maker raised, it raises) and the future's done-callback answers as usual.

        A lone call's answer then goes out without waking the loop's thread first (a switch
        between threads on the way back to a client that waits for this one call). ``None`` where
        the transport cannot (HTTP, which answers through its own response) or the call is not a
        lone one."""
        send = self._send_from_thread
        running = self._running
        if send is None or running:  # another request runs: this call is not a lone one
            return None

        def answer(job: asyncio.Future[Any], result_of: Callable[[], Any]) -> bool:
            # With more running, answers that finish together go out in one write from the loop:
            # one system call, where each thread's own write would cost one. A cancelled job is
            # the loop's to see to (its done-callback ends the request, unanswered).
            # The entry must be this job's, as in _answerer: under the same id now may be a later
            # request (the id reused after a cancellation). Looked at before it is taken out, so
            # that another request's entry is not taken out even for a moment (its done-callback,
            # finding none, would take it for answered here).
            if len(running) != 1 or job.cancelled() or running.get(request_id) is not job:
                return False
            # Taken out before the answer goes: a client may reuse an id once it is answered. If
            # the entry changed since the look above (the loop ran meanwhile), it is put back.
            work = running.pop(request_id, None)  # dict operations are atomic under the GIL
            sent = False
            try:
                if work is job:
                    sent = send(result_response(request_id, result_of()))
            finally:
                if not sent and work is not None:
                    running.setdefault(request_id, work)
            return sent

        return answer

    def _answerer(self, request_id: jsonrpc.RequestId) -> Callable[[asyncio.Future[Any]], None]:
        """The done-callback answering *request_id* from a future, as :meth:`_answer` and
        :func:`~mcpkit._peer_batches.outcome` do from a coroutine."""

        def answer(done: asyncio.Future[Any]) -> None:
            if self._running.get(request_id) is not done:
                return  # no longer this request's: answered from its worker thread (thread_answerer)
            del self._running[request_id]
            message: bytes | None = None
            if not done.cancelled():
                exc = done.exception()
                if exc is None:
                    message = result_response(request_id, done.result())
                elif isinstance(exc, Exception):
                    message = error_response(request_id, exc)
                elif isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise exc  # as out of a task: the loop stops
                elif not isinstance(exc, asyncio.CancelledError):
                    # What a task would keep unanswered, with its exception logged.
                    logger.error("handler for request %r failed", request_id, exc_info=exc)
            if message is not None:
                self._send_answer(message, request_id)
            elif self._routed is not None:
                self._send_answer(NO_ANSWER, request_id)

        return answer

    def _send_answer(self, message: bytes, request_id: jsonrpc.RequestId | None) -> None:
        """Send the last message of a request without waiting: at once where the transport can
        take it now, else from a task of its own."""
        if self._routed is None and self._send_nowait is not None and self._send_nowait(message):
            return
        self._spawn(self._send_quietly(message, request_id, True))

    def _handle(self, request: jsonrpc.Request) -> Awaitable[Any]:
        if self._on_request is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return self._on_request(request)

    async def _answer(self, request_id: jsonrpc.RequestId, work: Awaitable[Any]) -> None:
        # What _outcome does, written out: one coroutine fewer per request. The request counts as
        # running (for max_in_flight and its id) until its answer is sent, as before.
        self._unstarted_work.pop(request_id, None)  # started: from here on it sees to itself
        answer: bytes | None
        try:
            try:
                result = await work
            except asyncio.CancelledError:
                answer = None
            except Exception as exc:
                answer = error_response(request_id, exc)
            else:
                answer = result_response(request_id, result)
            if answer is not None:
                if self._routed is None and self._send_nowait is not None and self._send_nowait(answer):
                    return  # taken at once: no coroutine of the transport's to run
                await self._send_quietly(answer, request_id, True)
            elif self._routed is not None:
                await self._send_quietly(NO_ANSWER, request_id, True)
        finally:
            self._running.pop(request_id, None)

    def _unstarted(self, request_id: jsonrpc.RequestId, task: asyncio.Future[Any]) -> None:
        """See to *task* if it ends without running _answer: cancelled before its first step.

        Called where request tasks are cancelled (and by :meth:`close`, for the loop's own
        cancellation at shutdown), so the hot path needs no done-callback. Such a task's _answer
        never took its entry out of _running, never awaited its handler's coroutine (close it, or
        Python warns that it was never awaited) and never told a routed transport that nothing is
        owed (an HTTP POST would hang)."""
        work = self._unstarted_work.get(request_id)
        if work is None:
            return  # started (it takes its entry out itself), or a future answered from its callback

        def forget(done: asyncio.Future[Any]) -> None:
            if self._unstarted_work.get(request_id) is not work:
                return  # _answer ran after all
            del self._unstarted_work[request_id]
            if self._running.get(request_id) is done:
                del self._running[request_id]
            close_unawaited(work)
            if self._routed is not None:
                self._spawn(self._send_quietly(NO_ANSWER, request_id, True))

        task.add_done_callback(forget)
