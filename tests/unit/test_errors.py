"""The core's one exception tree, wrapped causes, and how failed runs are logged."""

from __future__ import annotations

import inspect
import logging

import httpx
import pytest

import interrupt_chat.agui as agui
from interrupt_chat.agui import AgentClient, AgentConnectionError, AgentSession, AguiError
from tests.unit.agents import free_port


def test_every_exception_of_the_core_derives_from_one_base():
    errors = [obj for obj in vars(agui).values() if inspect.isclass(obj) and issubclass(obj, BaseException)]
    assert len(errors) >= 11
    assert all(issubclass(error, AguiError) for error in errors), [e for e in errors if not issubclass(e, AguiError)]


@pytest.mark.loopback
async def test_wrapped_httpx_error_is_kept_as_the_cause():
    client = AgentClient(f"http://127.0.0.1:{free_port()}/run", connect_timeout=2)
    with pytest.raises(AgentConnectionError) as caught:
        async for _ in client.run({"threadId": "t", "runId": "r", "messages": []}):
            pass
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_no_url_is_a_configuration_error():
    with pytest.raises(agui.AgentConfigurationError, match="no agent URL"):
        async for _ in AgentClient("").run({"threadId": "t", "runId": "r", "messages": []}):
            pass


@pytest.mark.loopback
async def test_a_failed_run_is_logged_at_warning_with_its_cause_and_no_request_body(caplog):
    session = AgentSession(AgentClient(f"http://127.0.0.1:{free_port()}/run", connect_timeout=2))
    secret_text = "my card number is 4111 1111 1111 1111"
    with caplog.at_level(logging.WARNING, logger="interrupt_chat.agui.session"):
        async for _ in session.send(secret_text):
            pass
    assert session.error and "cannot reach the agent" in session.error
    records = [r for r in caplog.records if r.name == "interrupt_chat.agui.session"]
    assert [r.levelno for r in records] == [logging.WARNING]
    message = records[0].getMessage()
    assert "AgentConnectionError" in message and session.thread_id in message and "cannot reach" in message
    assert secret_text not in caplog.text and records[0].exc_info is None
