package chatbot_test

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// testPostgres returns the DSN of the test PostgreSQL server and a schema
// of the test's own (dropped when it ends), or skips the test when no
// server answers.
func testPostgres(t testing.TB) (dsn, schema string) {
	t.Helper()
	_, schema = postgrestest.Schema(t, "chatbot_")
	return postgrestest.DSN(), schema
}

// TestConversationListSurvivesRestart chats as two principals, closes the
// bot and opens another on the same store: each principal's conversation
// list is the same as before (most recent first, titled by the first
// message), and neither sees the other's. With SQLite (DataDir) and
// PostgreSQL (Config.Postgres).
func TestConversationListSurvivesRestart(t *testing.T) {
	stores := map[string]func(t *testing.T) chatbot.Config{
		"sqlite": func(t *testing.T) chatbot.Config { return chatbot.Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) chatbot.Config {
			dsn, schema := testPostgres(t)
			return chatbot.Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline = true
			alice := chatbot.WithPrincipal(t.Context(), "alice")
			bob := chatbot.WithPrincipal(t.Context(), "bob.smith")
			turns := []struct {
				ctx        context.Context
				conv, text string
			}{
				{alice, "a1", "What is 15% of 240?"},
				{bob, "b1", "Hello!"},
				{alice, "a2", "How much does the Team plan cost?"},
				{alice, "a1", "And 20% of 240?"},
			}
			bot, err := chatbot.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range turns {
				for _, err := range bot.Chat(tr.ctx, chatbot.Request{ConversationID: tr.conv, Message: tr.text}) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := bot.Close(t.Context()); err != nil {
				t.Fatal(err)
			}

			bot, err = chatbot.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close(context.Background())
			type entry struct{ ID, Title string }
			list := func(ctx context.Context) []entry {
				l, err := bot.Conversations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var out []entry
				for _, c := range l {
					out = append(out, entry{c.ID, c.Title})
				}
				return out
			}
			if diff := cmp.Diff([]entry{{"a1", "What is 15% of 240?"}, {"a2", "How much does the Team plan cost?"}}, list(alice)); diff != "" {
				t.Errorf("alice's list after restart (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]entry{{"b1", "Hello!"}}, list(bob)); diff != "" {
				t.Errorf("bob's list after restart (-want +got):\n%s", diff)
			}
			if l := list(chatbot.WithPrincipal(t.Context(), "carol")); len(l) != 0 {
				t.Errorf("carol lists %v", l)
			}
		})
	}
}

// testNATS returns the URL of the test NATS server (JetStream enabled),
// or skips the test when none answers.
func testNATS(t testing.TB) string {
	t.Helper()
	url := os.Getenv("AGENTGRAPH_TEST_NATS")
	if url == "" {
		url = "nats://127.0.0.1:4222"
	}
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second), nats.MaxReconnects(0))
	if err != nil {
		t.Skipf("NATS is not reachable at %s (%v); start nats-server -js or point AGENTGRAPH_TEST_NATS at one to run this test", url, err)
	}
	nc.Close()
	return url
}

// testLease is the instances' Config.InstanceLease in these tests.
const testLease = 2 * time.Second

// sharedConfig is the configuration of instances that share one
// PostgreSQL schema and one NATS prefix, both the test's own (the
// JetStream stream is deleted when the test ends).
func sharedConfig(t testing.TB) chatbot.Config {
	t.Helper()
	dsn, schema := testPostgres(t)
	url := testNATS(t)
	prefix := strings.ReplaceAll(schema, "_", "-")
	t.Cleanup(func() {
		nc, err := nats.Connect(url)
		if err != nil {
			return
		}
		defer nc.Close()
		if js, err := jetstream.New(nc); err == nil {
			_ = js.DeleteStream(context.Background(), prefix+"-turns")
		}
	})
	return chatbot.Config{Offline: true, Postgres: dsn, PostgresSchema: schema, NATS: url, NATSPrefix: prefix, InstanceLease: testLease}
}

// twoInstances starts two bots on one PostgreSQL schema and NATS prefix.
func twoInstances(t *testing.T) (cfg chatbot.Config, a, b *httptest.Server) {
	cfg = sharedConfig(t)
	_, a = serve(t, cfg, 10*time.Second)
	_, b = serve(t, cfg, 10*time.Second)
	return cfg, a, b
}

