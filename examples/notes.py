"""A notes server that keeps its state behind explicit handles.

The 2026-07-28 revision has no protocol-level session: "servers that need to maintain state across
calls ... should do so by returning an explicit handle from a creation tool and accepting that handle
as an argument on subsequent calls" (server/tools). So ``create_notebook`` returns an opaque,
random ``notebook_id`` and every other tool takes it; an unknown or expired handle is a tool
execution error that tells the model to create a new notebook.

Run it with ``mcpkit run examples/notes.py``.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated

from mcpkit import Server, ToolAnnotations, ToolError

server = Server(
    "notes", "1.0.0", instructions="Notebooks of short notes. Create a notebook first and keep its id."
)

#: Notebooks untouched for this long are forgotten.
LIFETIME_SECONDS = 24 * 3600


@dataclass
class Notebook:
    title: str
    notes: dict[str, str] = field(default_factory=dict)
    touched: float = field(default_factory=time.monotonic)


@dataclass
class NotebookRef:
    notebook_id: str
    title: str


@dataclass
class Note:
    note_id: str
    text: str


_notebooks: dict[str, Notebook] = {}


def _open(notebook_id: str) -> Notebook:
    now = time.monotonic()
    for key in [k for k, nb in _notebooks.items() if now - nb.touched > LIFETIME_SECONDS]:
        del _notebooks[key]
    notebook = _notebooks.get(notebook_id)
    if notebook is None:
        raise ToolError(
            f"Unknown or expired notebook {notebook_id!r}: create a new one with create_notebook."
        )
    notebook.touched = now
    return notebook


@server.tool
def create_notebook(title: Annotated[str, "A name for the notebook"] = "notes") -> NotebookRef:
    """Create a notebook and return its id. Notebooks expire after 24 hours of inactivity."""
    notebook_id = "nb_" + secrets.token_urlsafe(12)
    _notebooks[notebook_id] = Notebook(title)
    return NotebookRef(notebook_id, title)


@server.tool
def add_note(notebook_id: str, text: Annotated[str, "The note's text"]) -> Note:
    """Add a note to a notebook."""
    notebook = _open(notebook_id)
    note = Note("n" + str(len(notebook.notes) + 1), text)
    notebook.notes[note.note_id] = text
    return note


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes(notebook_id: str) -> list[Note]:
    """All notes of a notebook, oldest first."""
    return [Note(key, text) for key, text in _open(notebook_id).notes.items()]


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_note(notebook_id: str, note_id: str) -> str:
    """Delete one note."""
    if _open(notebook_id).notes.pop(note_id, None) is None:
        raise ToolError(f"No note {note_id!r} in this notebook.")
    return f"Deleted {note_id}"


if __name__ == "__main__":
    server.run()
