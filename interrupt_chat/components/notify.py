"""``notify_toggle()``: system notifications when a request surfaces on a hidden page (issue 23).

The toggle (``notify-toggle``) asks the browser's permission and remembers the choice in this
browser's local storage (every tab of it follows); ``aria-pressed`` says whether notifications are
on. While they are on and the page is hidden, each interrupt card or waiting frontend-tool call
that appears (live sync brings them to every tab) shows one ``Notification``: the title says what
waits, the body is its short message. A Web Lock and a mark in local storage make it one per
request across the browser's tabs. Clicking it focuses the tab and the request.

Everything happens in the browser: no var, no event, nothing sent to the server.
"""

from __future__ import annotations

import reflex as rx

from .page_script import page_script

__all__ = ["notify_toggle"]

_SCRIPT = r"""
(() => {
  if (window.__icNotify) return;
  window.__icNotify = true;
  const KEY = "interrupt_chat.notify", SEEN = "interrupt_chat.notified.";
  const supported = () => typeof window.Notification === "function";
  const on = () => supported() && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
  const paint = () => document.querySelectorAll('[data-testid="notify-toggle"]').forEach((button) => {
    button.setAttribute("aria-pressed", on() ? "true" : "false");
    button.disabled = !supported() || Notification.permission === "denied";
    button.title = !supported() ? "This browser has no notifications"
      : Notification.permission === "denied" ? "Notifications are blocked for this site" : "";
  });
  document.addEventListener("click", async (event) => {
    const button = event.target.closest && event.target.closest('[data-testid="notify-toggle"]');
    if (!button || !supported()) return;
    if (on()) localStorage.setItem(KEY, "off");
    else if ((await Notification.requestPermission()) === "granted") localStorage.setItem(KEY, "on");
    paint();
  });
  window.addEventListener("storage", (event) => { if (event.key === KEY) paint(); });
  const requests = () => Array.from(document.querySelectorAll(
    '[data-testid="interrupt-card"]:not([data-answered="resolved"]):not([data-answered="cancelled"]),' +
    ' [data-testid="tool-wait"]'));
  const idOf = (el) => el.dataset.toolCallId || el.dataset.interruptId ||
    ((el.querySelector('[data-testid="interrupt-prompt"]') || el).textContent || "").slice(0, 80);
  const what = (el) => el.dataset.testid === "tool-wait"
    ? `The assistant waits for your answer (${el.dataset.toolName})`
    : el.dataset.reason === "tool_call" ? "The assistant asks for your approval"
    : "The assistant waits for your answer";
  const bodyOf = (el) => ((el.querySelector('[data-testid="interrupt-prompt"]') || el).textContent || "")
    .replace(/\s+/g, " ").trim().slice(0, 160);
  const claim = async (id, show) => {  // once per request across this browser's tabs
    const run = () => {
      if (localStorage.getItem(SEEN + id)) return;
      localStorage.setItem(SEEN + id, String(Date.now()));
      show();
    };
    if (!navigator.locks) return run();
    // local storage reaches other tabs (other processes) late: the request's own lock, held a few seconds,
    // is what keeps a second tab from showing it meanwhile; the mark covers the tabs that come later
    await navigator.locks.request(`interrupt_chat.notify:${id}`, { ifAvailable: true }, async (lock) => {
      if (!lock) return;
      run();
      await new Promise((done) => setTimeout(done, 5000));
    });
  };
  const shown = new Set();
  const scan = () => {
    paint();
    for (const el of requests()) {
      const id = idOf(el);
      if (!id || shown.has(id)) continue;
      shown.add(id);
      if (!document.hidden || !on()) continue;  // seen on the page: no notification needed
      claim(id, () => {
        const note = new Notification(what(el), { body: bodyOf(el), tag: `interrupt_chat:${id}` });
        note.onclick = () => {
          window.focus();
          const target = Array.from(document.querySelectorAll(
            '[data-testid="interrupt-card"], [data-testid="tool-wait"]')).find((c) => idOf(c) === id);
          if (target) {
            target.scrollIntoView({ block: "center" });
            const heading = target.querySelector('[data-testid="interrupt-prompt"]');
            (heading || target.querySelector("button:not([disabled])") || target).focus?.();
          }
          note.close();
        };
      });
    }
  };
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true, attributes: true,
                                                                 attributeFilter: ["data-answered"] });
  scan();
})();
"""


def notify_toggle() -> rx.Component:
    """A bell that turns system notifications on and off for this browser (``notify-toggle``)."""
    return rx.fragment(
        rx.el.button(
            rx.icon("bell", size=14),
            type="button", class_name="ic-notify",
            aria_label="Notify me when the assistant waits for me",
            custom_attrs={"data-testid": "notify-toggle", "aria-pressed": "false"},
        ),
        page_script("ChatNotify", _SCRIPT),
    )
