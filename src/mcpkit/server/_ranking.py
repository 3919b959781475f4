"""Ranking tools for a search: words from names, titles and descriptions, and BM25 over them.

Names are split into words (``snake_case``, ``camelCase``, acronyms, dots and dashes; the whole
name is a word too), titles and descriptions into words; name words weigh three times, title words
twice, description words once. Words are lower-cased and a plural ``s`` is dropped. A query equal
to a tool's name ranks that tool first whatever the scores say; ties keep the catalogue's order; a
tool matching no word of the query is not returned. No model and no dependency: a large catalogue
(thousands of tools) is indexed in a fraction of a second and searched in milliseconds.

>>> tools = [
...     {"name": "get_weather", "description": "Current weather for a city."},
...     {"name": "send_email", "description": "Send an email message."},
... ]
>>> [tool["name"] for tool in rank(tools, "weather in a city")]
['get_weather']
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Final

__all__ = ["BM25", "Documents", "rank", "tokenize"]

#: BM25's usual constants: term frequency saturation, and how much a long document is penalised.
K1: Final = 1.2
B: Final = 0.75
#: How much a word counts by where it was found.
NAME_WEIGHT: Final = 3
TITLE_WEIGHT: Final = 2

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


def _parts(chunk: str) -> list[str]:
    """A chunk's words, by the rules of :func:`_split_run` (any script)."""
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
    return [part for run in runs for part in _split_run(run)]


@functools.cache
def _ascii_words() -> re.Pattern[str]:
    # The same words as _parts for ASCII text, found by the regex engine rather than a loop in
    # Python (ten times faster on a large catalogue's descriptions). Compiled on first use: a server
    # that never searches does not pay for it.
    return re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """The words of *text* as the index sees them.

    Each whitespace-separated chunk that joins words (``get_weather``, ``weather.forecast``,
    ``getWeather``) gives the whole chunk, lower-cased, and then its words.

    >>> tokenize("getWeather for weather.forecasts")
    ['getweather', 'get', 'weather', 'for', 'weather.forecast', 'weather', 'forecast']
    """
    words: list[str] = []
    find = _ascii_words().findall
    for chunk in text.split():
        if chunk.isalpha() and chunk.islower():  # most words of a description: nothing to split
            words.append(_stem(chunk))
            continue
        parts = find(chunk) if chunk.isascii() else _parts(chunk)
        if not parts:
            continue
        if len(parts) > 1:  # the joined words as one word too: a name's exact match counts most
            start, end = 0, len(chunk)
            while not chunk[start].isalnum():
                start += 1
            while not chunk[end - 1].isalnum():
                end -= 1
            words.append(_stem(chunk[start:end].lower()))
        words.extend(_stem(part.lower()) for part in parts)
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

    __slots__ = ("_n", "_postings", "_weights")

    def __init__(self, documents: Sequence[Counter[str]], *, k1: float = K1, b: float = B) -> None:
        self._n = len(documents)
        lengths = [sum(doc.values()) for doc in documents]
        avgdl = (sum(lengths) / len(documents) if documents else 0.0) or 1.0
        # Each word's documents and the length-normalised weight of its count in each, computed
        # once: a search then touches only the documents that have one of its words.
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for i, (doc, length) in enumerate(zip(documents, lengths, strict=True)):
            norm = k1 * (1.0 - b + b * length / avgdl)
            for word, tf in doc.items():
                if tf > 0:
                    self._postings.setdefault(word, []).append((i, tf * (k1 + 1.0) / (tf + norm)))
        self._weights = {word: self.idf(word) for word in self._postings}

    def idf(self, word: str) -> float:
        found = len(self._postings.get(word, ()))
        return math.log(1.0 + (self._n - found + 0.5) / (found + 0.5))

    def scores(self, query: Iterable[str]) -> list[float]:
        """Each document's score for *query*'s words, in the documents' order."""
        out = [0.0] * self._n
        for word in dict.fromkeys(query):  # a word said twice counts once
            postings = self._postings.get(word)
            if postings:
                idf = self._weights[word]
                for i, weight in postings:
                    out[i] += idf * weight
        return out


class Documents:
    """Tools' word counts and the index over them, kept between searches while the definitions
    are unchanged (the catalogue is read live at each search; tokenising it and indexing it again
    each time is the cost saved)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, Any, Any], Counter[str]] = {}
        self._last: tuple[list[tuple[str, Any, Any]], BM25] | None = None

    def index(self, tools: Sequence[dict[str, Any]]) -> BM25:
        """The index of *tools*: the last one if the catalogue is as it was."""
        keys = [(str(tool.get("name", "")), tool.get("title"), tool.get("description")) for tool in tools]
        if self._last is not None and self._last[0] == keys:
            return self._last[1]
        docs: list[Counter[str]] = []
        for key, tool in zip(keys, tools, strict=True):
            found = self._known.get(key)
            if found is None:
                found = self._known[key] = _document(tool)
            docs.append(found)
        if len(self._known) > 2 * len(keys) + 64:  # removed and changed tools: forget them
            seen = set(keys)
            self._known = {key: value for key, value in self._known.items() if key in seen}
        index = BM25(docs)
        self._last = (keys, index)
        return index


def rank(
    tools: Sequence[dict[str, Any]],
    query: str,
    limit: int | None = None,
    *,
    documents: Documents | None = None,
) -> list[dict[str, Any]]:
    """The *tools* (wire definitions) that match *query*, best first, at most *limit*.

    A tool named exactly *query* (ignoring case and surrounding spaces) comes first; the others
    by BM25 score, ties in the order given; tools matching no word are left out.
    """
    scores = (documents or Documents()).index(tools).scores(tokenize(query))
    wanted = query.strip()
    exact = [i for i, tool in enumerate(tools) if str(tool.get("name", "")).lower() == wanted.lower()]
    exact.sort(key=lambda i: tools[i].get("name") != wanted)  # the same case first
    order = exact + sorted(
        (i for i, score in enumerate(scores) if score > 0.0 and i not in exact),
        key=lambda i: -scores[i],  # sorted() is stable: equal scores keep the catalogue's order
    )
    return [tools[i] for i in order[:limit]]
