"""A support chat with tool approvals, its threads, and an inbox of what waits for you."""

import os

import reflex as rx

import interrupt_chat as ic


class Approvals(ic.InterruptState):
    """Tool approvals: the agent asks before it runs a tool."""

    def enabled(self, event: dict) -> bool:  # other sets fall to the default slot, which draws anything
        value = event["value"]  # a standard set: its first interrupt
        return isinstance(value, dict) and value.get("reason") == "tool_call"


def approval_slot(slot: ic.SlotProps) -> rx.Component:
    """Yes / No for each tool call of the set in turn; drawn in the chat, and for each request in the inbox."""
    return rx.card(
        # slot.interrupt: the first request of the set not answered yet (Yes moves it on to the next)
        rx.text(slot.interrupt["message"].to(str), weight="medium", custom_attrs={"data-testid": "app-question"}),
        rx.text(slot.waiting.to_string(), " waiting", size="1", custom_attrs={"data-testid": "app-waiting"}),
        rx.hstack(
            rx.button("Yes", on_click=slot.resolve({"approved": True}), disabled=slot.submitting,
                      custom_attrs={"data-testid": "app-yes"}),
            rx.button("No", color_scheme="red", variant="soft", on_click=slot.resolve({"approved": False}),
                      disabled=slot.submitting, custom_attrs={"data-testid": "app-no"}),
            rx.cond(slot.rememberable,  # a tool a rule may answer: "Always allow" makes the rule, then says Yes
                    rx.button("Always allow", variant="outline", on_click=slot.remember("always", "allow"),
                              disabled=slot.submitting, custom_attrs={"data-testid": "app-always"})),
        ),
        rx.cond(slot.error != "", rx.text(slot.error, color_scheme="red", custom_attrs={"data-testid": "app-error"})),
    )


support = ic.Chat(
    agent_url=os.environ.get("SUPPORT_AGENT_URL", "http://127.0.0.1:8124/"),
    interrupts=[(Approvals, approval_slot)],
    name="support",
)


def index() -> rx.Component:
    return rx.hstack(
        rx.box(support.thread_list(), width="16rem"),
        rx.box(rx.link("Inbox", href="/inbox"), support.view(), support.audit_trail(), flex="1"),  # this thread's
        align="start", padding="1rem",
    )


def inbox() -> rx.Component:
    return rx.box(rx.link("Chat", href="/"), rx.heading("Waiting for you"), support.inbox(chat_path="/"),
                  padding="1rem")


app = rx.App()
app.add_page(index, route="/")
app.add_page(inbox, route="/inbox")