// readTurn reads a chat or resume response's events until the stream
// ends or stop says so.
func readTurn(t *testing.T, resp *http.Response, stop func(event.Event) bool) []event.Event {
	t.Helper()
	var evs []event.Event
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		evs = append(evs, ev)
		if stop != nil && stop(ev) {
			break
		}
	}
	return evs
}

// resumeOn GETs a turn's stream on srv after event id after.
func resumeOn(t *testing.T, ctx context.Context, srv *httptest.Server, requestID string, after uint64) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/chat/stream/"+requestID, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", strconv.FormatUint(after, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("resuming %s: %s", requestID, resp.Status)
	}
	return resp
}

// TestInstancesShareConversations starts a conversation on instance A and
// continues it on B: B answers from the history A wrote, and lists it.
func TestInstancesShareConversations(t *testing.T) {
	_, a, b := twoInstances(t)
	chat(t, a, "shared-1", "What is 15% of 240?")
	chat(t, b, "shared-1", "How much does the Team plan cost?")
	msgs := history(t, b, "shared-1")
	if diff := cmp.Diff([]string{"user", "assistant", "user", "assistant"}, roles(msgs)); diff != "" {
		t.Fatalf("history on B (-want +got):\n%s", diff)
	}
	if msgs[0].Content != "What is 15% of 240?" {
		t.Errorf("first message %q", msgs[0].Content)
	}
	var health struct{ Stores []chatbot.StoreHealth }
	getJSON(t, b.URL+"/health", &health)
	if diff := cmp.Diff([]chatbot.StoreHealth{{File: "postgres", OK: true}, {File: "nats", OK: true}}, health.Stores); diff != "" {
		t.Errorf("health's stores (-want +got):\n%s", diff)
	}
	var list struct{ Conversations []chatbot.ConversationSummary }
	getJSON(t, b.URL+"/api/v1/conversations", &list)
	if len(list.Conversations) != 1 || list.Conversations[0].ID != "shared-1" || list.Conversations[0].Title != "What is 15% of 240?" {
		t.Errorf("B lists %+v", list.Conversations)
	}
}

// TestInstancesResumeStream drops a resumable turn's stream on A after two
// events and resumes it on B with Last-Event-ID: together the two
// connections carry every event exactly once, in order, to response.done.
func TestInstancesResumeStream(t *testing.T) {
	_, a, b := twoInstances(t)
	resumeStream(t, a, b)
}

// TestInstancesResumeStreamPostgres is TestInstancesResumeStream on
// instances that share only PostgreSQL: the turn is journaled there
// (event/postgres) and followed with LISTEN/NOTIFY.
func TestInstancesResumeStreamPostgres(t *testing.T) {
	cfg := postgresConfig(t)
	_, a := serve(t, cfg, 10*time.Second)
	_, b := serve(t, cfg, 10*time.Second)
	resumeStream(t, a, b)
}

// postgresConfig is the configuration of instances that share one
// PostgreSQL schema and no NATS.
func postgresConfig(t testing.TB) chatbot.Config {
	t.Helper()
	dsn, schema := testPostgres(t)
	return chatbot.Config{Offline: true, Postgres: dsn, PostgresSchema: schema, InstanceLease: testLease}
}

// resumeStream drops a resumable turn's stream on a after two events and
// resumes it on b.
func resumeStream(t *testing.T, a, b *httptest.Server) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	actx, drop := context.WithCancel(ctx)
	resp := postChat(t, actx, a.URL, `{"conversation_id": "resume-1", "request_id": "r-1", "resumable": true, "message": "Compare our pricing to competitors"}`)
	got := readTurn(t, resp, func(ev event.Event) bool { return ev.Seq == 2 })
	drop()
	resp.Body.Close()

	resp = resumeOn(t, ctx, b, "r-1", 2)
	defer resp.Body.Close()
	got = append(got, readTurn(t, resp, nil)...)
	for i, ev := range got {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has id %d; ids %v", i, ev.Seq, eventIDs(got))
		}
	}
	if last := got[len(got)-1].Type; last != chatevent.TypeResponseDone {
		t.Errorf("last event %s, want response.done; ids %v", last, eventIDs(got))
	}
	if len(got) < 5 {
		t.Errorf("only %d events", len(got))
	}
	// Another principal cannot: without authentication every request is
	// the local principal's, so check an id nobody used.
	r404, err := http.Get(b.URL + "/api/v1/chat/stream/r-unknown")
	if err != nil {
		t.Fatal(err)
	}
	r404.Body.Close()
	if r404.StatusCode != http.StatusNotFound {
		t.Errorf("unknown stream on B: %s", r404.Status)
	}
}

