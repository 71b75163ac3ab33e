package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/operator"
)

// sendTool records each execution (process id and arguments) in a file, so
// a test sees what ran and where.
type sendTool struct{ log string }

func (t sendTool) Definition() model.ToolDef {
	return model.ToolDef{Name: "send", Description: "Send a message.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}}}`)}
}

func (t sendTool) Call(_ context.Context, args json.RawMessage) (*model.ToolResult, error) {
	f, err := os.OpenFile(t.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), args)
	return &model.ToolResult{Content: []model.Part{model.TextPart("sent " + string(args))}}, nil
}

// approvalModel calls send and add in one turn, then answers with the
// results it read. It depends only on the request, so a second process
// continues the same conversation.
func approvalModel() *scripted {
	return &scripted{reply: func(_ int, req *model.Request) (*model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != model.RoleTool {
			return calls(call("s1", "send", `{"to":"bob"}`), call("a1", "add", `{"a":1,"b":2}`)), nil
		}
		r := toolResults(req)
		return answer(fmt.Sprintf("send: %s (error %v); add: %s", r["s1"].Text(), r["s1"].IsError, r["a1"].Text())), nil
	}}
}

func approvalAgent(t testing.TB, saver checkpoint.Saver, log string) *graph.Compiled[react.State] {
	ag, err := react.New(react.Config{
		Model:        approvalModel(),
		Tools:        []operator.Tool{sendTool{log}, addTool},
		Approve:      []string{"send"},
		Checkpointer: saver,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

func decisions(action string, rv react.Review) []react.Decision {
	switch action {
	case "approve":
		return []react.Decision{react.Approve(rv.Calls[0])}
	case "edit":
		return []react.Decision{react.Edit(rv.Calls[0], json.RawMessage(`{"to":"alice"}`))}
	default:
		return []react.Decision{react.Reject(rv.Calls[0], "do not send mail to bob")}
	}
}

// checkResumed checks the final state of a resumed run for action and the
// tool's log (the lines of the process that resumed).
func checkResumed(t *testing.T, action string, s react.State, sent []string) {
	t.Helper()
	var wantReply string
	var wantSent []string
	switch action {
	case "approve":
		wantReply, wantSent = `send: sent {"to":"bob"} (error false); add: 3`, []string{`{"to":"bob"}`}
	case "edit":
		wantReply, wantSent = `send: sent {"to":"alice"} (error false); add: 3`, []string{`{"to":"alice"}`}
	default:
		wantReply = "send: do not send mail to bob (error true); add: 3"
	}
	if s.Reply() != wantReply || s.Outcome != react.OutcomeAnswered {
		t.Fatalf("reply %q (%s), want %q", s.Reply(), s.Outcome, wantReply)
	}
	if strings.Join(sent, "|") != strings.Join(wantSent, "|") {
		t.Fatalf("send ran with %q, want %q", sent, wantSent)
	}
	// The conversation keeps the calls as run: the edit replaced the
	// assistant message in place.
	if got := string(s.Messages[1].ToolCalls()[0].Arguments); got != wantArgs(action) {
		t.Fatalf("conversation holds the call %s", got)
	}
	// Results follow the calls' order.
	if s.Messages[2].Parts[0].ToolResult.CallID != "s1" || s.Messages[3].Parts[0].ToolResult.CallID != "a1" {
		t.Fatalf("results out of call order: %+v", s.Messages[2:4])
	}
}

func wantArgs(action string) string {
	if action == "edit" {
		return `{"to":"alice"}`
	}
	return `{"to":"bob"}`
}

func TestApproval(t *testing.T) {
	for _, action := range []string{"approve", "edit", "reject"} {
		t.Run(action, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "sent.log")
			ag := approvalAgent(t, checkpoint.NewMemory(), log)
			ctx := onThread("a")
			_, err := ag.Invoke(ctx, react.Input("mail bob the sum"))
			var ie *graph.InterruptError
			if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
				t.Fatalf("err %v, want one interrupt", err)
			}
			var rv react.Review
			if err := ie.Interrupts[0].Decode(&rv); err != nil {
				t.Fatal(err)
			}
			if len(rv.Calls) != 1 || rv.Calls[0].ID != "s1" || string(rv.Calls[0].Arguments) != `{"to":"bob"}` {
				t.Fatalf("review %+v", rv)
			}
			if _, err := os.Stat(log); err == nil {
				t.Fatal("send ran before approval")
			}
			s, err := ag.Invoke(ctx, react.State{}, graph.Resume(decisions(action, rv)))
			if err != nil {
				t.Fatal(err)
			}
			checkResumed(t, action, s, sentLines(t, log, 0))
		})
	}
}

// sentLines returns the arguments send ran with, in processes other than
// skip (0: all).
func sentLines(t *testing.T, path string, skip int) []string {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pid, args, _ := strings.Cut(line, " ")
		if skip != 0 && pid == fmt.Sprint(skip) {
			continue
		}
		out = append(out, args)
	}
	return out
}

const (
	envMode   = "REACT_TEST_CHILD"
	envDB     = "REACT_TEST_CHILD_DB"
	envSchema = "REACT_TEST_CHILD_SCHEMA"
	envLog    = "REACT_TEST_CHILD_LOG"
	envOut    = "REACT_TEST_CHILD_OUT"
)

