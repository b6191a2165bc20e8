"""A webhook receiver's side of interrupt_chat's notifications: check the signature, drop repeats.

Each POST carries ``X-Interrupt-Chat-Timestamp`` (Unix seconds) and ``X-Interrupt-Chat-Signature:
sha256=<hex>``, the HMAC-SHA256 of ``<timestamp>.<raw body>`` under ``INTERRUPT_CHAT_WEBHOOK_SECRET``.
Delivery is at least once, so a receiver de-duplicates on the notification's ``id``. Standard library
only; call ``receive`` from your web framework's handler with the raw body (tests/unit/test_docs.py runs it).
"""

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

TOLERANCE = 300  # seconds: a request older (or newer) than this is refused, so a captured one cannot be replayed
seen: set[str] = set()  # in a real receiver: a table with a unique key, shared by its workers


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """The signature is the sender's and the timestamp is recent."""
    expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    try:
        recent = abs(time.time() - float(timestamp)) < TOLERANCE
    except ValueError:
        return False
    return recent and hmac.compare_digest(expected, signature)


def receive(secret: str, headers: Mapping[str, str], body: bytes) -> dict[str, Any] | None:
    """The notification of a signed, first delivery; None for a forged, stale or repeated one."""
    timestamp = headers.get("X-Interrupt-Chat-Timestamp", "")
    signature = headers.get("X-Interrupt-Chat-Signature", "")
    if not verify(secret, timestamp, body, signature):
        return None
    notification = json.loads(body)
    if notification["id"] in seen:
        return None
    seen.add(notification["id"])
    return notification  # {"event": "pending" | "decided" | "expired", "decide_url": ..., ...}
