"""Which keys of a JSON object hold secrets, by their names: the one rule of the host's audit log
(:mod:`mcpkit.host.audit`) and of the ``RedactArguments`` middleware (:mod:`mcpkit.middleware`).

A key is secret when its :func:`normalised` form contains one of :data:`DEFAULT_REDACT` (or an
added word), or when one of its :func:`words_of` is one of :data:`DEFAULT_REDACT_WORDS`. An added
entry ``!name`` narrows instead: keys whose normalised form is ``name``'s are shown. The defaults
cannot be removed. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

__all__ = ["DEFAULT_REDACT", "DEFAULT_REDACT_WORDS", "SecretKeys", "normalised", "words_of"]

#: Words that make a key secret wherever they appear in it, once it is normalised (case folded,
#: everything but letters and digits dropped): ``accessToken``, ``X-Auth-Token``, ``client_secret``,
#: ``PASSWD``, ``Set-Cookie``.
DEFAULT_REDACT: Final = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "cookie",
    "credential",
    "bearer",
    "apikey",
    "privatekey",
)
#: Words that make a key secret only as a whole word of it (split at ``-``, ``_``, spaces, dots and
#: camelCase): ``api_key``, ``X-Api-Key``, ``privateKey``, ``signing.keys``, ``basic_auth``; not
#: ``keyboard``, ``monkey``, ``keywords`` or ``author``.
DEFAULT_REDACT_WORDS: Final = ("key", "keys", "auth")

# The words of a name: a run of capitals not followed by a lower-case letter (the API of APIKey), a
# capitalised or lower-case word, or digits. Whatever else is between them (- _ . space) separates.
_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def normalised(name: str) -> str:
    """*name* compatibility-normalised and case folded, with everything but letters and digits
    dropped: ``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are all ``xapikey``."""
    return "".join(c for c in unicodedata.normalize("NFKC", name).casefold() if c.isalnum())


def words_of(name: str) -> list[str]:
    """The words of *name* in lower case, split at separators and camelCase (``XApiKey``: x, api, key)."""
    return [word.lower() for word in _WORD.findall(unicodedata.normalize("NFKC", name))]


class SecretKeys:
    """The rule (see the module) with *extra* words added, or shown with ``!name``."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        words, shown = set(DEFAULT_REDACT), set()
        for entry in extra:
            if entry.startswith("!"):
                shown.add(normalised(entry[1:]))
            else:
                words.add(normalised(entry))
        words.discard("")  # an entry of separators only would otherwise match every key
        self.words = frozenset(words)
        self.whole_words = frozenset(DEFAULT_REDACT_WORDS)
        self.shown = frozenset(shown - {""})

    def secret(self, key: str) -> bool:
        """Whether the value under *key* is a secret."""
        name = normalised(key)
        if name in self.shown:
            return False
        return any(word in name for word in self.words) or not self.whole_words.isdisjoint(words_of(key))
