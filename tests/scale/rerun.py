"""``reflex run`` with the app compiled and the frontend built by an earlier start: run as
``python -m tests.scale.rerun run --env prod …`` by ``ScaleApp.start(again=True)``.

A supervisor that starts a crashed app again does not rebuild its site, and nothing here changed since the
first start built it into ``REFLEX_WEB_WORKDIR``. Reflex 0.10's ``run --env prod`` always compiles and builds
(the two worker-kill tests took 72-83 s with that, 37-42 s without); this is that command with those two
steps left out, the rest as it is.
"""

from __future__ import annotations

import sys

from reflex import reflex as cli
from reflex.utils import build


def main() -> int:
    cli._compile_app = lambda **_: None  # (the compiled pages are on disk)
    build.build = lambda: None  # (the production build is on disk: build() would delete it first)
    return cli.cli()


if __name__ == "__main__":
    sys.exit(main())
