// The API note's Appendix A, extended: every core stream mode, interrupt,
// state, resume, updateState with asNode and history.
import { client, check, collect, say } from "./lib.mjs";

const [assistant] = await client.assistants.search({ graphId: "agent" });
check(assistant?.graph_id === "agent" && assistant.assistant_id === "fe096781-5601-53d2-b2f6-0d3403f7e9ca", "assistants.search finds the graph's assistant", assistant);
check((await client.assistants.get("agent")).assistant_id === assistant.assistant_id, "assistants.get by graph id");
const thread = await client.threads.create();
check(thread.status === "idle", "new thread is idle", thread);

let runId;
const events = await collect(client.runs.stream(thread.thread_id, "agent", {
  input: say("hi"),
  streamMode: ["values", "updates", "messages-tuple", "custom"],
  onRunCreated: (m) => { runId = m.run_id; },
}));
check(events[0]?.event === "metadata" && events[0].data.run_id === runId, "metadata event first, with the run id of Content-Location", events[0]);
const lastValues = events.filter((e) => e.event === "values").at(-1)?.data;
check(Array.isArray(lastValues?.__interrupt__) && lastValues.__interrupt__.length === 1 && lastValues.__interrupt__[0].value.question === "approve?", "last values event carries __interrupt__", lastValues);
const updates = events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data)[0]);
check(updates.includes("draft") && updates.includes("__interrupt__"), "updates name the nodes and the interrupt", updates);
const chunks = events.filter((e) => e.event === "messages");
check(chunks.length > 1 && chunks.every((c) => c.data[0].id === chunks[0].data[0].id && c.data[1].langgraph_node === "draft"), "messages-tuple chunks share one message id and name the node", chunks[0]);
check(chunks.map((c) => c.data[0].content).join("") === "draft for: hi", "messages-tuple chunks concatenate to the reply", chunks.map((c) => c.data[0].content));
check(events.some((e) => e.event === "custom" && e.data.step === "draft"), "custom event from the node");
check(events.at(-1).event === "end", "stream ends with end", events.at(-1));

const state = await client.threads.getState(thread.thread_id);
check(state.next.length === 1 && state.next[0] === "review" && state.tasks[0]?.interrupts?.length === 1, "state shows the pending node and its interrupt", state);
check(state.checkpoint?.checkpoint_id && state.parent_checkpoint?.checkpoint_id && state.created_at && state.metadata, "state has checkpoint, parent, metadata and created_at", state);
const t1 = await client.threads.get(thread.thread_id);
check(t1.status === "interrupted" && Object.values(t1.interrupts).flat().length === 1, "thread status is interrupted, with its interrupt", t1);

const final = await client.runs.wait(thread.thread_id, "agent", { command: { resume: "yes" } });
check(final.approved === "yes" && final.messages.at(-1).content === "final: yes", "runs.wait with command.resume returns final values", final);
check((await client.threads.get(thread.thread_id)).status === "idle", "thread back to idle");

// updateState as a node: a second run pauses at review again; the update
// as review answers it, and the next node is finish.
await client.runs.wait(thread.thread_id, "agent", { input: say("again") });
const upd = await client.threads.updateState(thread.thread_id, { values: { approved: "edited" }, asNode: "review" });
check(typeof upd.checkpoint?.checkpoint_id === "string", "updateState returns the new checkpoint", upd);
const after = await client.threads.getState(thread.thread_id);
check(after.next.length === 1 && after.next[0] === "finish" && after.values.approved === "edited", "after updateState as review, next is finish", after);
const done = await client.runs.wait(thread.thread_id, "agent", { input: null });
check(done.messages.at(-1).content === "final: edited", "a run with null input continues from the update", done);

const history = await client.threads.getHistory(thread.thread_id, { limit: 4 });
check(history.length === 4 && history[0].checkpoint.checkpoint_id !== history[1].checkpoint.checkpoint_id && history[0].parent_checkpoint.checkpoint_id === history[1].checkpoint.checkpoint_id, "getHistory lists checkpoints newest first with parent links", history.map((h) => h.checkpoint));

const found = await client.threads.search({ metadata: { graph_id: "agent" } });
check(found.some((t) => t.thread_id === thread.thread_id), "threads.search by metadata finds the thread");
await client.threads.delete(thread.thread_id);
let gone = false;
try { await client.threads.get(thread.thread_id); } catch (e) { gone = e.status === 404; }
check(gone, "a deleted thread is 404");
