"""A notes server kept in a SQLite database: a lifespan for the connection, middleware around calls.

The database is opened once, when the server starts serving, and closed when it stops (the
``lifespan``); every tool and resource reaches it as ``ctx.lifespan``. Notes outlive the server:
run it again, or from another client, and they are still there.

Where the database lives: ``$NOTES_DB`` if set, else ``notes.db`` in ``$XDG_DATA_HOME/mcpkit``
(``~/.local/share/mcpkit`` when unset). A path that cannot be opened, or a file that is not this
server's database, stops the start with one line naming it; nothing is written to such a file.

Middleware, outermost first: ``Logging`` writes one line per request on the ``mcpkit.requests``
logger (arguments never logged), ``Timing`` warns about calls slower than a second, and
``read_only_guard`` (written here) refuses the tools that change notes when ``$NOTES_READ_ONLY`` is
``1``, before they run.

Run it::

    NOTES_DB=/tmp/notes.db python examples/notes_sqlite.py        # stdio
    NOTES_DB=/tmp/notes.db mcpkit call examples/notes_sqlite.py add_note title=Milk body="2 litres"
    mcpkit run examples/notes_sqlite.py --transport http --port 8000
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import annotated_types

from mcpkit import Call, CallNext, Context, ResourceNotFound, Server, ToolAnnotations, ToolError
from mcpkit.middleware import CallRecord, Logging, Timing

#: Bumped when the tables change; a database of another version is refused, not migrated blindly.
SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tags (
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag)
);
"""
SLOW_SECONDS = 1.0

log = logging.getLogger("notes_sqlite")


def database_path() -> Path:
    """``$NOTES_DB``, else ``notes.db`` under the XDG data folder."""
    configured = os.environ.get("NOTES_DB")
    if configured:
        return Path(configured).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mcpkit" / "notes.db"


class Notes:
    """The open database. Tools are ``def`` functions, which run in worker threads, so the one
    connection is shared across threads and each use holds the lock."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection, in a transaction committed at the end (rolled back if the body raises)."""
        with self._lock, self.connection:
            yield self.connection


