// Package chatevent is the chatbot's wire protocol: the events a chat turn
// streams to its client, in the shape the seed designs give them.
//
// Each type has a payload struct of the same name ([ToolProgress] is the
// payload of [TypeToolProgress]); the payloads travel in the general
// [event.Event] envelope, through an [event.Emitter] and the event/sse
// package. The catalogue covers the supervisor (supervisor.thinking,
// supervisor.decided), tools (tool.start, tool.progress, tool.content,
// tool.complete, tool.error), workflows (workflow.created,
// workflow.step.start, workflow.step.complete, workflow.complete), the
// answer (response.chunk, response.done), answers operators send directly
// (direct.response and direct.response.start, .chunk, .done), user
// interaction (elicitation.request, elicitation.response, clarify.request)
// and token.usage; failures use the general [event.Error].
//
// [NewDecoder] returns a decoder that knows the catalogue, for clients
// that read a chat stream back ([ReadEvents]).
package chatevent
