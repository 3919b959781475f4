"""The HTTP request path as it runs: which modules one POST passes through, and in what order.

``tests/test_layers.py`` reads the imports; this follows one ``tools/call`` POST through the ASGI
app (in process: what is measured is the code's path, not the wire) with ``sys.setprofile`` and
records every call into an mcpkit module, in both eras: a handshake-era session's POST and a
2026-07-28 stateless one. A call made while the server's own API runs (``lowlevel``, ``server/``
and what they call: the handler's work, which is the same over every transport) is left out; the
calls that hand the request to it are counted, as *handoffs*. What is asserted:

- the path enters at most :data:`MAX_FILES` modules of the transport and the layers below it;
- no call on it climbs back up a layer (:data:`tests.test_layers.LAYERS`): a lower module never
  calls into a higher one, except through the server's contract (:class:`mcpkit.kernel.Endpoint`,
  the handoffs) and what the app is handed (``transports.http.server.seams``);
- the request is handed to the server once;
- one node of a fleet takes the same path, with only the fleet's own parts added at those seams.

Run it with ``-s`` to see the path (``pytest tests/test_post_path.py -s``).
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final

import pytest

import mcpkit
from mcpkit import Server
from mcpkit.transports.http.server._asgi import ON_DISCONNECT

from ._asgi import asgi_request
from .test_layers import _layer

PACKAGE: Final = mcpkit.__file__.rsplit("/", 1)[0] + "/"
#: The layer from which a module is the server's API (its handler's work, not the request path).
API_LAYER: Final = 3
#: The most modules of the transport and the layers below it that one POST may enter: what it takes
#: today (the ASGI app's admission, its helpers, routing, the codec, then a session's table, stream
#: and strategy and its peer, or the stateless exchange with the lifecycle and header rules), so
#: that a new detour fails here and must be argued. The aim is 5.
MAX_FILES: Final = 9
#: What the app is handed (``transports.http.server.seams``): the session strategy, called at named
#: points (a lone process's, or a fleet's), and a fleet's guard around each request.
SEAM_MODULES: Final = ("transports.http.server.local", "fleet.*")
#: How the server is handed the request: the Endpoint's start (2026-07-28), a session's peer
#: calling its request handler (the handshake era). Looking up what a tool mirrors into headers is
#: a question to the Endpoint too (``mirrored_parameters``), not a second handoff.
HANDOFFS: Final = ("LowLevelServer.start", "LowLevelServer.connect.<locals>.on_request")
LOOKUPS: Final = ("ToolsAPI.mirrored_parameters",)


def module_of(filename: str) -> str | None:
    if not filename.startswith(PACKAGE):
        return None
    name = filename[len(PACKAGE) : -len(".py")].replace("/", ".")
    return name.removesuffix(".__init__").removesuffix("__init__")


def layer_of(module: str) -> float:
    found = _layer(module)
    if found is None:
        raise AssertionError(f"{module} is in no layer of tests/test_layers.py")
    return found[0]


def is_seam(module: str) -> bool:
    return any(fnmatch.fnmatchcase(module, pattern) for pattern in SEAM_MODULES)


@dataclass
class Path:
    """What one POST's path entered: modules in order of first entry, calls that climbed, handoffs."""

    modules: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # module:function, each move between modules
    climbs: list[str] = field(default_factory=list)
    handoffs: list[str] = field(default_factory=list)

    def render(self) -> str:
        return "\n".join(
            [
                f"{len(self.modules)} modules: {' -> '.join(self.modules)}",
                f"climbs: {self.climbs or 'none'}",
                f"handoffs to the server: {self.handoffs}",
                "steps:",
                *(f"  {step}" for step in self.steps),
            ]
        )


def _nearest_module(frame: FrameType | None) -> str | None:
    while frame is not None:
        module = module_of(frame.f_code.co_filename)
        if module is not None:
            return module
        frame = frame.f_back
    return None


def _in_the_server(frame: FrameType | None) -> bool:
    """Whether *frame* runs for the server's API: one of its callers is a module of that layer."""
    while frame is not None:
        module = module_of(frame.f_code.co_filename)
        if module is not None and layer_of(module) >= API_LAYER:
            return True
        frame = frame.f_back
    return False


