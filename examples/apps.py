"""An MCP App: a forecast tool whose results a host shows in an interactive HTML view.

Run it with ``mcpkit run examples/apps.py``. A host of the ``io.modelcontextprotocol/ui`` extension
renders ``ui://forecast/view.html`` for ``forecast`` results; the page's buttons call the app-only
tool ``forecast_day`` back through the host (JSON-RPC over ``postMessage``). Every other client
sees an ordinary tool whose text says the forecast in words, and no ``forecast_day``.

The forecasts are made up from the city's name, so that the answers are the same on every run.
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass
from typing import Annotated

from mcpkit import CallToolResult, Context, Server, TextContent, ToolAnnotations

server = Server("forecast", "1.0.0", instructions="Weather forecasts, with a view for hosts that show apps.")

VIEW = "ui://forecast/view.html"
CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "thunderstorms", "snow")


@dataclass
class Forecast:
    city: str
    day: int  # 0: today
    high: float
    low: float
    conditions: str


def _forecast(city: str, day: int) -> Forecast:
    seed = zlib.crc32(f"{city.strip().lower()}/{day}".encode())
    high = round(5 + seed % 250 / 10, 1)
    return Forecast(city, day, high, round(high - 3 - seed % 60 / 10, 1), CONDITIONS[seed % len(CONDITIONS)])


def _answer(data: Forecast, ctx: Context) -> CallToolResult:
    when = "today" if data.day == 0 else f"in {data.day} day{'s' if data.day > 1 else ''}"
    text = f"{data.city} {when}: {data.conditions}, {data.low}°C to {data.high}°C."
    if ctx.supports_ui:
        text += " (Shown in the forecast view.)"
    # The text is for the model and for hosts without apps; the view renders structuredContent.
    return CallToolResult(content=[TextContent(text=text)], structured_content=asdict(data))


@server.tool(ui=VIEW, annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: Annotated[str, "City name"], ctx: Context) -> Annotated[CallToolResult, Forecast]:
    """Today's forecast for a city."""
    return _answer(_forecast(city, 0), ctx)


@server.tool(ui=VIEW, visibility=["app"], annotations=ToolAnnotations(read_only_hint=True))
def forecast_day(
    city: str, day: Annotated[int, "Days from today, 0 to 6"], ctx: Context
) -> Annotated[CallToolResult, Forecast]:
    """The forecast for another day (the view's buttons call it; the model does not see it)."""
    return _answer(_forecast(city, max(0, min(day, 6))), ctx)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Forecast</title>
<style>
  body { font-family: var(--font-sans, system-ui, sans-serif); margin: 0; padding: 16px;
         color: var(--color-text-primary, #1a1a1a); background: var(--color-background-primary, #fff); }
  .city { font-size: 1.3em; font-weight: 600; }
  .temps { font-size: 2em; margin: 8px 0; }
  .when, .status { color: var(--color-text-secondary, #666); }
  button { margin-right: 8px; padding: 4px 12px; }
</style>
</head>
<body>
  <div class="city" id="city">Waiting for a forecast...</div>
  <div class="when" id="when"></div>
  <div class="temps" id="temps"></div>
  <div id="conditions"></div>
  <p>
    <button id="previous" disabled>&larr; Previous day</button>
    <button id="next" disabled>Next day &rarr;</button>
  </p>
  <div class="status" id="status"></div>
<script>
  // JSON-RPC 2.0 with the host over postMessage, as MCP Apps (SEP-1865) define it; no SDK needed.
  let nextId = 1;
  const pending = new Map();
  let shown = null;

  function request(method, params) {
    const id = nextId++;
    window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  function notify(method, params) {
    window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
  }

  function render(data) {
    if (!data || typeof data.city !== "string") return;
    shown = data;
    document.getElementById("city").textContent = data.city;
    document.getElementById("when").textContent = data.day === 0 ? "Today" : "In " + data.day + " day(s)";
    document.getElementById("temps").textContent = data.low + "\\u00b0C \\u2013 " + data.high + "\\u00b0C";
    document.getElementById("conditions").textContent = data.conditions;
    document.getElementById("previous").disabled = data.day <= 0;
    document.getElementById("next").disabled = data.day >= 6;
    notify("ui/notifications/size-changed", {
      width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
    });
  }

  async function showDay(day) {
    document.getElementById("status").textContent = "Loading...";
    try {
      // The app-only tool, called back through the host.
      const result = await request("tools/call", { name: "forecast_day", arguments: { city: shown.city, day } });
      render(result.structuredContent);
      document.getElementById("status").textContent = "";
    } catch (error) {
      document.getElementById("status").textContent = "Error: " + error.message;
    }
  }

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending.has(message.id) && !message.method) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message || "error"));
      else resolve(message.result);
    } else if (message.method === "ui/notifications/tool-result") {
      render(message.params && message.params.structuredContent);
    } else if (message.method === "ui/notifications/tool-input") {
      const city = message.params && message.params.arguments && message.params.arguments.city;
      if (city) document.getElementById("city").textContent = city;
    } else if (message.method === "ui/resource-teardown" && message.id !== undefined) {
      window.parent.postMessage({ jsonrpc: "2.0", id: message.id, result: {} }, "*");
    }
  });

  document.getElementById("previous").addEventListener("click", () => showDay(shown.day - 1));
  document.getElementById("next").addEventListener("click", () => showDay(shown.day + 1));

  request("ui/initialize", {
    appCapabilities: {},
    appInfo: { name: "forecast-view", version: "1.0.0" },
    protocolVersion: "2026-01-26",
  }).then(() => notify("ui/notifications/initialized", {}));
</script>
</body>
</html>
"""

server.ui_resource(
    VIEW, PAGE, title="Forecast view", description="Today's forecast, day by day.", prefers_border=True
)


if __name__ == "__main__":
    server.run()
