"""The demo site: a user of the public API only (pages and test ids: docs/dom-contract.md).

Pages: ``/`` (the full chat, default interrupt slot, scenario chips, threads), ``/approval``
(the seed's in-chat example) and ``/manual`` (the seed's manual-placement example). Unless
``INTERRUPT_CHAT_AGENT_URL`` is set, the chat talks to the scripted demo agent, mounted in this
same backend under ``/demo-agent/``. With ``INTERRUPT_CHAT_DEMO_PEOPLE=1`` the demo's people sign in
on ``/login`` and ``/team`` is a chat for signed-in people only (:mod:`.login`).
"""

from __future__ import annotations

import json
from typing import Any

import reflex as rx
from starlette.applications import Starlette
from starlette.routing import Mount

import interrupt_chat as ic
from interrupt_chat.components import page_script
from interrupt_chat.demo.agent import create_app as create_demo_agent
from interrupt_chat.demo.dojo_pages import (
    STEPS,
    confirm_chat,
    document_chat,
    dojo_url,
    haiku_chat,
    progress_chat,
    reasoning_chat,
    recipe_chat,
    steps_chat,
    subgraphs_chat,
    weather_chat,
)
from interrupt_chat.demo.login import login_form, people_mode, prepare_auth_db, signed_in, whoami
from interrupt_chat.demo.team import TEAM as PEOPLE
from interrupt_chat.model.people import ANONYMOUS

SCENARIOS = [
    ("approval", "Tool approval"),
    ("choice", "Choice"),
    ("credential", "Credential"),
    ("multi", "Three at once"),
    ("expiring", "Expiring"),
    ("pay invoice 12000", "Pay invoice"),
    ("legacy", "Legacy JSON"),
    ("legacy-string", "Legacy string"),
    ("both", "Both channels"),
    ("error", "Error after interrupt"),
    ("tools", "Tool call"),
    ("long", "Long answer"),
    ("markdown", "Markdown"),
]


# -- /approval: the seed's in-chat example ---------------------------------------------------------

class ApprovalInterrupt(ic.InterruptState):
    """No configuration: every interrupt is drawn by the custom slot below."""

    @rx.var
    def question(self) -> str:
        """The text to ask: the value's ``question`` or ``message``, else the value itself."""
        value = (self.event or {}).get("value")
        if isinstance(value, dict):
            text = value.get("question") or value.get("message")
            return str(text) if text else json.dumps(value)
        return "" if value is None else str(value)


def approval_slot(slot: ic.SlotProps) -> rx.Component:
    """The custom slot of ``/approval``: the question with Approve / Reject."""
    return rx.card(
        rx.heading(ApprovalInterrupt.question, as_="h2", size="3", weight="medium", class_name="ic-prompt",
                   custom_attrs={"data-testid": "approval-question", "tabIndex": "-1", "data-ic-focus": "true"}),
        rx.hstack(
            rx.button("Approve", on_click=slot.resolve({"approved": True}),
                      custom_attrs={"data-testid": "approval-approve"}),
            rx.button("Reject", color_scheme="red", variant="soft", high_contrast=True,
                      on_click=slot.resolve({"approved": False}), custom_attrs={"data-testid": "approval-reject"}),
            spacing="2",
        ),
        class_name="ic-card",
    )


# -- /manual: the seed's manual-placement example -----------------------------------------------------

class ManualInterrupt(ic.InterruptState):
    """render_in_chat=False: only ``approval:`` strings; the aside beside the chat draws them."""

    render_in_chat: bool = False

    def enabled(self, event: dict[str, Any]) -> bool:
        """Take only legacy string values starting with ``approval:``."""
        value = event.get("value")
        return isinstance(value, str) and value.startswith("approval:")

    async def handler(self, props: dict[str, Any]) -> dict[str, str]:
        """Compute the aside's label: the value in capitals."""
        return {"label": str(props["event"]["value"]).upper()}

    @rx.var
    def label(self) -> str:
        """The label the handler computed (``result``), or ""."""
        return str(self.result.get("label", "")) if isinstance(self.result, dict) else ""

    @rx.var
    def value_text(self) -> str:
        """The interrupt's value as text (JSON unless it is a string)."""
        value = (self.event or {}).get("value")
        return value if isinstance(value, str) else json.dumps(value)


