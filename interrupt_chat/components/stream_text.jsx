// StreamText: text that streams in through Reflex's own event channel, new bytes only.
//
// The backend sends a streaming message's new text as `_call_script` events that run
// `icStream([[key, offset, text, done], ...])`: `text` belongs at character `offset` of the
// text known as `key`. The row var carries a prefix of the text (`base`), sent once; this
// component shows the longer of the two. When the page cannot continue a text (a reload or
// a reconnect missed part of it), it calls `onGap` and the backend sends the text again in
// the var. Markdown is rendered block by block: finished blocks are memoised and rendered
// once; only the block still growing is rendered again (agent text, no raw HTML: S24).
// New streamed text is drawn as plain text at once and formatted in a task of its own right
// after, so the frame that brought it finishes quickly. Text that comes in a burst (chunks closer
// than BURST_MS: an unpaced agent) stays plain until the burst pauses, or FORMAT_EVERY_MS at
// most: parsing markdown on every chunk of a burst would hold the main thread, and every chunk
// after it, behind the parser.
import { createElement as h, memo, useEffect, useSyncExternalStore } from "react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import rehypeUnwrapImages from "rehype-unwrap-images";

const MAX_ENTRIES = 400; // texts kept for keys without a mounted component (oldest dropped first)
const GAP_RETRY_MS = 2000;
const SETTLE_MS = 400; // a finished, partial row waits this long for its last chunk before asking again
const BURST_MS = 150; // chunks closer than this are a burst: the newest text waits to be formatted
const FORMAT_EVERY_MS = 1000; // a long burst is still formatted this often

// key -> {text, seeded, done, gap, queued: [[offset, text, done]], asked,
//         formatted: how much of text is drawn as markdown, at: the last arrival, formattedAt, timer, version,
//         markdown: drawn as markdown (plain texts have nothing to format later)}
const entries = new Map();
const listeners = new Map(); // key -> Set of callbacks

function entryOf(key) {
  let entry = entries.get(key);
  if (entry === undefined) {
    entry = { text: "", seeded: false, done: false, gap: false, queued: [], asked: 0,
              formatted: 0, at: 0, formattedAt: 0, timer: null, version: 0, markdown: true };
    entries.set(key, entry);
    if (entries.size > MAX_ENTRIES) {
      for (const old of entries.keys()) {
        if (!listeners.has(old)) {
          entries.delete(old);
          break;
        }
      }
    }
  }
  return entry;
}

function notify(key) {
  const callbacks = listeners.get(key);
  if (callbacks) callbacks.forEach((callback) => callback());
}

function format(entry, now) {
  entry.formatted = entry.text.length;
  entry.formattedAt = now;
}

// Format what came, in a task of its own: the new text is drawn plain first, so a frame that
// brings it is done at once. A burst is formatted when it pauses (or every FORMAT_EVERY_MS).
function schedule(key, entry, burst) {
  if (entry.timer !== null) return;
  const settle = () => {
    const now = performance.now();
    const quiet = now - entry.at;
    if (burst && quiet < BURST_MS && now - entry.formattedAt < FORMAT_EVERY_MS) {
      entry.timer = setTimeout(settle, BURST_MS - quiet);
      return;
    }
    entry.timer = null;
    if (entry.formatted === entry.text.length) return;
    format(entry, now);
    entry.version += 1;
    notify(key);
  };
  entry.timer = setTimeout(settle, burst ? BURST_MS : 0);
}

function arrived(key, entry) {
  const now = performance.now();
  const burst = now - entry.at < BURST_MS && now - entry.formattedAt < FORMAT_EVERY_MS;
  entry.at = now;
  entry.version += 1;
  if (entry.markdown) schedule(key, entry, burst);
  else format(entry, now);
}

function append(entry, offset, text, done) {
  if (offset > entry.text.length) {
    entry.gap = true; // part of the text never arrived here: wait for the var to bring it again
    return;
  }
  if (offset + text.length > entry.text.length) {
    entry.text = entry.text.slice(0, offset) + text;
  }
  if (done) entry.done = true;
}

// The var's prefix meets what the stream brought: the longer one wins when one extends the
// other; anything else means the text was replaced (a snapshot), and the var is the truth.
function seed(key, entry, base, streaming) {
  if (base.length > entry.text.length ? base.startsWith(entry.text) : !entry.text.startsWith(base)) {
    entry.text = base;
    entry.gap = false;
    entry.at = performance.now(); // the var brought text: a chunk right after it is part of a burst
    if (streaming && entry.markdown) schedule(key, entry, false); // an answer's first text: plain, formatted next
    else format(entry, entry.at);
  }
  if (!entry.seeded) {
    entry.seeded = true;
    for (const [offset, text, done] of entry.queued) append(entry, offset, text, done);
    entry.queued = [];
  }
}

if (typeof window !== "undefined") {
  window.icStream = (chunks) => {
    for (const [key, offset, text, done] of chunks) {
      const entry = entryOf(key);
      if (entry.seeded) append(entry, offset, text, done);
      else entry.queued.push([offset, text, done]);
      arrived(key, entry);
      notify(key);
    }
  };
}

