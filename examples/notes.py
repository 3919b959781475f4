"""A notes server that keeps its state behind explicit handles.

The 2026-07-28 revision has no protocol-level session: "servers that need to maintain state across
calls ... should do so by returning an explicit handle from a creation tool and accepting that handle
as an argument on subsequent calls" (server/tools). So ``create_notebook`` returns an opaque,
random ``notebook_id`` and every other tool takes it; an unknown or expired handle is a tool
execution error that tells the model to create a new notebook.

It also shows the other server features: each notebook is a resource (``notes://{notebook_id}``)
and each note one too (``notes://{notebook_id}/{note_id}``); clients that subscribe hear when a
notebook changes; ``summarize`` is a prompt whose ``style`` argument completes; ``export`` reports
progress and logs as it goes.

Run it with ``mcpkit run examples/notes.py``.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated, Literal

from mcpkit import Context, PromptMessage, ResourceNotFound, Server, TextContent, ToolAnnotations, ToolError

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
async def add_note(notebook_id: str, text: Annotated[str, "The note's text"]) -> Note:
    """Add a note to a notebook."""
    notebook = _open(notebook_id)
    note = Note("n" + str(len(notebook.notes) + 1), text)
    notebook.notes[note.note_id] = text
    await server.resource_updated(f"notes://{notebook_id}")
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


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def export(notebook_id: str, ctx: Context) -> str:
    """Export a notebook as Markdown, reporting progress note by note."""
    notebook = _open(notebook_id)
    lines = [f"# {notebook.title}"]
    total = len(notebook.notes)
    for done, (key, text) in enumerate(notebook.notes.items(), start=1):
        lines.append(f"- {text}")
        await ctx.report_progress(done, total, f"exported {key}")
    await ctx.info(f"exported {total} notes from {notebook_id}")
    return "\n".join(lines)


@server.resource("notes://{notebook_id}", mime_type="text/markdown")
def notebook_resource(notebook_id: str) -> str:
    """A whole notebook, as Markdown."""
    notebook = _notebooks.get(notebook_id)
    if notebook is None:
        raise ResourceNotFound(f"no notebook {notebook_id}", {"uri": f"notes://{notebook_id}"})
    return "\n".join([f"# {notebook.title}", *(f"- {text}" for text in notebook.notes.values())])


@server.resource("notes://{notebook_id}/{note_id}")
def note_resource(notebook_id: str, note_id: str) -> str:
    """One note's text."""
    text = _notebooks.get(notebook_id, Notebook("")).notes.get(note_id)
    if text is None:
        raise ResourceNotFound(
            f"no note {note_id} in {notebook_id}", {"uri": f"notes://{notebook_id}/{note_id}"}
        )
    return text


@server.resource("notes://about", title="About this server")
def about() -> str:
    """What this server does."""
    return "Notebooks of short notes, kept for 24 hours."


@server.prompt(title="Summarize a notebook")
def summarize(notebook_id: str, style: Annotated[str, "short or detailed"] = "short") -> list[PromptMessage]:
    """Ask the model to summarize a notebook."""
    notebook = _notebooks.get(notebook_id)
    body = "\n".join(notebook.notes.values()) if notebook else "(no such notebook)"
    return [
        PromptMessage(role="user", content=TextContent(text=f"Summarize these notes ({style}):\n{body}")),
    ]


STYLES: tuple[Literal["short", "detailed", "bullet points"], ...] = ("short", "detailed", "bullet points")


@server.completion(prompt="summarize", argument="style")
def complete_style(value: str, arguments: dict[str, str]) -> list[str]:
    return [style for style in STYLES if style.startswith(value)]


@server.completion(resource="notes://{notebook_id}", argument="notebook_id")
def complete_notebook(value: str, arguments: dict[str, str]) -> list[str]:
    return sorted(key for key in _notebooks if key.startswith(value))


if __name__ == "__main__":
    server.run()
