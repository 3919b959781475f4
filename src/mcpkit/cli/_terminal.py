"""What a terminal shows of text a server wrote: its control characters as visible escapes.

A server's strings (tool names and descriptions, results, log lines, progress messages, questions,
error messages) reach the user's terminal when a person lists or calls it, and a terminal *acts* on
some characters rather than showing them: ``ESC`` starts sequences that set the window title
(OSC 0), write the clipboard (OSC 52), make a link whose text is not its target (OSC 8), clear the
screen (``ESC[2J``) or hide what follows (``ESC[8m``); a bare carriage return moves back over what
was printed; the C1 range (U+0080-U+009F) holds one-character forms of the same (U+009B is ``ESC[``).
The bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) are no terminal controls,
but they reorder what is displayed, so text can read differently from what it is (as in "Trojan
Source" attacks); they are shown as escapes too.

:func:`visible` turns each such character into an escape a person can read (``\\x1b``, ``\\r``,
``\\u202e``); newline and tab stay, since text is made of them. It is applied where a renderer
writes to a terminal, never to a pipe or a file: what is written there stays byte for byte what the
server sent. :func:`visible_json` does the same for JSON text shown on a terminal, with JSON's own
``\\u`` escapes, so the document still parses to the same value.
"""

from __future__ import annotations

from typing import Final, Protocol

__all__ = ["ACTIVE", "shown", "visible", "visible_json"]


class _Stream(Protocol):
    def isatty(self) -> bool: ...


#: The characters a terminal acts on (or that reorder what it shows), by code point: C0 but newline
#: and tab, DEL, C1, and the bidirectional embeddings, overrides and isolates.
ACTIVE: Final = frozenset(
    [
        *(c for c in range(0x20) if c not in (0x0A, 0x09)),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
)

_SHORT: Final = {0x0D: "\\r"}  # the one a reader recognises at once; the others by number


def _escape(code: int) -> str:
    if code in _SHORT:
        return _SHORT[code]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_VISIBLE: Final = {code: _escape(code) for code in ACTIVE}
# json.dumps already escapes C0 (as \u001b); what it leaves raw is DEL, C1 and the bidi controls.
_JSON: Final = {code: f"\\u{code:04x}" for code in ACTIVE}


def visible(text: str) -> str:
    """*text* with every character of :data:`ACTIVE` written as an escape (``\\x1b``, ``\\r``)."""
    return text.translate(_VISIBLE)


def visible_json(text: str) -> str:
    """JSON *text* (as ``json.dumps`` writes it) with :data:`ACTIVE` characters as ``\\uXXXX``
    escapes: they can stand only inside strings, where the escape means the same character."""
    return text.translate(_JSON)


def shown(text: str, stream: _Stream) -> str:
    """*text* as it should be written to *stream*: :func:`visible` on a terminal, as is elsewhere."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a stream without a file, or one already closed
        terminal = False
    return visible(text) if terminal else text
