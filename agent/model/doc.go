// Package model is agentgraph's vocabulary for talking to language models:
// the [Model] interface every provider adapter implements, the [Message]s a
// conversation is made of, the [ToolDef]s a model may call, the [Chunk]s of a
// streamed reply and the [Usage] a call reports.
//
// The package is a leaf: it imports nothing of agentgraph and no provider SDK,
// so code that only passes messages around (graph state, stores, tools) does
// not link any provider. Adapters for OpenAI, Anthropic, Ollama and any
// OpenAI-compatible server live in sub-packages of [github.com/agentgraph/agentgraph/agent].
//
// A reply streamed with [Model.Stream] never mixes kinds: each [Chunk] is
// answer text, thinking text or a piece of one tool call, and the last chunk
// ([ChunkDone]) carries the complete [Response] with its usage, exactly as
// [Model.Generate] would have returned it.
package model
