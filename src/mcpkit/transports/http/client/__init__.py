"""HTTP, client side: :mod:`.streamable` (Streamable HTTP, both eras) and :mod:`.legacy_sse` (HTTP+SSE).

Bounded reads (:mod:`._bounded`), stream reopening (:mod:`._reopen`) and the asyncio-streams network
backend (:mod:`._asyncio_http`) are theirs. Nothing here imports the server side of HTTP.
"""
