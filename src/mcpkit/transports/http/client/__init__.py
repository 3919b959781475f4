"""HTTP, client side: :mod:`.streamable` (Streamable HTTP, both eras) and :mod:`.legacy_sse` (HTTP+SSE).

Their connections (:mod:`._wire`, :mod:`._pool`, :mod:`._requests`), the reading of a POST's answer
(:mod:`._answer`), bounded reads (:mod:`._bounded`, :mod:`._sse`) and stream reopening
(:mod:`._reopen`) are theirs. Nothing here imports the server side of HTTP.
"""
