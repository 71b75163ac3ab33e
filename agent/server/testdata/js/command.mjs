// command.update and command.goto on runs (LangGraph's Command given as a
// run's input), through the official client, on the "routed" graph: ask
// (interrupt) -> finish, with side and the task node note reached only by
// goto.
import { client, check, collect, say } from "./lib.mjs";

const contents = (v) => (v?.messages ?? []).map((m) => m.content);

const t = await client.threads.create();
const tid = t.thread_id;
await collect(client.runs.stream(tid, "routed", { input: say("hi") }));
check((await client.threads.get(tid)).status === "interrupted", "the run pauses at ask");

// Resume, update and goto in one command: the update is in the state the
// resumed step reads, and side runs beside ask.
let v = await client.runs.wait(tid, "routed", {
  command: { resume: "yes", update: { messages: [{ role: "user", content: "edit" }] }, goto: "side" },
});
check(JSON.stringify(contents(v)) === JSON.stringify(["hi", "edit", "side after: edit", "final: yes"]) && v.approved === "yes",
  "command resume + update + goto: the update merges through the reducer and side runs in the resumed step", v);
check((await client.threads.get(tid)).status === "idle", "the thread is idle after the command's run");

// goto on a finished thread, with update as [field, value] pairs.
v = await client.runs.wait(tid, "routed", { command: { update: [["approved", "again"]], goto: ["side"] } });
check(contents(v).at(-1) === "side after: final: yes" && v.approved === "again" && contents(v).length === 5,
  "goto on a finished thread runs the node; update as pairs", v);

// A Send: the task node runs with its own input.
const events = await collect(client.runs.stream(tid, "routed", {
  command: { goto: { node: "note", input: "x" } }, streamMode: ["updates"],
}));
check(events.some((e) => e.event === "updates" && e.data?.note?.messages?.[0]?.content === "note: x"),
  "goto with a Send {node, input} runs the task node with its input", events.map((e) => e.event));

// An update alone takes no step.
v = await client.runs.wait(tid, "routed", { command: { update: { approved: "z" } } });
check(v.approved === "z" && contents(v).length === 6, "command.update alone writes the state and runs no node", v);
const st = await client.threads.getState(tid);
check(st.values.approved === "z" && st.next.length === 0, "the state holds the update", st);

// Unknown nodes are refused before a run is made.
for (const [goto, name] of [["nowhere", "nowhere"], [{ node: "ghost", input: 1 }, "ghost"]]) {
  let status = 0, text = "";
  try { await client.runs.wait(tid, "routed", { command: { goto } }); } catch (e) { status = e.status; text = String(e.message ?? e); }
  check(status === 422 && text.includes(name) && text.includes("ask, finish, side, note"),
    `goto ${JSON.stringify(goto)} answers 422 naming the node and the graph's nodes`, { status, text });
}
let status = 0;
try { await client.runs.wait(tid, "routed", { command: { update: { nope: 1 } } }); } catch (e) { status = e.status; }
check(status === 422, "command.update with a key that is not a field answers 422", status);
const runs = await client.runs.list(tid);
check(runs.length === 5, "refused commands made no run", runs.length);
