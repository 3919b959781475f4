"""Clients for the hostile corpus: raw enough to send anything, each over one real transport.

Every target answers :meth:`send` with what came back for one case (the POST's status, and the
JSON-RPC messages that answer it), and :meth:`serves` with whether a normal call still works.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import Any, Final

import httpx

from .corpus import META_2026, STATELESS, Case

__all__ = [
    "SSEStream",
    "StdioTarget",
    "answer_ids",
    "encode_body",
    "error_code",
    "parse_sse",
    "request_headers",
]

ACCEPT: Final = "application/json, text/event-stream"
#: How long an answer that must come is waited for: generous, for a busy machine.
TIMEOUT: Final = 60.0
_probe_ids = itertools.count()


def probe_id() -> str:
    return f"probe-{next(_probe_ids)}"


def encode_body(case: Case, transport: str) -> bytes:
    """The bytes a case sends on *transport* (a 2026-07-28 request gets its ``_meta``)."""
    body = case.body
    if isinstance(body, bytes):
        return body
    if transport == STATELESS and case.meta and isinstance(body, dict) and "id" in body and "method" in body:
        params = body.get("params", {})
        if isinstance(params, dict):
            body = {**body, "params": {**params, "_meta": META_2026}}
    return json.dumps(body, separators=(",", ":")).encode()


def request_headers(
    standard: dict[str, str], overrides: dict[str, str | bytes | list[str] | None], session: str = ""
) -> list[tuple[bytes, bytes]]:
    """*standard* headers with a case's *overrides* (``None`` removes one; a list repeats it;
    ``{session}`` in a value stands for *session*)."""
    merged: dict[str, tuple[str, Any]] = {k.lower(): (k, v) for k, v in standard.items()}
    for k, v in overrides.items():
        merged[k.lower()] = (k, v)
    headers: list[tuple[bytes, bytes]] = []
    for name, value in merged.values():
        values = value if isinstance(value, list) else [value]
        for one in values:
            if one is not None:
                raw = one if isinstance(one, bytes) else one.replace("{session}", session).encode()
                headers.append((name.encode(), raw))
    return headers


def parse_sse(text: str) -> list[Any]:
    """The JSON of each ``data`` field in an event-stream body."""
    messages = []
    for block in text.split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


def messages_of(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages in a POST's answer (a JSON body or an event stream); [] for others."""
    kind = response.headers.get("content-type", "")
    if "text/event-stream" in kind:
        return parse_sse(response.text)
    if "application/json" in kind and response.content:
        return [response.json()]
    return []


def answer_ids(answers: list[Any]) -> tuple[Any, ...]:
    """The id of each answer: of the one answer, or of each member of a batch's array."""
    members = answers[0] if len(answers) == 1 and isinstance(answers[0], list) else answers
    return tuple(m.get("id") if isinstance(m, dict) else m for m in members)


def error_code(message: Any) -> int | None:
    """0 for a result, the code of an error, ``None`` for something that is neither."""
    if isinstance(message, dict):
        if "result" in message:
            return 0
        error = message.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            return int(error["code"])
    return None


class SSEStream:
    """A GET event stream read by a thread of its own; events go to :attr:`events`."""

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str]) -> None:
        self.events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._client = client
        self._ready = threading.Event()
        self.status = 0
        self._stop = False
        self._thread = threading.Thread(target=self._read, args=(url, headers), daemon=True)
        self._thread.start()
        if not self._ready.wait(TIMEOUT):
            raise TimeoutError(f"GET {url} did not answer")

    def _read(self, url: str, headers: dict[str, str]) -> None:
        try:
            with self._client.stream(
                "GET", url, headers=headers, timeout=httpx.Timeout(TIMEOUT, read=None)
            ) as r:
                self.status = r.status_code
                self._ready.set()
                name, data = "message", []
                for line in r.iter_lines():
                    if self._stop:
                        return
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif line == "" and data:
                        self.events.put((name, "\n".join(data)))
                        name, data = "message", []
        except Exception:  # the server went away (the fixture stops it at the end)
            pass
        finally:
            self._ready.set()

    def next(self, timeout: float = TIMEOUT) -> tuple[str, str]:
        return self.events.get(timeout=timeout)

    def messages_until(self, request_id: str, timeout: float = TIMEOUT) -> list[Any]:
        """Every message up to and including the answer to *request_id*."""
        seen = []
        while True:
            _, data = self.next(timeout)
            message = json.loads(data)
            seen.append(message)
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return seen

    def pending(self) -> list[tuple[str, str]]:
        items = []
        while True:
            try:
                items.append(self.events.get_nowait())
            except queue.Empty:
                return items

    def close(self) -> None:
        self._stop = True
        # The reading thread is a daemon blocked in a read: it ends when the server closes the
        # connection (the fixture stops the server next), not when asked.


class StdioTarget:
    """A server process spoken to over its stdin and stdout, one line per message."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Send a request; every message read up to and including its answer."""
        request_id = probe_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(json.dumps(message).encode())
        return self.messages_until(request_id)

    def messages_until(self, request_id: str) -> list[Any]:
        seen = []
        while True:
            message = json.loads(self.lines.get(timeout=TIMEOUT))
            seen.append(message)
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return seen

    def pending(self) -> Iterator[Any]:
        while True:
            try:
                yield json.loads(self.lines.get_nowait())
            except queue.Empty:
                return

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(TIMEOUT)  # it reads to EOF, then the pipe can be closed
        assert self.proc.stdout is not None
        self.proc.stdout.close()