def _record(path: Path) -> Any:
    last: list[str | None] = [None]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = module_of(frame.f_code.co_filename)
        if module is None or _in_the_server(frame.f_back):
            return
        caller = _nearest_module(frame.f_back)
        where = f"{module}:{frame.f_code.co_qualname}"
        if layer_of(module) >= API_LAYER:
            if caller is not None:
                path.handoffs.append(f"{caller} -> {where}")
            return
        if module not in path.modules:
            path.modules.append(module)
        if module != last[0]:
            path.steps.append(where)
            last[0] = module
        if caller is not None and layer_of(module) > layer_of(caller) and not is_seam(module):
            path.climbs.append(f"{caller} -> {where}")

    return profile


def _app(fleet: bool) -> Any:
    server = Server("path")

    @server.tool
    def echo(text: str) -> str:
        return text

    if fleet:  # one node of a fleet: its sessions kept in shared state (here in memory)
        from mcpkit.fleet import MemoryState

        return server.http_app(state=MemoryState())
    return server.http_app()


async def _post(app: Any, body: dict[str, Any], headers: dict[str, str]) -> list[dict[str, Any]]:
    return await asgi_request(
        app,
        "POST",
        [(k.encode(), v.encode()) for k, v in headers.items()],
        json.dumps(body).encode(),
        root_path="",
        client=("127.0.0.1", 50000),
        # What mcpkit's own uvicorn protocol offers: a request that waits is told of a disconnect.
        extensions={ON_DISCONNECT: {"register": lambda callback: None}},
    )


HEADERS: Final = {
    "host": "127.0.0.1:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
CALL: Final = {"name": "echo", "arguments": {"text": "hi"}}


async def _traced_call(era: str, fleet: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    app = _app(fleet)
    headers = dict(HEADERS)
    params: dict[str, Any] = dict(CALL)
    if era == "2026-07-28":
        headers |= {"mcp-protocol-version": era, "mcp-method": "tools/call", "mcp-name": "echo"}
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": era,
            "io.modelcontextprotocol/clientInfo": {"name": "path", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    else:
        init = {"protocolVersion": era, "capabilities": {}, "clientInfo": {"name": "path", "version": "1"}}
        sent = await _post(app, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers)
        headers["mcp-session-id"] = dict(sent[0]["headers"])[b"mcp-session-id"].decode()
        headers["mcp-protocol-version"] = era
        await _post(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    for _ in range(3):  # first calls import and cache: the path is the one every later call takes
        await _post(app, request, headers)
    path = Path()
    previous = sys.getprofile()  # a profiler or debugger of the test run's own gets it back
    sys.setprofile(_record(path))
    try:
        sent = await _post(app, request, headers)
    finally:
        sys.setprofile(previous)
    return path, sent


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_one_post_goes_one_way_down(era: str) -> None:
    path, sent = asyncio.run(_traced_call(era))
    print(f"\n{era}:\n{path.render()}")
    answer = json.loads(b"".join(m.get("body", b"") for m in sent))
    assert answer["result"]["content"][0]["text"] == "hi", answer  # the path measured is a real answer
    assert not path.climbs, path.render()
    handed = [h for h in path.handoffs if h.endswith(HANDOFFS)]
    assert len(handed) == 1, path.render()
    assert all(h.endswith(HANDOFFS + LOOKUPS) for h in path.handoffs), path.render()
    assert len(path.modules) <= MAX_FILES, path.render()


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_fleet_node_takes_the_same_path_through_its_seams(era: str) -> None:
    """One node of a fleet (its sessions in shared state) runs the same POST through the same
    modules as a lone process: the fleet adds only its own parts, called through the contracts the
    app is handed (``seams``), never a branch of its own through the path."""
    alone, _ = asyncio.run(_traced_call(era))
    path, sent = asyncio.run(_traced_call(era, fleet=True))
    print(f"\n{era}, one node of a fleet:\n{path.render()}")
    answer = json.loads(b"".join(m.get("body", b"") for m in sent))
    assert answer["result"]["content"][0]["text"] == "hi", answer
    assert not path.climbs, path.render()
    assert len([h for h in path.handoffs if h.endswith(HANDOFFS)]) == 1, path.render()
    assert any(m.startswith("fleet.") for m in path.modules), path.render()  # the fleet is there
    assert [m for m in path.modules if not is_seam(m)] == [m for m in alone.modules if not is_seam(m)]
