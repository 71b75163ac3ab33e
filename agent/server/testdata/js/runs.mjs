// Background runs: create, get, list, join, joinStream, cancel.
import { client, check, collect, release, waitStatus, nodeWaiting, say } from "./lib.mjs";

const thread = await client.threads.create();
const tid = thread.thread_id;
const run = await client.runs.create(tid, "slow", { input: say("bg") });
check(run.status === "pending" || run.status === "running", "runs.create returns a pending run", run);
check((await client.threads.get(tid)).status === "busy", "thread is busy while the run is active");
const listed = await client.runs.list(tid);
check(listed.length === 1 && listed[0].run_id === run.run_id, "runs.list lists it", listed);
const joined = client.runs.join(tid, run.run_id);
await release(tid);
const values = await joined;
check(values.messages.at(-1).content === "slow done: bg", "runs.join returns the run's final values", values);
check((await client.runs.get(tid, run.run_id)).status === "success", "the run ended success");
check((await client.threads.get(tid)).status === "idle", "the thread is idle again");

// joinStream of a finished run replays its log with Last-Event-ID -1.
const replay = await collect(client.runs.joinStream(tid, run.run_id, { lastEventId: "-1" }));
check(replay[0]?.event === "metadata" && replay.at(-1).event === "end" && replay.some((e) => e.event === "values"), "joinStream with lastEventId -1 replays the whole run", replay.map((e) => e.event));

// cancel with wait: the run ends interrupted, the thread idle.
const r2 = await client.runs.create(tid, "slow", { input: say("cancel me") });
await nodeWaiting(tid);
await client.runs.cancel(tid, r2.run_id, true, "interrupt");
check((await client.runs.get(tid, r2.run_id)).status === "interrupted", "cancel(wait, interrupt) leaves the run interrupted");
check((await client.threads.get(tid)).status === "idle", "thread idle after the cancel");

// A run after the cancelled one starts from the state it left.
const r3 = client.runs.wait(tid, "slow", { input: say("next") });
await new Promise((r) => setTimeout(r, 50));
await release(tid);
const v3 = await r3;
check(v3.messages.map((m) => m.content).join("|") === "bg|slow done: bg|cancel me|next|slow done: next", "the cancelled run's input stays, the new run starts from it", v3.messages.map((m) => m.content));

// cancel with rollback deletes the run and restores the state.
const before = (await client.threads.getState(tid)).values;
const r4 = await client.runs.create(tid, "slow", { input: say("roll me back") });
await nodeWaiting(tid);
await client.runs.cancel(tid, r4.run_id, true, "rollback");
let deleted = false;
try { await client.runs.get(tid, r4.run_id); } catch (e) { deleted = e.status === 404; }
check(deleted, "cancel(rollback) deletes the run");
const restored = (await client.threads.getState(tid)).values;
check(JSON.stringify(restored) === JSON.stringify(before), "cancel(rollback) restores the thread's state", restored);

// on_disconnect cancel: dropping a /stream request cancels its run.
const ac = new AbortController();
let rid;
const gen = client.runs.stream(tid, "slow", { input: say("drop"), signal: ac.signal, onRunCreated: (m) => { rid = m.run_id; } });
try {
  for await (const part of gen) { if (part.event === "metadata") ac.abort(); }
} catch (e) { /* aborted */ }
check(await waitStatus(tid, rid, ["interrupted"]) === "interrupted", "closing a stream with on_disconnect cancel interrupts its run");
