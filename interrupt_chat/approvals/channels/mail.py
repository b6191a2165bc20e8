"""Mail to the people a request waits for (``INTERRUPT_CHAT_SMTP_URL``, ``INTERRUPT_CHAT_MAIL_FROM``; §6.3).

Each outbox item of channel ``mail`` (queued by :mod:`.reach`, one per recipient and event) becomes one
mail (:func:`compose`: a text and an HTML part) sent with aiosmtplib (:func:`send`, the item's
deliverer). ``smtp://user:pass@host:port`` upgrades with STARTTLS when the server offers it (port 25
by default); ``smtps://`` is TLS from the start (465). The user and password are URL-decoded and
optional. A mail says who asks and in which chat, the tool and its arguments, the message, when it
expires, who it waits for, and the recipient's own Approve and Reject links (``/decide/<token>``: a
GET shows the request, only a click decides) with a link to the app. A request that asks for a
secret gets only "a request waits for you: open the app". Nothing of the asker's identity key
(``_owner``) is ever written.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, parseaddr
from typing import Any
from urllib.parse import unquote, urlsplit

import aiosmtplib

from .reach import DELIVERERS, MAIL_FROM_ENV, SMTP_URL_ENV

__all__ = ["SmtpConfig", "compose", "config", "send"]

log = logging.getLogger(__name__)

SEND_TIMEOUT = 20.0  # seconds for one delivery: connect, TLS, login, send
VALUE_CHARS = 300  # an argument's value is cut there
MAX_ARGS = 30  # arguments listed at most
_SUBJECTS = {"assigned": "Approval needed", "reminder": "Reminder", "escalated": "Escalated"}
_BLANKS = re.compile(r"\s+")
_warned: set[str] = set()  # the malformed configurations already logged (once each)


@dataclass(frozen=True)
class SmtpConfig:
    """Where mail goes: the SMTP server, its login, and the sender.

    Attributes:
        host: the server's host name or address.
        port: its port (default 25 for ``smtp://``, 465 for ``smtps://``).
        tls: TLS from the start (``smtps://``); else STARTTLS when the server offers it.
        username: the login's user, URL-decoded (None: no login).
        password: its password, URL-decoded.
        sender: the ``From`` address (``INTERRUPT_CHAT_MAIL_FROM``).
    """

    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None
    sender: str


def config() -> SmtpConfig | None:
    """The SMTP configuration from the environment; None when mail is off.

    Raises:
        ValueError: the URL or the sender is malformed (the message never shows the password).
    """
    url, sender = os.environ.get(SMTP_URL_ENV, "").strip(), os.environ.get(MAIL_FROM_ENV, "").strip()
    if not url or not sender:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError(f"{SMTP_URL_ENV} is not a URL (smtp://user:pass@host:port or smtps://…)") from None
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError(f"{SMTP_URL_ENV} must be smtp://[user:pass@]host[:port] or smtps://…, "
                         f"not {parts.scheme or 'no'} scheme with host {parts.hostname or 'none'}")
    if "@" not in parseaddr(sender)[1] or "\n" in sender or "\r" in sender:
        raise ValueError(f"{MAIL_FROM_ENV} is not a mail address: {sender!r}")
    tls = parts.scheme == "smtps"
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    return SmtpConfig(parts.hostname, port or (465 if tls else 25), tls, username, password, sender)


def _line(text: Any, limit: int = 200) -> str:
    """One header-safe line: blanks (newlines too) collapsed, cut at ``limit``."""
    said = _BLANKS.sub(" ", str(text or "")).strip()
    return said if len(said) <= limit else said[: limit - 1] + "…"


def _value(value: Any) -> str:
    """An argument's value as read: a string as it is, anything else as JSON; cut at :data:`VALUE_CHARS`."""
    said = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return said if len(said) <= VALUE_CHARS else said[: VALUE_CHARS - 1] + "…"


def _arguments(args: Any) -> list[tuple[str, str]]:
    """The arguments as ``(key, value)`` rows (at most :data:`MAX_ARGS`, then how many more)."""
    if not isinstance(args, dict):
        return []
    rows = [(_line(key, 80), _value(value)) for key, value in list(args.items())[:MAX_ARGS]]
    if len(args) > MAX_ARGS:
        rows.append(("…", f"and {len(args) - MAX_ARGS} more"))
    return rows


def _expiry(expires_at: Any) -> str:
    """When a request expires, in UTC ("" when it does not, or the value does not read as a time)."""
    try:
        when = datetime.fromisoformat(str(expires_at))
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _url(value: Any) -> str:
    """A link of the item when it is an http(s) URL, else ""."""
    url = str(value or "")
    return url if urlsplit(url).scheme in ("http", "https") and not _BLANKS.search(url) else ""


def _subject(body: dict[str, Any]) -> str:
    prefix = _SUBJECTS.get(str(body.get("event") or ""), "Approval needed")
    if body.get("masked"):
        return f"{prefix}: a request waits for you"
    what = _line(body.get("tool") or "a request", 80)
    return f"{prefix}: {what} asked by {_line(body.get('asker') or 'someone', 80)}"


def _facts(body: dict[str, Any]) -> dict[str, Any]:
    """What a mail of an unmasked request says, each part as plain text (escaped when written as HTML)."""
    event, need = str(body.get("event") or ""), _int(body.get("need"))
    title = _line(body.get("title"), 120)
    asks = f"{_line(body.get('asker') or 'Someone', 80)} asks" + (f" in the chat “{title}”" if title else "")
    lead = {"reminder": "This request still waits for you.",
            "escalated": "This request was escalated to you."}.get(event, "A request waits for you.")
    names = ", ".join(_line(n, 80) for n in body.get("assignee_names") or [] if n)
    expiry = _expiry(body.get("expires_at"))
    return {
        "lead": lead, "asks": asks, "tool": _line(body.get("tool"), 120), "args": _arguments(body.get("args")),
        "message": str(body.get("message") or "")[:2000],
        "expires": f"It expires at {expiry}." if expiry else "It does not expire.",
        "waits": f"It waits for: {names}." if names else "",
        "approvals": f"Approvals: {_int(body.get('have'))} of {need}." if need > 1 else "",
        "approve": _url(body.get("approve_url")), "reject": _url(body.get("reject_url")),
        "open": _url(body.get("open_url")),
    }


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _hello(body: dict[str, Any]) -> str:
    name = _line(body.get("person_name"), 80)
    return f"Hello {name}," if name else "Hello,"


def _text(body: dict[str, Any], facts: dict[str, Any] | None) -> str:
    """The text part."""
    hello = _hello(body)
    if facts is None:
        return f"{hello}\n\nA request waits for you: open the app to see it.\n{_url(body.get('open_url'))}\n"
    lines = [hello, "", facts["lead"], "", facts["asks"] + ":"]
    if facts["tool"]:
        lines.append(f"Tool: {facts['tool']}")
    if facts["args"]:
        lines += ["Arguments:", *(f"  {key}: {value}" for key, value in facts["args"])]
    if facts["message"]:
        lines += ["", facts["message"]]
    lines += ["", facts["expires"], *(s for s in (facts["waits"], facts["approvals"]) if s), ""]
    if facts["approve"]:
        lines.append(f"Approve: {facts['approve']}")
    if facts["reject"]:
        lines.append(f"Reject: {facts['reject']}")
    if facts["open"]:
        lines.append(f"Open it in the app: {facts['open']}")
    lines += ["", "A link shows the request first: nothing is decided until you press Approve or Reject there."]
    return "\n".join(lines) + "\n"


def _a(url: str, label: str, style: str = "") -> str:
    said = f' style="{style}"' if style else ""
    return f'<a href="{html.escape(url, quote=True)}"{said}>{html.escape(label)}</a>'


_BUTTON = "display:inline-block;padding:8px 16px;margin-right:8px;border-radius:4px;color:#fff;text-decoration:none;"


def _html(body: dict[str, Any], facts: dict[str, Any] | None) -> str:
    """The HTML part: every value escaped; no image, no script, no style sheet."""
    e = html.escape
    hello = f"<p>{e(_hello(body))}</p>"
    if facts is None:
        link = _url(body.get("open_url"))
        return (f"<html><body>{hello}<p>A request waits for you: "
                f"{_a(link, 'open the app') if link else 'open the app'} to see it.</p></body></html>")
    parts = [hello, f"<p>{e(facts['lead'])}</p>", f"<p>{e(facts['asks'])}:</p>"]
    if facts["tool"]:
        parts.append(f"<p>Tool: <code>{e(facts['tool'])}</code></p>")
    if facts["args"]:
        rows = "".join(f"<li><code>{e(key)}</code>: {e(value)}</li>" for key, value in facts["args"])
        parts.append(f"<p>Arguments:</p><ul>{rows}</ul>")
    if facts["message"]:
        parts.append(f"<blockquote>{e(facts['message'])}</blockquote>")
    parts += [f"<p>{e(s)}</p>" for s in (facts["expires"], facts["waits"], facts["approvals"]) if s]
    buttons = [_a(facts["approve"], "Approve", _BUTTON + "background:#1a7f37;") if facts["approve"] else "",
               _a(facts["reject"], "Reject", _BUTTON + "background:#cf222e;") if facts["reject"] else ""]
    if any(buttons):
        parts.append(f"<p>{''.join(buttons)}</p>")
    if facts["open"]:
        parts.append(f"<p>{_a(facts['open'], 'Open it in the app')}</p>")
    parts.append("<p><small>A link shows the request first: nothing is decided until you press Approve or Reject "
                 "there.</small></p>")
    return f"<html><body>{''.join(parts)}</body></html>"


def compose(body: dict[str, Any], sender: str = "") -> EmailMessage:
    """One item's mail (text and HTML). A masked request's says only that a request waits: open the app.

    Args:
        body: the outbox item (:mod:`.reach`); its ``_owner`` is never written.
        sender: the ``From`` address; default ``INTERRUPT_CHAT_MAIL_FROM``.

    Returns:
        The message, with ``Message-ID`` derived from the item's ``id`` (a retried send is the same mail)
        and ``Auto-Submitted: auto-generated``.
    """
    sender = _line(sender or os.environ.get(MAIL_FROM_ENV, ""), 320)
    facts = None if body.get("masked") else _facts(body)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = _line(body.get("to"), 320)
    message["Subject"] = _subject(body)
    message["Date"] = formatdate(usegmt=True)
    domain = parseaddr(sender)[1].rpartition("@")[2] or "interrupt-chat.invalid"
    item = re.sub(r"[^A-Za-z0-9._-]", "", str(body.get("id") or ""))[:64] or "item"
    message["Message-ID"] = f"<interrupt-chat.{item}@{domain}>"
    message["Auto-Submitted"] = "auto-generated"
    message["X-Auto-Response-Suppress"] = "All"
    message.set_content(_text(body, facts))
    message.add_alternative(_html(body, facts), subtype="html")
    return message


def _warn_once(problem: str) -> None:
    if problem not in _warned:
        _warned.add(problem)
        log.error("mail: %s; no mail is sent (the items are dropped)", problem)


async def send(body: dict[str, Any]) -> bool:
    """The ``mail`` deliverer: True when the server took the mail (or it can never be sent), False to retry."""
    try:
        smtp = config()
    except ValueError as exc:
        _warn_once(str(exc))
        return True
    to = parseaddr(str(body.get("to") or ""))[1]
    if smtp is None or "@" not in to:
        return True  # mail was turned off meanwhile, or the recipient has no address
    try:
        await aiosmtplib.send(compose(body, smtp.sender), sender=smtp.sender, recipients=[to], hostname=smtp.host,
                              port=smtp.port, username=smtp.username, password=smtp.password, use_tls=smtp.tls,
                              start_tls=False if smtp.tls else None, timeout=SEND_TIMEOUT)
    except aiosmtplib.SMTPRecipientsRefused as exc:
        if all(r.code >= 500 for r in exc.recipients):  # refused for good: trying again changes nothing
            log.warning("mail: the server refused %s for good: %s", to, exc)
            return True
        log.info("mail: the server refused %s for now: %s", to, exc)
        return False
    except (aiosmtplib.SMTPException, OSError) as exc:  # OSError: refused, unreachable, TLS (ssl.SSLError)
        log.info("mail: sending to %s through %s:%d failed: %s", to, smtp.host, smtp.port, exc)
        return False
    return True


DELIVERERS["mail"] = send
