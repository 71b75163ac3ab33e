// Thread count, copy and prune, history filters and config.recursion_limit,
// through the official client.
import { client, check, say } from "./lib.mjs";

const topic = `js-${Date.now()}`;
const a = await client.threads.create({ metadata: { topic } });
const b = await client.threads.create({ metadata: { topic } });
// "agent" drafts, then pauses in review for approval.
await client.runs.wait(a.thread_id, "agent", { input: say("hello") });
const state = await client.threads.getState(a.thread_id);
check(state.next.join() === "review", "the run paused in review", state.next);

check((await client.threads.count({ metadata: { topic } })) === 2, "count by metadata");
check((await client.threads.count({ metadata: { topic }, status: "interrupted" })) === 1, "count by metadata and status");
check((await client.threads.count({ metadata: { topic }, values: { approved: "" } })) === 1, "count by values");

const hist = await client.threads.getHistory(a.thread_id, { limit: 100 });
const step1 = await client.threads.getHistory(a.thread_id, { metadata: { step: 1, source: "loop" } });
check(hist.length >= 3 && step1.length === 1 && step1[0].metadata.step === 1 && step1[0].metadata.source === "loop", "getHistory filters by metadata", step1.map((s) => s.metadata));
const one = await client.threads.getHistory(a.thread_id, { checkpoint: hist[1].checkpoint });
check(one.length === 1 && one[0].checkpoint.checkpoint_id === hist[1].checkpoint.checkpoint_id, "getHistory selects one checkpoint", one.length);

await client.threads.patchState(a.thread_id, { reviewer: "ada" });
const patched = await client.threads.getState(a.thread_id);
check(patched.metadata.reviewer === "ada" && patched.checkpoint.checkpoint_id === state.checkpoint.checkpoint_id, "patchState labels the latest checkpoint", patched.metadata);
await client.threads.patchState({ configurable: { thread_id: a.thread_id } }, { round: "1" });
const labelled = await client.threads.getHistory(a.thread_id, { metadata: { reviewer: "ada", round: "1" } });
check(labelled.length === 1 && (await client.threads.getHistory(a.thread_id, { limit: 100 })).length === hist.length, "getHistory filters by the patched labels, and the history has no new checkpoint", labelled.length);
const strict = await client.runs.wait(a.thread_id, "agent", { command: { resume: { "no-such-interrupt": "yes" } }, strictResume: true }).catch((e) => e);
check(strict instanceof Error && strict.status === 422 && String(strict.message + (strict.text ?? "")).includes("no-such-interrupt"), "strictResume refuses an answer to an interrupt that is not waiting", String(strict));

const copy = await client.threads.copy(a.thread_id);
check(copy.thread_id !== a.thread_id && copy.metadata.topic === topic, "copy makes a new thread with the metadata", copy);
const copied = await client.threads.getState(copy.thread_id);
check(copied.next.join() === "review" && JSON.stringify(copied.values) === JSON.stringify(state.values), "the copy has the state", copied);
check((await client.threads.getHistory(copy.thread_id, { limit: 100 })).length === hist.length, "the copy has the history");
const done = await client.runs.wait(copy.thread_id, "agent", { command: { resume: "yes" } });
check(done.approved === "yes", "the copy resumes on its own", done);
check((await client.threads.getState(a.thread_id)).next.join() === "review", "the source is still paused");

const kept = await client.threads.prune([copy.thread_id], { strategy: "keep_latest" });
check(kept.pruned_count === 1, "prune keep_latest", kept);
const after = await client.threads.getHistory(copy.thread_id, { limit: 100 });
check(after.length === 1 && after[0].values.approved === "yes", "keep_latest keeps the latest state alone", after.length);
const del = await client.threads.prune([b.thread_id]);
check(del.pruned_count === 1, "prune deletes by default", del);
let status;
try { await client.threads.get(b.thread_id); } catch (e) { status = e.status; }
check(status === 404, "a pruned thread is gone", status);

let err;
try { await client.runs.wait(null, "agent", { input: say("loop"), config: { recursion_limit: 1 } }); } catch (e) { err = e; }
check(err && /recursion_limit/.test(String(err.message)), "config.recursion_limit bounds the run", String(err));
try { await client.runs.wait(null, "agent", { input: say("x"), config: { recursion_limit: 0 } }); err = null; } catch (e) { err = e; }
check(err && err.status === 422, "a recursion_limit of 0 is refused", err && err.status);
