// What an assistant says of its graph, through the official client:
// getGraph (with xray), getSchemas and getSubgraphs, on the graphs
// "routed" and "nested" (prep -> child (one -> deep (two))).
import { client, check } from "./lib.mjs";

const ids = (g) => g.nodes.map((n) => n.id);
const edges = (g) => g.edges.map((e) => `${e.source}${e.conditional ? "~>" : "->"}${e.target}`).sort();

let g = await client.assistants.getGraph("routed");
check(JSON.stringify(ids(g)) === JSON.stringify(["__start__", "ask", "finish", "side", "note", "__end__"]),
  "getGraph lists START, the nodes in order and END", ids(g));
check(JSON.stringify(edges(g)) === JSON.stringify(["__start__->ask", "ask->finish", "ask~>note", "ask~>side", "finish->__end__", "note->__end__", "side->__end__"]),
  "getGraph gives static edges, and a node's declared routes as conditional", edges(g));
check(g.nodes[0].type === "schema" && g.nodes[1].type === "runnable" && g.nodes[1].data?.name === "ask", "nodes carry LangGraph's type and data", g.nodes.slice(0, 2));

const [asst] = await client.assistants.search({ graphId: "nested" });
g = await client.assistants.getGraph(asst.assistant_id);
check(JSON.stringify(ids(g)) === JSON.stringify(["__start__", "prep", "child", "__end__"]), "without xray a subgraph is one node", ids(g));
g = await client.assistants.getGraph("nested", { xray: 1 });
check(JSON.stringify(ids(g)) === JSON.stringify(["__start__", "prep", "child:one", "child:deep", "__end__"]), "xray 1 expands one level of subgraphs", ids(g));
g = await client.assistants.getGraph("nested", { xray: true });
check(JSON.stringify(ids(g)) === JSON.stringify(["__start__", "prep", "child:one", "child:deep:two", "__end__"]), "xray true expands every level", ids(g));
check(JSON.stringify(edges(g)) === JSON.stringify(["__start__->prep", "child:deep:two->__end__", "child:one->child:deep:two", "prep->child:one"]),
  "expanded subgraphs are wired to their parent's edges", edges(g));

const s = await client.assistants.getSchemas("nested");
check(s.graph_id === "nested" && s.state_schema?.type === "object" && Object.keys(s.state_schema.properties ?? {}).sort().join() === "approved,messages",
  "getSchemas gives the state's JSON Schema", s.state_schema);
check(Object.keys(s.input_schema?.properties ?? {}).join() === "messages", "the input schema holds the fields clients may write", s.input_schema);
check(s.output_schema?.properties?.approved?.type === "string" && s.config_schema?.type === "object" && s.context_schema?.type === "object",
  "output, config and context schemas are given", s);

let sub = await client.assistants.getSubgraphs("nested");
check(Object.keys(sub).join() === "child" && Object.keys(sub.child.state_schema.properties).sort().join() === "count,text",
  "getSubgraphs gives each subgraph's schemas by namespace", sub);
sub = await client.assistants.getSubgraphs("nested", { recurse: true });
check(Object.keys(sub).sort().join() === "child,child|deep", "recurse gives the subgraphs of subgraphs", Object.keys(sub));
sub = await client.assistants.getSubgraphs("nested", { namespace: "child|deep" });
check(Object.keys(sub).join() === "child|deep" && sub["child|deep"].state_schema.properties.messages !== undefined, "a namespace selects one subgraph", sub);
let status = 0;
try { await client.assistants.getSubgraphs("nested", { namespace: "nope" }); } catch (e) { status = e.status; }
check(status === 404, "an unknown namespace is 404", status);
status = 0;
try { await client.assistants.getGraph("nosuchgraph"); } catch (e) { status = e.status; }
check(status === 404, "getGraph of an unknown assistant is 404", status);
