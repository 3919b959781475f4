"""Pagination of list results: opaque cursors over an ordered list of keys. No I/O.

"The cursor is an opaque string token, representing a position in the result set", and "Clients
MUST treat cursors as opaque tokens". Here a cursor names the last key of the previous page
(base64url, so nobody mistakes it for something to parse), which gives the "stable cursors" servers
SHOULD provide: pages stay put while items are added or removed elsewhere in the list. "Invalid
cursors SHOULD result in an error with code -32602 (Invalid params)".

Used by every paginated method, the server's own lists and an extension's (``skills/list``,
``resources/directory/read``) alike.
"""

from __future__ import annotations

import base64
from typing import Any

from ._errors import InvalidParams

__all__ = ["page", "paginate"]


def paginate(items: list[str], cursor: Any, page_size: int | None) -> tuple[list[str], str | None]:
    """One page of *items* after *cursor*, and the cursor of the next page (``None`` on the last).

    Args:
        items: the keys of the whole list, in list order.
        cursor: ``params.cursor`` as received (``None`` for the first page).
        page_size: the most keys in a page; ``None`` for everything in one page.

    Raises:
        InvalidParams: the cursor is not a string, or names no item of *items*.
    """
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str):
            raise InvalidParams("invalid cursor")
        try:
            last = base64.urlsafe_b64decode(cursor.encode()).decode()
            start = items.index(last) + 1
        except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
            raise InvalidParams(f"invalid cursor: {cursor!r}") from None
    if page_size is None:
        return items[start:], None
    chunk = items[start : start + page_size]
    more = start + page_size < len(items)
    return chunk, base64.urlsafe_b64encode(chunk[-1].encode()).decode() if more and chunk else None


def page(key: str, items: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    """A list result: ``{key: items}``, with ``nextCursor`` when another page follows."""
    result: dict[str, Any] = {key: items}
    if cursor is not None:
        result["nextCursor"] = cursor
    return result