func eventIDs(evs []event.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// lockWaiters counts the sessions of this database that listen for the
// releases of memory/postgres's conversation locks in schema: an
// instance opens one while a turn waits for a conversation's lock.
func lockWaiters(t *testing.T, dsn, schema string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	h := fnv.New64a()
	h.Write([]byte(pgx.Identifier{schema, "memory_locks"}.Sanitize()))
	channel := fmt.Sprintf("memory_locks_%x", h.Sum64())
	var n int
	err = conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = $1`, "LISTEN "+pgx.Identifier{channel}.Sanitize()).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestInstancesElicitationAndOrdering asks a question in a turn on A
// (which holds the conversation meanwhile), posts the same conversation
// to B, which waits in PostgreSQL for A's turn to end, answers A's
// question through B, and checks that both turns completed, one after the
// other: the history holds A's exchange, then B's.
func TestInstancesElicitationAndOrdering(t *testing.T) {
	cfg, a, b := twoInstances(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	respA := postChat(t, ctx, a.URL, `{"conversation_id": "order-1", "message": "I would like to book a demo"}`)
	defer respA.Body.Close()
	var question chatevent.ElicitationRequest
	evsA := readTurn(t, respA, func(ev event.Event) bool {
		q, ok := ev.Payload.(chatevent.ElicitationRequest)
		question = q
		return ok
	})
	if question.ElicitationID == "" {
		t.Fatalf("no question on A; events %v", turn{evsA}.types())
	}

	doneB := make(chan turn, 1)
	go func() {
		tr, err := chatErr(b, "order-1", "What is 2 + 2?")
		if err != nil {
			t.Error(err)
		}
		doneB <- tr
	}()
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for lockWaiters(t, cfg.Postgres, cfg.PostgresSchema) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("B's turn never waited for the conversation A holds")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case tr := <-doneB:
		t.Fatalf("B's turn ended while A's held the conversation: %v", tr.types())
	default:
	}

	date := nextWeekday()
	answer := postJSON(t, b.URL+"/api/v1/elicitation/respond", map[string]any{
		"elicitation_id": question.ElicitationID, "action": "accept",
		"content": map[string]any{"email": "ada@example.com", "date": date},
	})
	answer.Body.Close()
	if answer.StatusCode != http.StatusOK {
		t.Fatalf("answering A's question through B: %s", answer.Status)
	}
	trA := turn{append(evsA, readTurn(t, respA, nil)...)}
	if !strings.Contains(trA.answer(), "DEMO-") || trA.last() != chatevent.TypeResponseDone {
		t.Errorf("A's turn: last %s, answer %q", trA.last(), trA.answer())
	}
	trB := <-doneB
	if trB.last() != chatevent.TypeResponseDone {
		t.Errorf("B's turn: %v", trB.types())
	}
	msgs := history(t, a, "order-1")
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+": "+firstWords(m.Content, 4))
	}
	if len(msgs) != 4 || msgs[0].Content != "I would like to book a demo" || msgs[2].Content != "What is 2 + 2?" ||
		msgs[1].Role != "assistant" || msgs[3].Role != "assistant" {
		t.Errorf("history is not A's exchange then B's: %q", got)
	}
	// An unknown question is 404 on either instance, after the relay
	// found no instance that has it.
	unknown := postJSON(t, b.URL+"/api/v1/elicitation/respond", map[string]any{"elicitation_id": "nope", "action": "decline"})
	unknown.Body.Close()
	if unknown.StatusCode != http.StatusNotFound {
		t.Errorf("unknown question: %s", unknown.Status)
	}
}

// TestChildInstance is the instance TestInstanceKilledMidTurn starts as a
// child process and kills; alone, it does nothing (a skip would be
// counted as a test that did not run).
func TestChildInstance(t *testing.T) {
	if os.Getenv("CHATBOT_TEST_CHILD") == "" {
		return
	}
	cfg := chatbot.Config{Offline: true, Postgres: os.Getenv("CHATBOT_TEST_PG"), PostgresSchema: os.Getenv("CHATBOT_TEST_SCHEMA"),
		NATS: os.Getenv("CHATBOT_TEST_NATS"), NATSPrefix: os.Getenv("CHATBOT_TEST_PREFIX"), InstanceLease: testLease}
	bot, err := chatbot.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("URL http://%s\n", ln.Addr())
	_ = http.Serve(ln, bot.Handler()) // until the parent kills the process
}

// TestInstanceKilledMidTurn runs a turn on a child process, which asks a
// question and so holds the conversation, follows it on B, and kills the
// child with SIGKILL: the client on B gets an error event with code
// instance_lost within the instance lease (plus a heartbeat), and B then
// takes new turns on the conversation (PostgreSQL released the dead
// instance's lock with its session).
func TestInstanceKilledMidTurn(t *testing.T) {
	killedMidTurn(t, sharedConfig(t))
}

// TestInstanceKilledMidTurnPostgres is TestInstanceKilledMidTurn on
// instances that share only PostgreSQL: instance_lost comes from the
// end of the dead instance's journal writer lease, and the conversation
// is free once its lock's lease ended.
func TestInstanceKilledMidTurnPostgres(t *testing.T) {
	killedMidTurn(t, postgresConfig(t))
}

func killedMidTurn(t *testing.T, cfg chatbot.Config) {
	_, b := serve(t, cfg, 10*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildInstance$")
	child.Env = append(os.Environ(), "CHATBOT_TEST_CHILD=1", "CHATBOT_TEST_PG="+cfg.Postgres, "CHATBOT_TEST_SCHEMA="+cfg.PostgresSchema,
		"CHATBOT_TEST_NATS="+cfg.NATS, "CHATBOT_TEST_PREFIX="+cfg.NATSPrefix)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	}()
	lines := bufio.NewScanner(out)
	url := ""
	for url == "" && lines.Scan() {
		url, _ = strings.CutPrefix(lines.Text(), "URL ")
	}
	if url == "" {
		t.Fatalf("the child printed no URL: %v", lines.Err())
	}
	go func() { // keep the pipe drained
		for lines.Scan() {
		}
	}()

	resp := postChat(t, ctx, url, `{"conversation_id": "killed-1", "request_id": "r-killed", "resumable": true, "message": "I would like to book a demo"}`)
	evs := readTurn(t, resp, func(ev event.Event) bool { return ev.Type == chatevent.TypeElicitationRequest })
	resp.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].Type != chatevent.TypeElicitationRequest {
		t.Fatalf("the child's turn asked nothing: %v", turn{evs}.types())
	}
	last := evs[len(evs)-1].Seq

	follow := resumeOn(t, ctx, b, "r-killed", last)
	defer follow.Body.Close()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	rest := readTurn(t, follow, nil)
	waited := time.Since(killed)
	if len(rest) == 0 {
		t.Fatal("the stream on B ended without an event")
	}
	end := rest[len(rest)-1]
	e, ok := end.Payload.(event.Error)
	if !ok || e.Code != "instance_lost" {
		t.Fatalf("last event on B: %s %+v, want an error with code instance_lost", end.Type, end.Payload)
	}
	if end.Seq != last+1 {
		t.Errorf("error event id %d, want %d", end.Seq, last+1)
	}
	t.Logf("instance_lost %v after SIGKILL (lease %v)", waited, testLease)
	if waited > 3*testLease { // failure guard; the bound is the lease plus a heartbeat interval
		t.Errorf("instance_lost came %v after the kill; the lease is %v", waited, testLease)
	}
	tr := chat(t, b, "killed-1", "What is 2 + 2?")
	if tr.last() != chatevent.TypeResponseDone {
		t.Errorf("B's turn on the dead instance's conversation: %v", tr.types())
	}
}

// TestInstancesKeepOwnership runs alice's turn on A and checks, through B,
// that bob cannot resume its stream, answer its question or stop it
// (404, as for ids that do not exist), while alice can.
func TestInstancesKeepOwnership(t *testing.T) {
	cfg := sharedConfig(t)
	const aliceToken, bobToken = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef01"
	cfg.Tokens = map[string]string{aliceToken: "alice", bobToken: "bob"}
	_, a := serve(t, cfg, 10*time.Second)
	_, b := serve(t, cfg, 10*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	do := func(method, url, token, body string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := do(http.MethodPost, a.URL+"/api/v1/chat", aliceToken,
		`{"conversation_id": "own-1", "request_id": "own-r1", "resumable": true, "message": "I would like to book a demo"}`)
	var question chatevent.ElicitationRequest
	evs := readTurn(t, resp, func(ev event.Event) bool {
		q, ok := ev.Payload.(chatevent.ElicitationRequest)
		question = q
		return ok
	})
	resp.Body.Close()
	if question.ElicitationID == "" {
		t.Fatalf("no question; events %v", turn{evs}.types())
	}
	last := strconv.FormatUint(evs[len(evs)-1].Seq, 10)

	answer := `{"elicitation_id": "` + question.ElicitationID + `", "action": "accept", "content": {"email": "eve@example.com", "date": "` + nextWeekday() + `"}}`
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"resume", http.MethodGet, "/api/v1/chat/stream/own-r1", ""},
		{"answer", http.MethodPost, "/api/v1/elicitation/respond", answer},
		{"decline", http.MethodDelete, "/api/v1/elicitation/" + question.ElicitationID, ""},
		{"stop", http.MethodDelete, "/api/v1/chat/stream/own-r1", ""},
		{"history", http.MethodGet, "/api/v1/chat/own-1/history", ""},
	} {
		r := do(c.method, b.URL+c.path, bobToken, c.body)
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("bob's %s of alice's turn through B: %s, want 404", c.name, r.Status)
		}
	}

	follow := do(http.MethodGet, b.URL+"/api/v1/chat/stream/own-r1", aliceToken, "", "Last-Event-ID", last)
	defer follow.Body.Close()
	if follow.StatusCode != http.StatusOK {
		t.Fatalf("alice resuming through B: %s", follow.Status)
	}
	r := do(http.MethodPost, b.URL+"/api/v1/elicitation/respond", aliceToken,
		`{"elicitation_id": "`+question.ElicitationID+`", "action": "accept", "content": {"email": "ada@example.com", "date": "`+nextWeekday()+`"}}`)
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("alice answering through B: %s", r.Status)
	}
	tr := turn{readTurn(t, follow, nil)}
	if tr.last() != chatevent.TypeResponseDone || !strings.Contains(tr.answer(), "ada@example.com") {
		t.Errorf("alice's turn, followed on B: last %s, answer %q", tr.last(), tr.answer())
	}
}

// TestInstancesRefuseReusedRequestID sends a resumable turn on A and then
// one with the same request id on B: B refuses it with 400, as A does
// for a turn it still holds, so that the journal never mixes two turns.
func TestInstancesRefuseReusedRequestID(t *testing.T) {
	_, a, b := twoInstances(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const body = `{"conversation_id": "reuse-1", "request_id": "r-reused", "resumable": true, "message": "What is 15% of 240?"}`
	resp := postChat(t, ctx, a.URL, body)
	evs := readTurn(t, resp, nil)
	resp.Body.Close()
	if last := evs[len(evs)-1].Type; last != chatevent.TypeResponseDone {
		t.Fatalf("turn on A ended with %s", last)
	}
	for _, srv := range []*httptest.Server{b, a} {
		resp := postChat(t, ctx, srv.URL, body)
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "already names a resumable turn") {
			t.Errorf("reused request id on %s: %s %s", srv.URL, resp.Status, msg)
		}
	}
	resp = postChat(t, ctx, b.URL, `{"conversation_id": "reuse-1", "request_id": "r-fresh", "resumable": true, "message": "What is 15% of 240?"}`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("new request id on B: %s", resp.Status)
	}
}
