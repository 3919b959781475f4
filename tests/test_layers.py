"""The layer contract: which mcpkit module may import which, read from the source with ``ast``.

Every import counts, wherever it is written: at the top, inside a function (a lazy import is still a
dependency, only a later one), and under ``if TYPE_CHECKING:`` (a type a module names is part of
what it knows about). Each module belongs to one layer of :data:`LAYERS` and may import only from
its own layer or lower ones; :data:`FORBIDDEN` adds the rules that layering alone cannot say (two
APIs of one layer that must not know each other); the protocol layer uses no I/O library; and no
two mcpkit modules import each other, directly or round a longer circle.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from .conftest import ROOT

SRC: Final = ROOT / "src"

# (layer, its name, the modules in it as patterns of names below ``mcpkit.``), lowest layer first.
# A module takes the first row that matches it, so ``_transport`` (the contract) is L0.
LAYERS: Final[list[tuple[float, str, tuple[str, ...]]]] = [
    (
        0,
        "protocol",
        (
            "_jsonrpc",
            "_errors",
            "_versions",
            "_methods",
            "_state",
            "_connection",
            "_compat",
            "_mrtr",
            "_headers",
            "_uritemplate",
            "_signature",
            "_signature_*",
            "_pagination",
            "_ratelimit",
            "_yaml",
            "_naming",
            "_secrets",
            "_schema_view",
            "_schema_tree",
            "_schema_words",
            "_visibility",
            "types",
            "_resources",
            "_prompts",
            # The one contract every transport keeps (a Protocol, no I/O): what the runtime above
            # is written against, so it sits below both.
            "_transport",
        ),
    ),
    (
        1,
        "runtime",
        (
            "session",
            "_peer_*",  # session.Peer's parts: its state, outgoing and incoming requests, batches, answers
            "context",
            "tasks",
            "task_records",
            "kernel",
            "lifespan",
            "_middleware",
            "listeners",
            "extension",
            "auth",
            "auth.*",
        ),
    ),
    (2, "transports", ("transports", "transports.*")),
    # Parts with one seam each, above the wire: serving one server from many processes, and
    # OpenTelemetry. Neither the runtime nor a transport imports them: the HTTP app is handed them
    # as objects keeping the contracts it declares (transports.http.server.seams), by the API
    # layer that builds it.
    (2.5, "fleet", ("fleet", "fleet.*")),
    (2.5, "telemetry", ("telemetry",)),
    (2.5, "extensions", ("skills", "skills.*")),
    (3, "APIs", ("lowlevel", "_changes", "_entry", "server", "server.*", "client", "client.*")),
    (3, "APIs", ("middleware", "middleware.*")),  # the built-in middleware, beside the server
    # Servers made of other servers: proxies (a client inside a server), OpenAPI documents, the host
    # (a client per server, listed and routed by a server with one forwarder per server mounted)
    # and the gateway (the host's server, served). It stands on the server and the client.
    (3.75, "composition", ("compose", "compose.*", "host", "host.*", "gateway", "gateway.*")),
    (
        4,
        "entry points",
        ("", "__main__", "cli", "cli.*", "demo", "inspector", "inspector.*"),
    ),
]

# Imports that the layers allow but the design does not: (importer, imported, why).
FORBIDDEN: Final = [
    (
        "transports.http.client.*",
        "transports.http.server",
        "HTTP's client side never imports its server side",
    ),
    (
        "transports.http.client.*",
        "transports.http.server.*",
        "HTTP's client side never imports its server side",
    ),
    (
        "transports.http.server.*",
        "transports.http.client.*",
        "HTTP's server side never imports its client side",
    ),
    ("transports.*", "context", "a transport moves messages; handler context is above it"),
    ("client", "server", "the client and the server never import each other"),
    ("client", "server.*", "the client and the server never import each other"),
    ("client", "lowlevel", "the client never imports the server side"),
    ("client.*", "server", "the client and the server never import each other"),
    ("client.*", "server.*", "the client and the server never import each other"),
    ("client.*", "lowlevel", "the client never imports the server side"),
    ("server", "client", "the client and the server never import each other"),
    ("server", "client.*", "the client and the server never import each other"),
    ("server.*", "client", "the client and the server never import each other"),
    ("server.*", "client.*", "the client and the server never import each other"),
    ("lowlevel", "client", "the server side never imports the client"),
    ("lowlevel", "client.*", "the server side never imports the client"),
    ("skills.verify", "skills.library", "the client's checks need nothing of the server's side"),
]

# What the protocol layer must not import: event loops, sockets, processes, threads, HTTP stacks.
IO_LIBRARIES: Final = frozenset(
    {
        "aiohttp",
        "anyio",
        "asyncio",
        "concurrent",
        "h11",
        "http",
        "httpcore",
        "httptools",
        "httpx",
        "multiprocessing",
        "selectors",
        "signal",
        "socket",
        "ssl",
        "starlette",
        "subprocess",
        "threading",
        "trio",
        "uvicorn",
        "uvloop",
    }
)


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module names, "mcpkit" itself included
    imported: str
    line: int
    where: str  # "", "in a function" or "under TYPE_CHECKING"

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported}"


def _modules() -> dict[str, Path]:
    """Every module and package of mcpkit (namespace packages too), by dotted name."""
    found: dict[str, Path] = {}
    for path in sorted((SRC / "mcpkit").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
        for depth in range(1, len(parts)):  # the folders above it are packages too
            found.setdefault(".".join(parts[:depth]), path.parent)
    return found


MODULES: Final = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, (ast.Name, ast.Attribute)) and ast.unparse(test).endswith("TYPE_CHECKING")


def _imports_of(name: str, path: Path) -> Iterator[Import]:
    """The mcpkit modules that *name* imports, each with where the import is written."""
    if path.is_dir():
        return  # a namespace package: no code
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST, where: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            context = where
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                context = "under TYPE_CHECKING"
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not where:
                context = "in a function"
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "mcpkit":
                        yield Import(name, alias.name, child.lineno, context)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.rsplit(".", child.level - 1)[0] if child.level > 1 else package
                    base = f"{base}.{child.module}" if child.module else base
                else:
                    base = child.module or ""
                if base.split(".")[0] != "mcpkit":
                    continue
                for alias in child.names:
                    submodule = f"{base}.{alias.name}"
                    yield Import(name, submodule if submodule in MODULES else base, child.lineno, context)
            yield from visit(child, context)

    yield from visit(ast.parse(path.read_text(), str(path)), "")


IMPORTS: Final = sorted(
    {i for name, path in MODULES.items() for i in _imports_of(name, path)},
    key=lambda i: (i.importer, i.line, i.imported),
)


def _layer(module: str) -> tuple[float, str] | None:
    relative = module.removeprefix("mcpkit").removeprefix(".")
    for number, label, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(relative, p) for p in patterns):
            return number, label
    return None


def _label(layer: tuple[float, str]) -> str:
    number, label = layer
    return f"L{number:g} {label}"


def _detail(i: Import) -> str:
    return f"  [line {i.line}{', ' + i.where if i.where else ''}]"


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in MODULES if _layer(m) is None)
    assert not unplaced, f"modules missing from the LAYERS table in {__name__}: {', '.join(unplaced)}"
    unknown = sorted(f"{i}{_detail(i)}" for i in IMPORTS if i.imported not in MODULES)
    assert not unknown, "imports of mcpkit modules that do not exist:\n" + "\n".join(unknown)


def test_modules_import_only_from_their_own_or_lower_layers() -> None:
    violations = []
    for i in IMPORTS:
        source, target = _layer(i.importer), _layer(i.imported)
        if source is not None and target is not None and target[0] > source[0]:
            violations.append(f"{i} ({_label(source)} -> {_label(target)}){_detail(i)}")
    assert not violations, (
        f"{len(violations)} imports of a higher layer (each module may import only from its own or "
        "lower layers):\n" + "\n".join(violations)
    )


def test_no_forbidden_imports() -> None:
    violations = []
    for i in IMPORTS:
        importer, imported = (m.removeprefix("mcpkit.") for m in (i.importer, i.imported))
        for source, target, why in FORBIDDEN:
            if fnmatch.fnmatchcase(importer, source) and fnmatch.fnmatchcase(imported, target):
                layers = (
                    f"{_label(_layer(i.importer) or (-1, '?'))} -> {_label(_layer(i.imported) or (-1, '?'))}"
                )
                violations.append(f"{i} ({layers}): {why}{_detail(i)}")
    assert not violations, "forbidden imports:\n" + "\n".join(violations)


def test_the_protocol_layer_uses_no_io_library() -> None:
    violations = []
    for name, path in MODULES.items():
        if _layer(name) != (0, "protocol") or path.is_dir():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            violations += [
                f"{name} -> {root}  [line {node.lineno}]" for root in roots if root in IO_LIBRARIES
            ]
    assert not violations, "the protocol layer (L0) does no I/O, but imports:\n" + "\n".join(violations)


def _cycles() -> list[list[str]]:
    """One circle through each group of modules that import each other (Tarjan's components)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in IMPORTS:
        if i.imported in graph and i.imported != i.importer:
            graph[i.importer].add(i.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_circle(component, graph) for component in sorted(components)]


def _circle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest circle from the component's first module back to itself."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for succ in sorted(graph[node] & members):
            if succ == start:
                return [*paths[node], start]
            if succ not in paths:
                paths[succ] = [*paths[node], succ]
                queue.append(succ)
    raise AssertionError(f"no circle in {component}")


def test_no_import_cycles() -> None:
    cycles = _cycles()
    assert not cycles, "import cycles (TYPE_CHECKING and in-function imports included):\n" + "\n".join(
        "  " + " -> ".join(cycle) for cycle in cycles
    )


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("mcpkit._jsonrpc", 0),
        ("mcpkit._transport", 0),
        ("mcpkit.transports.stdio", 2),
        ("mcpkit.transports.http.server.seams", 2),
        ("mcpkit.fleet.sessions", 2.5),
        ("mcpkit.telemetry", 2.5),
        ("mcpkit", 4),
    ],
)
def test_the_table_places_modules(module: str, layer: float) -> None:
    found = _layer(module)
    assert found is not None and found[0] == layer
