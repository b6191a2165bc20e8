// Replays recorded AG-UI runs through @ag-ui/client's own pipeline and times each run.
//
// Run by benchmarks/core_scaling.py, which installs @ag-ui/client into benchmarks/.node/ and copies
// this file there (so that its bare imports resolve). Input: a JSON file
//   {"threadId": ..., "repeats": R, "warmup": W, "runs": [{"user": {"id", "content"}, "events": [wire dicts]}, ...]}
// The first W runs are replayed once on a throwaway agent before anything is timed (JIT warm-up).
// For each repeat, a fresh agent replays every run the way an app drives a thread: addMessage(the
// user message), then runAgent(), whose pipeline is the client's default one: the outgoing input
// (prepareRunAgentInput: a structuredClone of the history), event validation (zod), chunk
// transformation, verification, defaultApplyEvents and processApplyEvents. Output (stdout, JSON):
// the milliseconds of every run of every repeat and what the agent holds at the end.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { createRequire } from "node:module";
import { AbstractAgent, HttpAgent } from "@ag-ui/client";
import { from } from "rxjs";

class Replay extends AbstractAgent {
  constructor(threadId, runs) {
    super({ threadId });
    this.runs = runs;
    this.next = 0;
  }

  run() {
    return from(this.runs[this.next++].events);
  }
}

const data = JSON.parse(readFileSync(process.argv[2], "utf8"));
// With "url" (core_scaling section 4), the runs come from that AG-UI server over SSE: HttpAgent's own
// transport (fetch, SSE parsing, JSON.parse) is timed too.
const newAgent = () => (data.url ? new HttpAgent({ url: data.url, threadId: data.threadId })
  : new Replay(data.threadId, data.runs));
const require = createRequire(import.meta.url);
const version = require("@ag-ui/client/package.json").version;
const runMs = [];
let agent = newAgent();
for (const run of data.runs.slice(0, data.warmup || 0)) {  // warm the JIT up first (untimed)
  agent.addMessage({ id: run.user.id, role: "user", content: run.user.content });
  await agent.runAgent();
}
for (let repeat = 0; repeat < data.repeats; repeat++) {
  agent = newAgent();
  const times = [];
  for (const run of data.runs) {
    const t0 = performance.now();
    agent.addMessage({ id: run.user.id, role: "user", content: run.user.content });
    await agent.runAgent();
    times.push(performance.now() - t0);
  }
  runMs.push(times);
}
const last = agent.messages[agent.messages.length - 1];
console.log(JSON.stringify({
  runtime: typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`,
  client: version,
  runMs,
  messages: agent.messages.length,
  lastId: last ? last.id : null,
  lastContent: last ? last.content : null,
}));
