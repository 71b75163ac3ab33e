package chatbot

import (
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
)

// State is the chat graph's state: one turn of a conversation. Each turn
// is a run of its own, with no checkpointer; the conversation's transcript
// lives in the bot's memory.Conversations, which the initialize node reads
// and the respond node appends the exchange to.
type State struct {
	// ConversationID names the conversation (scoped to its principal).
	ConversationID string `json:"conversation_id"`
	// RequestID names the current turn's request.
	RequestID string `json:"request_id"`
	// Query is the user's message of the current turn.
	Query string `json:"query"`
	// ClientContext is the request's context (Request.Context), rendered
	// for the supervisor.
	ClientContext string `json:"client_context,omitempty"`
	// User is the turn's user when cognition is on (Request.UserID, scoped
	// to the principal); empty otherwise.
	User string `json:"user,omitempty"`
	// Cognition is what is known about User, loaded by the initialize node
	// for the supervisor's and the writer's prompts.
	Cognition string `json:"cognition,omitempty"`
	// Writer is the model alias that writes the answer.
	Writer string `json:"writer,omitempty"`
	// Context is the conversation context at the start of the turn: the
	// summary of older messages and the recent ones, as text.
	Context string `json:"context,omitempty"`
	// Observations are the tool and workflow results of the turn.
	Observations []supervisor.Observation `json:"observations,omitempty"`
	// Iteration counts the supervisor's decisions this turn.
	Iteration int `json:"iteration"`
	// Decision is the supervisor's latest decision.
	Decision supervisor.Decision `json:"decision"`
	// Reflection is the latest assessment of the observations.
	Reflection supervisor.Reflection `json:"reflection"`
	// Synthesis combines several observations into one account.
	Synthesis string `json:"synthesis,omitempty"`
	// Draft is what the writer starts from: the supervisor's answer, a
	// clarifying question, or a graceful failure.
	Draft string `json:"draft,omitempty"`
	// FinalResponse is the answer sent to the user this turn.
	FinalResponse string `json:"final_response,omitempty"`
	// Blocked is true when the turn ends with a graceful failure.
	Blocked bool `json:"blocked"`
	// SentDirectResponse is true when a tool already sent its content to
	// the user, so no answer is written.
	SentDirectResponse bool `json:"sent_direct_response"`
	// Usage sums the tokens of every model call of the turn.
	Usage model.Usage `json:"usage"`
}

// Field handles of State.
var (
	fConversation = graph.Replace(func(s *State) *string { return &s.ConversationID })
	fRequest      = graph.Replace(func(s *State) *string { return &s.RequestID })
	fQuery        = graph.Replace(func(s *State) *string { return &s.Query })
	fCognition    = graph.Replace(func(s *State) *string { return &s.Cognition })
	fContext      = graph.Replace(func(s *State) *string { return &s.Context })
	fObservations = graph.Replace(func(s *State) *[]supervisor.Observation { return &s.Observations })
	// fAddObservations appends to the observations (the workflow node's
	// output, which cannot read the state it adds to).
	fAddObservations = graph.Append(func(s *State) *[]supervisor.Observation { return &s.Observations })
	fIteration       = graph.Replace(func(s *State) *int { return &s.Iteration })
	fDecision        = graph.Replace(func(s *State) *supervisor.Decision { return &s.Decision })
	fReflection      = graph.Replace(func(s *State) *supervisor.Reflection { return &s.Reflection })
	fSynthesis       = graph.Replace(func(s *State) *string { return &s.Synthesis })
	fDraft           = graph.Replace(func(s *State) *string { return &s.Draft })
	fFinal           = graph.Replace(func(s *State) *string { return &s.FinalResponse })
	fBlocked         = graph.Replace(func(s *State) *bool { return &s.Blocked })
	fDirect          = graph.Replace(func(s *State) *bool { return &s.SentDirectResponse })
	fUsage           = graph.Declare(func(s *State) *model.Usage { return &s.Usage })
)

// succeeded reports whether any observation of s holds a usable result.
func succeeded(s State) bool {
	for _, o := range s.Observations {
		if o.Err == "" && o.Content != "" {
			return true
		}
	}
	return false
}
