"""What the tests of a person's hold (``interrupt_chat.workers.lane``, decision 0037) read of the gate."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from interrupt_chat.workers import lane

__all__ = ["holds", "this_gate"]


def this_gate() -> lane._Gate:
    """This loop's gate, which the test's holds used (other tests' loops keep their own)."""
    [gate] = [g for g in lane._gates.values() if g.loop is asyncio.get_running_loop()]
    return gate


def holds(monkeypatch: pytest.MonkeyPatch, had: Callable[[], int], key: str | None = None) -> list[tuple[str, int]]:
    """Each hold's open and close from now on, with the resumes the agent had by then (``had()``).

    ``key``: only the holds of that key (a tab's token); otherwise every hold on the gate.
    """
    events: list[tuple[str, int]] = []
    if key is None:
        opened, closed = lane._Gate.opened, lane._Gate.closed
        monkeypatch.setattr(lane._Gate, "opened", lambda gate: (events.append(("open", had())), opened(gate))[1])
        monkeypatch.setattr(lane._Gate, "closed", lambda gate: (events.append(("close", had())), closed(gate))[1])
        return events
    made, close = lane.Hold.__init__, lane.Hold.close

    def making(hold: lane.Hold, *args, **kwargs) -> None:
        made(hold, *args, **kwargs)
        if hold.key == key and hold.open:
            events.append(("open", had()))

    def closing(hold: lane.Hold) -> None:
        if hold.key == key and hold.open:
            events.append(("close", had()))
        close(hold)

    monkeypatch.setattr(lane.Hold, "__init__", making)
    monkeypatch.setattr(lane.Hold, "close", closing)
    return events