def manual_aside() -> rx.Component:
    """The aside of ``/manual``, shown while ``ManualInterrupt`` holds the set."""
    return rx.cond(
        ManualInterrupt.active,
        rx.el.aside(
            rx.card(
                rx.text("Manual approval", size="1", color_scheme="gray"),
                rx.heading(ManualInterrupt.label, as_="h2", size="3", class_name="ic-prompt",
                           custom_attrs={"data-testid": "manual-label", "tabIndex": "-1", "data-ic-focus": "true"}),
                rx.text(ManualInterrupt.value_text, size="2", custom_attrs={"data-testid": "manual-value"}),
                rx.button("Continue", on_click=ManualInterrupt.resolve({"accepted": True}, None),
                          disabled=ManualInterrupt.submitting, custom_attrs={"data-testid": "manual-continue"}),
                class_name="ic-aside",
                custom_attrs={"data-testid": "manual-interrupt", "data-ic-request": "true"},
            ),
            class_name="ic-aside-region",
            custom_attrs={"aria-label": "Manual approval"},
        ),
    )


# -- layout ---------------------------------------------------------------------------------------------

# On a narrow screen the thread list starts folded (a drawer: its summary opens it); wider, it starts open.
_DRAWER_SCRIPT = r"""
(() => {
  if (window.__icDrawer) return;
  window.__icDrawer = true;
  const narrow = window.matchMedia("(max-width: 760px)");
  const seen = new WeakSet();
  const scan = () => document.querySelectorAll("details.ic-drawer").forEach((d) => {
    if (seen.has(d)) return;
    seen.add(d);
    d.open = !narrow.matches;
  });
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true });
  narrow.addEventListener("change", () => {  // wider again: the list shows (its summary is hidden there)
    if (!narrow.matches) document.querySelectorAll("details.ic-drawer").forEach((d) => { d.open = true; });
  });
  scan();
})();
"""


def _nav(skip: str) -> rx.Component:
    link = lambda label, href: rx.link(label, href=href, size="2", weight="medium", underline="none",  # noqa: E731
                                       class_name="ic-nav-link")
    return rx.el.header(
        rx.el.a("Skip to the message box" if skip == "#ic-composer" else "Skip to the content", href=skip,
                class_name="ic-skip"),  # the first stop of Tab (docs/accessibility.md)
        rx.hstack(rx.icon("hand", size=20), rx.text("interrupt_chat", size="4", weight="bold"),
                  align="center", spacing="2", class_name="ic-brand"),
        rx.spacer(),
        rx.el.nav(link("Chat", "/"), _inbox_link(), link("Policies", "/policies"),
                  link("Insights", "/insights"), link("Approval", "/approval"),
                  link("Manual", "/manual"),
                  link("Steps", "/steps"), link("Tool UI", "/tool-ui"), link("Progress", "/progress"),
                  link("Shared state", "/shared-state"), *([link("Team", "/team")] if people_mode() else []),
                  class_name="ic-nav-links", custom_attrs={"aria-label": "Pages"}),
        whoami(),
        rx.color_mode.button(size="2", variant="ghost", class_name="ic-theme",
                             custom_attrs={"aria-label": "Dark mode", "title": "Dark mode"}),
        class_name="ic-nav",
    )


def _inbox_link() -> rx.Component:
    """"Inbox" with the count of requests waiting for you, on every page, live."""
    count = MAIN.state.inbox_count
    return rx.link(
        "Inbox",
        rx.cond(count > 0, rx.badge(count.to_string(), size="1", variant="solid", color_scheme="amber",
                                    high_contrast=True, radius="full", margin_left="6px",
                                    custom_attrs={"data-testid": "inbox-count",
                                                  "aria-label": count.to_string() + " waiting"})),
        rx.box(on_mount=MAIN.state.load_count, display="none"),
        href="/inbox", size="2", weight="medium", underline="none", class_name="ic-nav-link",
    )