// Copy reads a message's source on the page, in the click's own handler: a browser refuses a clipboard
// write that does not come from a fresh user gesture (a round trip to the server is not one). The source
// is the streamed text when it extends the var's prefix, else the var's text (a user's message as sent).
function copyText(text) {
  const fallback = () => {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand("copy");
    } finally {
      area.remove();
    }
  };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).catch(fallback);
  else fallback();
}

if (typeof window !== "undefined") {
  window.icCopy = (key, base) => {
    const entry = key ? entries.get(key) : null;
    const prefix = typeof base === "string" ? base : "";
    copyText(entry && entry.text.length >= prefix.length && entry.text.startsWith(prefix) ? entry.text : prefix);
  };
}

function subscribe(key, callback) {
  let callbacks = listeners.get(key);
  if (!callbacks) listeners.set(key, (callbacks = new Set()));
  callbacks.add(callback);
  return () => {
    callbacks.delete(callback);
    if (callbacks.size === 0) listeners.delete(key);
  };
}

// Markdown blocks: split at blank lines outside fenced code, where the next line is not indented
// (so lists and indented code stay whole). The last block is the one still growing.
function splitBlocks(text) {
  const blocks = [];
  let start = 0;
  let fence = null;
  let lineStart = 0;
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd);
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (marker && (fence === null || marker[1][0] === fence[0])) {
      fence = fence === null ? marker[1] : null;
    } else if (fence === null && line.trim() === "" && lineEnd < text.length) {
      const next = text.charAt(lineEnd + 1);
      if (next !== "" && next !== " " && next !== "\t" && next !== "\n" && lineStart > start) {
        blocks.push(text.slice(start, lineStart));
        start = lineEnd + 1;
      }
    }
    lineStart = lineEnd + 1;
  }
  blocks.push(text.slice(start));
  return blocks;
}

// Text not formatted yet, in pieces that end after a blank line: appending changes only the last
// piece, so the browser lays out one paragraph per chunk, not the whole burst so far.
function plainPieces(text) {
  const pieces = [];
  let start = 0;
  for (let at = text.indexOf("\n\n"); at !== -1; at = text.indexOf("\n\n", start)) {
    pieces.push(text.slice(start, at + 2));
    start = at + 2;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

const Plain = memo(function Plain({ source }) {
  return h("p", { className: "ic-stream-plain" }, source);
});

const REMARK = [remarkGfm];
const REHYPE = [rehypeUnwrapImages];

const Block = memo(function Block({ source }) {
  return h(Markdown, { remarkPlugins: REMARK, rehypePlugins: REHYPE }, source);
});

// The markdown parser's first run on a page costs tens of milliseconds (its code is compiled on
// first use): pay it while the page is idle after loading, not when the first answer arrives.
const WARM_UP = "# a\n\nb *c* **d** `e` ~f~ [g](https://example.com)\n\n- h\n1. i\n\n> j\n\n| k | l |\n|---|---|\n| m | n |\n";
if (typeof window !== "undefined") {
  const warm = () => Markdown({ children: WARM_UP, remarkPlugins: REMARK, rehypePlugins: REHYPE });
  if (window.requestIdleCallback) window.requestIdleCallback(warm, { timeout: 2000 });
  else setTimeout(warm, 500);
}

export function StreamText({ streamKey, base, streaming, markdown, element, className, onGap, ...rest }) {
  const key = streamKey || "";
  const entry = key ? entryOf(key) : null;
  if (entry) {
    entry.markdown = Boolean(markdown);
    seed(key, entry, base ?? "", streaming);
  }
  useSyncExternalStore(
    (callback) => (key ? subscribe(key, callback) : () => {}),
    () => (entry ? entry.version : -1),
    () => -1,
  );
  const text = entry ? entry.text : base ?? "";
  useEffect(() => {
    if (!entry || !onGap) return undefined;
    const missing = () => entry.gap || (!streaming && !entry.done);
    if (!missing()) return undefined;
    const ask = () => {
      if (missing() && Date.now() - entry.asked > GAP_RETRY_MS) {
        entry.asked = Date.now();
        onGap();
      }
    };
    const timer = setTimeout(ask, entry.gap ? 0 : SETTLE_MS);
    return () => clearTimeout(timer);
  });
  // a finished text is drawn formatted in the same render that ends it (the run's end: status, step)
  if (entry && !streaming && entry.formatted < text.length) format(entry, performance.now());
  let body = text;
  if (markdown) {
    const cut = entry ? Math.min(entry.formatted, text.length) : text.length;
    body = cut > 0 ? splitBlocks(text.slice(0, cut)).map((source, index) => h(Block, { key: index, source })) : [];
    if (cut < text.length) plainPieces(text.slice(cut)).forEach((source, index) => body.push(h(Plain, { key: `p${index}`, source })));
  }
  return h(element || "div", { className, ...rest }, body);
}
