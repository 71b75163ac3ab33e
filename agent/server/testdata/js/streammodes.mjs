// Stream modes through the official client: the legacy messages mode's
// events, and a mode the server does not serve refused with 422 (the
// client's HTTPError) rather than streamed as nothing.
import { client, check, collect, say } from "./lib.mjs";

const thread = await client.threads.create();
const events = await collect(client.runs.stream(thread.thread_id, "agent", { input: say("hi"), streamMode: "messages" }));
const names = events.map((e) => e.event);
check(names.includes("messages/metadata") && !names.includes("messages"), "legacy messages mode sends messages/metadata, not messages-tuple events", names);
const partial = events.filter((e) => e.event === "messages/partial").map((e) => e.data[0].content);
check(partial.at(-1) === "draft for: hi" && partial.length > 1, "messages/partial carries the reply so far", partial);
const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data);
check(complete.length === 1 && complete[0].content === "draft for: hi", "messages/complete carries the message the step added", complete);
check(names.at(-1) === "end", "stream ends with end", names);

for (const mode of ["events", "debug", "tasks", "checkpoints", "tools"]) {
  let status, text;
  try {
    await collect(client.runs.stream(thread.thread_id, "agent", { input: say("hi"), streamMode: ["values", mode] }));
  } catch (e) {
    status = e.status;
    text = e.text ?? e.message;
  }
  check(status === 422 && String(text).includes(mode), `stream_mode ${mode} is refused with 422 naming it`, { status, text });
}

// A message a node writes without a model reply arrives in
// messages-tuple as one whole chunk, with the id it has in the state.
const resumed = await collect(client.runs.stream(thread.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["messages-tuple", "values"] }));
const whole = resumed.filter((e) => e.event === "messages");
const finalValues = resumed.filter((e) => e.event === "values").at(-1)?.data;
check(whole.length === 1 && whole[0].data[0].content === "final: yes" && whole[0].data[1].langgraph_node === "finish", "messages-tuple sends a node's message written without a model as one chunk", whole);
check(finalValues?.messages?.at(-1)?.content === "final: yes" && (finalValues.messages.at(-1).id ?? null) === (whole[0]?.data[0].id ?? null), "the chunk has the message's id in the state", { whole, finalValues });