func openSaver(t testing.TB, db, schema string) (checkpoint.Saver, func()) {
	ctx := context.Background()
	if schema == "" {
		s, err := sqlite.New(ctx, sqlite.Config{Path: db})
		if err != nil {
			t.Fatal(err)
		}
		return s, func() { s.Close() }
	}
	s, err := postgres.New(ctx, postgres.Config{DSN: db, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s, s.Close
}

// TestApprovalAcrossProcesses: a process runs the agent until it pauses for
// approval and exits; a second process reads the review from the thread,
// decides and resumes, on SQLite and on PostgreSQL.
func TestApprovalAcrossProcesses(t *testing.T) {
	if mode := os.Getenv(envMode); mode != "" {
		saver, closeSaver := openSaver(t, os.Getenv(envDB), os.Getenv(envSchema))
		defer closeSaver()
		ag := approvalAgent(t, saver, os.Getenv(envLog))
		ctx := onThread("conversation")
		if mode == "ask" {
			_, err := ag.Invoke(ctx, react.Input("mail bob the sum"))
			if !errors.Is(err, graph.ErrInterrupted) {
				t.Fatalf("run ended with %v, want a pause", err)
			}
			return
		}
		snap, err := ag.Thread("conversation").State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Interrupts) != 1 {
			t.Fatalf("thread waits on %d interrupts", len(snap.Interrupts))
		}
		var rv react.Review
		if err := snap.Interrupts[0].Decode(&rv); err != nil || len(rv.Calls) != 1 || rv.Calls[0].Name != "send" {
			t.Fatalf("review %+v: %v", rv, err)
		}
		s, err := ag.Invoke(ctx, react.State{}, graph.Resume(decisions(mode, rv)))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(s)
		if err := os.WriteFile(os.Getenv(envOut), out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	stores := map[string]func(t *testing.T) (db, schema string){
		"sqlite": func(t *testing.T) (string, string) { return filepath.Join(t.TempDir(), "cp.db"), "" },
		"postgres": func(t *testing.T) (string, string) {
			_, schema := postgrestest.Schema(t, "react_")
			return postgrestest.DSN(), schema
		},
	}
	for _, store := range []string{"sqlite", "postgres"} {
		for _, action := range []string{"approve", "edit", "reject"} {
			t.Run(store+"/"+action, func(t *testing.T) {
				db, schema := stores[store](t)
				dir := t.TempDir()
				log, out := filepath.Join(dir, "sent.log"), filepath.Join(dir, "state.json")
				child := func(mode string) {
					cmd := exec.Command(os.Args[0], "-test.run=^TestApprovalAcrossProcesses$", "-test.count=1")
					cmd.Env = append(os.Environ(), envMode+"="+mode, envDB+"="+db, envSchema+"="+schema, envLog+"="+log, envOut+"="+out)
					if b, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("child %s: %v\n%s", mode, err, b)
					}
				}
				child("ask")
				if sent := sentLines(t, log, 0); len(sent) != 0 {
					t.Fatalf("send ran before approval: %q", sent)
				}
				child(action)
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				var s react.State
				if err := json.Unmarshal(data, &s); err != nil {
					t.Fatal(err)
				}
				checkResumed(t, action, s, sentLines(t, log, 0))
				// The thread, read back in this process, is the conversation.
				saver, closeSaver := openSaver(t, db, schema)
				defer closeSaver()
				snap, err := approvalAgent(t, saver, log).Thread("conversation").State(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(snap.Interrupts) != 0 || snap.Values.Reply() != s.Reply() {
					t.Fatalf("saved thread: %d interrupts, reply %q", len(snap.Interrupts), snap.Values.Reply())
				}
			})
		}
	}
}

// askTool asks a person through graph.Interrupt and returns the answer.
type askTool struct{}

func (askTool) Definition() model.ToolDef {
	return model.ToolDef{Name: "ask", Description: "Asks the user a question."}
}

func (askTool) Call(ctx context.Context, _ json.RawMessage) (*model.ToolResult, error) {
	answer, err := graph.Interrupt[string](ctx, "which city?")
	if err != nil {
		return nil, err
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart(answer)}}, nil
}

// A tool that pauses the run with graph.Interrupt pauses the agent (it is
// not reported to the model as a failed tool), and its answer reaches the
// model on resume.
func TestToolInterruptPausesRun(t *testing.T) {
	m := &scripted{reply: func(_ int, req *model.Request) (*model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != model.RoleTool {
			return calls(call("q1", "ask", `{}`)), nil
		}
		r := toolResults(req)["q1"]
		return answer(fmt.Sprintf("city %s (error %v)", r.Text(), r.IsError)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{askTool{}}, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("ask")
	_, err = ag.Invoke(ctx, react.Input("weather where I am?"))
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("err %v, want the tool's interrupt", err)
	}
	s, err := ag.Invoke(ctx, react.State{}, graph.Resume("Oslo"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Reply() != "city Oslo (error false)" {
		t.Fatalf("reply %q, want the answer given on resume", s.Reply())
	}
}
