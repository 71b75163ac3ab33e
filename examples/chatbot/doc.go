// Package chatbot is agentgraph's reference chatbot: the agentic chat
// assistant of the design documents, assembled from the public packages
// as one importable wiring that another program can embed, configure and
// take apart.
//
// A [Bot] answers each message with one run of a chat graph (see
// README.md for its diagram): a supervisor decides, ReAct-style, to
// answer, call a tool, create a multi-step workflow or ask the user to
// clarify; tool and workflow results are reflected on (satisfied, need
// more, blocked) and, when several sources answered, synthesised; the
// writer streams the answer. Every step reports typed events
// (package event): [Bot.Chat] yields them to Go code and [Bot.Handler]
// serves them as Server-Sent Events, next to a JSON endpoint, the
// conversation history, the tool catalogue, health and the answers to
// tools' questions (elicitations).
//
// What it is built from:
//
//   - models: package agent's client, with the structured decisions,
//     reflections and writer of supervisor.Decide, supervisor.Reflect and
//     supervisor.Write;
//   - tools: an operator.Provider over local tools, the built-in operators
//     (package operator) and the tools of MCP servers (package mcp), the
//     bundled ones in-process by default;
//   - workflows: the executor of package workflow (workflow.NewExecutor),
//     mounted as the chat graph's workflow subgraph, runs the supervisor's
//     plans, independent steps in parallel, as tasks of the turn's run;
//   - memory: each conversation is a memory.Conversations log whose
//     summary and recent messages the supervisor sees (each turn is a
//     run of the chat graph of its own, with no checkpointer: nothing
//     resumes a turn, the next one starts from the conversation); a
//     memory.Assembler over that log, the turn's results and actions and
//     the tool catalogue gives each operator the focused context its
//     ContextRequirements ask for, in the tool subflow's context node
//     (prepare → context → execute → collect), in the synthesize node and
//     in workflow steps. Requirements no source serves stop New.
//   - documents: uploads (POST /api/v1/documents) are chunked and
//     summarised in the background by a document.Processor on the fast
//     model; the supervisor of a conversation with documents sees their
//     summaries and loads the ones a question needs with the local tool
//     load_document, which waits for processing and returns the most
//     relevant chunks (see [DocumentConfig] and README.md).
//   - cognition, opt-in ([Config].Cognition, off by default): a
//     cognition.Service remembers the users named by requests' user_id
//     across conversations. The initialize node loads the user's profile,
//     relevant memories and the bot's identity for the supervisor's and the
//     writer's prompts; after the turn, its exchange and outcome are
//     learned from in the background by a model call (see
//     [CognitionConfig], [Bot.UserProfile] and [Bot.ForgetUser]).
//
// The zero [Config] runs in demo mode with no API key and no network: the
// offline rule-based model of package offline, called directly as the
// agent.Client's model.Model (no wire: the client's registry, aliases,
// resilience and usage accounting run as with a real provider), and the
// MCP servers of package mcpservers. Setting OPENAI_API_KEY, ANTHROPIC_API_KEY
// or OLLAMA_HOST switches to a real provider (agent.ConfigFromEnv).
//
// Turns of one conversation run one at a time. A turn that is cancelled
// (its client went away) leaves nothing in the conversation, and the next
// message continues from the turn before it.
//
// Over HTTP a turn's events go through an sse.Stream. By default the
// turn belongs to its connection: a client that goes away cancels it. A
// turn sent with "resumable": true belongs to the bot instead: it runs
// until it ends (or Config.TurnTimeout passes), and its stream, kept by
// request id in a bounded registry until Config.ResumeLinger after the
// end, serves GET /api/v1/chat/stream/{request_id}, where a client
// continues after the Last-Event-ID it saw.
//
// Everything a turn makes belongs to a principal: the caller that
// Config.Tokens or Config.Authenticate recognised over HTTP, the one named
// by [WithPrincipal] in Go, or LocalPrincipal, the only one of a bot
// without authentication, which serves loopback host names only. A
// principal's conversations, resumable streams, questions, documents and
// cognition users are stored under ids of its own, so that another
// principal naming the same ids reaches nothing of its.
package chatbot
