"""A travel agent that asks the client for help: elicitation, sampling and roots.

One tool, written once, works for clients of every era: in the handshake era ``ctx.elicit`` and
``ctx.sample`` are requests to the client; in 2026-07-28 they become multi round-trip
``input_required`` results that the client answers and retries (mcpkit replays the tool from the
top, so everything before a question must be safe to run again, as it is here).

Run it with ``mcpkit run examples/travel.py``.
"""

from __future__ import annotations

from mcpkit import Context, Server, ToolError

server = Server(
    "travel", "1.0.0", instructions="Plans trips; asks the user to confirm and the model for ideas."
)

CONFIRM = {
    "type": "object",
    "properties": {
        "travellers": {"type": "integer", "minimum": 1, "default": 1, "description": "How many people"},
        "budget": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"},
        "confirm": {"type": "boolean", "description": "Book it?"},
    },
    "required": ["confirm"],
}


@server.tool
async def plan_trip(destination: str, ctx: Context) -> str:
    """Plan a trip: the user confirms the details, the model suggests an activity."""
    answer = await ctx.elicit(f"Plan a trip to {destination}?", CONFIRM)
    if answer.action != "accept" or not isinstance(answer.content, dict) or not answer.content.get("confirm"):
        raise ToolError(f"The trip to {destination} was not confirmed ({answer.action}).")
    idea = await ctx.sample(f"Suggest one thing to do in {destination}.", max_tokens=60)
    suggestion = idea.content.get("text", "") if isinstance(idea.content, dict) else ""
    travellers, budget = answer.content.get("travellers", 1), answer.content.get("budget", "medium")
    return f"Trip to {destination} for {travellers} ({budget} budget). Idea: {suggestion}"


@server.tool
async def where_to_save(ctx: Context) -> list[str]:
    """The client's roots, where an itinerary could be saved."""
    return [root.uri for root in await ctx.list_roots()]


if __name__ == "__main__":
    server.run()
