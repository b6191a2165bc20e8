"""Client-side behaviour Reflex has no prop for: Enter-to-send, auto-scroll, focus that follows the request.

IME-safe Enter-to-send, polite auto-scroll of the messages, and the focus management described in
docs/accessibility.md.
"""

from __future__ import annotations

import reflex as rx

from .page_script import page_script

__all__ = ["chat_behaviour"]

# Focus follows the agent's request, for keyboard and screen-reader users (one chat per page):
# - when a set surfaces (the chat's interrupt slot, a frontend tool call waiting for the person, or an
#   element marked data-ic-request="true" outside the chat, e.g. a manual aside) and focus is free (on
#   the page body, the composer that just locked, or a control the run disabled), focus moves to the
#   first card's heading (data-testid interrupt-prompt; an element marked data-ic-focus; else the first
#   control). Focus elsewhere, on the person's choice, stays: the run status says "Waiting for you";
# - the composer and the newest card are scrolled into view (the composer first, then the card);
# - an answered card that takes the focus with it hands it to the next open card;
# - once the set is answered, focus returns to the composer (as soon as it is enabled again);
# - a skip link (class ic-skip, or any link to #ic-composer) focuses its target without a navigation:
#   the composer, or the request while the composer is locked.
_FOCUS_SCRIPT = r"""
(() => {
  if (window.__interruptChatFocus) return;
  window.__interruptChatFocus = true;
  const CONTROLS = 'button:not([disabled]), input:not([type="hidden"]):not([disabled]), select:not([disabled]),' +
    ' textarea:not([disabled]), summary, a[href]';
  const chatOf = () => document.querySelector(".ic-chat");
  const composerOf = (chat) => chat && chat.querySelector('[data-testid="chat-input"]');
  const requestOf = (chat) => (chat && chat.querySelector('[data-testid="interrupt-slot"], [data-testid="tool-wait"]'))
    || document.querySelector('[data-ic-request="true"]');
  const cardsOf = (request) => {
    const cards = Array.from(request.querySelectorAll('[data-testid="interrupt-card"]'));
    return cards.length ? cards : [request];
  };
  const targetIn = (box) => box.querySelector('[data-ic-focus="true"]') ||
    box.querySelector('[data-testid="interrupt-prompt"]') || box.querySelector(CONTROLS);
  const isFree = (el, composer) => !el || el === document.body || el === document.documentElement ||
    el === composer || el.disabled === true || !el.isConnected;
  const reveal = (request, composer) => {
    const cards = cardsOf(request);
    if (composer) (composer.form || composer).scrollIntoView({ block: "nearest" });
    cards[cards.length - 1].scrollIntoView({ block: "nearest" });
  };
  let shown = null;      // the request element on the page, if any
  let inRequest = false; // the focus was inside it
  let back = false;      // the set was answered: the composer takes the focus once it is enabled
  let lastCard = null;   // the card that last held the focus
  const open = (card) => !card.dataset.answered && card.querySelector("button:not([disabled])") !== null;
  const nextCard = (request) => {  // the first open card after the one that held the focus, else the first
    const cards = cardsOf(request);
    const after = cards.slice(cards.indexOf(lastCard) + 1);
    return after.find(open) || cards.find(open);
  };
  const check = () => {
    const chat = chatOf();
    const composer = composerOf(chat);
    const request = requestOf(chat);
    const active = document.activeElement;
    if (request && request !== shown) {
      const fresh = !shown;
      shown = request;
      back = false;
      reveal(request, composer);
      const target = targetIn(cardsOf(request)[0]);
      if (target && (fresh || inRequest) && isFree(active, composer)) {  // a new set, or its element redrawn
        target.focus({ preventScroll: true });
        inRequest = true;
      }
      return;
    }
    if (!request && shown) {
      shown = null;
      back = inRequest || isFree(active, composer);
      inRequest = false;
    }
    if (request && inRequest && isFree(active, null)) {  // an answered card took the focus with it
      const next = nextCard(request);
      const target = next && targetIn(next);
      if (target) target.focus({ preventScroll: true });
    }
    if (back && composer && !composer.disabled) {
      back = false;
      if (isFree(document.activeElement, composer)) composer.focus({ preventScroll: false });
    }
  };
  document.addEventListener("focusin", (e) => {
    inRequest = !!(shown && shown.contains(e.target));
    if (inRequest) lastCard = e.target.closest('[data-testid="interrupt-card"]');
    if (!inRequest && e.target !== document.body) back = false;
  });
  document.addEventListener("click", (e) => {  // capture: before the router's own link handling
    const link = e.target && e.target.closest && e.target.closest("a.ic-skip, a[href$='#ic-composer']");
    if (!link || !link.hash) return;
    const id = decodeURIComponent(link.hash.slice(1));
    const chat = chatOf();
    const composer = composerOf(chat);
    let target = document.getElementById(id);
    if (target && target === composer && composer.disabled) {
      const request = requestOf(chat);
      target = request && targetIn(cardsOf(request)[0]);
    }
    if (!target) return;
    e.preventDefault();  // no hash change: the router would treat it as a navigation
    if (!target.matches(CONTROLS) && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "nearest" });
  }, true);
  new MutationObserver(check).observe(document.documentElement, {
    childList: true, subtree: true, attributes: true, attributeFilter: ["disabled"] });
  check();
})();
"""

