// A chat page on useStream of @langchain/langgraph-sdk/react, for the
// browser test (TestUseStreamInBrowser). The query string names the API
// (api), the graph (assistant) and, once the first submit created it, the
// thread, so that a reload finds the thread and rejoins its run
// (reconnectOnMount keeps the run id in sessionStorage).
import { createRoot } from "react-dom/client";
import { useState } from "react";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(window.location.search);

function text(m) {
  return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
}

function App() {
  const [threadId, setThreadId] = useState(params.get("thread"));
  const [draft, setDraft] = useState("");
  const stream = useStream({
    apiUrl: params.get("api"),
    apiKey: params.get("key"),
    assistantId: params.get("assistant"),
    messagesKey: "messages",
    threadId,
    reconnectOnMount: true,
    onThreadId: (id) => {
      setThreadId(id);
      const q = new URLSearchParams(window.location.search);
      q.set("thread", id);
      window.history.replaceState(null, "", "?" + q.toString());
    },
    onError: (e) => {
      document.getElementById("error").textContent = String(e?.message ?? e);
    },
  });
  const question = stream.interrupt?.value?.question;
  return (
    <main>
      <p id="thread">{threadId ?? ""}</p>
      <p id="loading">{stream.isLoading ? "streaming" : "idle"}</p>
      <ol id="messages">
        {stream.messages.map((m, i) => (
          <li key={m.id ?? i} className={m.type ?? (m.getType && m.getType())}>{text(m)}</li>
        ))}
      </ol>
      {question && (
        <form id="interrupt" onSubmit={(e) => { e.preventDefault(); stream.submit(undefined, { command: { resume: "yes" } }); }}>
          <span id="question">{question}</span>
          <button id="approve" type="submit">Approve</button>
        </form>
      )}
      <form onSubmit={(e) => {
        e.preventDefault();
        stream.submit({ messages: [{ type: "human", content: draft }] });
        setDraft("");
      }}>
        <input id="text" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button id="send" type="submit">Send</button>
      </form>
      <p id="error"></p>
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
