// A dropped stream resumed by Last-Event-ID.
import { client, check, collect, release, waitStatus, say } from "./lib.mjs";

const t = await client.threads.create();
const tid = t.thread_id;
const ac = new AbortController();
let rid;
const seen = [];
const gen = client.runs.stream(tid, "slow", {
  input: say("resume"), streamMode: ["values"], streamResumable: true, onDisconnect: "continue",
  signal: ac.signal, onRunCreated: (m) => { rid = m.run_id; },
});
try {
  for await (const part of gen) {
    seen.push(part);
    if (seen.length === 2) ac.abort(); // metadata and the input's values
  }
} catch (e) { /* aborted */ }
check(seen.length === 2 && seen.every((p) => p.id !== undefined), "the first events carry ids", seen);
check((await client.runs.get(tid, rid)).status === "running", "on_disconnect continue keeps the run going");
await release(tid);
await waitStatus(tid, rid, ["success"]);
const rest = await collect(client.runs.joinStream(tid, rid, { lastEventId: seen.at(-1).id }));
check(rest.length > 0 && Number(rest[0].id) === Number(seen.at(-1).id) + 1, "joinStream with Last-Event-ID resumes right after the last event seen", rest.map((e) => e.id));
const vals = rest.filter((e) => e.event === "values").at(-1)?.data;
check(vals?.messages?.at(-1)?.content === "slow done: resume" && rest.at(-1).event === "end", "the resumed stream carries the rest of the run and its end", rest.map((e) => e.event));
const live = await collect(client.runs.joinStream(tid, rid));
check(live.length === 1 && live[0].event === "end" && live[0].data?.status === "success", "joinStream without Last-Event-ID on a finished run gives its end alone", live);
