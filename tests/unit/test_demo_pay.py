"""The demo agent's ``pay`` scenario: a ``pay_invoice`` tool approval with an expiry (contracts §6.2)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import pytest_asyncio
from ag_ui.core import EventType

from interrupt_chat.demo.agent import create_app
from interrupt_chat.demo.agent.payments import payment_args
from tests.unit.test_demo_agent import (
    cancelled,
    interrupted,
    interrupts_of,
    of_type,
    resolved,
    resume,
    stream,
    texts,
    tool_args,
    wire,
)


@pytest.fixture
def app():
    return create_app(delay=0.0, records=True)


@pytest_asyncio.fixture
async def client(app):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo") as c:
        yield c


@pytest.mark.parametrize(
    ("text", "args", "expires_in"),
    [
        ("pay invoice 12000", {"invoice": "INV-12000", "payee": "ACME Ltd", "amount": 12000}, 600),
        ("pay 250 to ACME", {"invoice": "INV-250", "payee": "ACME", "amount": 250}, 600),
        ("pay invoice 12000 expires 30", {"invoice": "INV-12000", "payee": "ACME Ltd", "amount": 12000}, 30),
        ("Pay invoice 77 to Globex, 1250.5 expires 5", {"invoice": "INV-77", "payee": "Globex", "amount": 77}, 5),
        ("pay", {"invoice": "INV-500", "payee": "ACME Ltd", "amount": 500}, 600),
        ("pay 99.5 to Initech.", {"invoice": "INV-99", "payee": "Initech", "amount": 99.5}, 600),
    ],
)
def test_payment_args_read_the_message(text, args, expires_in):
    assert payment_args(text) == ({**args, "currency": "EUR"}, expires_in)


async def test_pay_calls_pay_invoice_and_asks_for_a_tool_approval(client, app):
    before = datetime.now(UTC)
    events, _ = await interrupted(client, "pay invoice 12000 expires 30")
    (start,) = of_type(events, EventType.TOOL_CALL_START)
    assert start.tool_call_name == "pay_invoice"
    assert start.parent_message_id == of_type(events, EventType.TEXT_MESSAGE_START)[0].message_id
    args = {"invoice": "INV-12000", "payee": "ACME Ltd", "amount": 12000, "currency": "EUR"}
    assert tool_args(events, start.tool_call_id) == args
    (interrupt,) = interrupts_of(events)
    shown = wire(interrupt)
    expires_at = shown.pop("expiresAt")
    assert shown == {
        "id": f"int-{start.tool_call_id}",
        "reason": "tool_call",
        "toolCallId": start.tool_call_id,
        "message": "Pay INV-12000: 12000 EUR to ACME Ltd?",
        "responseSchema": {
            "type": "object",
            "required": ["approved"],
            "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
        },
        "rejectOptions": ["Wrong amount", "Wrong payee", "Not now"],  # one-click reasons for a "no" (§6.4)
    }
    assert expires_at.endswith("+00:00")
    assert 29 <= (datetime.fromisoformat(expires_at) - before).total_seconds() <= 31
    assert app.state.store.thread("t1").open.scenario == "pay"


async def test_pay_expires_in_ten_minutes_unless_told(client):
    before = datetime.now(UTC)
    events, _ = await interrupted(client, "pay 250 to ACME")
    (interrupt,) = interrupts_of(events)
    assert 599 <= (datetime.fromisoformat(interrupt.expires_at) - before).total_seconds() <= 601


@pytest.mark.parametrize(
    ("entry", "text", "result"),
    [
        ({"approved": True}, "Paid INV-12000 (12000 EUR).", "Paid INV-12000 (12000 EUR)."),
        ({"approved": False}, "Payment INV-12000 was not made.", "Payment INV-12000 was not made."),
        ({"approved": False, "reason": "Wrong amount"}, "Payment INV-12000 was not made. Reason: Wrong amount",
         "Payment INV-12000 was not made. Reason: Wrong amount"),
        ({"approved": True, "editedArgs": {"invoice": "INV-12000", "payee": "ACME Ltd", "amount": 9000,
                                           "currency": "EUR"}},
         "Paid INV-12000 (9000 EUR).", "Paid INV-12000 (9000 EUR)."),
        (None, "Payment INV-12000 was not made.", "cancelled by user"),
    ],
    ids=["approve", "reject", "reject-why", "edit", "cancel"],
)
async def test_pay_resume(client, app, entry, text, result):
    events, first = await interrupted(client, "pay invoice 12000")
    (item,) = interrupts_of(events)
    answer = cancelled(item.id) if entry is None else resolved(item.id, entry)
    resumed = await resume(client, first, [answer])
    (tool_result,) = of_type(resumed, EventType.TOOL_CALL_RESULT)
    assert (tool_result.tool_call_id, tool_result.content) == (item.tool_call_id, result)
    assert texts(resumed) == [text]
    assert resumed[-1].outcome.type == "success"
    assert app.state.store.thread("t1").open is None


async def test_an_expired_payment_can_only_be_cancelled(client, app):
    events, first = await interrupted(client, "pay invoice 12000 expires 0")
    (item,) = interrupts_of(events)
    refused = await stream(client, {**first, "runId": "r2", "messages": [], "parentRunId": first["runId"],
                                    "resume": [resolved(item.id, {"approved": True})]})
    assert refused[-1].type == EventType.RUN_ERROR and refused[-1].code == "INTERRUPT_EXPIRED"
    assert app.state.store.thread("t1").open is not None
    resumed = await resume(client, first, [cancelled(item.id)])
    assert texts(resumed) == ["Payment INV-12000 was not made."]