# A folded part of a card ("Edit arguments": data-ic-fold, opened by its data-ic-toggle button), and the
# inbox's keys: on a focused inbox item (the row itself, not a control in it) "a" approves, "r" rejects
# and Space toggles its selection, as its own buttons and checkbox do (docs/accessibility.md).
_FOLD_AND_KEYS_SCRIPT = r"""
(() => {
  if (window.__interruptChatKeys) return;
  window.__interruptChatKeys = true;
  document.addEventListener("click", (e) => {
    const toggle = e.target && e.target.closest && e.target.closest("[data-ic-toggle]");
    const fold = toggle && toggle.closest("[data-ic-fold]");
    if (!fold) return;
    const open = fold.dataset.open !== "true";
    fold.dataset.open = open ? "true" : "false";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) { const field = fold.querySelector(":scope > textarea"); if (field) field.focus(); }
  });
  document.addEventListener("focusin", (e) => {  // a folded field that takes the focus stays open (no jump)
    const field = e.target;
    const fold = field && field.matches && field.matches("[data-ic-fold] > textarea") && field.parentElement;
    if (!fold || fold.dataset.open === "true") return;
    fold.dataset.open = "true";
    const toggle = fold.querySelector(":scope > [data-ic-toggle]");
    if (toggle) toggle.setAttribute("aria-expanded", "true");
  });
  document.addEventListener("keydown", (e) => {
    const item = e.target;
    if (!item || !item.matches || !item.matches('[data-testid="inbox-item"]')) return;
    if (e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    const key = e.key.toLowerCase();
    const target = key === "a" ? '[data-testid="interrupt-approve"]' : key === "r" ? '[data-testid="interrupt-reject"]'
      : e.key === " " ? '[data-testid="inbox-select"]' : null;
    if (!target) return;
    e.preventDefault();
    const control = item.querySelector(target);
    if (control && !control.disabled) control.click();
  });
})();
"""

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
    // Once per frame, not per change: reading scrollHeight lays the page out there and then, and a
    // streamed answer changes it many times a frame (each forced layout held up the next text).
    let queued = false;
    const toBottom = () => {
      queued = false;
      if (follow.get(box)) box.scrollTop = box.scrollHeight;
    };
    new MutationObserver(() => {
      if (!queued && follow.get(box)) {
        queued = true;
        requestAnimationFrame(toBottom);
      }
    }).observe(box, { childList: true, subtree: true, characterData: true });
    box.scrollTop = box.scrollHeight;
  };
  const scan = () => document.querySelectorAll('[data-chat-scroll="true"]').forEach(watch);
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true });
  scan();
})();
""" + _FOCUS_SCRIPT + _FOLD_AND_KEYS_SCRIPT


def chat_behaviour() -> rx.Component:
    """The script that adds Enter-to-send, follow-the-bottom scrolling and focus management (once per page)."""
    return page_script("ChatBehaviour", _SCRIPT)
