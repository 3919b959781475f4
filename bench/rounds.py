"""The figures the targets are judged on: every server taking its turn in rounds, and paired HTTP windows."""

from __future__ import annotations

import asyncio
import statistics
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import loadgen
from loadgen import HANDSHAKE, MODERN
from measure import http_figures, stdio_figures
from peers import HEADLINE_CLIENTS, HOST, SUBJECT, Peer, Settings


async def take_turns(
    count: int, entrants: Sequence[str], turn: Callable[[str], Awaitable[dict[str, Any]]]
) -> dict[str, dict[str, list[float]]]:
    """*count* rounds in which every entrant takes its *turn*, the order rotating from round to
    round; the figures (numbers) each entrant's turns returned, round by round."""
    rounds: dict[str, dict[str, list[float]]] = {entrant: {} for entrant in entrants}
    for index in range(count):
        for entrant in loadgen.in_turn(entrants, index):
            for key, value in (await turn(entrant)).items():
                if isinstance(value, int | float):
                    rounds[entrant].setdefault(key, []).append(value)
    return rounds


def medians(rounds: dict[str, list[float]]) -> dict[str, Any]:
    """Each figure's median, and every round's figures under ``rounds``."""
    return {**{key: statistics.median(values) for key, values in rounds.items()}, "rounds": rounds}


async def side_by_side(peers: Sequence[Peer], s: Settings, log: Callable[[str], None]) -> None:
    """The figures the targets are judged on, in ``s.rounds`` rounds (:func:`take_turns`): every
    server, kept running from its own steps, takes its turn at stdio (one call at a time, and 64 in
    flight; the ``def`` tool too where there is one) and at HTTP with 8 clients in each era it
    speaks. Each figure is the median of its rounds (each round's in ``results["rounds"]``).

    Measured one server after another, minutes apart, two servers' figures met different moments of
    a shared VM: the same code read 8,062 and 10,260 calls/s in two runs, and the ratios between
    servers moved with it. Taking turns, every server meets the same moments."""
    live = {p.key: p for p in peers if p.stdio_server is not None or p.http_port is not None}
    t0 = time.perf_counter()

    async def turn(key: str) -> dict[str, Any]:
        peer = live[key]
        figures: dict[str, Any] = {}
        try:
            await asyncio.wait_for(one_turn(peer, s, figures), 300)
        except Exception as exc:  # what was measured before it failed still counts
            peer.errors.append(f"rounds: {type(exc).__name__}: {exc}")
            log(f"{peer.key}: a round failed:\n{traceback.format_exc()}")
        return figures

    rounds = await take_turns(s.rounds, list(live), turn)
    log(f"{s.rounds} rounds: {time.perf_counter() - t0:.1f} s")
    for key, peer in live.items():
        peer.results.update(medians(rounds[key]))


async def one_turn(peer: Peer, s: Settings, figures: dict[str, Any]) -> None:
    if peer.stdio_server is not None:
        peer.stdio_calls += await stdio_figures(figures, peer.stdio_server, s, "echo", "")
        if peer.def_tool is not None:
            peer.stdio_calls += await stdio_figures(figures, peer.stdio_server, s, peer.def_tool, "def_")
    if peer.http_port is not None and peer.http_pid is not None:
        # The eras take turns too: measured always in one order, the second would always meet
        # what the first left (and the moments after it), and their ratio is a target.
        eras = peer.http_eras if peer.turns % 2 == 0 else peer.http_eras[::-1]
        for era in eras:
            await http_figures(figures, peer.http_pid, peer.http_port, era, HEADLINE_CLIENTS, s.http_seconds)
    peer.turns += 1


async def paired_http(peers: Sequence[Peer], s: Settings) -> dict[str, Any]:
    """The three HTTP targets that compare two figures of the same kind (mcpkit against the raw
    ceiling in each era, and mcpkit's 2026-07-28 against its handshake era), in ``s.pairs`` paired
    windows: in each, both servers in both eras (8 clients, ``s.pair_seconds`` each), one window
    right after another, and each ratio taken within the pair; each target is the median of its
    pairs' ratios (every pair's in ``pairs``).

    In the rounds, the two figures of a ratio are a whole turn of the other servers apart (half a
    minute), and on a shared VM a server's rate moves by a fifth and more in that time: the ceiling
    read 23,515 and 29,696 calls/s in two rounds of one run. Side by side within seconds, the ratio
    is what the two servers cost, not which moments they met. Who goes first alternates, and so does
    the order of the eras."""
    live = {p.key: p for p in peers if p.http_port is not None and p.http_pid is not None}
    raw, mcpkit = live.get("raw"), live.get(SUBJECT)
    if raw is None or mcpkit is None or MODERN not in raw.http_eras or MODERN not in mcpkit.http_eras:
        return {}
    ratios: dict[str, list[float]] = {
        f"{HANDSHAKE}_over_raw": [],
        f"{MODERN}_over_raw": [],
        "modern_over_handshake": [],
        "raw_modern_over_handshake": [],  # what the eras' messages cost the ceiling itself
    }
    for index in range(s.pairs):
        eras = (HANDSHAKE, MODERN) if index % 2 == 0 else (MODERN, HANDSHAKE)
        order = (raw, mcpkit) if index // 2 % 2 == 0 else (mcpkit, raw)
        rate: dict[tuple[str, str], float] = {}
        for era in eras:
            for peer in order:
                assert peer.http_port is not None and peer.http_pid is not None
                figures = await loadgen.http_figures(
                    HOST, peer.http_port, era, HEADLINE_CLIENTS, s.pair_seconds, [peer.http_pid]
                )
                rate[peer.key, era] = figures["per_s"]
        for era in (HANDSHAKE, MODERN):
            ratios[f"{era}_over_raw"].append(rate[SUBJECT, era] / rate["raw", era])
        ratios["modern_over_handshake"].append(rate[SUBJECT, MODERN] / rate[SUBJECT, HANDSHAKE])
        ratios["raw_modern_over_handshake"].append(rate["raw", MODERN] / rate["raw", HANDSHAKE])
    return {name: {"median": statistics.median(values), "pairs": values} for name, values in ratios.items()}
