// Each checkpoint a run saves holds the run's metadata and its ids.
import { client, check, say } from "./lib.mjs";

const t = await client.threads.create();
const tid = t.thread_id;
let rid;
for await (const p of client.runs.stream(tid, "agent", { input: say("hi"), metadata: { user: "ada", n: 2 }, onRunCreated: (m) => { rid = m.run_id; } })) { /* drain */ }
const state = await client.threads.getState(tid);
const want = (m) => m.run_id === rid && m.thread_id === tid && m.graph_id === "agent" && typeof m.assistant_id === "string" && m.assistant_id.length > 0 &&
  m.user === "ada" && m.n === 2 && typeof m.source === "string" && typeof m.step === "number" && m.parents !== undefined;
check(want(state.metadata), "the head's metadata holds the run's metadata and ids", state.metadata);
const history = await client.threads.getHistory(tid, { limit: 20 });
check(history.length >= 3 && history.every((h) => want(h.metadata)), "every checkpoint of the run holds them", history.map((h) => h.metadata));
const byRun = await client.threads.getHistory(tid, { limit: 20, metadata: { run_id: rid } });
check(byRun.length === history.length, "the history filters by run_id", byRun.length);
// A second run's checkpoints carry its own id.
let rid2;
for await (const p of client.runs.stream(tid, "agent", { command: { resume: "yes" }, onRunCreated: (m) => { rid2 = m.run_id; } })) { /* drain */ }
const after = await client.threads.getState(tid);
check(after.metadata.run_id === rid2 && rid2 !== rid && after.metadata.user === undefined, "a later run's checkpoints carry its id and metadata", after.metadata);
