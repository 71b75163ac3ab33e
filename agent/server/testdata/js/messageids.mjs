// The ids of streamed model replies (messages-tuple) are the ids the
// replies have in the thread's state, so useStream merges them.
import { client, check, collect, say } from "./lib.mjs";

for (const graph of ["gen", "react"]) {
  const t = await client.threads.create();
  for (const text of ["first", "second"]) {
    const parts = await collect(client.runs.stream(t.thread_id, graph, { input: say(text), streamMode: ["messages-tuple", "values"] }));
    const chunks = parts.filter((p) => p.event === "messages" && p.data[0].type === "AIMessageChunk");
    const ids = [...new Set(chunks.map((p) => p.data[0].id))];
    check(chunks.length > 1 && ids.length === 1, `${graph}/${text}: the chunks of one reply share one id`, ids);
    const state = await client.threads.getState(t.thread_id);
    const reply = state.values.messages.at(-1);
    check((reply.type === "ai" || reply.role === "assistant") && reply.id === ids[0], `${graph}/${text}: the reply's id in the state is the id it streamed under`, { streamed: ids, state: reply });
    const last = parts.filter((p) => p.event === "values").at(-1).data.messages.at(-1);
    check(last.id === ids[0], `${graph}/${text}: the last values event has the reply under its streamed id`, last.id);
  }
  const state = await client.threads.getState(t.thread_id);
  const ids = state.values.messages.map((m) => m.id);
  check(ids.length === 4 && new Set(ids).size === 4, `${graph}: each message of the thread has an id of its own`, ids);
}
