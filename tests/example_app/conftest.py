"""The example app's browser test: real Chromium, as in tests/e2e (its launch arguments and error watch)."""

import signal

from tests.browser_errors import browser_errors  # noqa: F401 - an autouse fixture
from tests.e2e.conftest import browser_type_launch_args  # noqa: F401 - a fixture


def pytest_configure() -> None:
    """Ctrl-C's handler back: ``scripts/test.sh`` runs this suite in the background, where bash starts it with
    SIGINT ignored, and its exit trap sends SIGINT so that the fixtures stop the app they started."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
