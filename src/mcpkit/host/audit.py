"""The audit log: one JSON line per tool call, always written, secrets redacted.

Each line holds ``time`` (UTC, ISO 8601), ``caller``, ``server``, ``tool`` (the server's own name)
and ``name`` (the exposed one), ``arguments`` with the value of every secret key replaced by
``"[redacted]"`` (see :class:`Redaction`; at any depth, in objects inside lists too), ``decision``
(``allow``, ``deny``, ``ask:yes``, ``ask:no``, ``ask:unavailable``, ``rate-limited``) with the
``rule`` that made it, ``outcome`` (``ok``, ``tool-error``, ``error``, ``refused``), ``error`` when
there is one, and ``duration_ms``. Lines are appended and flushed one at a time, so a crash loses
none written.
"""

from __future__ import annotations

import datetime
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, Final

import msgspec

from .._secrets import SecretKeys, normalised, words_of

__all__ = ["AuditLog", "Redaction", "default_audit_path", "normalised", "redact", "words_of"]

REDACTED = "[redacted]"
#: The types a value must not have for :meth:`Redaction.apply` to write an object as it is: what
#: JSON nests (and what a caller in process may nest), where a secret key may hide.
_NESTED: Final = frozenset({dict, list, tuple})
#: A line's time after its second, by the millisecond: made once rather than formatted per line.
_MILLISECONDS: Final = tuple(f".{ms:03d}+00:00" for ms in range(1000))

#: JSON with text as it is (UTF-8, not ``\u`` escapes); a value JSON has no type for is written as
#: its ``str``. msgspec's encoder: a gateway writes a line per call, and the standard library's
#: takes several times as long.
_encode = msgspec.json.Encoder(enc_hook=str).encode


def default_audit_path() -> Path:
    """``$XDG_STATE_HOME/mcpkit/audit.jsonl`` (``~/.local/state`` when unset)."""
    state = os.environ.get("XDG_STATE_HOME")
    base = (
        Path(state) if state and os.path.isabs(state) else Path(os.path.expanduser("~")) / ".local" / "state"
    )
    return base / "mcpkit" / "audit.jsonl"


class Redaction(SecretKeys):
    """Which argument keys hold secrets, by their name (the rule of :mod:`mcpkit._secrets`: the
    defaults, *extra* words added, ``!name`` to show one key), and redacting them."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        super().__init__(extra)
        self._known: dict[str, bool] = {}  # the rule's answer per key name: calls repeat their keys

    def _secret(self, key: str) -> bool:
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= 4096:  # bounded: arguments may name any number of keys
                self._known.clear()
            known = self._known[key] = self.secret(key)
        return known

    def apply(self, value: Any) -> Any:
        """*value* with the value of every secret key replaced, in nested objects and lists too."""
        if type(value) is dict:
            # The usual arguments: flat, their keys seen before and none secret. Such an object is
            # written as it is (the line is encoded at once, and nothing changes it meanwhile).
            known = self._known
            for k, v in value.items():
                if known.get(k) is not False or type(v) in _NESTED:
                    break
            else:
                return value
        if isinstance(value, dict):
            return {k: REDACTED if self._secret(str(k)) else self.apply(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.apply(v) for v in value]
        return value


def redact(value: Any, extra: Iterable[str] = ()) -> Any:
    """*value* with the values of secret keys replaced (:class:`Redaction` with *extra*)."""
    return Redaction(extra).apply(value)


class AuditLog:
    """Appends audit lines to *path* (its folder is created), or to an open text stream."""

    def __init__(self, path: Path | IO[str], redact_keys: Iterable[str] = ()) -> None:
        #: *redact_keys* add to the defaults (see :class:`Redaction`).
        self.redaction = Redaction(redact_keys)
        self._lock = threading.Lock()
        self._second, self._stamp = -1, ""
        self._file: IO[bytes] | None = None
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.path: Path | None = path
            # Unbuffered, appending: each line is one write(2) of its own, which is what flushing
            # a buffered stream costs anyway, without the text layer on top.
            self._file = path.open("ab", buffering=0)
        else:
            self.path = None
            self._stream = path

    def write(self, **record: Any) -> dict[str, Any]:
        """Write one line (``arguments`` redacted, ``time`` added) and return what was written."""
        return self.record(record)

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """:meth:`write` of a dict: one line, written and flushed before this returns."""
        line: dict[str, Any] = {"time": self._now(), **record}
        if "arguments" in line:
            line["arguments"] = self.redaction.apply(line["arguments"])
        data = _encode(line) + b"\n"
        with self._lock:
            if self._file is not None:
                written = self._file.write(data)
                while written < len(data):  # a short write (a full disk, a signal): the rest
                    written += self._file.write(data[written:])
            else:
                self._stream.write(data.decode())
                self._stream.flush()
        return line

    def _now(self) -> str:
        """The time in UTC to the millisecond, as ``datetime.isoformat`` writes it (the date and
        the second are formatted once a second: a gateway writes many lines in one)."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return self._stamp + _MILLISECONDS[int((now - second) * 1000)]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
