"""The audit log: one JSON line per tool call, always written, secrets redacted.

Each line holds ``time`` (UTC, ISO 8601), ``caller``, ``server``, ``tool`` (the server's own name)
and ``name`` (the exposed one), ``arguments`` with every value under a redacted key replaced by
``"[redacted]"`` (keys compared without case, at any depth), ``decision`` (``allow``, ``deny``,
``ask:yes``, ``ask:no``, ``ask:unavailable``, ``rate-limited``) with the ``rule`` that made it,
``outcome`` (``ok``, ``tool-error``, ``error``, ``refused``), ``error`` when there is one, and
``duration_ms``. Lines are appended and flushed one at a time, so a crash loses none written.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

__all__ = ["AuditLog", "default_audit_path", "redact"]

REDACTED = "[redacted]"


def default_audit_path() -> Path:
    """``$XDG_STATE_HOME/mcpkit/audit.jsonl`` (``~/.local/state`` when unset)."""
    state = os.environ.get("XDG_STATE_HOME")
    base = (
        Path(state) if state and os.path.isabs(state) else Path(os.path.expanduser("~")) / ".local" / "state"
    )
    return base / "mcpkit" / "audit.jsonl"


def redact(value: Any, keys: frozenset[str]) -> Any:
    """*value* with the values of *keys* (lower case) replaced, in nested objects and lists too."""
    if isinstance(value, dict):
        return {k: REDACTED if str(k).lower() in keys else redact(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, keys) for v in value]
    return value


class AuditLog:
    """Appends audit lines to *path* (its folder is created), or to an open text stream."""

    def __init__(self, path: Path | IO[str], redact_keys: Iterable[str]) -> None:
        self.keys = frozenset(k.lower() for k in redact_keys)
        self._lock = threading.Lock()
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.path: Path | None = path
            self._stream: IO[str] = path.open("a", encoding="utf-8")
            self._owned = True
        else:
            self.path = None
            self._stream = path
            self._owned = False

    def write(self, **record: Any) -> dict[str, Any]:
        """Write one line (``arguments`` redacted, ``time`` added) and return what was written."""
        line: dict[str, Any] = {
            "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        }
        for key, value in record.items():
            line[key] = redact(value, self.keys) if key == "arguments" else value
        text = json.dumps(line, ensure_ascii=False, default=str)
        with self._lock:
            self._stream.write(text + "\n")
            self._stream.flush()
        return line

    def close(self) -> None:
        if self._owned:
            self._stream.close()
