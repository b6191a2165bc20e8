"""``/tool-ui`` (the dojo's backend_tool_rendering): the agent's ``get_weather`` call drawn as a card.

A custom tool renderer (``chat(tool_renderers={"get_weather": weather_card})``). Servers name things their
own way: the place is the argument ``city`` or ``location``, the result's sky ``conditions`` (the dojo's)
or ``forecast`` (the demo agent's), its temperature ``temperature`` or ``tempC``; the card reads either.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

import interrupt_chat as ic

from .chip import scenario_chip
from .urls import dojo_url

__all__ = ["WEATHER", "weather_card", "weather_chat"]


def _either(record: rx.Var, first: str, second: str) -> rx.Var:
    """``record[first]`` when the record has it, else ``record[second]``, as text (null while arguments stream)."""
    return rx.cond(record & record.contains(first), record[first].to(str), record[second].to(str)).to(str)


def weather_card(call: rx.Var) -> rx.Component:
    """``get_weather`` as a card: the place while it runs, then the forecast from the call's result."""
    args, output = call.input.to(dict[str, Any]), call.output.to(dict[str, Any])
    return rx.card(
        rx.hstack(rx.icon("cloud_sun", size=28),
                  rx.vstack(rx.text(_either(args, "city", "location"), weight="bold",
                                    custom_attrs={"data-testid": "weather-city"}),
                            rx.cond(call.output,
                                    rx.text(_either(output, "conditions", "forecast"), ", ",
                                            _either(output, "temperature", "tempC"), " °C",
                                            custom_attrs={"data-testid": "weather-forecast"}),
                                    rx.text("Looking outside…", color_scheme="gray")),
                            spacing="1"),
                  align="center", spacing="3"),
        class_name="ic-weather", custom_attrs={"data-testid": "weather-card"},
    )


WEATHER = ic.Chat(dojo_url("backend_tool_rendering"), tool_renderers={"get_weather": weather_card}, name="tool-ui")


def weather_chat() -> rx.Component:
    """The chat with ``get_weather`` calls drawn by :func:`weather_card`."""
    return WEATHER.view(header=scenario_chip(WEATHER.state, "Ask for the weather", "tools", "tools"))
