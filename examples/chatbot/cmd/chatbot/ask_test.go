package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// nextWeekday returns a weekday at least a week from now, YYYY-MM-DD.
func nextWeekday() string {
	d := time.Now().UTC().AddDate(0, 0, 8)
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, 1)
	}
	return d.Format(time.DateOnly)
}

// askWith runs "chatbot ask" offline with stdin and returns its stdout and
// stderr.
func askWith(t *testing.T, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"ask", "-offline", "-data", t.TempDir()}, args...)
	if err := run(ctx, args, strings.NewReader(stdin), &out, &errOut); err != nil {
		t.Fatalf("ask: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// TestAskAnswersElicitation books a demo from the terminal: book_demo's
// form is shown on stderr field by field, the piped answers go back to the
// tool, and the answer on stdout is the booking made with them.
func TestAskAnswersElicitation(t *testing.T) {
	date := nextWeekday()
	out, errOut := askWith(t, date+"\nada@example.com\n2\n", "I would like to book a demo")
	for _, want := range []string{
		"? To book a 45-minute Acme Analytics demo, please give your work email and a date. [book_demo]",
		"Date", "Work email", "1: Insights, 2: Pipelines", "[Insights]",
		"Date — A weekday after today (YYYY-MM-DD). (required): " + date + "\n", // answers are echoed
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"DEMO-", date, "Pipelines", "ada@example.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(errOut, "declined") {
		t.Errorf("the question was declined:\n%s", errOut)
	}
}

// TestAskDeclinesOnEOF: with nothing on stdin, or with -no-input, the
// question is declined with a message instead of waiting, and no demo is
// booked.
func TestAskDeclinesOnEOF(t *testing.T) {
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		why   string
	}{
		"empty stdin": {"", nil, "declined: no answer (stdin is closed or empty)"},
		"stdin ends":  {"2030-01-07\n", nil, "declined: no answer (stdin is closed or empty)"},
		"-no-input":   {"2030-01-07\nada@example.com\n\n", []string{"-no-input"}, "declined: -no-input is set"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut := askWith(t, tc.stdin, append(tc.args, "I would like to book a demo")...)
			if !strings.Contains(errOut, tc.why) {
				t.Errorf("stderr lacks %q:\n%s", tc.why, errOut)
			}
			if !strings.Contains(out, "declined") || strings.Contains(out, "DEMO-") {
				t.Errorf("answer does not report the declined booking:\n%s", out)
			}
		})
	}
}

