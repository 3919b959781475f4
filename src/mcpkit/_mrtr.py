"""Multi round-trip requests (2026-07-28): asking the client for input without keeping state.

A handler that calls ``ctx.elicit(...)``, ``ctx.sample(...)`` or ``ctx.list_roots()`` is written as
if the answer came back at once, which in the handshake era it does (a server-to-client request).
In 2026-07-28 the server may not send requests; it answers ``input_required`` instead, and the
client retries the original request with the answers. mcpkit bridges the two by *replay*:

1. the handler runs; at the first question without an answer, :class:`InputRequired` unwinds it;
2. the server answers ``resultType: "input_required"`` with that question in ``inputRequests`` and a
   sealed ``requestState`` holding every answer so far;
3. the retry carries ``inputResponses`` and the ``requestState``; the handler runs again from the
   top, and each question is now answered from them, in order, until it completes.

So the code before a question runs once per round: keep it free of side effects (or make them
idempotent). The state is the server's only memory, and it travels through the client, so it is
sealed: HMAC-SHA256 under a server key, bound to the method and a digest of the request's own
parameters, and short-lived ("servers MUST treat requestState as an attacker-controlled input ...
and MUST reject state that fails verification").
"""

from __future__ import annotations

import base64
import os
import time
from typing import Any, Final

from ._errors import InvalidParams

__all__ = ["BecomeTask", "InputRequired", "StateSealer", "merge_answers", "request_digest"]

# hashlib, hmac and json are imported where a token is sealed or opened, not with the module: every
# server imports this one at start-up, and most never see a multi round-trip request. (They are
# start-up costs only once tasks.py and lowlevel.py stop importing json and secrets too.)

_NOT_PARAMETERS: Final = frozenset({"_meta", "inputResponses", "requestState"})


class InputRequired(BaseException):
    """Raised inside a handler at the questions the client has not answered yet (key → request).

    A ``BaseException`` so that a handler's own ``except Exception`` cannot swallow it.
    """

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(*requests)
        self.requests = requests


class BecomeTask(BaseException):
    """Raised by ``ctx.become_task()`` in a 2026-07-28 ``tools/call``: answer with a task and run
    the handler again, from the top, in the background (its questions are answered by replay)."""


def request_digest(method: str, params: dict[str, Any]) -> str:
    """A digest of what identifies a request across retries: its method and its own parameters."""
    import hashlib
    import json

    salient = {k: v for k, v in params.items() if k not in _NOT_PARAMETERS}
    text = json.dumps([method, salient], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def merge_answers(sealer: StateSealer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The answers a retry brings: those sealed in its state, plus its ``inputResponses`` to the
    questions that were pending. Anything else the client sends is ignored, as the spec asks."""
    if "requestState" not in params:
        return {}
    answers, pending = sealer.open(params["requestState"], method, params)
    responses = params.get("inputResponses")
    if isinstance(responses, dict):
        answers.update({key: responses[key] for key in pending if key in responses})
    return answers


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class StateSealer:
    """Seals and opens ``requestState`` tokens: ``base64(payload).base64(hmac)``.

    Args:
        key: the HMAC key. Servers behind a load balancer must share one; the default, a random
            key per process, suits a single process (stdio).
        ttl: seconds a token stays valid.
    """

    def __init__(self, key: bytes | None = None, ttl: float = 600.0) -> None:
        self._key = key if key is not None else os.urandom(32)
        self.ttl = ttl

    def seal(self, method: str, params: dict[str, Any], answers: dict[str, Any], pending: list[str]) -> str:
        """A token holding *answers* so far and the keys of the questions now *pending*."""
        import hashlib
        import hmac
        import json

        payload = {
            "m": method,
            "d": request_digest(method, params),
            "a": answers,
            "p": pending,
            "x": time.time() + self.ttl,
        }
        body = json.dumps(payload, separators=(",", ":")).encode()
        return f"{_b64(body)}.{_b64(hmac.new(self._key, body, hashlib.sha256).digest())}"

    def open(self, token: Any, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The answers and pending keys sealed in *token*, if it is genuine, fresh and belongs here.

        Raises:
            InvalidParams: anything else; the state is refused, never trusted in part.
        """
        import hashlib
        import hmac
        import json

        try:
            body_text, mac_text = token.split(".")
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (AttributeError, ValueError):
            raise InvalidParams("invalid requestState") from None
        if _b64(body) != body_text or _b64(mac) != mac_text:
            # base64's last character carries spare bits: an altered one can decode the same
            raise InvalidParams("invalid requestState: it was altered")
        expected = hmac.new(self._key, body, hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            raise InvalidParams("invalid requestState: it was not issued by this server, or it was altered")
        payload = json.loads(body)
        if payload["x"] < time.time():
            raise InvalidParams("requestState has expired; send the request again without it")
        if payload["m"] != method or payload["d"] != request_digest(method, params):
            raise InvalidParams("requestState belongs to a different request")
        return payload["a"], payload["p"]
