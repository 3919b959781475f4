"""A server with a large catalogue behind tool search (for the tests): 300 generated tools, a
mounted child, and a middleware that refuses ``delete_*`` tools however they are called.
Serves stdio, or HTTP on the port given as argv[1]."""

from __future__ import annotations

import sys
from typing import Any

from mcpkit import Server, ToolError
from mcpkit.server import Call, CallNext
from mcpkit.server.tool_search import enable_tool_search

TOPICS = ("invoice", "calendar", "weather", "inventory", "payroll", "shipping")


def build() -> Server:
    server = Server("catalogue")
    for i in range(300):
        topic = TOPICS[i % len(TOPICS)]

        def tool(value: int, i: int = i) -> int:
            return value * 1000 + i

        server.add_tool(
            tool,
            name=f"{topic}_op_{i}",
            description=f"Operation {i} on {topic} records: returns value times 1000 plus {i}.",
        )

    def delete_everything() -> str:
        return "deleted"

    server.add_tool(delete_everything, description="Delete every record there is.")

    child = Server("maps")

    @child.tool
    def geocode(address: str) -> str:
        """Turn a street address into latitude and longitude."""
        return f"{address}: 59.91,10.75"

    server.mount(child, namespace="maps")

    @server.middleware("tools/call")
    async def policy(call: Call, call_next: CallNext) -> Any:
        if str(call.params.get("name", "")).startswith("delete_"):
            raise ToolError(f"{call.params['name']} is refused by policy")
        return await call_next(call)

    enable_tool_search(server, max_results=3, always=["weather_op_2"])
    return server


if __name__ == "__main__":
    if len(sys.argv) > 1:
        build().run("http", port=int(sys.argv[1]))
    else:
        build().run()
