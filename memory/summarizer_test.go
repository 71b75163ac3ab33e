package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms"
)

// scriptedModel is a fake llms.Model: it answers each GenerateContent call
// with the next scripted reply and records what it was sent.
type scriptedModel struct {
	mu      sync.Mutex
	replies []scriptedReply
	calls   []scriptedCall
}

type scriptedReply struct {
	choices []string
	err     error
}

type scriptedCall struct {
	messages []llms.MessageContent
	options  llms.CallOptions
}

func (m *scriptedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, scriptedCall{messages: msgs, options: o})
	if len(m.replies) == 0 {
		return nil, errors.New("scriptedModel: no reply scripted")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	if r.err != nil {
		return nil, r.err
	}
	resp := &llms.ContentResponse{}
	for _, c := range r.choices {
		resp.Choices = append(resp.Choices, &llms.ContentChoice{Content: c})
	}
	return resp, nil
}

func (m *scriptedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func textOf(mc llms.MessageContent) string {
	var b strings.Builder
	for _, p := range mc.Parts {
		if t, ok := p.(llms.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func TestLLMSummarizerPrompt(t *testing.T) {
	model := &scriptedModel{replies: []scriptedReply{{choices: []string{"  The user asked about pricing.  "}}}}
	s := &memory.LLMSummarizer{Model: model, Options: []llms.CallOption{llms.WithMaxTokens(300)}}
	got, err := s.Summarize(t.Context(), "The user said hello.", []memory.Message{
		{Role: memory.RoleUser, Content: "What do we charge?"},
		{Role: memory.RoleTool, Name: "rag_search", Content: "$10/month"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "The user asked about pricing." {
		t.Errorf("summary %q, want the model's reply trimmed", got)
	}
	if len(model.calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(model.calls))
	}
	call := model.calls[0]
	if call.options.MaxTokens != 300 {
		t.Errorf("MaxTokens = %d, want the configured 300", call.options.MaxTokens)
	}
	roles := []llms.ChatMessageType{}
	for _, m := range call.messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]llms.ChatMessageType{llms.ChatMessageTypeSystem, llms.ChatMessageTypeHuman}, roles); diff != "" {
		t.Errorf("message roles (-want +got):\n%s", diff)
	}
	if textOf(call.messages[0]) != memory.DefaultSummaryInstructions {
		t.Errorf("system prompt is not DefaultSummaryInstructions: %q", textOf(call.messages[0]))
	}
	wantPrompt := "Current summary:\nThe user said hello.\n\nNew messages:\nuser: What do we charge?\ntool rag_search: $10/month\n\nUpdated summary:"
	if diff := cmp.Diff(wantPrompt, textOf(call.messages[1])); diff != "" {
		t.Errorf("user prompt (-want +got):\n%s", diff)
	}
}

func TestLLMSummarizerReplies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reply   scriptedReply
		instr   string
		want    string
		wantErr string
	}{
		{name: "thinking block first", reply: scriptedReply{choices: []string{"", "Answer."}}, want: "Answer."},
		{name: "custom instructions", instr: "Summarize in French.", reply: scriptedReply{choices: []string{"Résumé."}}, want: "Résumé."},
		{name: "empty reply", reply: scriptedReply{choices: []string{"  "}}, wantErr: "no text"},
		{name: "no choices", reply: scriptedReply{}, wantErr: "no text"},
		{name: "model error", reply: scriptedReply{err: errors.New("429 rate limited")}, wantErr: "429 rate limited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := &scriptedModel{replies: []scriptedReply{tc.reply}}
			s := &memory.LLMSummarizer{Model: model, Instructions: tc.instr}
			got, err := s.Summarize(t.Context(), "", []memory.Message{{Role: memory.RoleUser, Content: "hi"}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("summary %q, want %q", got, tc.want)
			}
			if !strings.Contains(textOf(model.calls[0].messages[1]), "Current summary:\n(none yet)") {
				t.Errorf("prompt does not say there is no summary yet: %q", textOf(model.calls[0].messages[1]))
			}
			if tc.instr != "" && textOf(model.calls[0].messages[0]) != tc.instr {
				t.Errorf("system prompt %q, want %q", textOf(model.calls[0].messages[0]), tc.instr)
			}
		})
	}
	if _, err := (&memory.LLMSummarizer{}).Summarize(t.Context(), "", nil); err == nil || !strings.Contains(err.Error(), "Model is nil") {
		t.Errorf("nil Model: %v, want an error naming the field", err)
	}
}

func TestLLMSummarizerInConversations(t *testing.T) {
	model := &scriptedModel{replies: []scriptedReply{
		{err: errors.New("503 unavailable")},
		{choices: []string{"Ada asked for the price and was told $10."}},
	}}
	c := newConversations(t, memory.ConversationConfig{Summarizer: &memory.LLMSummarizer{Model: model}, Window: 2})
	ctx := t.Context()
	var se *memory.SummarizeError
	if err := c.Append(ctx, "c", user("price?", "$10", "thanks")...); !errors.As(err, &se) {
		t.Fatalf("first Append: %v, want a SummarizeError from the 503", err)
	}
	if err := c.Append(ctx, "c", user("bye")...); err != nil {
		t.Fatalf("second Append: %v", err)
	}
	v := mustView(t, c, "c")
	if v.Summary.Text != "Ada asked for the price and was told $10." || v.Summary.Through != 2 {
		t.Errorf("summary %+v, want the model's summary through 2", v.Summary)
	}
	last := textOf(model.calls[1].messages[1])
	if !strings.Contains(last, "user: price?\nuser: $10\n") {
		t.Errorf("the retry did not fold both pending messages: %q", last)
	}
}
