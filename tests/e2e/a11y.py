"""What a person gets, read from the page: axe-core's verdict, the focused element, the live regions, what
is inside the viewport and how big the touch targets are (docs/accessibility.md).

axe-core is injected from ``.tools/axe`` (npm, pinned in scripts/setup.sh).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Locator, Page, expect

from .conftest import APP_ROOT, ARTIFACTS

AXE = APP_ROOT / ".tools" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 375, "height": 740}
TABLET = {"width": 768, "height": 1024}

_RUN_AXE = """async () => {
  // what a person sees once things have settled: the end of opening animations (not endless ones)
  await Promise.all(document.getAnimations().filter((a) => a.effect.getTiming().iterations !== Infinity)
    .map((a) => a.finished.catch(() => null)));
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 6).map((n) => n.target.join(" ") + " :: " + (n.failureSummary || "").replace(/\\s+/g, " ")),
  }));
}"""


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Every violation of the rules axe-core runs by default, on the whole document as it is now."""
    assert AXE.is_file(), f"{AXE} is missing: run scripts/setup.sh"
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(_RUN_AXE)


def theme(page: Page, name: str) -> None:
    """Switch to the light or dark theme with the header's toggle, as a person would."""
    html = page.locator("html")
    dark = re.compile(r"\bdark\b")
    if ("dark" in (html.get_attribute("class") or "")) != (name == "dark"):
        page.get_by_role("button", name="Dark mode").click()
    if name == "dark":
        expect(html).to_have_class(dark)
    else:
        expect(html).not_to_have_class(dark)


def assert_axe_clean(page: Page, state: str, show: Callable[[], None] | None = None,
                     hide: Callable[[], None] | None = None) -> None:
    """No axe violation in the light theme, then none in the dark one (the page is left dark).

    ``show`` / ``hide``: open and close a modal part (a dialog hides the theme toggle), per theme.
    """
    found = []
    for name in ("light", "dark"):
        theme(page, name)
        if show:
            show()
        found += [f"[{name}] {v['impact']} {v['id']}: {v['help']}\n      " + "\n      ".join(v["nodes"])
                  for v in axe_violations(page)]
        if hide:
            hide()
    assert not found, f"axe violations in state {state!r}:\n  " + "\n  ".join(found)


def active(page: Page) -> dict[str, Any]:
    """The focused element: its test id, tag, text, and the test id of the card around it."""
    return page.evaluate("""() => {
      const el = document.activeElement;
      const card = el && el.closest && el.closest('[data-testid="interrupt-card"]');
      const cards = Array.from(document.querySelectorAll('[data-testid="interrupt-card"]'));
      return { testid: el && el.getAttribute && el.getAttribute("data-testid"), tag: el && el.tagName.toLowerCase(),
               text: el ? (el.innerText || el.value || "").slice(0, 80) : "", card: card ? cards.indexOf(card) : -1 };
    }""")


def _focused(page: Page, target: str | Locator) -> bool:
    if isinstance(target, str):
        return active(page)["testid"] == target
    return bool(target.evaluate("(el) => el === document.activeElement"))


def tab_until(page: Page, target: str | Locator, limit: int = 12, backwards: bool = False) -> int:
    """Press Tab (or Shift+Tab) until ``target`` (a test id, or a locator) has the focus; returns the presses."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if _focused(page, target):
            return presses
    raise AssertionError(f"{target} not reached in {limit} presses; focus is on {active(page)}")


def wait_focus(page: Page, testid: str) -> None:
    """Wait until the element with ``testid`` holds the focus (a focus move follows a DOM change)."""
    page.wait_for_function("(id) => document.activeElement && document.activeElement.dataset.testid === id", arg=testid,
                           timeout=20_000)


# Every change of a live region's content (role status/alert/log or aria-live) is what a screen reader
# announces: record them, and count the stream's pushes into the messages meanwhile.
_LIVE = """() => {
  const LIVE = '[role="status"], [role="alert"], [role="log"], [aria-live]:not([aria-live="off"])';
  window.__announced = [];
  window.__pushes = 0;
  const element = (node) => node.nodeType === 1 ? node : node.parentElement;
  new MutationObserver((records) => {
    const touched = new Set();
    let pushed = false;
    for (const record of records) {
      const target = element(record.target);
      if (!target) continue;
      const region = target.closest(LIVE);
      if (region) touched.add(region);
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        if (node.matches(LIVE)) touched.add(node);
        node.querySelectorAll(LIVE).forEach((r) => touched.add(r));
      }
      if (target.closest('[data-testid="chat-messages"]')) pushed = true;
    }
    if (pushed) window.__pushes += 1;
    touched.forEach((region) => window.__announced.push({
      role: region.getAttribute("role") || "aria-live", testid: region.dataset.testid || "",
      text: region.textContent.replace(/\\s+/g, " ").trim() }));
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def record_announcements(page: Page) -> None:
    page.evaluate(_LIVE)


def announcements(page: Page) -> list[dict[str, str]]:
    return page.evaluate("() => window.__announced")


def pushes(page: Page) -> int:
    return page.evaluate("() => window.__pushes")


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found, f"{locator} has no box (not rendered)"
    return found


def header_bottom(page: Page) -> float:
    """Where the sticky header ends: what is above it is hidden behind it."""
    header = box(page.get_by_role("banner"))
    return header["y"] + header["height"]


def fully_visible(page: Page, locator: Locator) -> bool:
    """The whole element is inside the viewport and not under the sticky header."""
    b, view = box(locator), page.viewport_size
    assert view
    return (b["y"] >= header_bottom(page) - 1 and b["y"] + b["height"] <= view["height"] + 1
            and b["x"] >= -1 and b["x"] + b["width"] <= view["width"] + 1)


def horizontal_overflow(page: Page) -> int:
    """How far the page scrolls sideways (0: nothing does)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


# Interactive elements a finger has to hit, smaller than 44 x 44 CSS px. A checkbox counts with its
# label (the label is its target); links inside agent text are inline, exempt as in WCAG 2.5.5.
_SMALL_TARGETS = """() => {
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, summary,' +
    ' [tabindex]:not([tabindex="-1"])';
  const small = [];
  for (const el of document.querySelectorAll(CONTROLS)) {
    if (!el.checkVisibility({ visibilityProperty: true }) || el.closest(".ic-markdown")) continue;
    const target = ["checkbox", "radio"].includes(el.type) ? (el.closest("label") || el) : el;
    const r = target.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.width < 44 || r.height < 44) {
      const name = el.dataset.testid || el.getAttribute("aria-label") ||
        (el.innerText || el.name || "").trim().slice(0, 30);
      small.push(`${el.tagName.toLowerCase()} "${name}" ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  return small;
}"""


def small_targets(page: Page) -> list[str]:
    return page.evaluate(_SMALL_TARGETS)


def header_rows(page: Page) -> int:
    """How many rows the header's contents take (their vertical centres, grouped)."""
    centres = page.evaluate("""() => Array.from(document.querySelectorAll('header a, header button, header svg'))
      .map((el) => el.checkVisibility() && el.getBoundingClientRect())
      .filter((r) => r && r.bottom > 0)  // the skip link waits above the page until it has the focus
      .map((r) => r.y + r.height / 2)""")
    rows: list[float] = []
    for centre in sorted(centres):
        if not rows or centre - rows[-1] > 8:
            rows.append(centre)
    return len(rows)


def screenshot(page: Page, name: str) -> None:
    """The viewport as the person sees it (not the full page): test-artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
