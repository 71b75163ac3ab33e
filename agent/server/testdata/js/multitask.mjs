// Double-texting: reject, enqueue (the default), interrupt, rollback.
import { client, check, release, waitStatus, nodeWaiting, say } from "./lib.mjs";

async function busyThread(text) {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "slow", { input: say(text) });
  await nodeWaiting(t.thread_id);
  return [t.thread_id, run.run_id];
}
const contents = (v) => v.messages.map((m) => m.content).join("|");

{ // reject: 409 while busy
  const [tid, rid] = await busyThread("first");
  let status;
  try { await client.runs.create(tid, "slow", { input: say("second"), multitaskStrategy: "reject" }); } catch (e) { status = e.status; }
  check(status === 409, "reject answers 409 while the thread is busy", status);
  await release(tid);
  check(await waitStatus(tid, rid, ["success"]) === "success", "the first run is unaffected by the rejected one");
}
{ // enqueue (default): the second run waits and runs after the first
  const [tid, rid] = await busyThread("first");
  const r2 = await client.runs.create(tid, "slow", { input: say("second") });
  check(r2.multitask_strategy === "enqueue" && r2.status === "pending", "enqueue is the default; the run waits", r2);
  await release(tid);
  check(await waitStatus(tid, rid, ["success"]) === "success", "enqueue: first run succeeds");
  await waitStatus(tid, r2.run_id, ["running"]);
  await release(tid);
  const v = await client.runs.join(tid, r2.run_id);
  check(contents(v) === "first|slow done: first|second|slow done: second", "enqueue: runs ran in order", contents(v));
}
{ // interrupt: the first run is cancelled, its input stays
  const [tid, rid] = await busyThread("first");
  const r2 = await client.runs.create(tid, "slow", { input: say("second"), multitaskStrategy: "interrupt" });
  check(await waitStatus(tid, rid, ["interrupted"]) === "interrupted", "interrupt: the first run ends interrupted");
  await waitStatus(tid, r2.run_id, ["running"]);
  await release(tid);
  const v = await client.runs.join(tid, r2.run_id);
  check(contents(v) === "first|second|slow done: second", "interrupt: the new run starts from the first one's state", contents(v));
}
{ // rollback: the first run is deleted with its checkpoints
  const [tid, rid] = await busyThread("first");
  const r2 = await client.runs.create(tid, "slow", { input: say("second"), multitaskStrategy: "rollback" });
  await waitStatus(tid, r2.run_id, ["running"]);
  let deleted = false;
  try { await client.runs.get(tid, rid); } catch (e) { deleted = e.status === 404; }
  check(deleted, "rollback: the first run is deleted");
  await release(tid);
  const v = await client.runs.join(tid, r2.run_id);
  check(contents(v) === "second|slow done: second", "rollback: the first run's input is gone", contents(v));
}
