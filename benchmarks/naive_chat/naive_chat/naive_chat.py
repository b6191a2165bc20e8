"""The usual hand-written Reflex chat, the baseline of ``benchmarks/browser_stream.py``.

Each delta is appended to the message list inside ``async with self``, the pattern Reflex's own
chat examples use: every update sends the whole list again and re-renders the whole answer as
markdown. It reads the same AG-UI agent (``NAIVE_AGENT_URL``) with httpx-sse.
"""

import json
import os
import uuid

import httpx
import reflex as rx
from httpx_sse import aconnect_sse


class NaiveState(rx.State):
    messages: list[dict[str, str]] = []

    @rx.event(background=True)
    async def send(self, form: dict):
        text = form.get("text", "")
        async with self:
            self.messages = [*self.messages, {"role": "user", "content": text}, {"role": "assistant", "content": ""}]
        body = {"threadId": "t", "runId": uuid.uuid4().hex, "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}]}
        async with httpx.AsyncClient(timeout=None) as client, \
                aconnect_sse(client, "POST", os.environ["NAIVE_AGENT_URL"], json=body) as source:
            async for sse in source.aiter_sse():
                event = json.loads(sse.data)
                if event["type"] == "TEXT_MESSAGE_CONTENT":
                    async with self:
                        self.messages[-1]["content"] += event["delta"]


def bubble(message: rx.Var) -> rx.Component:
    return rx.box(rx.markdown(message["content"]), custom_attrs={"data-testid": "message", "data-role": message["role"]})


def index() -> rx.Component:
    return rx.container(
        rx.foreach(NaiveState.messages, bubble),
        rx.form(rx.input(name="text", custom_attrs={"data-testid": "chat-input"}),
                rx.button("Send", type="submit", custom_attrs={"data-testid": "chat-send"}),
                on_submit=NaiveState.send, reset_on_submit=True),
    )


app = rx.App()
app.add_page(index, route="/")
