// Assistants a client creates: create, update (a new version), getVersions,
// setLatest, search, runs of the assistant, and delete; the graphs' own
// assistants cannot be deleted.
import { client, check, say } from "./lib.mjs";

const created = await client.assistants.create({
  graphId: "agent", name: "Reviewer", description: "drafts, then asks",
  config: { configurable: { prompt: "be brief" }, tags: ["asst"] },
  context: { lang: "fr" }, metadata: { team: "x" },
});
check(created.graph_id === "agent" && created.version === 1 && created.name === "Reviewer" && created.context.lang === "fr", "assistants.create", created);
const id = created.assistant_id;
check((await client.assistants.create({ graphId: "agent", assistantId: id, ifExists: "do_nothing" })).name === "Reviewer", "assistants.create with ifExists do_nothing returns the existing one");
let conflict;
try { await client.assistants.create({ graphId: "agent", assistantId: id }); } catch (e) { conflict = e; }
check(conflict?.status === 409, "assistants.create of a taken id is 409", conflict?.message);
let unknown;
try { await client.assistants.create({ graphId: "nope" }); } catch (e) { unknown = e; }
check(unknown?.status === 404 && String(unknown?.message).includes("graph_id"), "assistants.create of an unknown graph is 404 naming graph_id", unknown?.message);

const updated = await client.assistants.update(id, { name: "Terse reviewer", metadata: { tier: 2 } });
check(updated.version === 2 && updated.name === "Terse reviewer" && updated.metadata.team === "x" && updated.metadata.tier === 2, "assistants.update makes version 2, metadata merged", updated);
const versions = await client.assistants.getVersions(id);
check(versions.length === 2 && versions[0].version === 2 && versions[1].version === 1, "assistants.getVersions, newest first", versions.map((v) => v.version));
const back = await client.assistants.setLatest(id, 1);
check(back.version === 1 && back.name === "Reviewer", "assistants.setLatest(1)", back);
check((await client.assistants.get(id)).version === 1, "assistants.get after setLatest is version 1");

const found = await client.assistants.search({ graphId: "agent" });
check(found.length === 2 && found.some((a) => a.assistant_id === id) && found.some((a) => a.metadata.created_by === "system"), "assistants.search lists the graph's own and the created one", found.map((a) => a.assistant_id));
check((await client.assistants.count({ graphId: "agent" })) === 2, "assistants.count");

const thread = await client.threads.create();
const values = await client.runs.wait(thread.thread_id, id, { input: say("hi") });
check(Array.isArray(values?.__interrupt__) && values.messages?.at(-1)?.content === "draft for: hi", "runs.wait with the assistant runs its graph", values);
const [run] = await client.runs.list(thread.thread_id);
check(run.assistant_id === id && run.kwargs.config.tags.includes("asst") && run.kwargs.context.lang === "fr", "the run names the assistant and carries its config and context", run);
check((await client.threads.get(thread.thread_id)).metadata.assistant_id === id, "the thread's metadata names the assistant");
const resumed = await client.runs.wait(thread.thread_id, id, { command: { resume: "yes" } });
check(resumed.approved === "yes", "the thread takes another run of the assistant", resumed);

let system;
try { await client.assistants.delete("agent"); } catch (e) { system = e; }
check(system?.status === 409 && String(system?.message).includes("system assistant"), "assistants.delete of a graph's own assistant is refused", system?.message);
await client.assistants.delete(id, { deleteThreads: true });
let gone;
try { await client.assistants.get(id); } catch (e) { gone = e; }
check(gone?.status === 404, "assistants.get after delete is 404", gone?.message);
let threadGone;
try { await client.threads.get(thread.thread_id); } catch (e) { threadGone = e; }
check(threadGone?.status === 404, "delete with deleteThreads deletes the assistant's threads", threadGone?.message);
