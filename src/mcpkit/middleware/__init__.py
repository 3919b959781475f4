"""Middleware that servers keep rewriting, ready to add: ``server.add_middleware(Timing(...))``.

Each is a small class whose instances are middleware (``async def __call__(call, call_next)``,
see :mod:`mcpkit._middleware`), configured by keyword:

* :class:`Timing`: each request's duration (and outcome) to a callback and/or a logger;
* :class:`Logging`: a log line per request, errors with their kind; arguments only if asked;
* :class:`ErrorMasking`: tool errors and unexpected exceptions become a fixed message, the
  originals logged on the server;
* :class:`ResponseLimit`: a ``tools/call`` result over N bytes becomes a tool error saying so;
* :class:`RedactArguments`: the middleware it wraps sees secret arguments as ``"[redacted]"``,
  the tool still gets them;
* :class:`RateLimit`: a token bucket per caller (per method or tool if asked).

Registration order is the order they run in, outermost first; ``docs/middleware.md`` is the guide.
A plain server imports none of this (``import mcpkit`` does not load the package).
"""

from .limits import ResponseLimit
from .masking import ErrorMasking
from .ratelimit import RateLimit, caller_of
from .redaction import REDACTED, RedactArguments
from .timing import CallRecord, Logging, Timing

__all__ = [
    "REDACTED",
    "CallRecord",
    "ErrorMasking",
    "Logging",
    "RateLimit",
    "RedactArguments",
    "ResponseLimit",
    "Timing",
    "caller_of",
]
