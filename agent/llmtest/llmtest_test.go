package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/resilience"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ask sends prompt to m as one user message and returns the answer's text.
func ask(ctx context.Context, m *llmtest.Model, prompt string) (string, error) {
	resp, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User(prompt)}})
	if err != nil {
		return "", err
	}
	return resp.Text(), nil
}

func TestSequenceRulesAndDefault(t *testing.T) {
	ctx := context.Background()
	m := llmtest.New(llmtest.Text("one"), llmtest.Text("two")).
		On("weather", llmtest.Text("sunny"), llmtest.Text("rainy"))
	var got []string
	for _, p := range []string{"a", "weather?", "b", "weather again", "weather once more"} {
		s, err := ask(ctx, m, p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if diff := cmp.Diff([]string{"one", "sunny", "two", "rainy", "rainy"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err := ask(ctx, m, "c")
	if err == nil || !strings.Contains(err.Error(), "no reply scripted for call 6") {
		t.Errorf("exhausted model: err = %v", err)
	}
	m.Default(llmtest.Text("fallback"))
	if s, _ := ask(ctx, m, "d"); s != "fallback" {
		t.Errorf("default reply = %q", s)
	}
	if n := len(m.Calls()); n != 7 {
		t.Errorf("recorded %d calls, want 7", n)
	}
}

func TestStreamingAndUsage(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Text: "Hello, world", Thinking: "greet", Usage: model.Usage{InputTokens: 3, OutputTokens: 2}})
	m.SetChunkSize(5)
	var text, thinking []string
	var resp *model.Response
	req := &model.Request{Messages: []model.Message{model.User("hi")}}
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch c.Kind {
		case model.ChunkText:
			text = append(text, c.Text)
		case model.ChunkThinking:
			thinking = append(thinking, c.Text)
		case model.ChunkDone:
			resp = c.Response
		}
	}
	if diff := cmp.Diff([]string{"Hello", ", wor", "ld"}, text); diff != "" {
		t.Errorf("text chunks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"greet"}, thinking); diff != "" {
		t.Errorf("thinking chunks (-want +got):\n%s", diff)
	}
	if resp == nil || resp.Usage != (model.Usage{InputTokens: 3, OutputTokens: 2}) {
		t.Errorf("response = %+v", resp)
	}
	m.Add(llmtest.Text("abcdefgh"))
	n := 0
	for _, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 || m.Remaining() != 0 {
		t.Errorf("a consumer that stops reading ends the stream: %d chunks, %d replies left", n, m.Remaining())
	}
}

func TestInjectedErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		class resilience.Class
		check func(error) bool
	}{
		{"transient", llmtest.Transient(), resilience.Unknown, func(err error) bool {
			var pe *agent.ProviderError
			return errors.As(err, &pe) && pe.StatusCode == 503
		}},
		{"rate limit", llmtest.RateLimited(time.Second), resilience.Unknown, func(err error) bool {
			var pe *agent.ProviderError
			return errors.As(err, &pe) && pe.StatusCode == 429 && pe.RetryAfter == time.Second
		}},
		{"timeout", llmtest.Timeout(), resilience.Transient, func(err error) bool {
			var ne net.Error
			return errors.As(err, &ne) && ne.Timeout()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ask(context.Background(), llmtest.New(tt.reply), "x")
			if !tt.check(err) {
				t.Errorf("err = %#v", err)
			}
			if tt.class != resilience.Unknown && resilience.Classify(err) != tt.class {
				t.Errorf("class = %v, want %v", resilience.Classify(err), tt.class)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := ask(ctx, llmtest.New(llmtest.Hang()), "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang: err = %v", err)
	}
	if _, err := ask(ctx, llmtest.New(llmtest.Reply{Text: "late", Delay: time.Hour}), "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("delay: err = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	m := llmtest.New().On("even", llmtest.Text("E")).Default(llmtest.Text("D"))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			p := "odd"
			if i%2 == 0 {
				p = "even"
			}
			s, err := ask(context.Background(), m, p)
			if err != nil || (p == "even") != (s == "E") {
				t.Errorf("%s -> %q, %v", p, s, err)
			}
		})
	}
	wg.Wait()
	if n := len(m.Calls()); n != 50 {
		t.Errorf("recorded %d calls, want 50", n)
	}
}

func ExampleModel() {
	m := llmtest.New(llmtest.Text("first"), llmtest.RateLimited(time.Millisecond)).
		On("weather", llmtest.Text("sunny"))
	ctx := context.Background()
	for _, prompt := range []string{"hello", "what's the weather?", "hello again"} {
		resp, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User(prompt)}})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(resp.Text())
	}
	// Output:
	// first
	// sunny
	// agent: llmtest: HTTP 429 (retry after 1ms): llmtest: scripted rate limit (429 too many requests)
}
