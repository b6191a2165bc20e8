// The page's copy of a chat's history rows, fed by deltas (interrupt_chat/model/history.py, decision 22).
//
// The chat's `history` var carries one delta at a time: rows from some index on (a turn ended,
// an older row changed), a page of older rows (the person scrolled up), or a reset (a thread
// shown anew: its newest page). The rows live here, in a store per chat that outlives a page
// change; a delta that does not build on what the store holds (a reconnect missed one) is a gap,
// and the page asks for a reset if none comes by itself (a reload's own reset comes with the
// page's load event). Rows a delta does not touch keep their objects, so React skips them.
import { createElement as h, useEffect, useLayoutEffect, useRef } from "react";

const stores = new Map(); // chat key -> {seq, offset, rows, atEnd, threadId}
const asked = new Map(); // chat key -> the delta seq a reset was last asked for (every reader of a store sees its gap)
const EMPTY = { seq: 0, offset: 0, rows: [], atEnd: true, threadId: "" };
const GAP_MS = 1500;
const ASK_AGAIN_MS = 3000;
const MATCH_MS = 4000; // a search's match stays marked this long

// The twin of interrupt_chat.model.history.apply: the store after `delta`, or null for a gap.
export function applyDelta(store, delta) {
  if (delta.seq === store.seq) return store;
  const rows = delta.rows ?? [];
  if (delta.reset) return { seq: delta.seq, offset: delta.start, rows, atEnd: delta.at_end, threadId: delta.thread_id };
  const end = store.offset + store.rows.length;
  if (delta.base !== store.seq || delta.start > end || delta.start + rows.length < store.offset) return null;
  const before = store.rows.slice(0, Math.max(0, delta.start - store.offset));
  const after = delta.truncate ? [] : store.rows.slice(Math.max(0, delta.start + rows.length - store.offset));
  let offset = Math.min(store.offset, delta.start);
  let held = before.concat(rows, after);
  if (delta.keep_from > offset) { // a long session drops its oldest rows (they load again on the way up)
    held = held.slice(delta.keep_from - offset);
    offset = delta.keep_from;
  }
  return { seq: delta.seq, offset, rows: held, atEnd: delta.at_end, threadId: delta.thread_id };
}

// The chat's rows: `delta` is its `history` var, `onGap` asks the backend for a reset.
export function useHistoryRows(key, delta, onGap) {
  let store = stores.get(key) ?? EMPTY;
  let gap = false;
  if (delta && delta.seq && delta.seq !== store.seq) {
    const next = applyDelta(store, delta);
    if (next === null) {
      gap = true;
    } else {
      store = next;
      stores.set(key, next); // idempotent: a render that runs twice applies the same delta once
    }
  }
  const seq = delta ? delta.seq : 0;
  useEffect(() => {
    if (!gap) return undefined;
    const timer = setTimeout(() => {
      if (asked.get(key) === seq || (stores.get(key) ?? EMPTY).seq === seq) return;
      asked.set(key, seq);
      onGap();
    }, GAP_MS);
    return () => clearTimeout(timer);
  }, [gap, key, seq]); // eslint-disable-line react-hooks/exhaustive-deps
  return store;
}

// "Earlier messages" above the oldest row the page holds, "Later messages" below its newest when
// it holds older rows only (a search's match). Each asks for the next page when the person
// scrolls towards it (`up`: upwards) and it comes within reach, or on a click (the keyboard's
// way); `at` is the index it asks from. Not before the person scrolls: a thread that opens at
// its newest page stays there. Rows that arrive above keep the person's place: the oldest row
// stays where it was. The browser's scroll anchoring does that only below the very top (at
// scrollTop 0 it lets new rows push the view down, and the button, still in reach, would ask for
// page after page), so the page keeps it itself; the button is out of the browser's anchoring.
export function HistoryMore({ at, shown, up, onMore, label, ...rest }) {
  const ref = useRef(null);
  const asked = useRef({ at: -1, time: 0 });
  const moved = useRef(false); // the person scrolled this way since the thread was shown
  const anchor = useRef(null); // up: the oldest row and its place in the view while a page is asked for
  const ask = () => { // once per index, unless the answer is long in coming (a stale request is dropped)
    const now = Date.now();
    if (asked.current.at === at && now - asked.current.time < ASK_AGAIN_MS) return;
    asked.current = { at, time: now };
    const root = ref.current && ref.current.closest("[data-chat-scroll]");
    const row = up && root ? root.querySelector("[data-message-id]") : null;
    anchor.current = row ? { row, top: placeIn(row, root) } : null;
    onMore(at);
  };
  useLayoutEffect(() => { // the page above came in (`at` moved): the oldest row back where it was
    const held = anchor.current;
    anchor.current = null;
    if (!held || !held.row.isConnected) return;
    const root = held.row.closest("[data-chat-scroll]");
    const shift = placeIn(held.row, root) - held.top;
    if (root && Math.abs(shift) >= 1) root.scrollTop += shift;
  }, [at]);
  useEffect(() => {
    const node = ref.current;
    if (!node || !shown) return undefined;
    const root = node.closest("[data-chat-scroll]");
    let last = root ? root.scrollTop : 0;
    let near = false;
    const onScroll = () => {
      const top = root.scrollTop;
      if (up ? top < last : top > last) moved.current = true;
      last = top;
      if (anchor.current) anchor.current.top = placeIn(anchor.current.row, root); // the person scrolled on
      if (near && moved.current) ask();
    };
    const observer = new IntersectionObserver((entries) => {
      near = entries.some((entry) => entry.isIntersecting);
      if (near && moved.current) ask();
    }, { root, rootMargin: "300px 0px" });
    observer.observe(node);
    if (root) root.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      observer.disconnect();
      if (root) root.removeEventListener("scroll", onScroll);
    };
  }, [at, shown, up]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!shown) return null;
  return h("button", { ...rest, ref, type: "button", onClick: ask, style: { overflowAnchor: "none" },
                       "data-at": at }, label);
}

function placeIn(row, root) { // a row's top, from the top of the scroller's view
  return row.getBoundingClientRect().top - root.getBoundingClientRect().top;
}

// A search's match: once its row is on the page, scroll it to the middle and mark it (once per delta).
// Drawn after the rows, so its effect runs once they are in the DOM.
export function HistoryFocus({ focus, seq }) {
  useEffect(() => {
    if (!focus) return;
    const row = document.querySelector(`[data-message-id="${CSS.escape(focus)}"]`);
    if (!row) return;
    row.scrollIntoView({ block: "center" });
    row.setAttribute("data-match", "true");
    const timer = setTimeout(() => row.removeAttribute("data-match"), MATCH_MS);
    return () => clearTimeout(timer);
  }, [focus, seq]);
  return null;
}
