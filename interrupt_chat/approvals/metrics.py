"""``GET /metrics``: the approvals' numbers in Prometheus' text format, read from the thread database.

The numbers are counted by the database at scrape time (a collector of our own, in a registry of our
own), so every worker behind one port answers the same totals and a restart loses nothing: no
Prometheus multiprocess mode, no counter kept in a process. A process reads them at most once a
second (:data:`CACHE_SECONDS`), however often it is scraped.

- ``interrupt_chat_pending`` (gauge): the requests waiting now.
- ``interrupt_chat_decisions_total`` (counter; labels ``action`` and ``by``, the audit's words).
- ``interrupt_chat_decision_seconds`` (histogram): from a request surfacing to its decision.
- ``interrupt_chat_runs_active`` (gauge): the runs in flight.

With ``INTERRUPT_CHAT_METRICS_TOKEN`` set, a scrape must send ``Authorization: Bearer <token>`` (else 401).
No label names an owner, an answer or an argument.
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..store import metrics as store_metrics
from ..store.threads_db import ThreadDB
from ..store.types import ThreadDBError
from ..tab import persistence

__all__ = ["CACHE_SECONDS", "METRICS_PATH", "TOKEN_ENV", "DatabaseCollector", "metrics", "metrics_routes", "render"]

METRICS_PATH = "/metrics"
TOKEN_ENV = "INTERRUPT_CHAT_METRICS_TOKEN"
CACHE_SECONDS = 1.0  # a process counts at most once a second, however often it is scraped


class DatabaseCollector(Collector):
    """The four metric families, from :func:`interrupt_chat.store.metrics.read` of one database.

    Args:
        db: the thread database.
        clock: monotonic seconds (the cache's).
    """

    def __init__(self, db: ThreadDB, clock: Callable[[], float] = time.monotonic) -> None:
        """Nothing read yet."""
        self.db, self._clock = db, clock
        self._lock = threading.Lock()
        self._numbers: store_metrics.Numbers | None = None
        self._read_at = 0.0

    def numbers(self) -> store_metrics.Numbers:
        """The numbers, read again when the last read is older than :data:`CACHE_SECONDS` (blocking).

        Raises:
            ThreadDBError: the database failed.
        """
        with self._lock:
            if self._numbers is None or self._clock() - self._read_at >= CACHE_SECONDS:
                self._numbers, self._read_at = store_metrics.read(self.db), self._clock()
            return self._numbers

    def collect(self) -> Iterator[Metric]:
        """The families (Prometheus' ``Collector`` protocol)."""
        n = self.numbers()
        yield GaugeMetricFamily("interrupt_chat_pending", "Requests waiting for a decision now.", value=n.pending)
        decisions = CounterMetricFamily("interrupt_chat_decisions", "Decisions recorded, by action and decider.",
                                        labels=["action", "by"])
        for (action, by), count in sorted(n.decisions.items()):
            decisions.add_metric([action, by], count)
        yield decisions
        buckets = [(_bound(b), c) for b, c in n.waited] + [("+Inf", n.waited_count)]
        yield HistogramMetricFamily("interrupt_chat_decision_seconds",
                                    "Seconds from a request surfacing to its decision.",
                                    buckets=buckets, sum_value=n.waited_sum)
        yield GaugeMetricFamily("interrupt_chat_runs_active", "Agent runs in flight.", value=n.runs_active)


def _bound(seconds: float) -> str:
    return str(float(seconds))  # "0.5", "1.0", … as Prometheus' own histograms write ``le``


def render(db: ThreadDB) -> bytes:
    """The metrics of ``db`` in Prometheus' text format (blocking: run it off the event loop).

    Raises:
        ThreadDBError: the database failed.
    """
    return generate_latest(_registry(db))


_registries: dict[int, tuple[ThreadDB, CollectorRegistry]] = {}
_registries_lock = threading.Lock()


def _registry(db: ThreadDB) -> CollectorRegistry:
    """This process's registry for ``db`` (our own, not Prometheus' default one), made once."""
    with _registries_lock:
        held = _registries.get(id(db))
        if held is None or held[0] is not db:
            registry = CollectorRegistry(auto_describe=False)
            registry.register(DatabaseCollector(db))
            held = _registries[id(db)] = (db, registry)
            while len(_registries) > 4:  # a database closed and opened again (a test's): the oldest goes
                _registries.pop(next(iter(_registries)))
        return held[1]


def _authorized(request: Request) -> bool:
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        return True
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


async def metrics(request: Request) -> Response:
    """``GET /metrics``: 401 without the token (when one is set), 503 while the database is off or down."""
    if not _authorized(request):
        return PlainTextResponse("unauthorized\n", status_code=401, headers={"WWW-Authenticate": "Bearer"})
    db = persistence.database()
    if db is None:
        return PlainTextResponse("no thread database (INTERRUPT_CHAT_DB_URL=off)\n", status_code=503)
    try:
        body = await persistence.db_read(render, db)
    except ThreadDBError:  # logged once per outage (db_read)
        return PlainTextResponse("thread database unavailable\n", status_code=503)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def metrics_routes() -> list[Route]:
    """The Starlette route Prometheus scrapes: ``GET /metrics``, on the backend's port.

    ```python
    from starlette.applications import Starlette

    app = rx.App(api_transformer=Starlette(routes=ic.metrics_routes()))
    ```

    The numbers come from the thread database (every worker answers the same totals); set
    ``INTERRUPT_CHAT_METRICS_TOKEN`` to require ``Authorization: Bearer <token>`` (else 401). The guide
    "Evidence" lists the metrics and queries for them.

    Returns:
        The route, to put in a Starlette app's ``routes``.
    """
    return [Route(METRICS_PATH, metrics, methods=["GET"])]
