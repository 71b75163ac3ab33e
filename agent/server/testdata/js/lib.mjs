// Shared by the conformance scripts: a client of the server under test
// (API, API_KEY from the environment) and a check that records failures.
import { Client } from "@langchain/langgraph-sdk";

export const api = process.env.API;
export const client = new Client({ apiUrl: api, apiKey: process.env.API_KEY ?? null });

export function check(ok, what, detail) {
  if (!ok) {
    console.error("FAIL:", what, detail === undefined ? "" : JSON.stringify(detail));
    process.exitCode = 1;
  } else console.log("ok:", what);
}

export async function collect(gen) {
  const out = [];
  for await (const part of gen) out.push(part);
  return out;
}

// release lets the "slow" graph's node on thread tid finish (a route of
// the Go test server, not of the API).
export async function release(tid) {
  const r = await fetch(`${api}/test/release/${tid}`, { method: "POST" });
  if (r.status !== 204) throw new Error(`release: ${r.status}`);
}

export async function waitStatus(tid, rid, want) {
  for (let i = 0; i < 2000; i++) {
    const run = await client.runs.get(tid, rid);
    if (want.includes(run.status)) return run.status;
    await new Promise((r) => setTimeout(r, 10));
  }
  return (await client.runs.get(tid, rid)).status;
}

export const say = (text) => ({ messages: [{ role: "user", content: text }] });

// nodeWaiting waits until the "slow" graph's node on thread tid has
// started (its run's input is then saved) and waits for its gate.
export async function nodeWaiting(tid) {
  for (let i = 0; i < 5000; i++) {
    const r = await fetch(`${api}/test/waiting/${tid}`);
    if ((await r.text()) === "true") return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the slow node never started");
}
