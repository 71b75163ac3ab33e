package cortexr_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/document/pdf"
	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
	"github.com/agentgraph/agentgraph/examples/internal/mermaidtest"
)

var update = flag.Bool("update", false, "rewrite testdata/graph.mmd")

func TestMain(m *testing.M) {
	code := m.Run()
	if pdfs != nil {
		pdfs.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// pdfs is the PDF extractor the tests' document stores share: preparing
// PDFium takes seconds on a loaded machine, more than a plan's time limit
// when the first search indexes the demo's PDF.
var (
	pdfs     *pdf.Extractor
	pdfsErr  error
	pdfsOnce sync.Once
)

// demoDocuments is DemoDocuments with the shared PDF extractor.
func demoDocuments(t *testing.T) *rag.Config {
	t.Helper()
	pdfsOnce.Do(func() { pdfs, pdfsErr = pdf.New(context.Background(), pdf.Config{}) })
	if pdfsErr != nil {
		t.Fatal(pdfsErr)
	}
	dc := cortexr.DemoDocuments()
	dc.PDF = pdfs
	return &dc
}

const india = "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"

const indiaPlan = `def solve():
    numbers = strings_to_chars_to_int(string="INDIA")
    total = int_list_to_exponential_sum(numbers=numbers)
    return "FINAL_ANSWER: " + str(total)
`

func newAgent(t *testing.T, cfg cortexr.Config) *cortexr.Agent {
	t.Helper()
	if cfg.Servers == nil && cfg.Documents == nil {
		cfg.Documents = demoDocuments(t)
	}
	a, err := cortexr.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

func scripted(t *testing.T, m *llmtest.Model) *agent.Client {
	t.Helper()
	c, err := agent.New(agent.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run collects a run's events; the last is the answer.
func run(t *testing.T, a *cortexr.Agent, query string) ([]cortexr.Event, *cortexr.Answer) {
	t.Helper()
	var evs []cortexr.Event
	for ev, err := range a.Run(context.Background(), query) {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[len(evs)-1].Kind != cortexr.EventAnswer {
		t.Fatalf("run did not end with an answer: %+v", evs)
	}
	return evs, evs[len(evs)-1].Answer
}

func kinds(evs []cortexr.Event) []string {
	var ks []string
	for _, e := range evs {
		ks = append(ks, string(e.Kind)+"@"+strconv.Itoa(e.Step)+"."+strconv.Itoa(e.Attempt))
	}
	return ks
}

func indiaSum() float64 {
	var s float64
	for _, r := range "INDIA" {
		s += math.Exp(float64(r))
	}
	return s
}

func TestIndiaEndToEnd(t *testing.T) {
	dir := t.TempDir()
	a := newAgent(t, cortexr.Config{MemoryDir: dir})
	evs, ans := run(t, a, india)
	if ans.Outcome != cortexr.OutcomeAnswered {
		t.Fatalf("outcome %q, want answered: %+v", ans.Outcome, ans)
	}
	got, err := strconv.ParseFloat(ans.Text, 64)
	if err != nil {
		t.Fatalf("answer %q is not a number", ans.Text)
	}
	if want := indiaSum(); math.Abs(got-want)/want > 1e-12 {
		t.Errorf("answer %v, want %v", got, want)
	}
	want := []string{"perception@1.1", "plan@1.1", "tool_call@1.1", "tool_call@1.1", "action@1.1", "answer@1.1"}
	if diff := cmp.Diff(want, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if p := evs[0].Perception; p.Fallback || !cmp.Equal(p.SelectedServers, []string{"math"}) {
		t.Errorf("perception %+v, want the math server chosen by the model", p)
	}
	if tc := evs[2].Tool; tc.Name != "strings_to_chars_to_int" || !cmp.Equal(tc.Result, []any{73.0, 78.0, 68.0, 73.0, 65.0}) {
		t.Errorf("first tool call %+v", tc)
	}

	// The session's memory is on disk, in the seed's layout.
	path := a.Memory().Path()
	if rel, _ := filepath.Rel(dir, path); !strings.HasPrefix(filepath.ToSlash(rel), time.Now().UTC().Format("2006/01/02")+"/session-") {
		t.Errorf("memory file %s is not under YYYY/MM/DD/session-…", rel)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One JSON item a line.
	var items []cortexr.MemoryItem
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var it cortexr.MemoryItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("memory line %q: %v", line, err)
		}
		items = append(items, it)
	}
	var types []string
	for _, it := range items {
		types = append(types, it.Type)
	}
	wantTypes := []string{cortexr.ItemRunStart, cortexr.ItemToolCall, cortexr.ItemToolOutput, cortexr.ItemToolCall, cortexr.ItemToolOutput, cortexr.ItemPlanOutput, cortexr.ItemFinalAnswer}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("memory items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"int_list_to_exponential_sum", "strings_to_chars_to_int"}, a.Memory().RecentSuccesses(0)); diff != "" {
		t.Errorf("recent successes (-want +got):\n%s", diff)
	}

	// The run is checkpointed on its thread.
	st, err := a.Graph().Thread(ans.Thread).State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Outcome != cortexr.OutcomeAnswered || st.Values.Answer != ans.Text {
		t.Errorf("checkpointed state %+v", st.Values)
	}
}

func TestFurtherProcessingLoopsBack(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	evs, ans := run(t, a, "Compute the factorial of 5 and then tell me whether it is greater than 100")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "yes, 120 is greater than 100" || ans.Steps != 2 {
		t.Fatalf("answer %+v, want yes after 2 steps", ans)
	}
	want := []string{"perception@1.1", "plan@1.1", "tool_call@1.1", "action@1.1", "perception@2.1", "plan@2.1", "action@2.1", "answer@2.1"}
	if diff := cmp.Diff(want, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if r := evs[3].Result; r != "FURTHER_PROCESSING_REQUIRED: 120" {
		t.Errorf("step 1 result %q", r)
	}
	// Step 2's input carries step 1's result.
	st, err := a.Graph().Thread(ans.Thread).State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if in := st.Values.Input; !strings.Contains(in, "Your last tool produced this result:\n\n120\n") || !strings.Contains(in, "Original user task: Compute the factorial of 5") {
		t.Errorf("step 2 input:\n%s", in)
	}
}

func TestStepLimitEndsGracefully(t *testing.T) {
	a := newAgent(t, cortexr.Config{MaxSteps: 1})
	_, ans := run(t, a, "Compute the factorial of 5 and then tell me whether it is greater than 100")
	if diff := cmp.Diff(cortexr.Answer{Text: "120", Outcome: cortexr.OutcomeStepLimit, Steps: 1, SessionID: ans.SessionID, Thread: ans.Thread, Metrics: ans.Metrics}, *ans); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

func TestPerceptionFallback(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"not json", "I think the math server, probably."},
		{"unknown server", `{"intent":"x","entities":[],"selected_servers":["nosuch"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := llmtest.New().
				On("perception engine", llmtest.Text(tc.reply)).
				On("Write a Starlark function", llmtest.Text("```python\n"+indiaPlan+"```"))
			a := newAgent(t, cortexr.Config{Model: scripted(t, m)})
			evs, ans := run(t, a, india)
			p := evs[0].Perception
			if !p.Fallback || !cmp.Equal(p.SelectedServers, []string{"math", "websearch", "documents"}) {
				t.Errorf("perception %+v, want the fallback to every server", p)
			}
			if got, _ := strconv.ParseFloat(ans.Text, 64); math.Abs(got-indiaSum())/indiaSum() > 1e-12 {
				t.Errorf("answer %+v", ans)
			}
			// The plan was offered the tools of every server.
			if tools := evs[1].Tools; !slices.Contains(tools, "web_search") || !slices.Contains(tools, "strings_to_chars_to_int") {
				t.Errorf("plan tools %v, want both servers'", tools)
			}
		})
	}
}

// With the memory fallback across sessions on, a failed attempt spends a
// lifeline, and the retry is offered the tools an earlier session's memory
// says worked; an unreadable earlier session is skipped.
func TestLifelineUsesMemoryOfEarlierSession(t *testing.T) {
	dir := t.TempDir()
	first := newAgent(t, cortexr.Config{MemoryDir: dir})
	run(t, first, india)
	// A newer session whose line no reader takes.
	poisoned := filepath.Join(dir, "2999", "01", "01", "session-1-ffffff.jsonl")
	if err := os.MkdirAll(filepath.Dir(poisoned), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(poisoned, []byte(`{"text":"`+strings.Repeat("x", 1<<20)+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	m := llmtest.New().
		On("perception engine", llmtest.Text(`{"intent":"look it up","entities":["INDIA"],"selected_servers":["websearch"]}`)).
		On("Write a Starlark function", llmtest.Text("def solve():\n    return 1 // 0\n"), llmtest.Text(indiaPlan))
	second := newAgent(t, cortexr.Config{Model: scripted(t, m), MemoryDir: dir, MemoryFallback: true, MemoryFallbackAcrossSessions: true})
	if second.Memory().ID() == first.Memory().ID() {
		t.Fatal("the second agent reused the first session")
	}
	evs, ans := run(t, second, india)
	if ans.Outcome != cortexr.OutcomeAnswered {
		t.Fatalf("answer %+v", ans)
	}
	want := []string{"perception@1.1", "plan@1.1", "action@1.1", "perception@1.2", "plan@1.2", "tool_call@1.2", "tool_call@1.2", "action@1.2", "answer@1.2"}
	if diff := cmp.Diff(want, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !strings.Contains(evs[2].Error, "division by zero") {
		t.Errorf("attempt 1 error %q", evs[2].Error)
	}
	if diff := cmp.Diff([]string{"fetch_page", "web_search"}, sorted(evs[1].Tools)); diff != "" {
		t.Errorf("attempt 1 tools, want the websearch server's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"int_list_to_exponential_sum", "strings_to_chars_to_int"}, sorted(evs[4].Tools)); diff != "" {
		t.Errorf("attempt 2 tools (-want +got):\n%s", diff)
	}
	var prompts []string
	for _, c := range m.Calls() {
		if strings.Contains(c.Prompt, "Write a Starlark function") {
			prompts = append(prompts, c.Prompt)
		}
	}
	if len(prompts) != 2 || !strings.Contains(prompts[1], "tools that worked before") || !strings.Contains(prompts[1], "The previous attempt failed") {
		t.Errorf("decision prompts lack the memory fallback:\n%s", strings.Join(prompts, "\n----\n"))
	}
	// Two sessions, two files.
	if first.Memory().Path() == second.Memory().Path() {
		t.Error("both sessions wrote one file")
	}
	if _, err := os.Stat(second.Memory().Path()); err != nil {
		t.Error(err)
	}
}

func sorted(xs []string) []string { return slices.Sorted(slices.Values(xs)) }

func TestLifelinesRunOut(t *testing.T) {
	m := llmtest.New().
		On("perception engine", llmtest.Text(`{"intent":"x","entities":[],"selected_servers":["math"]}`)).
		On("Write a Starlark function", llmtest.Text("def solve():\n    while True:\n        pass\n"))
	a := newAgent(t, cortexr.Config{Model: scripted(t, m), Lifelines: 1, Limits: cortexr.Limits{MaxSteps: 10_000}})
	evs, ans := run(t, a, india)
	if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, "step limit") {
		t.Errorf("answer %+v, want failed on the step limit", ans)
	}
	want := []string{"perception@1.1", "plan@1.1", "action@1.1", "perception@1.2", "plan@1.2", "action@1.2", "answer@1.2"}
	if diff := cmp.Diff(want, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCancel(t *testing.T) {
	t.Run("while the model thinks", func(t *testing.T) {
		m := llmtest.New().Default(llmtest.Hang())
		a := newAgent(t, cortexr.Config{Model: scripted(t, m)})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var gotErr error
		for _, err := range a.Run(ctx, india) {
			if err != nil {
				gotErr = err
			}
		}
		if !errors.Is(gotErr, context.DeadlineExceeded) {
			t.Errorf("error %v, want the context's", gotErr)
		}
	})
	t.Run("while the plan runs", func(t *testing.T) {
		m := llmtest.New().
			On("perception engine", llmtest.Text(`{"intent":"x","entities":[],"selected_servers":["math"]}`)).
			On("Write a Starlark function", llmtest.Text("def solve():\n    while True:\n        pass\n"))
		a := newAgent(t, cortexr.Config{Model: scripted(t, m), Limits: cortexr.Limits{MaxSteps: 1 << 62, Timeout: time.Minute}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var gotErr error
		for ev, err := range a.Run(ctx, india) {
			if ev.Kind == cortexr.EventPlan {
				time.AfterFunc(20*time.Millisecond, cancel)
			}
			if err != nil {
				gotErr = err
			}
		}
		if !errors.Is(gotErr, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", gotErr)
		}
	})
	t.Run("breaking out of the loop", func(t *testing.T) {
		a := newAgent(t, cortexr.Config{})
		n := 0
		for range a.Run(context.Background(), india) {
			n++
			break
		}
		if n != 1 {
			t.Errorf("%d events", n)
		}
	})
}

func TestEmptyQuery(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	for _, err := range a.Run(context.Background(), "  ") {
		if !errors.Is(err, cortexr.ErrEmptyQuery) {
			t.Errorf("error %v, want ErrEmptyQuery", err)
		}
	}
}

// TestMermaid keeps the README's diagram in step with the graph
// (go test -run TestMermaid -update rewrites the golden file).
func TestMermaid(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	mermaidtest.Check(t, "graph.mmd", a.Graph().Mermaid(), *update)
}

// After a failure in an earlier session, "Compute the factorial of 200"
// (too large for the math server) ends failed, with the reason, not
// answered; with the memory fallback on or off.
func TestFactorial200FailsHonestly(t *testing.T) {
	dir := t.TempDir()
	first := newAgent(t, cortexr.Config{MemoryDir: dir})
	run(t, first, india)
	run(t, first, "Compute the factorial of 200")
	for _, fallback := range []bool{false, true} {
		a := newAgent(t, cortexr.Config{MemoryDir: dir, MemoryFallback: fallback})
		evs, ans := run(t, a, "Compute the factorial of 200")
		if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, "from 0 to 170") {
			t.Fatalf("fallback %v: answer %+v; want failed with the reason", fallback, ans)
		}
		for _, e := range evs {
			if e.Kind == cortexr.EventPlan && !slices.Contains(e.Tools, "factorial") {
				t.Errorf("fallback %v: attempt %d was offered %v, not this session's tools", fallback, e.Attempt, e.Tools)
			}
		}
	}
}
