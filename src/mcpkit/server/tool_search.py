"""Tool search: two meta-tools in place of a catalogue too large to list.

A model shown hundreds of tools spends its context on their schemas and chooses worse. Once
:func:`enable_tool_search` (or ``server.add_tool_search()``) is called, ``tools/list`` answers only

- ``search_tools(query, limit?)``: the catalogue ranked with BM25 against *query*; the best
  matches' definitions (``name``, ``title`` when there is one, ``description``, ``inputSchema``)
  as ``structuredContent`` and as the same JSON in a text block;
- ``call_tool(name, arguments?)``: calls the tool *name* found that way;
- and the tools named in ``always`` (those the model should see at once).

The catalogue searched is :meth:`~mcpkit.server.catalog.CatalogAPI.catalog` asked for the
caller, at the time of the search: the server's own tools, its mounted servers', transformed
ones, less what is disabled for everyone or for the caller's session. So a tool added later is
found at once, and a hidden one never is. Every tool stays callable by its own name too.

``call_tool`` passes the call to the server's own ``tools/call`` handler through
:meth:`~mcpkit.LowLevelServer.dispatch`, with the request's other params (``_meta``, a
2025-11-25 ``task``) kept: middleware sees the real tool's name and arguments (a policy keyed on
names cannot be walked around), transforms map names and arguments back, a hidden tool is
refused, a tool may run as a task, and a 2026-07-28 tool may ask the client for input (the
retry comes back as ``call_tool`` and is passed on the same way). Middleware therefore runs twice
for such a call: once around ``call_tool``, once around the real tool.

>>> from mcpkit import Server
>>> server = Server("big")
>>> @server.tool
... def get_weather(city: str) -> str:
...     '''Current weather for a city.'''
...     return f"Sunny in {city}"
>>> @server.tool
... def send_email(to: str, body: str) -> str:
...     '''Send an email message.'''
...     return "sent"
>>> enable_tool_search(server, max_results=3)
>>> [tool["name"] for tool in rank(server_tools(server), "weather in a city")]
['get_weather']

Ranking (:class:`BM25`): names are split into words (``snake_case``, ``camelCase``, dots and
dashes; the whole name is a word too), titles and descriptions into words; name words weigh three
times, title words twice, description words once. Words are lower-cased and a plural ``s`` is
dropped. A query equal to a tool's name ranks that tool first whatever the scores say; ties keep
the catalogue's order; a tool matching no word of the query is not returned.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from .._compat import shape_call_result, shape_tool
from .._errors import InvalidParams
from .._pagination import page, paginate
from ..context import Context
from ._results import error_result

if TYPE_CHECKING:
    from .tools import ToolsAPI

__all__ = ["BM25", "ToolSearch", "ToolSearchAPI", "enable_tool_search", "rank", "server_tools", "tokenize"]

#: BM25's usual constants: term frequency saturation, and how much a long document is penalised.
K1: Final = 1.2
B: Final = 0.75
#: How much a word counts by where it was found.
NAME_WEIGHT: Final = 3
TITLE_WEIGHT: Final = 2
#: The most results one search may ask for (``limit``), whatever ``max_results`` is.
LIMIT_CAP: Final = 50

_json: Final = msgspec.json.Encoder()


# -- words ------------------------------------------------------------------------------------------


def _split_run(run: str) -> list[str]:
    """One run of letters and digits in words: ``getHTTPResponse2`` -> get, http, response, 2."""
    words: list[str] = []
    start = 0
    for i in range(1, len(run)):
        prev, cur = run[i - 1], run[i]
        nxt = run[i + 1] if i + 1 < len(run) else ""
        if (
            (prev.islower() and cur.isupper())
            or (prev.isalpha() != cur.isalpha())
            # the last capital of an acronym starts the next word: HTTPResponse -> HTTP, Response
            or (prev.isupper() and cur.isupper() and nxt.islower())
        ):
            words.append(run[start:i])
            start = i
    words.append(run[start:])
    return words


def _stem(word: str) -> str:
    # A plural's s, and nothing cleverer: "forecasts" finds "forecast". Applied to documents and
    # queries alike, so a wrong cut ("status" -> "statu") still matches itself.
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """The words of *text* as the index sees them.

    Each whitespace-separated chunk that joins words (``get_weather``, ``weather.forecast``,
    ``getWeather``) gives the whole chunk, lower-cased, and then its words.

    >>> tokenize("getWeather for weather.forecasts")
    ['getweather', 'get', 'weather', 'for', 'weather.forecast', 'weather', 'forecast']
    """
    words: list[str] = []
    for chunk in text.split():
        runs: list[str] = []
        current: list[str] = []
        for char in chunk:
            if char.isalnum():
                current.append(char)
            elif current:
                runs.append("".join(current))
                current = []
        if current:
            runs.append("".join(current))
        parts = [part.lower() for run in runs for part in _split_run(run)]
        if not parts:
            continue
        if len(parts) > 1:  # the joined words as one word too: a name's exact match counts most
            start, end = 0, len(chunk)
            while not chunk[start].isalnum():
                start += 1
            while not chunk[end - 1].isalnum():
                end -= 1
            words.append(_stem(chunk[start:end].lower()))
        words.extend(_stem(part) for part in parts)
    return words


def _document(tool: dict[str, Any]) -> Counter[str]:
    """A tool's weighted word counts: name, title and description."""
    counts: Counter[str] = Counter()
    for word in tokenize(str(tool.get("name", ""))):
        counts[word] += NAME_WEIGHT
    title = tool.get("title")
    if isinstance(title, str):
        for word in tokenize(title):
            counts[word] += TITLE_WEIGHT
    description = tool.get("description")
    if isinstance(description, str):
        counts.update(tokenize(description))
    return counts