def _chips(state: type[ic.ChatState]) -> rx.Component:
    return rx.flex(
        *[rx.button(label, size="1", variant="surface", radius="full", on_click=state.send_text(name),
                    disabled=(state.status == "running") | state.locked,
                    custom_attrs={"data-testid": "scenario-chip", "data-scenario": name})
          for name, label in SCENARIOS],
        spacing="2", class_name="ic-chips",
        # focusable: on a narrow screen the row scrolls sideways, and its chips are disabled during a run
        custom_attrs={"role": "group", "aria-label": "Scenarios", "tabIndex": "0"},
    )


def _threads(chat: ic.Chat) -> rx.Component:
    return rx.el.aside(
        rx.el.details(
            rx.el.summary("Threads and decisions", class_name="ic-drawer-summary"),
            rx.vstack(chat.thread_list(), rx.divider(), chat.audit_trail(), spacing="3"),
            open=True, class_name="ic-drawer",
        ),
        page_script("DemoDrawer", _DRAWER_SCRIPT),
        class_name="ic-threads", custom_attrs={"aria-label": "Threads"},
    )


def _page(body: rx.Component, aside: rx.Component | None = None, title: str = "", intro: str = "",
          skip: str = "#ic-composer") -> rx.Component:
    """A page: skip link, header, the optional aside, and the main content (the landmarks)."""
    return rx.box(
        _nav(skip),
        rx.hstack(
            aside or rx.fragment(),
            rx.el.main(
                rx.vstack(rx.heading(title, as_="h1", size="5"), rx.text(intro, size="2", color_scheme="gray"), body,
                          spacing="3"),
                class_name="ic-main", id="main",
            ),
            class_name="ic-layout", align="start", spacing="5",
        ),
        class_name="ic-page",
    )


async def demo_owner(chat: ic.ChatState) -> str:
    """The person of a tab of ``/``: the signed-in one, else the browser's anonymous identity."""
    return await signed_in(chat) or ANONYMOUS


async def team_owner(chat: ic.ChatState) -> str | None:
    """The person of a tab of ``/team``: the signed-in one only (None: ``chat-signin``)."""
    return await signed_in(chat) or None


async def demo_admin(chat: ic.ChatState) -> bool:
    """``/insights`` shows everyone's requests to the demo's managers (carol), each person's own to the others."""
    person = await signed_in(chat)
    return bool(person) and "managers" in PEOPLE.roles(person)


# ``/`` (its identity: "default"); the inbox lists its approvals
MAIN = ic.Chat(dojo_url("agentic_chat"), owner=demo_owner, people=PEOPLE,  # pay_invoice goes to finance (team.py)
               insights_admin=demo_admin)
TEAM = ic.Chat(name="team", owner=team_owner, people=PEOPLE)  # ``/team`` (INTERRUPT_CHAT_DEMO_PEOPLE=1): people only
APPROVAL = ic.Chat(interrupts=[(ApprovalInterrupt, approval_slot)], on_expiry="cancel")  # expiry fails closed
MANUAL = ic.Chat(interrupts=[(ManualInterrupt, lambda slot: rx.fragment())])


def index() -> rx.Component:
    """``/``: the full chat with the default slot, scenario chips and the thread list."""
    return _page(rx.fragment(_chips(MAIN.state), MAIN.view()), aside=_threads(MAIN), title="Human-in-the-loop chat",
                 intro="Pick a scenario: the agent stops and asks you for an approval, a choice or a credential.")


def approval() -> rx.Component:
    """``/approval``: a chat whose interrupts are drawn by :func:`approval_slot`."""
    return _page(APPROVAL.view(), title="In-chat approval",
                 intro="Say “question” or “legacy”: a custom slot shows the agent's question with Approve / Reject.")


def manual() -> rx.Component:
    """``/manual``: a chat whose ``approval:`` requests are answered in :func:`manual_aside`."""
    return _page(MANUAL.view(), aside=manual_aside(), title="Manual placement",
                 intro="Say “legacy-string”: the request appears in the aside, not in the chat.")


