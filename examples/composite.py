"""One server made of two others: the weather server mounted in this process, and the notes server
reached through a proxy, as a child process over stdio.

Clients see one server. Its tools:

- ``current_weather(city)``: the weather server's ``get_weather``, renamed, re-described, and its
  ``location`` argument listed as ``city`` (a transform: the weather server is not changed);
- ``weather__get_weather_data`` and ``weather__forecast``: the weather server's other tools, under
  its namespace (``namespace__name``, as a gateway names them);
- ``notes__create_notebook``, ``notes__add_note``, ... : the notes server's tools, and its prompt
  ``notes__summarize``; its resources keep their ``notes://`` URIs.

The notes server starts when this one starts serving (the proxy's lifespan runs with this server's)
and stops with it; what it says while working (progress, logs) and what it asks reach this server's
client. Any server can be a part: a command line, a URL, a host config's ``mcpServers``.

Run it with ``python examples/composite.py`` (stdio), ``mcpkit tools examples/composite.py``, or
``mcpkit run examples/composite.py --transport http --port 8000``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from weather import server as weather  # examples/weather.py: this folder is on sys.path when run

from mcpkit import Arg, Server

HERE = Path(__file__).resolve().parent

server = Server(
    "composite",
    "1.0.0",
    instructions="Weather for cities, and notebooks of notes: create a notebook first and keep its id.",
)

# In this process: the weather server's own handlers and middleware answer, under "weather__".
server.mount(weather, namespace="weather")

# A child process over stdio, mirrored: this interpreter runs `mcpkit run examples/notes.py`.
notes = Server.proxy([sys.executable, "-m", "mcpkit", "run", str(HERE / "notes.py")], name="notes")
server.mount(notes, namespace="notes")

# A tool shown the way this server's users expect it; calls are mapped back to the original.
server.transform_tool(
    "weather__get_weather",
    name="current_weather",
    description="The weather in a city right now: temperature, conditions and humidity.",
    arguments={"location": Arg(name="city", description="The city's name")},
)

if __name__ == "__main__":
    server.run()
