"""Every browser test fails on a page error, or a console error from the app's components or React (issue 22).

An autouse fixture wraps ``Browser.new_context``, so every page of every context a test opens
(pytest-playwright's ``page`` as well as the tabs and browsers a test makes itself) is watched.
Network noise that a test causes on purpose (a backend it stops, an agent it kills, a request it
makes fail) is not a component's error and is left out: see ``NETWORK``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Error

#: Console errors that come from the network, not from a component: a stopped backend's socket,
#: a refused or aborted request (tests stop backends and agents on purpose).
NETWORK = re.compile(r"Failed to load resource|WebSocket connection to|net::ERR_|websocket error|"
                     r"Error: (?:xhr poll|websocket|timeout)|TransportError|socket\.io", re.I)


@dataclass
class Seen:
    """What the pages of one test logged."""

    errors: list[str] = field(default_factory=list)

    def watch(self, context: BrowserContext) -> None:
        context.on("console", self._console)
        context.on("weberror", lambda error: self.errors.append(f"pageerror: {error.error}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not NETWORK.search(message.text):
            self.errors.append(f"console.error: {message.text[:500]}")


@pytest.fixture(autouse=True)
def browser_errors(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Seen]:
    """Fail the test when one of its pages logs an error (``@pytest.mark.allow_console_errors`` opts out)."""
    seen = Seen()
    original = Browser.new_context

    def new_context(self: Browser, *args: Any, **kwargs: Any) -> BrowserContext:
        context = original(self, *args, **kwargs)
        seen.watch(context)
        return context

    monkeypatch.setattr(Browser, "new_context", new_context)
    yield seen
    allowed = request.node.get_closest_marker("allow_console_errors")
    if seen.errors and allowed is None:
        pytest.fail("the page logged errors:\n" + "\n".join(dict.fromkeys(seen.errors)), pytrace=False)


__all__ = ["NETWORK", "Error", "Seen", "browser_errors"]
