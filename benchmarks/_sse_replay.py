"""A loopback AG-UI server that replays recorded runs as SSE (``core_scaling`` section 4), in its own process.

``python -m benchmarks._sse_replay <runs.json> <port>``: ``runs.json`` is the driver's input file
(``{"runs": [{"user": …, "events": [wire dicts]}, …]}``). A POST whose ``RunAgentInput`` holds n user
messages gets run n-1's events, each as a ``data:`` line, from bytes built once at start (so the server's
own cost per run is a count over the request body). Binds 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

USER = re.compile(rb'"role"\s*:\s*"user"')


def app_for(path: str) -> Starlette:
    """The app serving the runs recorded in ``path``."""
    runs = json.loads(Path(path).read_text(encoding="utf-8"))["runs"]
    bodies = ["".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in run["events"]).encode()
              for run in runs]

    async def run(request: Request) -> Response:
        index = len(USER.findall(await request.body())) - 1
        return Response(bodies[index], media_type="text/event-stream")

    return Starlette(routes=[Route("/", run, methods=["POST"])])


if __name__ == "__main__":
    uvicorn.run(app_for(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
