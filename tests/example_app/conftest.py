"""The example app's browser test: real Chromium, as in tests/e2e (its launch arguments and error watch)."""

from tests.browser_errors import browser_errors  # noqa: F401 - an autouse fixture
from tests.e2e.conftest import browser_type_launch_args  # noqa: F401 - a fixture