# -- ranking ----------------------------------------------------------------------------------------


class BM25:
    """Okapi BM25 over documents given as word counts.

    ``score(q, d) = sum over the query's distinct words t of idf(t) * tf * (k1 + 1) /
    (tf + k1 * (1 - b + b * |d| / avgdl))``, with ``idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))``
    (the form that is never negative, so a word found in most documents still counts a little).

    >>> index = BM25([Counter(["red", "apple"]), Counter(["green", "pear"]), Counter(["red", "car"])])
    >>> [round(s, 3) for s in index.scores(["red", "apple"])]
    [1.451, 0.0, 0.47]
    """

    __slots__ = ("_avgdl", "_df", "_docs", "_lengths", "b", "k1")

    def __init__(self, documents: Sequence[Counter[str]], *, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._docs = documents
        self._lengths = [sum(doc.values()) for doc in documents]
        self._avgdl = (sum(self._lengths) / len(documents)) if documents else 0.0
        self._df: Counter[str] = Counter()
        for doc in documents:
            self._df.update(doc.keys())

    def idf(self, word: str) -> float:
        n = len(self._docs)
        found = self._df.get(word, 0)
        return math.log(1.0 + (n - found + 0.5) / (found + 0.5))

    def scores(self, query: Iterable[str]) -> list[float]:
        """Each document's score for *query*'s words, in the documents' order."""
        words = [(word, self.idf(word)) for word in dict.fromkeys(query) if word in self._df]
        k1, b, avgdl = self.k1, self.b, self._avgdl or 1.0
        out: list[float] = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            total = 0.0
            norm = k1 * (1.0 - b + b * length / avgdl)
            for word, idf in words:
                tf = doc.get(word)
                if tf:
                    total += idf * tf * (k1 + 1.0) / (tf + norm)
            out.append(total)
        return out


class _Documents:
    """Tools' word counts, kept between searches while their definitions are unchanged (the
    catalogue is read live at each search; tokenising it again each time is the cost saved)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, Any, Any], Counter[str]] = {}

    def of(self, tools: Sequence[dict[str, Any]]) -> list[Counter[str]]:
        docs: list[Counter[str]] = []
        seen: set[tuple[str, Any, Any]] = set()
        for tool in tools:
            key = (str(tool.get("name", "")), tool.get("title"), tool.get("description"))
            found = self._known.get(key)
            if found is None:
                found = self._known[key] = _document(tool)
            docs.append(found)
            seen.add(key)
        if len(self._known) > 2 * len(seen) + 64:  # removed and changed tools: forget them
            self._known = {key: value for key, value in self._known.items() if key in seen}
        return docs


def rank(
    tools: Sequence[dict[str, Any]],
    query: str,
    limit: int | None = None,
    *,
    documents: _Documents | None = None,
) -> list[dict[str, Any]]:
    """The *tools* (wire definitions) that match *query*, best first, at most *limit*.

    A tool named exactly *query* (ignoring case and surrounding spaces) comes first; the others
    by BM25 score, ties in the order given; tools matching no word are left out.
    """
    docs = (documents or _Documents()).of(tools)
    scores = BM25(docs).scores(tokenize(query))
    wanted = query.strip()
    exact = [i for i, tool in enumerate(tools) if str(tool.get("name", "")).lower() == wanted.lower()]
    exact.sort(key=lambda i: tools[i].get("name") != wanted)  # the same case first
    order = exact + sorted(
        (i for i, score in enumerate(scores) if score > 0.0 and i not in exact),
        key=lambda i: -scores[i],  # sorted() is stable: equal scores keep the catalogue's order
    )
    return [tools[i] for i in order[:limit]]


def server_tools(server: ToolsAPI) -> list[dict[str, Any]]:
    """A server's own tools' wire definitions (for examples and tests; searches use the live
    catalogue of :meth:`~mcpkit.server.catalog.CatalogAPI.catalog`)."""
    return [tool.wire for tool in server._tools.values()]


# -- the meta-tools ---------------------------------------------------------------------------------


class ToolSearch:
    """Tool search as set up on one server: its two meta-tools and the handlers they replace."""

    def __init__(
        self, server: ToolsAPI, max_results: int, always: Sequence[str], search_name: str, call_name: str
    ) -> None:
        self.server = server
        self.max_results = max_results
        self.always = tuple(always)
        self.search_name = search_name
        self.call_name = call_name
        self.documents = _Documents()
        self._list_tools = server._handlers["tools/list"]
        self._call_tool = server._handlers["tools/call"]
        self.search_definition: dict[str, Any] = {
            "name": search_name,
            "title": "Search tools",
            "description": (
                "Search this server's tools by what they do. Returns the best matching tools' "
                f"names, descriptions and input schemas; call one with {call_name}."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words describing the task, or a tool's name"},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": max(max_results, LIMIT_CAP),
                        "description": f"The most tools to return (default {max_results})",
                    },
                },
                "required": ["query"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                "required": ["tools"],
            },
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }
        self.call_definition: dict[str, Any] = {
            "name": call_name,
            "title": "Call a tool",
            "description": (
                f"Call a tool found with {search_name}: its name, and its arguments as an object "
                "matching its input schema."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": f"The tool's name, as {search_name} gave it"},
                    "arguments": {"type": "object", "description": "The tool's arguments"},
                },
                "required": ["name"],
            },
        }

    # -- tools/list ------------------------------------------------------------------------------

    async def list_tools(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """``tools/list``: the meta-tools and the ``always`` ones (if listed to this caller)."""
        server = self.server
        catalog = await server.catalog("tools", ctx)
        call_definition = self.call_definition
        if any(_task_support(item) for item in catalog):
            # Some tool can run as a task: so can a call of it through call_tool.
            call_definition = {**call_definition, "execution": {"taskSupport": "optional"}}
        items = [
            shape_tool(definition, ctx.scope)
            for definition in (self.search_definition, call_definition)
            if not server._is_hidden("tools", definition["name"], ctx)
        ]
        if self.always:
            wanted = set(self.always) - {self.search_name, self.call_name}
            items.extend(item for item in catalog if item.get("name") in wanted)
        by_name = {item["name"]: item for item in items}
        shown, cursor = paginate(list(by_name), params.get("cursor"), server.page_size)
        return page("tools", [by_name[name] for name in shown], cursor)

    # -- tools/call ------------------------------------------------------------------------------

    async def call_tool(self, params: dict[str, Any], ctx: Context) -> Any:
        """``tools/call``: the meta-tools here; any other name as the server answered it before."""
        name = params.get("name")
        if name == self.search_name or name == self.call_name:
            if self.server._is_hidden("tools", name, ctx):
                raise InvalidParams(f"Unknown tool: {name}")
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise InvalidParams("tools/call params.arguments must be an object")
            if name == self.search_name:
                return shape_call_result(await self._search(arguments or {}, ctx), ctx.scope)
            return await self._call(params, arguments or {}, ctx)
        return await self._call_tool(params, ctx)

    async def _search(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        query = arguments.get("query")
        if not isinstance(query, str):
            return error_result(f"{self.search_name} needs query: a string")
        limit = arguments.get("limit", self.max_results)
        cap = max(self.max_results, LIMIT_CAP)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= cap:
            return error_result(f"{self.search_name}: limit must be an integer from 1 to {cap}")
        catalog = [
            item
            for item in await self.server.catalog("tools", ctx)
            if item.get("name") not in (self.search_name, self.call_name)
        ]
        found = [_definition(item) for item in rank(catalog, query, limit, documents=self.documents)]
        if not found:
            text = f"No tool matches {query!r}. Try other words."
        else:
            text = _json.encode({"tools": found}).decode()
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"tools": found}}

    async def _call(self, params: dict[str, Any], arguments: dict[str, Any], ctx: Context) -> Any:
        target = arguments.get("name")
        inner = arguments.get("arguments", {})
        if not isinstance(target, str) or not target:
            return shape_call_result(error_result(f"{self.call_name} needs name: a tool's name"), ctx.scope)
        if not isinstance(inner, dict):
            return shape_call_result(
                error_result(f"{self.call_name}: arguments must be an object (the tool's arguments)"),
                ctx.scope,
            )
        if target in (self.search_name, self.call_name):
            return shape_call_result(
                error_result(f"{self.call_name} calls the tools {self.search_name} finds, not {target}"),
                ctx.scope,
            )
        forwarded = {**params, "name": target, "arguments": inner}
        try:
            # The server's own tools/call, through its middleware: see the module.
            return await self.server.dispatch("tools/call", forwarded, ctx)
        except InvalidParams as exc:
            # An unknown or hidden tool: the model asked for it, so it is told as a tool error
            # it can act on, not a protocol error its client may not show it.
            return shape_call_result(
                error_result(f"{exc.message}. Use {self.search_name} to find the tools there are."),
                ctx.scope,
            )


def _task_support(item: dict[str, Any]) -> bool:
    execution = item.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") in ("optional", "required")


def _definition(item: dict[str, Any]) -> dict[str, Any]:
    """What a search returns of a tool: enough to call it."""
    found: dict[str, Any] = {"name": item["name"]}
    if isinstance(item.get("title"), str):
        found["title"] = item["title"]
    found["description"] = item.get("description") or ""
    found["inputSchema"] = item.get("inputSchema") or {"type": "object"}
    return found


def enable_tool_search(
    server: ToolsAPI,
    *,
    max_results: int = 5,
    always: Sequence[str] = (),
    search_name: str = "search_tools",
    call_name: str = "call_tool",
) -> None:
    """List *server*'s tools as two meta-tools, *search_name* and *call_name* (see the module).

    Args:
        server: a :class:`~mcpkit.Server` (any server with tools and a catalogue).
        max_results: how many tools a search returns when it does not say (``limit``).
        always: names of tools listed as well (if the catalogue has them for the caller).
        search_name: the search meta-tool's name.
        call_name: the call meta-tool's name.

    Raises:
        ValueError: tool search is on already; *max_results* is under 1; a meta-tool's name is
            not a valid tool name, the two are the same, or the server has a tool of that name;
            *always* is a string instead of a list of names.
    """
    if getattr(server, "_tool_search", None) is not None:
        raise ValueError(f"tool search is already enabled on {server.info.name!r}")
    if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
        raise ValueError("max_results must be an integer of at least 1")
    if isinstance(always, str):
        raise ValueError("always is a list of tool names, not a string")
    if search_name == call_name:
        raise ValueError("search_name and call_name must differ")
    for name in (search_name, call_name):
        if (
            not isinstance(name, str)
            or not 0 < len(name) <= 128
            or not all(c.isascii() and (c.isalnum() or c in "_-.") for c in name)
        ):
            raise ValueError(f"invalid tool name {name!r}: use 1 to 128 of A-Z a-z 0-9 _ - .")
        if name in server._tools:
            raise ValueError(f"the server already has a tool named {name!r}: choose other names")
    search = ToolSearch(server, max_results, always, search_name, call_name)
    server._tool_search = search  # type: ignore[attr-defined]
    server.set_handler("tools/list", search.list_tools)
    server.set_handler("tools/call", search.call_tool)
    server._changed("tools")


class ToolSearchAPI:
    """Part of :class:`~mcpkit.Server`: :meth:`add_tool_search`."""

    _tool_search: ToolSearch | None = None

    def add_tool_search(
        self,
        *,
        max_results: int = 5,
        always: Sequence[str] = (),
        search_name: str = "search_tools",
        call_name: str = "call_tool",
    ) -> None:
        """List this server's tools as ``search_tools`` and ``call_tool`` (see
        :func:`enable_tool_search` for the arguments, and :mod:`mcpkit.server.tool_search`)."""
        enable_tool_search(
            self,  # type: ignore[arg-type]
            max_results=max_results,
            always=always,
            search_name=search_name,
            call_name=call_name,
        )
