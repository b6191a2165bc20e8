"""Tiny command line shared by the example servers: ``--host`` (default 127.0.0.1) and ``--port``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def serve(app: Any, *, default_port: int, description: str, argv: Sequence[str] | None = None) -> None:
    """Parse ``--host/--port`` and run ``app`` with uvicorn (blocking)."""
    import uvicorn

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=default_port)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
