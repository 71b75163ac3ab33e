package memory_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// scriptedModel is a fake model.Model: it answers each Generate call with
// the next scripted reply and records what it was sent.
type scriptedModel struct {
	mu      sync.Mutex
	replies []scriptedReply
	calls   []model.Request
}

type scriptedReply struct {
	choices []string // text parts of the reply
	err     error
}

func (m *scriptedModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, *req)
	if len(m.replies) == 0 {
		return nil, errors.New("scriptedModel: no reply scripted")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	if r.err != nil {
		return nil, r.err
	}
	msg := model.Message{Role: model.RoleAssistant}
	for _, c := range r.choices {
		msg.Parts = append(msg.Parts, model.TextPart(c))
	}
	return &model.Response{Message: msg}, nil
}

func (m *scriptedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

func TestLLMSummarizerPrompt(t *testing.T) {
	sm := &scriptedModel{replies: []scriptedReply{{choices: []string{"  The user asked about pricing.  "}}}}
	s := &memory.LLMSummarizer{Model: sm, MaxTokens: 300}
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
	if len(sm.calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(sm.calls))
	}
	call := sm.calls[0]
	if call.MaxTokens != 300 {
		t.Errorf("MaxTokens = %d, want the configured 300", call.MaxTokens)
	}
	roles := []model.Role{}
	for _, m := range call.Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]model.Role{model.RoleSystem, model.RoleUser}, roles); diff != "" {
		t.Errorf("message roles (-want +got):\n%s", diff)
	}
	if call.Messages[0].Text() != memory.DefaultSummaryInstructions {
		t.Errorf("system prompt is not DefaultSummaryInstructions: %q", call.Messages[0].Text())
	}
	wantPrompt := "Current summary:\nThe user said hello.\n\nNew messages:\nuser: What do we charge?\ntool rag_search: $10/month\n\nUpdated summary:"
	if diff := cmp.Diff(wantPrompt, call.Messages[1].Text()); diff != "" {
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
			sm := &scriptedModel{replies: []scriptedReply{tc.reply}}
			s := &memory.LLMSummarizer{Model: sm, Instructions: tc.instr}
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
			if !strings.Contains(sm.calls[0].Messages[1].Text(), "Current summary:\n(none yet)") {
				t.Errorf("prompt does not say there is no summary yet: %q", sm.calls[0].Messages[1].Text())
			}
			if tc.instr != "" && sm.calls[0].Messages[0].Text() != tc.instr {
				t.Errorf("system prompt %q, want %q", sm.calls[0].Messages[0].Text(), tc.instr)
			}
		})
	}
	if _, err := (&memory.LLMSummarizer{}).Summarize(t.Context(), "", nil); err == nil || !strings.Contains(err.Error(), "Model is nil") {
		t.Errorf("nil Model: %v, want an error naming the field", err)
	}
}

func TestLLMSummarizerInConversations(t *testing.T) {
	sm := &scriptedModel{replies: []scriptedReply{
		{err: errors.New("503 unavailable")},
		{choices: []string{"Ada asked for the price and was told $10."}},
	}}
	c := newConversations(t, memory.ConversationConfig{Summarizer: &memory.LLMSummarizer{Model: sm}, Window: 2})
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
	last := sm.calls[1].Messages[1].Text()
	if !strings.Contains(last, "user: price?\nuser: $10\n") {
		t.Errorf("the retry did not fold both pending messages: %q", last)
	}
}
