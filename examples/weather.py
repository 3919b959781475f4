"""A weather server, like the spec's ``get_weather`` example.

Run it with ``mcpkit run examples/weather.py`` (stdio), or try it with
``mcpkit call examples/weather.py get_weather '{"location": "Paris"}'``.

The forecasts are made up from the city's name, so that the answers are the same on every run.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Annotated, Literal

from mcpkit import Server, ToolAnnotations, header

server = Server("weather", "1.0.0", instructions="Current weather and forecasts for cities.")

CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "thunderstorms", "snow")


@dataclass
class Weather:
    location: str
    temperature: float
    unit: Literal["celsius", "fahrenheit"]
    conditions: str
    humidity: int


def _observe(location: str) -> tuple[float, str, int]:
    seed = zlib.crc32(location.strip().lower().encode())
    return round(-5 + seed % 350 / 10, 1), CONDITIONS[seed % len(CONDITIONS)], 30 + seed % 60


@server.tool(title="Weather Information Provider", annotations=ToolAnnotations(read_only_hint=True))
def get_weather(location: Annotated[str, "City name or zip code"]) -> str:
    """Get current weather information for a location."""
    temperature, conditions, humidity = _observe(location)
    return f"Current weather in {location}:\nTemperature: {temperature}°C\nConditions: {conditions}\nHumidity: {humidity}%"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_weather_data(location: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> Weather:
    """Get current weather as structured data.

    Args:
        location: City name or zip code.
        unit: Temperature unit.
    """
    temperature, conditions, humidity = _observe(location)
    if unit == "fahrenheit":
        temperature = round(temperature * 9 / 5 + 32, 1)
    return Weather(location, temperature, unit, conditions, humidity)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def forecast(
    location: Annotated[str, header("Location")], days: Annotated[int, "Number of days, 1 to 7"] = 3
) -> list[str]:
    """Forecast for the next days, one line per day.

    Over HTTP the location is mirrored into the ``Mcp-Param-Location`` header (``x-mcp-header``), so a
    proxy can route on it without reading the body.
    """
    if not 1 <= days <= 7:
        raise ValueError("days must be between 1 and 7")
    return [
        f"day {day}: {CONDITIONS[(zlib.crc32(location.encode()) + day) % len(CONDITIONS)]}"
        for day in range(1, days + 1)
    ]


if __name__ == "__main__":
    server.run()