DEMO_AGENT_PATH = "/demo-agent/"
ic.set_default_agent_url(DEMO_AGENT_PATH)  # used unless INTERRUPT_CHAT_AGENT_URL is set


def inbox() -> rx.Component:
    """/inbox: what waits for you across your threads.

    The main chat's approvals, answered in place, and the task-steps chat's waiting tool calls
    (answered on /steps).
    """
    return _page(MAIN.inbox(chat_path="/", also=[(STEPS, "/steps")]), title="Approvals inbox",
                 intro="Every request the agent is waiting on, in all your threads. Answer here, or open the thread.",
                 skip="#main")


def policies() -> rx.Component:
    """``/policies``: your rules ("always allow", …), each with its revoke."""
    return _page(MAIN.policy_list(), title="Policies", skip="#main",
                 intro="The rules you made from a tool approval's “Allow in this thread”, “Always allow” or "
                       "“Always deny”. A revoke takes effect for the next request.")


def insights() -> rx.Component:
    """``/insights``: how long requests wait, how they end, which tools: the audit in charts."""
    return _page(MAIN.insights(), title="Insights", skip="#main",
                 intro="How long your requests wait for a decision, how many are waiting now, how they end and for "
                       "which tools: read from the audit.")


def steps() -> rx.Component:
    """``/steps``: tool-based human in the loop: the agent's plan, the steps ticked by the person."""
    return _page(steps_chat(), title="Task steps",
                 intro="Say “steps”: the agent proposes a plan through a frontend tool; untick what to skip and "
                       "confirm.")


def confirm() -> rx.Component:
    """``/confirm``: an approval asked through a frontend tool."""
    return _page(confirm_chat(), title="Approval through a tool",
                 intro="Say “confirm”: the agent asks to delete files by calling a tool of this chat (as Agno does); "
                       "approve, reject or cancel.")


def tool_ui() -> rx.Component:
    """``/tool-ui``: the agent's ``get_weather`` call drawn by a custom renderer."""
    return _page(weather_chat(), title="Tool renderer",
                 intro="Say “tools”: the agent's get_weather call is drawn as a weather card, not the default card.")


def progress() -> rx.Component:
    """``/progress``: a progress card that the agent's state deltas move."""
    return _page(progress_chat(), title="Progress", skip="#main",
                 intro="Say “progress”: the agent runs a three-step plan; its state moves the card above the chat.")


def shared_state() -> rx.Component:
    """``/shared-state``: a recipe the person and the agent both edit."""
    return _page(recipe_chat(), title="Shared state", skip="#main",
                 intro="Edit the recipe and save it, then say “recipe”: the agent reads it and adds what it lacks.")


def document() -> rx.Component:
    """``/document``: a document the agent writes, growing live, then kept or rejected (predictive state)."""
    return _page(document_chat(), title="Predictive state", skip="#main",
                 intro="Say “Write a story”: the document grows while the agent writes it; then keep or reject it.")


def reasoning() -> rx.Component:
    """``/reasoning``: the agent's reasoning, folded above its answer."""
    return _page(reasoning_chat(), title="Reasoning",
                 intro="Say “think …”: the agent reasons first (folded, open it to read along), then answers.")


def haiku() -> rx.Component:
    """``/haiku``: the ``generate_haiku`` tool drawn as a card."""
    return _page(haiku_chat(), title="Haiku",
                 intro="Ask for a haiku: the agent's generate_haiku call is drawn as a card.")


# -- people (INTERRUPT_CHAT_DEMO_PEOPLE=1): /login, /team ------------------------------------------------

def login() -> rx.Component:
    """``/login``: the demo's people sign in (alice, bob, carol, dave; password ``<id>-demo``)."""
    return _page(login_form(), title="Sign in", skip="#main",
                 intro="Sign in as one of the demo's people: alice, bob, carol or dave, password <id>-demo "
                       "(bob-demo).")


