"""The client: connect to a server, learn which revision it speaks, list and call its tools.

::

    async with Client("python examples/weather.py") as client:
        for tool in await client.list_tools():
            print(tool.name)
        result = await client.call_tool("get_weather", {"location": "Paris"})

One job per module, each importing only those after it in this list:

* :mod:`._client`: :class:`Client`, the protocol's calls (tools, resources, prompts, tasks...);
* :mod:`.skill_calls`: the skills extension's calls, each file checked by :mod:`mcpkit.skills`;
* :mod:`.core`: the connection and the one request path every call takes;
* :mod:`.connect`: opening the transport and agreeing on a revision: the ``server/discover`` probe
  (2026-07-28) or the ``initialize`` handshake, forced revisions, the HTTP+SSE fallback;
* :mod:`.exchange`: waiting for an answer (timeouts that progress restarts, cancellation), the
  ``input_required`` rounds, following tasks, pages;
* :mod:`.callbacks`: answering the server's sampling, elicitation and roots requests;
* :mod:`.streams`: ``listen``, and lost streams of change notifications opened again (the
  application told that changes may have been missed: :data:`MAY_HAVE_MISSED`);
* :mod:`.subscriptions`: :class:`Subscription` and the routing of change notifications to it;
* :mod:`.cache`: results kept while their ``ttlMs`` says they are fresh.

Importing the client loads neither the server side nor an HTTP stack (httpx comes with the first URL).
"""

from ..transports.http.client._reopen import Backoff
from ._client import Client
from .streams import MAY_HAVE_MISSED
from .subscriptions import Subscription

__all__ = ["MAY_HAVE_MISSED", "Backoff", "Client", "Subscription"]
