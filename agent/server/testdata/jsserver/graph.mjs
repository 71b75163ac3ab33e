// The benchmark's trivial graph for LangChain's JS server, the same as the
// Go one of BenchmarkRunStream: one node that greets the input's name.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ name: Annotation(), reply: Annotation() });

export const graph = new StateGraph(State)
  .addNode("greet", (s) => ({ reply: "hi " + s.name }))
  .addEdge(START, "greet")
  .addEdge("greet", END)
  .compile();
