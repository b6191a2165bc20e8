// StreamText: text that streams in through Reflex's own event channel, new bytes only.
//
// The backend sends a streaming message's new text as `_call_script` events that run
// `icStream([[key, offset, text, done], ...])`: `text` belongs at character `offset` of the
// text known as `key`. The row var carries a prefix of the text (`base`), sent once; this
// component shows the longer of the two. When the page cannot continue a text (a reload or
// a reconnect missed part of it), it calls `onGap` and the backend sends the text again in
// the var. Markdown is rendered block by block: finished blocks are memoised and rendered
// once; only the block still growing is rendered again (agent text, no raw HTML: S24).
import { createElement as h, memo, useEffect, useSyncExternalStore } from "react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import rehypeUnwrapImages from "rehype-unwrap-images";

const MAX_ENTRIES = 400; // texts kept for keys without a mounted component (oldest dropped first)
const GAP_RETRY_MS = 2000;
const SETTLE_MS = 400; // a finished, partial row waits this long for its last chunk before asking again

const entries = new Map(); // key -> {text, seeded, done, gap, queued: [[offset, text, done]], asked}
const listeners = new Map(); // key -> Set of callbacks

function entryOf(key) {
  let entry = entries.get(key);
  if (entry === undefined) {
    entry = { text: "", seeded: false, done: false, gap: false, queued: [], asked: 0 };
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
function seed(entry, base) {
  if (base.length > entry.text.length ? base.startsWith(entry.text) : !entry.text.startsWith(base)) {
    entry.text = base;
    entry.gap = false;
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
      notify(key);
    }
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

const REMARK = [remarkGfm];
const REHYPE = [rehypeUnwrapImages];

const Block = memo(function Block({ source }) {
  return h(Markdown, { remarkPlugins: REMARK, rehypePlugins: REHYPE }, source);
});

export function StreamText({ streamKey, base, streaming, markdown, element, className, onGap, ...rest }) {
  const key = streamKey || "";
  const entry = key ? entryOf(key) : null;
  if (entry) seed(entry, base ?? "");
  const text = useSyncExternalStore(
    (callback) => (key ? subscribe(key, callback) : () => {}),
    () => (entry ? entry.text : base ?? ""),
    () => base ?? "",
  );
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
  const body = markdown ? splitBlocks(text).map((source, index) => h(Block, { key: index, source })) : text;
  return h(element || "div", { className, ...rest }, body);
}