// TestAskReasksBadInput: each invalid answer is explained and the field
// asked again; the valid answers that follow make the booking.
func TestAskReasksBadInput(t *testing.T) {
	date := nextWeekday()
	stdin := "tomorrow\n" + date + "\n" + // not a date, then a date
		"\nnot-an-email\nada@example.com\n" + // required, not an email, then an email
		"Nope\n9\nforecast\n" // not a product, out of range, then a product by name
	out, errOut := askWith(t, stdin, "I would like to book a demo")
	for _, want := range []string{
		`✗ "tomorrow" is not a date in YYYY-MM-DD form; try again`,
		`✗ an answer is required; try again`,
		`✗ "not-an-email" is not an email address like name@company.com; try again`,
		`✗ "Nope" is not one of the choices; type its number (1 to 4) or its name; try again`,
		`✗ "9" is not one of the choices`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if n := strings.Count(errOut, "Work email"); n != 3 {
		t.Errorf("the email was asked %d times, want 3:\n%s", n, errOut)
	}
	for _, want := range []string{"DEMO-", date, "Forecast"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
}

// TestAskerQuestions answers the other kinds of question: a yes/no
// question (operator's Confirm), a choice (Choose) and a form of typed
// fields.
func TestAskerQuestions(t *testing.T) {
	for name, tc := range map[string]struct {
		q     chatevent.ElicitationRequest
		stdin string
		want  elicit.Response
	}{
		"confirm yes": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e1", Message: "Go on?", Options: []string{"yes", "no"}}},
			"maybe\ny\n",
			elicit.Response{ElicitationID: "e1", Action: elicit.Accept, Content: map[string]any{"answer": "yes"}},
		},
		"confirm no": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e2", Message: "Go on?", Options: []string{"yes", "no"}}},
			"NO\n",
			elicit.Response{ElicitationID: "e2", Action: elicit.Accept, Content: map[string]any{"answer": "no"}},
		},
		"choose by number": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e3", Message: "Which?", Options: []string{"red", "green", "blue"}}},
			"0\n3\n",
			elicit.Response{ElicitationID: "e3", Action: elicit.Accept, Content: map[string]any{"answer": "blue"}},
		},
		"choose by value": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e4", Message: "Which?", Options: []string{"red", "green", "blue"}}},
			"Green\n",
			elicit.Response{ElicitationID: "e4", Action: elicit.Accept, Content: map[string]any{"answer": "green"}},
		},
		"typed form": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e5", Message: "Details", Schema: []byte(`{"type":"object","properties":{
				"seats":{"type":"integer","minimum":1,"maximum":10},
				"ratio":{"type":"number","default":0.5},
				"remind":{"type":"boolean"},
				"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
				"tags":{"type":"array","items":{"enum":["a","b","c"]}},
				"note":{"type":"string","maxLength":3},
				"site":{"type":"string","format":"uri"}},
				"required":["seats","remind"]}`)}},
			"2.5\n11\n4\n\nx\nyes\nlarge\n1, c\ntoo long\n\nnot a uri\nhttps://example.com\n",
			elicit.Response{ElicitationID: "e5", Action: elicit.Accept, Content: map[string]any{
				"seats": int64(4), "ratio": 0.5, "remind": true, "size": "l", "tags": []string{"a", "c"}, "site": "https://example.com"}},
		},
		"eof declines": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e6", Message: "Go on?", Options: []string{"yes", "no"}}},
			"",
			elicit.Response{ElicitationID: "e6", Action: elicit.Decline},
		},
		"unfillable schema declines": {
			chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e7", Message: "Map", Schema: []byte(`{"type":"object","properties":{"m":{"type":"object"}}}`)}},
			"x\n",
			elicit.Response{ElicitationID: "e7", Action: elicit.Decline},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := newLines(strings.NewReader(tc.stdin))
			defer in.close()
			var out bytes.Buffer
			a := asker{in: in, out: &out}
			got, err := a.ask(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Response); diff != "" {
				t.Errorf("answer (-want +got):\n%s\nterminal:\n%s", diff, out.String())
			}
			if !strings.Contains(out.String(), tc.q.Message) {
				t.Errorf("the question is not shown:\n%s", out.String())
			}
		})
	}
}

// TestAskerInterrupted: a cancelled context (Ctrl-C) ends the wait for an
// answer that never comes.
func TestAskerInterrupted(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	in := newLines(r)
	defer in.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := (&asker{in: in, out: io.Discard}).ask(ctx, chatevent.ElicitationRequest{Request: elicit.Request{ElicitationID: "e", Message: "?", Options: []string{"yes", "no"}}})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ask: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ask did not return after the context was cancelled")
	}
}

// signalWriter is a buffer that closes seen once it holds want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return n, err
}

// TestAskInterrupted: Ctrl-C while ask waits for an answer cancels the
// turn and ends the command with an error that says so.
func TestAskInterrupted(t *testing.T) {
	stdin, w := io.Pipe() // open, but nothing is ever typed
	defer w.Close()
	seen := make(chan struct{})
	stderr := &signalWriter{want: "? To book", seen: seen}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"ask", "-offline", "-data", t.TempDir(), "I would like to book a demo"}, stdin, io.Discard, stderr)
	}()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("ask ended before asking: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("ask did not ask")
	}
	cancel() // what SIGINT does through signal.NotifyContext
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("ask: %v, want an interrupted error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ask did not stop after the interrupt")
	}
}

// askIn runs "chatbot ask" offline on the data directory dir.
func askIn(t *testing.T, dir string, args ...string) (stdout string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"ask", "-offline", "-data", dir, "-no-input"}, args...)
	if err := run(ctx, args, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("ask %q: %v\nstderr:\n%s", args, err, errOut.String())
	}
	return out.String()
}

// With -cognition, what one ask taught is known to the next, in another
// conversation, because ask waits for the turn's learning before it exits
// and keeps it in DATA/cognition.db; without it, nothing is learned.
func TestAskCognition(t *testing.T) {
	dir := t.TempDir()
	askIn(t, dir, "-cognition", "-conversation", "c1", "My name is Ada and I prefer short answers.")
	if out := askIn(t, dir, "-cognition", "-conversation", "c2", "What is my name?"); strings.TrimSpace(out) != "Your name is Ada." {
		t.Errorf("second ask with -cognition: %q", out)
	}
	if out := askIn(t, dir, "-cognition", "-user", "bob", "-conversation", "c3", "What is my name?"); strings.Contains(out, "Ada") {
		t.Errorf("another user's ask knows ada's name: %q", out)
	}
	off := t.TempDir()
	askIn(t, off, "-conversation", "c1", "My name is Ada and I prefer short answers.")
	if out := askIn(t, off, "-conversation", "c2", "What is my name?"); strings.Contains(out, "Ada") {
		t.Errorf("ask without -cognition knows the name: %q", out)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"ask", "-offline", "-data", off, "-user", "ada", "hi"}, strings.NewReader(""), &out, &errOut); err == nil || !strings.Contains(err.Error(), "-user needs -cognition") {
		t.Errorf("-user without -cognition: %v", err)
	}
}

// blockingLearner learns nothing until its context ends.
type blockingLearner struct{}

func (blockingLearner) Learn(ctx context.Context, _ cognition.LearnInput) (cognition.Learning, error) {
	<-ctx.Done()
	return cognition.Learning{}, ctx.Err()
}

// When the learning of ask's turn does not finish within learningWait,
// ask says so and stops it instead of hanging; when it finishes, ask says
// nothing.
func TestWaitLearningGivesUp(t *testing.T) {
	defer func(d time.Duration) { learningWait = d }(learningWait)
	learningWait = 50 * time.Millisecond
	turn := cognition.Interaction{UserID: "ada", ConversationID: "c1", Outcome: cognition.Success,
		Messages: []memory.Message{{Role: memory.RoleUser, Content: "My name is Ada."}}}

	svc, err := cognition.New(cognition.Config{Learner: blockingLearner{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Observe(turn); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if err := waitLearning(t.Context(), svc, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "did not finish within 50ms; it will not be remembered") {
		t.Errorf("stderr = %q, want a note that the learning was given up", stderr.String())
	}
	if st := svc.QueueStats(); st.Canceled != 1 || st.Running != 0 {
		t.Errorf("queue after giving up = %+v, want the task canceled and nothing running", st)
	}
	if err := svc.Close(t.Context()); err != nil {
		t.Errorf("Close after giving up: %v", err)
	}

	learned, err := cognition.New(cognition.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer learned.Close(context.Background())
	if err := learned.Observe(turn); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if err := waitLearning(t.Context(), learned, &stderr); err != nil || stderr.Len() != 0 {
		t.Errorf("waitLearning with quick learning: %v, stderr %q", err, stderr.String())
	}
	if st := learned.QueueStats(); st.Done != 1 {
		t.Errorf("queue after waiting = %+v, want the turn learned", st)
	}
}

// askErr runs "chatbot ask" offline on dir and returns its error.
func askErr(t *testing.T, dir string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"ask", "-offline", "-data", dir, "-no-input"}, args...)
	return run(ctx, args, strings.NewReader(""), io.Discard, io.Discard)
}

// -max-conversations and -max-conversation-turns (or their environment
// variables) set Config.MaxConversations and MaxConversationTurns: a
// turn past them is refused naming the setting; a value that is not a
// positive number is refused naming the flag.
func TestAskConversationBoundFlags(t *testing.T) {
	dir := t.TempDir()
	askIn(t, dir, "-max-conversations", "1", "-conversation", "c1", "What is 2+2?")
	if err := askErr(t, dir, "-max-conversations", "1", "-conversation", "c2", "What is 3+3?"); err == nil || !strings.Contains(err.Error(), "MaxConversations") {
		t.Errorf("a second conversation with -max-conversations 1: %v; want refused naming MaxConversations", err)
	}
	askIn(t, dir, "-max-conversations", "2", "-conversation", "c2", "What is 3+3?")

	t.Setenv("CHATBOT_MAX_CONVERSATION_TURNS", "1")
	if err := askErr(t, dir, "-conversation", "c1", "What is 4+4?"); err == nil || !strings.Contains(err.Error(), "MaxConversationTurns") {
		t.Errorf("a second turn with CHATBOT_MAX_CONVERSATION_TURNS=1: %v; want refused naming MaxConversationTurns", err)
	}
	askIn(t, dir, "-max-conversation-turns", "2", "-conversation", "c1", "What is 4+4?")

	for _, bad := range []string{"0", "-1", "many"} {
		if err := askErr(t, dir, "-max-conversations", bad, "hi"); err == nil || !strings.Contains(err.Error(), "-max-conversations") {
			t.Errorf("-max-conversations %s: %v; want refused naming the flag", bad, err)
		}
	}
	t.Setenv("CHATBOT_MAX_CONVERSATION_TURNS", "x")
	if err := askErr(t, dir, "hi"); err == nil || !strings.Contains(err.Error(), "CHATBOT_MAX_CONVERSATION_TURNS") {
		t.Errorf("CHATBOT_MAX_CONVERSATION_TURNS=x: %v; want refused naming it", err)
	}
}
