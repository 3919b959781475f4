"""RedactArguments: the middleware it wraps sees secret arguments as ``"[redacted]"``.

Logging and audit middleware record a call's arguments, and some arguments are secrets (an API
key, a password). ``RedactArguments(inner)`` runs *inner* (any middleware: :class:`Logging`, one's
own audit) with a copy of the call whose ``arguments`` have the value of every secret key replaced,
at any depth, in objects inside lists too. When *inner* passes the call on, the real values are put
back: the middleware after it and the tool get them. So redaction is about what is *recorded*, and
never changes what runs::

    server.add_middleware(RedactArguments(Logging(arguments=True)))

A key is secret by its name, compared normalised (case folded, everything but letters and digits
dropped: ``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are one name) as the host's audit log
does: its normalised form contains ``token``, ``secret``, ``password``, ``passwd``, ``passphrase``,
``authorization``, ``cookie``, ``credential``, ``bearer``, ``apikey`` or ``privatekey``, or one of
its words is ``key``, ``keys`` or ``auth`` (``api_key`` and ``privateKey``, not ``keyboard`` or
``monkey``). *keys* adds names; ``!name`` shows a key the defaults would hide (``!sort_key``).

Where *inner* changes the arguments it passes on, a value it left ``"[redacted]"`` under a secret
key is the real one again; a value it changed stays changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .._middleware import Call, CallNext, Middleware
from .._secrets import SecretKeys

__all__ = ["REDACTED", "RedactArguments"]

REDACTED: Final = "[redacted]"


class RedactArguments:
    """Run *inner* with secret argument values replaced; the rest of the chain gets the real ones.

    Args:
        inner: the middleware that must not see secrets.
        keys: more secret key names (normalised as above), or ``!name`` to show one.
        replacement: what stands in for a secret value.

    Example::

        >>> from mcpkit import Server
        >>> from mcpkit.middleware import Logging, RedactArguments
        >>> server = Server("demo")
        >>> server.add_middleware(RedactArguments(Logging(arguments=True), keys=["pin"]))
    """

    __slots__ = ("_cache", "_rule", "inner", "replacement")

    def __init__(self, inner: Middleware, *, keys: Iterable[str] = (), replacement: Any = REDACTED) -> None:
        if isinstance(keys, str):
            raise TypeError("RedactArguments: keys is a list of names, not one string")
        self._rule = SecretKeys(keys)  # the host's audit log's rule (mcpkit._secrets)
        self.inner = inner
        self.replacement = replacement
        self._cache: dict[str, bool] = {}  # the key names of a server's tools are few

    def secret(self, key: str) -> bool:
        """Whether the value under *key* is hidden."""
        found = self._cache.get(key)
        if found is None:
            found = self._rule.secret(key)
            if len(self._cache) < 10_000:
                self._cache[key] = found
        return found

    def redact(self, value: Any) -> Any:
        """*value* with the value of every secret key replaced (a copy where anything is)."""
        if isinstance(value, dict):
            return {
                k: self.replacement if isinstance(k, str) and self.secret(k) else self.redact(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.redact(v) for v in value]
        return value

    def _restore(self, passed: Any, real: Any) -> Any:
        # What *inner* passed on, with what it left redacted put back from *real*.
        if isinstance(passed, dict) and isinstance(real, dict):
            return {
                k: real[k]
                if k in real and isinstance(k, str) and self.secret(k) and v == self.replacement
                else self._restore(v, real.get(k))
                for k, v in passed.items()
            }
        if isinstance(passed, list) and isinstance(real, list) and len(passed) == len(real):
            return [self._restore(p, r) for p, r in zip(passed, real, strict=True)]
        return passed

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        arguments = call.params.get("arguments")
        if not isinstance(arguments, dict):
            return await self.inner(call, call_next)
        shown_params = {**call.params, "arguments": self.redact(arguments)}
        shown = Call(call.method, shown_params, call.context)

        async def go_on(passed: Call) -> Any:
            if passed is shown:  # passed on as it came: the real call goes on
                return await call_next(call)
            if passed.params is shown_params:
                return await call_next(Call(passed.method, call.params, passed.context))
            passed_arguments = passed.params.get("arguments")
            params = {**passed.params, "arguments": self._restore(passed_arguments, arguments)}
            return await call_next(Call(passed.method, params, passed.context))

        return await self.inner(shown, go_on)