def open_notes(path: Path) -> Notes:
    """Open (or create) the database at *path*. Raises ``ValueError`` for a database of another
    kind or version, and ``sqlite3`` errors for a path that cannot be opened."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        (version,) = connection.execute("PRAGMA user_version").fetchone()  # reads the header
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version == 0 and tables - {"sqlite_sequence"}:
            raise ValueError(f"{path} holds tables of another application: {', '.join(sorted(tables))}")
        if version not in (0, SCHEMA_VERSION):
            raise ValueError(f"{path} is schema version {version}; this server knows {SCHEMA_VERSION}")
        with connection:
            connection.executescript(SCHEMA)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        connection.close()
        raise
    return Notes(connection, path)


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[Notes]:
    path = database_path()
    try:
        notes = open_notes(path)
    except sqlite3.Error as exc:  # say which file: sqlite's own message does not
        raise OSError(f"cannot open the notes database {path}: {exc}") from exc
    log.info("notes database %s opened", path)
    try:
        yield notes
    finally:
        notes.connection.close()
        log.info("notes database %s closed", path)


server = Server(
    "notes-sqlite",
    "1.0.0",
    instructions="Short notes with tags, kept in a SQLite database between runs.",
    lifespan=lifespan,
)


# -- middleware -------------------------------------------------------------------------------------


def warn_if_slow(record: CallRecord) -> None:
    if record.seconds > SLOW_SECONDS:
        log.warning("%s %s took %.1f s", record.method, record.name, record.seconds)


server.add_middleware(Logging())
server.add_middleware(Timing(warn_if_slow, logger=None))


@server.middleware("tools/call")
async def read_only_guard(call: Call, call_next: CallNext) -> Any:
    """With ``NOTES_READ_ONLY=1``, refuse every tool not annotated read-only (it never runs)."""
    if os.environ.get("NOTES_READ_ONLY") == "1":
        name = call.params.get("name")
        for tool in server.tools:
            if tool.name == name and not (tool.annotations and tool.annotations.read_only_hint):
                raise ToolError(f"{name} changes notes, and this server is read-only (NOTES_READ_ONLY=1)")
    return await call_next(call)


# -- tools and resources ----------------------------------------------------------------------------


@dataclass
class Note:
    id: int
    title: str
    body: str
    tags: list[str]
    created: str


def _tags(db: sqlite3.Connection, note_id: int) -> list[str]:
    return [row[0] for row in db.execute("SELECT tag FROM tags WHERE note_id = ? ORDER BY tag", (note_id,))]


def _note(db: sqlite3.Connection, note_id: int) -> Note | None:
    row = db.execute("SELECT id, title, body, created FROM notes WHERE id = ?", (note_id,)).fetchone()
    return None if row is None else Note(row[0], row[1], row[2], _tags(db, row[0]), row[3])


def _notes(db: sqlite3.Connection, query: str, args: tuple[Any, ...]) -> list[Note]:
    rows = db.execute(query, args).fetchall()
    return [Note(row[0], row[1], row[2], _tags(db, row[0]), row[3]) for row in rows]


Limit = Annotated[int, annotated_types.Ge(1), annotated_types.Le(100), "At most this many notes"]


@server.tool(annotations=ToolAnnotations(destructive_hint=False))
def add_note(
    title: Annotated[str, annotated_types.MinLen(1), annotated_types.MaxLen(200)],
    body: Annotated[str, annotated_types.MaxLen(100_000)],
    ctx: Context,
    tags: list[str] | None = None,
) -> Note:
    """Add a note; returns it with its id.

    Args:
        title: A short title.
        body: The note's text.
        tags: Words to find the note by later.
    """
    notes: Notes = ctx.lifespan
    created = datetime.now(UTC).isoformat(timespec="seconds")
    with notes.transaction() as db:
        cursor = db.execute(
            "INSERT INTO notes (title, body, created) VALUES (?, ?, ?)", (title, body, created)
        )
        note_id = int(cursor.lastrowid or 0)
        db.executemany(
            "INSERT OR IGNORE INTO tags (note_id, tag) VALUES (?, ?)",
            [(note_id, tag.strip().lower()) for tag in tags or () if tag.strip()],
        )
        note = _note(db, note_id)
    assert note is not None
    return note


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes(ctx: Context, tag: str | None = None, limit: Limit = 20) -> list[Note]:
    """The newest notes first, all of them or those with a tag."""
    notes: Notes = ctx.lifespan
    with notes.transaction() as db:
        if tag is None:
            return _notes(db, "SELECT id, title, body, created FROM notes ORDER BY id DESC LIMIT ?", (limit,))
        return _notes(
            db,
            "SELECT n.id, n.title, n.body, n.created FROM notes n JOIN tags t ON t.note_id = n.id"
            " WHERE t.tag = ? ORDER BY n.id DESC LIMIT ?",
            (tag.strip().lower(), limit),
        )


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_notes(
    query: Annotated[str, annotated_types.MinLen(1)], ctx: Context, limit: Limit = 20
) -> list[Note]:
    """Notes whose title or body contains the words of *query* (case-insensitive), newest first."""
    words = query.split()
    if not words:
        raise ToolError("give at least one word to search for")
    # LIKE's wildcards in the user's words are matched literally.
    patterns = ["%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words]
    where = " AND ".join("(title LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\')" for _ in words)
    args = tuple(p for pattern in patterns for p in (pattern, pattern))
    notes: Notes = ctx.lifespan
    with notes.transaction() as db:
        return _notes(
            db,
            f"SELECT id, title, body, created FROM notes WHERE {where} ORDER BY id DESC LIMIT ?",
            (*args, limit),
        )


@server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
def delete_note(note_id: int, ctx: Context) -> str:
    """Delete a note by its id."""
    notes: Notes = ctx.lifespan
    with notes.transaction() as db:
        if db.execute("DELETE FROM notes WHERE id = ?", (note_id,)).rowcount == 0:
            raise ToolError(f"there is no note {note_id}; list_notes shows the ids")
    return f"note {note_id} deleted"


@server.resource("notes://{note_id}", mime_type="text/markdown")
def read_note(note_id: str, ctx: Context) -> str:
    """One note as Markdown."""
    notes: Notes = ctx.lifespan
    with notes.transaction() as db:
        note = _note(db, int(note_id)) if note_id.isdigit() else None
    if note is None:
        raise ResourceNotFound(f"no note {note_id}")
    tags = f"\n\ntags: {', '.join(note.tags)}" if note.tags else ""
    return f"# {note.title}\n\n{note.body}{tags}\n"


if __name__ == "__main__":
    logging.basicConfig(level=os.environ.get("NOTES_LOG_LEVEL", "WARNING"))
    server.run()
