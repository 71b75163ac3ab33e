// New input on a checkpoint with pending tasks runs from that checkpoint,
// as LangGraph does: the pending tasks are superseded.
import { client, check, say } from "./lib.mjs";

const contents = (s) => s.values.messages.map((m) => m.content);

// A thread paused at an interrupt takes new input: the run starts from
// START with the input merged into the state.
let t = await client.threads.create();
let tid = t.thread_id;
await client.runs.wait(tid, "agent", { input: say("hi") });
let state = await client.threads.getState(tid);
check(state.next.length === 1 && state.next[0] === "review", "the thread paused at review", state.next);
let out = await client.runs.wait(tid, "agent", { input: say("again") });
state = await client.threads.getState(tid);
check(JSON.stringify(contents(state)) === JSON.stringify(["hi", "draft for: hi", "again", "draft for: again"]) && state.next[0] === "review",
  "input on a paused thread runs from START, the paused step superseded", { values: state.values, next: state.next });
check(out.__error__ === undefined, "the run succeeded", out);

// A past checkpoint with pending tasks given by checkpoint_id: the run
// branches from it.
const history = await client.threads.getHistory(tid, { limit: 20 });
const start = history.find((h) => h.next.includes("draft") && contents(h).length === 1);
check(start !== undefined, "the history has the checkpoint where the first input waits for draft", history.map((h) => [h.next, contents(h)]));
out = await client.runs.wait(tid, "agent", { input: say("edited"), checkpointId: start.checkpoint.checkpoint_id });
check(out.__error__ === undefined, "a run with input from a checkpoint with pending tasks succeeds", out);
state = await client.threads.getState(tid);
check(JSON.stringify(contents(state)) === JSON.stringify(["hi", "edited", "draft for: edited"]) && state.next[0] === "review",
  "the run went on from that checkpoint with the input, the pending draft superseded", { values: state.values, next: state.next });
let parent = state;
for (let i = 0; i < 10 && parent.parent_checkpoint; i++) {
  const h = (await client.threads.getHistory(tid, { limit: 50 })).find((x) => x.checkpoint.checkpoint_id === parent.parent_checkpoint.checkpoint_id);
  if (!h) break;
  parent = h;
  if (parent.checkpoint.checkpoint_id === start.checkpoint.checkpoint_id) break;
}
check(parent.checkpoint.checkpoint_id === start.checkpoint.checkpoint_id, "the new branch descends from the checkpoint given", parent.checkpoint);

// The same with a checkpoint object, as useStream sends it to edit a
// message, streamed.
const first = (await client.threads.getHistory(tid, { limit: 50 })).find((h) => h.next.includes("draft") && contents(h).length === 1);
const parts = [];
for await (const p of client.runs.stream(tid, "agent", { input: say("rewritten"), checkpoint: { checkpoint_id: first.checkpoint.checkpoint_id, checkpoint_ns: "" }, streamMode: ["values"] })) parts.push(p);
check(!parts.some((p) => p.event === "error"), "a streamed run with a checkpoint object and input has no error", parts.filter((p) => p.event === "error"));
state = await client.threads.getState(tid);
check(JSON.stringify(contents(state)) === JSON.stringify(["hi", "rewritten", "draft for: rewritten"]), "the stream branched from the checkpoint object", state.values);

// A paused checkpoint given by id (the thread's latest, paused) takes
// input too.
t = await client.threads.create();
tid = t.thread_id;
await client.runs.wait(tid, "agent", { input: say("one") });
state = await client.threads.getState(tid);
out = await client.runs.wait(tid, "agent", { input: say("two"), checkpointId: state.checkpoint.checkpoint_id });
state = await client.threads.getState(tid);
check(out.__error__ === undefined && JSON.stringify(contents(state)) === JSON.stringify(["one", "draft for: one", "two", "draft for: two"]),
  "input with the id of the paused latest checkpoint runs from START", { out, values: state.values });
