package chatbot

import (
	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/supervisor"
	"github.com/agentgraph/agentgraph/graph"
)

// State is the chat graph's state. A conversation is one thread of the
// checkpointer: Messages and Usage accumulate over its turns, and the
// initialize node resets the per-turn fields at the start of each turn.
type State struct {
	// ConversationID names the conversation (the graph's thread).
	ConversationID string `json:"conversation_id"`
	// RequestID names the current turn's request.
	RequestID string `json:"request_id"`
	// Query is the user's message of the current turn.
	Query string `json:"query"`
	// Messages is the conversation's transcript, appended to each turn.
	Messages []Message `json:"messages"`
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
	// Usage sums the tokens of every model call of the conversation.
	Usage agent.TokenUsage `json:"usage"`
	// TurnStartUsage is Usage at the start of the turn; the turn's own
	// usage is the difference.
	TurnStartUsage agent.TokenUsage `json:"turn_start_usage"`
}

// Message is one entry of a conversation's transcript.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Field handles of State.
var (
	fConversation = graph.Replace(func(s *State) *string { return &s.ConversationID })
	fRequest      = graph.Replace(func(s *State) *string { return &s.RequestID })
	fQuery        = graph.Replace(func(s *State) *string { return &s.Query })
	fMessages     = graph.Append(func(s *State) *[]Message { return &s.Messages })
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
	fUsage           = graph.Declare(func(s *State) *agent.TokenUsage { return &s.Usage })
	fTurnStartUsage  = graph.Replace(func(s *State) *agent.TokenUsage { return &s.TurnStartUsage })
)

// TurnUsage returns the tokens of the state's current turn.
func (s State) TurnUsage() agent.TokenUsage {
	u, st := s.Usage, s.TurnStartUsage
	return agent.TokenUsage{
		InputTokens:      u.InputTokens - st.InputTokens,
		OutputTokens:     u.OutputTokens - st.OutputTokens,
		ThinkingTokens:   u.ThinkingTokens - st.ThinkingTokens,
		CacheReadTokens:  u.CacheReadTokens - st.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens - st.CacheWriteTokens,
	}
}

// addObservations returns s's observations followed by more, in a new
// slice (the state's slices are shared and read-only).
func addObservations(s State, more ...supervisor.Observation) []supervisor.Observation {
	out := make([]supervisor.Observation, 0, len(s.Observations)+len(more))
	return append(append(out, s.Observations...), more...)
}

// succeeded reports whether any observation of s holds a usable result.
func succeeded(s State) bool {
	for _, o := range s.Observations {
		if o.Err == "" && o.Content != "" {
			return true
		}
	}
	return false
}