def team() -> rx.Component:
    """``/team``: TEAM's chat, whose person is the signed-in one only (anonymous: ``chat-signin``).

    The team chat (issue 41): who decides its requests comes with ``people=`` on :data:`TEAM`.
    """
    return _page(TEAM.view(), title="Team chat",
                 intro="A chat for the demo's signed-in people: requests go to whoever must decide them.")


def decide() -> rx.Component:
    """``/decide/[token]``: the decision link's page, with ``whoami`` above it."""
    return rx.fragment(rx.box(whoami(), class_name="ic-whoami-bar"), ic.decide_page())


def subgraphs() -> rx.Component:
    """``/subgraphs``: requests from sub-agents, each card naming who asks."""
    return _page(subgraphs_chat(), title="Sub-agents",
                 intro="Say “flights”: the flights sub-agent asks you to pick a flight; the card says who asks.")


def _api() -> Starlette:
    """The backend's own routes: the demo agent, Slack's clicks (``/slack/interactions``) and ``/metrics``."""
    agent = Mount(DEMO_AGENT_PATH.rstrip("/"), app=create_demo_agent())
    return Starlette(routes=[*ic.slack_routes(), *ic.metrics_routes(), agent])


app = rx.App(
    api_transformer=_api(),
    html_lang="en",
    stylesheets=["/demo.css"],  # the page layout (assets/demo.css); the chat links its own stylesheet
)


def _apart(*pages: Any) -> None:
    """Each page's compiled components in a file of its own, so a route loads only its own chat's.

    Reflex compiles the components it memoises into one file per module of the page function
    (``.web/app_components/<module path>.jsx``), and every route that uses one of them loads the
    whole file. Here, with every page in one module, each route would load all pages' chats (their
    cards, a copy per chat) and the insights page's charts. A page named as a module of its own
    (``interrupt_chat.demo.site.<page>``, not importable) gets its own file; the names of the
    states, and so what is stored, do not change.
    """
    for page in pages:
        page.__module__ = f"{__name__}.{page.__name__}"


_apart(index, approval, manual, inbox, policies, insights, steps, confirm, tool_ui, progress, shared_state, document,
       reasoning, haiku, subgraphs, decide, login, team)
app.add_page(index, route="/", title="interrupt_chat")
app.add_page(approval, route="/approval", title="interrupt_chat · approval")
app.add_page(manual, route="/manual", title="interrupt_chat · manual")
app.add_page(inbox, route="/inbox", title="interrupt_chat · inbox")
app.add_page(policies, route="/policies", title="interrupt_chat · policies")
app.add_page(insights, route="/insights", title="interrupt_chat · insights")
app.add_page(steps, route="/steps", title="interrupt_chat · steps")
app.add_page(confirm, route="/confirm", title="interrupt_chat · approval through a tool")
app.add_page(tool_ui, route="/tool-ui", title="interrupt_chat · tool renderer")
app.add_page(progress, route="/progress", title="interrupt_chat · progress")
app.add_page(shared_state, route="/shared-state", title="interrupt_chat · shared state")
app.add_page(document, route="/document", title="interrupt_chat · predictive state")
app.add_page(reasoning, route="/reasoning", title="interrupt_chat · reasoning")
app.add_page(haiku, route="/haiku", title="interrupt_chat · haiku")
app.add_page(subgraphs, route="/subgraphs", title="interrupt_chat · sub-agents")
app.add_page(decide, route="/decide/[token]", title="interrupt_chat · decide")  # decision links
if people_mode():
    app.add_page(login, route="/login", title="interrupt_chat · sign in")
    app.add_page(team, route="/team", title="interrupt_chat · team")
app.register_lifespan_task(prepare_auth_db)  # the login's tables (and people) before the first request
app.register_lifespan_task(ic.expiry_sweeper)  # sets expire while nobody visits, too
ic.tune_emit(app)  # a tab's update is sent without a task and a wait (docs/decisions/0023)
ic.tune_events(app)  # a decision's event holds the other chats' streams from its arrival (docs/decisions/0037)
ic.tune_gc()  # last: the pages above are frozen with the modules (docs/decisions/0023)
