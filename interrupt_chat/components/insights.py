"""``insights(state)``: the decisions' charts, drawn by Reflex's own ``rx.recharts`` (contracts §6.5).

``insights-period`` (a native select: 24h, 7d, 30d), ``insights-summary`` (its figures as
attributes) and one ``insights-chart`` per ``data-metric``: ``time-to-decide`` (p50 / p95 per hour
or day), ``waiting`` (requests waiting now, by age), ``outcomes`` (by a person, a rule or otherwise)
and ``by-tool``.
"""

from __future__ import annotations

from typing import Any, cast

import reflex as rx

from ..approvals.insights import InsightsState
from ..assembly.state import ChatState
from .chat import STYLESHEET

__all__ = ["insights"]

S = InsightsState
_PERIODS = (("24h", "Last 24 hours"), ("7d", "Last 7 days"), ("30d", "Last 30 days"))
_COLORS = {"p50": "var(--accent-9)", "p95": "var(--amber-9)", "person": "var(--accent-9)", "rule": "var(--green-9)",
           "other": "var(--gray-8)", "approved": "var(--green-9)", "rejected": "var(--red-9)",
           "requests": "var(--accent-9)"}


def _period() -> rx.Component:
    return rx.hstack(
        rx.el.label("Period", html_for="ic-insights-period", class_name="ic-insights-label"),
        rx.el.select(*[rx.el.option(label, value=value) for value, label in _PERIODS],
                     id="ic-insights-period", value=S.insights_period, on_change=S.choose_period,
                     class_name="ic-insights-select", custom_attrs={"data-testid": "insights-period"}),
        rx.cond(S.insights_everyone, rx.badge("Everyone's requests", variant="soft", high_contrast=True),
                rx.badge("Requests you asked or decided", variant="soft", color_scheme="gray", high_contrast=True)),
        align="center", spacing="3", wrap="wrap",
    )


def _figure(label: str, value: Any) -> rx.Component:
    return rx.vstack(rx.text(label, size="1", color_scheme="gray", high_contrast=True),
                     rx.text(value, size="5", weight="bold"), spacing="0", class_name="ic-insights-figure")


def _seconds(ms: Any) -> Any:
    return rx.cond(ms >= 1000, (ms / 1000).to(int).to(str) + " s", ms.to(str) + " ms")


def _summary() -> rx.Component:
    return rx.cond(
        S.insights_loaded,
        rx.hstack(
            _figure("Decided", S.insights_count),
            _figure("Time to decide, median", rx.cond(S.insights_count > 0, _seconds(S.insights_p50_ms), "–")),
            _figure("95th percentile", rx.cond(S.insights_count > 0, _seconds(S.insights_p95_ms), "–")),
            _figure("Expired", S.insights_expired_rate),
            spacing="6", wrap="wrap", class_name="ic-insights-summary",
            custom_attrs={"data-testid": "insights-summary", "data-period": S.insights_period,
                          "data-count": S.insights_count, "data-p50-ms": S.insights_p50_ms,
                          "data-p95-ms": S.insights_p95_ms, "data-expired-rate": S.insights_expired_rate},
        ),
        rx.hstack(rx.spinner(size="1"), rx.text("Reading the audit…", size="2"), align="center",
                  custom_attrs={"data-testid": "insights-loading", "role": "status", "aria-busy": "true"}),
    )


def _chart(metric: str, title: str, chart: rx.Component, empty: Any) -> rx.Component:
    return rx.card(
        rx.heading(title, size="3", as_="h2"),
        rx.cond(empty, rx.text("Nothing in this period.", size="2", color_scheme="gray", high_contrast=True), chart),
        width="100%", class_name="ic-insights-chart",
        custom_attrs={"data-testid": "insights-chart", "data-metric": metric},
    )


def _bars(data: Any, x: str, keys: tuple[str, ...], stacked: bool = True) -> rx.Component:
    return rx.recharts.bar_chart(
        rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
        rx.recharts.x_axis(data_key=x), rx.recharts.y_axis(allow_decimals=False),
        rx.recharts.graphing_tooltip(), rx.recharts.legend(),
        *[rx.recharts.bar(data_key=key, fill=_COLORS[key], stack_id="a" if stacked else None,
                          is_animation_active=False) for key in keys],
        data=data, width="100%", height=260,
    )


def _time_to_decide() -> rx.Component:
    return rx.recharts.line_chart(
        rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
        rx.recharts.x_axis(data_key="bucket"), rx.recharts.y_axis(unit=" s"),
        rx.recharts.graphing_tooltip(), rx.recharts.legend(),
        rx.recharts.line(data_key="p50", name="median", stroke=_COLORS["p50"], is_animation_active=False),
        rx.recharts.line(data_key="p95", name="95th percentile", stroke=_COLORS["p95"], is_animation_active=False),
        data=S.time_to_decide, width="100%", height=260,
    )


def insights(state: type[ChatState] | Any) -> rx.Component:
    """The insights of the chat's person (everyone's for the app's admin): period, summary, four charts.

    ``state``: the chat (an ``ic.Chat`` or its state class); the figures are read on mount.
    """
    chat = cast("type[ChatState]", state if isinstance(state, type) else state.state)
    return rx.vstack(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        _period(),
        rx.cond(S.insights_error != "", rx.callout(S.insights_error, icon="triangle_alert", color_scheme="red",
                                                   size="1", custom_attrs={"role": "alert"})),
        _summary(),
        rx.grid(
            _chart("time-to-decide", "Time to decide (seconds)", _time_to_decide(), S.time_to_decide.length() == 0),
            _chart("waiting", "Waiting now, by age", _bars(S.waiting, "age", ("requests",)),
                   S.waiting.length() == 0),
            _chart("outcomes", "Outcomes", _bars(S.outcomes, "outcome", ("person", "rule", "other")),
                   S.insights_count == 0),
            _chart("by-tool", "By tool", _bars(S.by_tool, "tool", ("approved", "rejected", "other")),
                   S.by_tool.length() == 0),
            columns=rx.breakpoints(initial="1", md="2"), spacing="4", width="100%",
        ),
        spacing="4", width="100%", class_name="ic-insights",
        on_mount=S.load_insights(chat.get_full_name()),
    )
