"""Client-side behaviour Reflex has no prop for: IME-safe Enter-to-send and polite auto-scroll."""

from __future__ import annotations

import reflex as rx

__all__ = ["chat_behaviour"]

# Event delegation on the document, so it survives React re-renders and serves every chat on a page.
# Enter sends, Shift+Enter is a newline, and nothing is sent while an IME composition is open
# (isComposing, or keyCode 229 in browsers that report it that way). The message list follows new
# content only while the reader is already near its bottom: scrolling up stops the yank.
_SCRIPT = r"""
(() => {
  if (window.__interruptChatBehaviour) return;
  window.__interruptChatBehaviour = true;
  document.addEventListener("keydown", (e) => {
    const el = e.target;
    if (!el || !el.matches || !el.matches('[data-testid="chat-input"]')) return;
    if (e.key !== "Enter" || e.shiftKey || e.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    if (!e.repeat && el.form && !el.disabled) el.form.requestSubmit();
  }, true);
  const NEAR = 80;
  const follow = new WeakMap();
  const watch = (box) => {
    if (follow.has(box)) return;
    follow.set(box, true);
    box.addEventListener("scroll", () => {
      follow.set(box, box.scrollHeight - box.scrollTop - box.clientHeight < NEAR);
    }, { passive: true });
    new MutationObserver(() => {
      if (follow.get(box)) box.scrollTop = box.scrollHeight;
    }).observe(box, { childList: true, subtree: true, characterData: true });
    box.scrollTop = box.scrollHeight;
  };
  const scan = () => document.querySelectorAll('[data-chat-scroll="true"]').forEach(watch);
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true });
  scan();
})();
"""


def chat_behaviour() -> rx.Component:
    """The script that adds Enter-to-send and follow-the-bottom scrolling (installed once per page)."""
    return rx.script(_SCRIPT)
