"""Typed arguments as a user meets them: ``mcpkit tools`` shows each tool's compact signature with
its nested fields, the detail view lists them one per line, and ``mcpkit call`` takes dotted keys
(``order.item=pen``) and JSON anywhere. The server (fixtures/typed.py: pydantic, dataclass,
TypedDict, msgspec) runs as a real stdio subprocess and over real HTTP, in both eras; the npm
everything server shows its tools the same way."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import ROOT, free_port, http_server, node_project
from .conftest import run_mcpkit

TYPED = str(Path(__file__).parent / "fixtures" / "typed.py")
EVERYTHING_NPM = ROOT / "tests" / "interop" / "everything"
ERAS = ["2025-11-25", "2026-07-28"]

SIGNATURES = [
    "place_order(order: Order{item: str, qty: int ≥1}, note?: str)  Order something.",
    "tree(root: Node{value: int, children?: list[Node]})  Sum a tree.",
    'resize(size: Size{width: float, height?: float}, unit?: "cm" | "in")  Resize to a size.',
    "ship(to: Address{city: str, street: str}, express?: bool)  Ship to an address.",
    "plot(points: list[Point{x: int, y?: int}], label?: str)  Plot points.",
]


@pytest.fixture(scope="module")
def typed_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", TYPED, "--transport", "http", "--port", str(port)]
    yield from http_server(command, port, 60)


@pytest.mark.parametrize("revision", ERAS)
def test_the_list_shows_typed_signatures(revision: str) -> None:
    listed = run_mcpkit("tools", TYPED, "--protocol-version", revision)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == SIGNATURES


@pytest.mark.parametrize("revision", ERAS)
def test_the_list_over_http(typed_url: str, revision: str) -> None:
    listed = run_mcpkit("tools", typed_url, "--protocol-version", revision)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == SIGNATURES


def test_the_detail_view_lists_nested_fields() -> None:
    shown = run_mcpkit("tools", TYPED, "place_order")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[:7] == [
        "place_order",
        "place_order(order: Order{item: str, qty: int ≥1}, note?: str)",
        "Order something.",
        "arguments:",
        "  order: Order (required)",
        "    item: str (required)",
        "    qty: int ≥1 (required) - how many",
    ]
    assert shown.stdout.splitlines()[7] == "  note: str | None = null"
    points = run_mcpkit("tools", TYPED, "plot").stdout.splitlines()
    assert points[4:8] == [
        "  points: list[Point] (required)",
        "    x: int (required)",
        "    y: int = 0",
        '  label: str = ""',
    ]
    recursive = run_mcpkit("tools", TYPED, "tree").stdout.splitlines()
    assert recursive[4:8] == [
        "  root: Node (required)",
        "    value: int (required)",
        "    children: list[Node] = []",
        "output schema:",
    ]


@pytest.mark.parametrize(
    ("words", "answer"),
    [
        (["place_order", "order.item=pen", "order.qty=2"], {"order": {"item": "pen", "qty": 2}, "note": None}),
        (["place_order", 'order={"item": "ink", "qty": 3}', "note=quick"], {"order": {"item": "ink", "qty": 3}, "note": "quick"}),
        (["place_order", 'order={"item": "ink"}', "order.qty=4"], {"order": {"item": "ink", "qty": 4}, "note": None}),
        (["tree", "root.value=1", 'root.children=[{"value": 2}]'], {"root": {"value": 1, "children": [{"value": 2, "children": []}]}}),
        (["resize", "size.width=2.5", "unit=in"], {"size": {"width": 2.5, "height": 1.0}, "unit": "in"}),
        (["ship", "to.street=1 Main St", "to.city=Oslo", "express=yes"], {"to": {"street": "1 Main St", "city": "Oslo"}, "express": True}),
        (["plot", "points.0.x=1", "points.1.x=2", "points.1.y=3"], {"points": [{"x": 1, "y": 0}, {"x": 2, "y": 3}], "label": ""}),
        (["plot", '{"points": [{"x": 7}]}', "points.0.y=8"], {"points": [{"x": 7, "y": 8}], "label": ""}),
    ],
    ids=["pydantic-dotted", "pydantic-json", "json-then-dotted", "recursive", "dataclass", "typeddict", "msgspec-array", "base-object"],
)  # fmt: skip
@pytest.mark.parametrize("revision", ERAS)
def test_dotted_keys_and_json_reach_the_tool(
    words: list[str], answer: dict[str, object], revision: str
) -> None:
    called = run_mcpkit("call", TYPED, *words, "--protocol-version", revision)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == answer


def test_dotted_keys_over_http(typed_url: str) -> None:
    called = run_mcpkit("call", typed_url, "place_order", "order.item=pen", "order.qty=2")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == {"order": {"item": "pen", "qty": 2}, "note": None}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["place_order", "order.item=pen"], "tool place_order needs order.qty: add order.qty=..."),
        (["place_order", "order.itme=pen", "order.qty=1"], "no field 'itme' on tool place_order (order); did you mean item?"),
        (["place_order", "order.item=pen", "order.qty=two"], "argument order.qty='two': order.qty must be an integer (as JSON)"),
        (["plot", "points.x=1"], "argument points.x: points is a list; use points.0, points.1, ..."),
        (["plot", "points.1.x=1"], "argument points.1.x: set points.0 first"),
        (["ship", "express.fast=1"], "argument express.fast: express is a boolean, it has no fields"),
        (["plot", "points.0.x=1"], "tool plot needs nothing more"),
    ],
    ids=["missing-nested", "typo-nested", "wrong-type", "list-needs-index", "gap", "scalar", "ok"],
)  # fmt: skip
def test_bad_dotted_words_are_refused_before_sending(words: list[str], message: str) -> None:
    called = run_mcpkit("call", TYPED, *words)
    if message.endswith("nothing more"):
        assert called.returncode == 0, called.stderr
        return
    assert (called.returncode, called.stderr) == (2, f"mcpkit: {message}\n")


def test_the_npm_everything_servers_tools() -> None:
    node, entry = node_project(EVERYTHING_NPM, "@modelcontextprotocol/server-everything/dist/index.js")
    target = f"{node} {entry} stdio"
    listed = run_mcpkit("tools", target)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "echo(message: str)  Echoes back the input string" in lines
    assert "get-sum(a: float, b: float)  Returns the sum of two numbers" in lines
    assert any(
        line.startswith('get-annotated-message(messageType: "error" | "success" | "debug"') for line in lines
    )
    assert any(line.startswith("get-resource-links(count?: float ≥1 ≤10)") for line in lines)
    assert not any(": any" in line for line in lines), lines
    summed = run_mcpkit("call", target, "get-sum", "a=2", "b=3.5")
    assert summed.returncode == 0, summed.stderr
    assert "5.5" in summed.stdout
