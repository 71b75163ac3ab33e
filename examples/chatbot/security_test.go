package chatbot_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// Tokens of the tests' principals.
const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef00"
)

var twoPrincipals = map[string]string{aliceToken: "alice", bobToken: "bob"}

// call is one HTTP request of a test: method, path (after the server's
// URL), the bearer token ("" for none), the body (JSON unless a
// Content-Type header says otherwise) and extra headers as name, value
// pairs.
func call(t *testing.T, srv *httptest.Server, method, path, token, body string, headers ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// status does call and returns the status and the body.
func status(t *testing.T, srv *httptest.Server, method, path, token, body string, headers ...string) (int, string) {
	t.Helper()
	resp := call(t, srv, method, path, token, body, headers...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// liveTurn is a chat turn whose events a test reads as they come.
type liveTurn struct {
	events chan event.Event // closed when the stream ends
	resp   *http.Response
}

// startTurn posts a chat turn as token's principal and reads its events
// in the background.
func startTurn(t *testing.T, srv *httptest.Server, token, body string) *liveTurn {
	t.Helper()
	resp := call(t, srv, http.MethodPost, "/api/v1/chat", token, body)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST /api/v1/chat %s: %s %s", body, resp.Status, b)
	}
	ot := &liveTurn{events: make(chan event.Event, 256), resp: resp}
	go func() {
		defer close(ot.events)
		defer resp.Body.Close()
		for ev, err := range chatevent.ReadEvents(resp.Body) {
			if err != nil {
				return
			}
			ot.events <- ev
		}
	}()
	return ot
}

// until reads events until one of type typ, which it returns, failing
// the test if the stream ends first or 30 s pass.
func (ot *liveTurn) until(t *testing.T, typ event.Type) event.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ot.events:
			if !ok {
				t.Fatalf("the stream ended before a %s event", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 30s", typ)
		}
	}
}

// rest reads the events left until the stream ends.
func (ot *liveTurn) rest(t *testing.T) []event.Event {
	t.Helper()
	var out []event.Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ot.events:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the stream did not end within 30s; events so far %v", out)
		}
	}
}

func answerOf(evs []event.Event) string {
	return turn{events: evs}.answer()
}

// TestAuthentication: with tokens, every /api/ request needs one of them
// (401 otherwise, also for a wrong token), while the page and /health
// stay open; Config.Authenticate lets a host service's own scheme in.
func TestAuthentication(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals,
		Authenticate: func(r *http.Request) (string, error) {
			if r.Header.Get("X-Host-Session") == "s3cret" {
				return "carol", nil
			}
			return "", errors.New("no session")
		}})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/chat", `{"message": "Hello!"}`},
		{"POST", "/api/v1/chat/sync", `{"message": "Hello!"}`},
		{"GET", "/api/v1/chat/c1/history", ""},
		{"GET", "/api/v1/chat/stream/r1", ""},
		{"GET", "/api/v1/tools", ""},
		{"GET", "/api/v1/elicitation/pending", ""},
		{"POST", "/api/v1/elicitation/respond", `{"elicitation_id": "x", "action": "decline"}`},
		{"GET", "/api/v1/documents/c1", ""},
	} {
		for _, tok := range []string{"", "not-a-token-0123456789"} {
			code, body := status(t, srv, c.method, c.path, tok, c.body)
			if code != http.StatusUnauthorized || !strings.Contains(body, "Authorization") {
				t.Errorf("%s %s with token %q: %d %s, want 401 naming Authorization", c.method, c.path, tok, code, body)
			}
		}
	}
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"message": "Hello!"}`); code != http.StatusOK {
		t.Errorf("sync with alice's token: %d %s", code, body)
	}
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", "", `{"message": "Hello!", "conversation_id": "carol-1"}`, "X-Host-Session", "s3cret"); code != http.StatusOK {
		t.Errorf("sync with the host's session: %d %s", code, body)
	}
	if code, _ := status(t, srv, "GET", "/api/v1/chat/carol-1/history", aliceToken, ""); code != http.StatusNotFound {
		t.Errorf("alice reading carol's conversation: %d, want 404", code)
	}
	for _, path := range []string{"/", "/health"} {
		if code, _ := status(t, srv, "GET", path, "", ""); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200", path, code)
		}
	}
	// /health tells everyone whether the bot is up; its servers' errors
	// only to those who may use the API.
	if _, body := status(t, srv, "GET", "/health", "", ""); strings.Contains(body, `"mcp"`) || !strings.Contains(body, `"auth":true`) {
		t.Errorf("/health without a token: %s, want no MCP details", body)
	}
	if _, body := status(t, srv, "GET", "/health", aliceToken, ""); !strings.Contains(body, `"mcp"`) {
		t.Errorf("/health with a token: %s, want the MCP servers", body)
	}
	if _, err := chatbot.New(t.Context(), chatbot.Config{Offline: true, Tokens: map[string]string{"short": "alice"}}); err == nil || !strings.Contains(err.Error(), "Config.Tokens") {
		t.Errorf("New with a short token: %v, want an error naming Config.Tokens", err)
	}
}

// TestPrincipalIsolation: everything alice makes is hers. Bob, naming
// her ids, gets 404 for her conversation's history, her resumable stream,
// her question (listing, answering, declining), her document and her
// user's profile; his own turns with her conversation and request ids are
// his own; and she goes on undisturbed.
func TestPrincipalIsolation(t *testing.T) {
	bot, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, Cognition: &chatbot.CognitionConfig{}})

	// Alice: a conversation, a user her bot learns about, a document.
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken,
		`{"conversation_id": "shared", "user_id": "ada", "message": "My name is Ada and I prefer short answers."}`); code != http.StatusOK {
		t.Fatalf("alice's first turn: %d %s", code, body)
	}
	waitLearned(t, bot.Cognition())
	code, body := status(t, srv, "POST", "/api/v1/documents", aliceToken,
		`{"conversation_id": "shared", "name": "notes.md", "content": "The gate code is 7781."}`)
	if code != http.StatusAccepted {
		t.Fatalf("alice's upload: %d %s", code, body)
	}
	var doc chatbot.DocumentInfo
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ConversationID != "shared" {
		t.Errorf("alice's document is in conversation %q, want %q as she named it", doc.ConversationID, "shared")
	}
	// A resumable turn of hers waiting on a question.
	booking := startTurn(t, srv, aliceToken, `{"conversation_id": "booking", "request_id": "r1", "resumable": true, "message": "I would like to book a demo"}`)
	q := booking.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)

	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/chat/shared/history", ""},
		{"GET", "/api/v1/chat/booking/history", ""},
		{"GET", "/api/v1/chat/stream/r1", ""},
		{"POST", "/api/v1/elicitation/respond", fmt.Sprintf(`{"elicitation_id": %q, "action": "accept", "content": {"email": "bob@evil.example", "date": %q}}`, q.ElicitationID, nextWeekday())},
		{"DELETE", "/api/v1/elicitation/" + q.ElicitationID, ""},
		{"GET", "/api/v1/documents/shared/" + doc.ID, ""},
		{"GET", "/api/v1/documents/shared/" + doc.ID + "/status", ""},
		{"DELETE", "/api/v1/documents/shared/" + doc.ID, ""},
		{"GET", "/api/v1/users/ada/profile", ""},
	} {
		if code, body := status(t, srv, c.method, c.path, bobToken, c.body); code != http.StatusNotFound {
			t.Errorf("bob: %s %s: %d %s, want 404", c.method, c.path, code, body)
		}
	}
	var pending struct{ Pending []string }
	_, body = status(t, srv, "GET", "/api/v1/elicitation/pending", bobToken, "")
	if err := json.Unmarshal([]byte(body), &pending); err != nil || len(pending.Pending) != 0 {
		t.Errorf("bob's pending questions: %s, want none", body)
	}
	var docs struct{ Documents []chatbot.DocumentInfo }
	_, body = status(t, srv, "GET", "/api/v1/documents/shared", bobToken, "")
	if err := json.Unmarshal([]byte(body), &docs); err != nil || len(docs.Documents) != 0 {
		t.Errorf("bob's documents of \"shared\": %s, want none", body)
	}
	// Forgetting "ada" as bob forgets bob's ada, not alice's.
	if code, body := status(t, srv, "DELETE", "/api/v1/users/ada", bobToken, ""); code != http.StatusOK {
		t.Errorf("bob forgetting his own ada: %d %s", code, body)
	}
	// Bob's turns with alice's ids are his own: his "shared" knows
	// nothing of hers, and his resumable "r1" is another stream.
	var sync chatbot.SyncResponse
	code, body = status(t, srv, "POST", "/api/v1/chat/sync", bobToken, `{"conversation_id": "shared", "user_id": "ada", "message": "What is my name?"}`)
	if err := json.Unmarshal([]byte(body), &sync); code != http.StatusOK || err != nil {
		t.Fatalf("bob's turn in his \"shared\": %d %s", code, body)
	}
	if strings.Contains(sync.Response, "Ada") {
		t.Errorf("bob's user ada is told alice's user's name: %q", sync.Response)
	}
	mine := startTurn(t, srv, bobToken, `{"conversation_id": "b2", "request_id": "r1", "resumable": true, "message": "Hello!"}`)
	if evs := mine.rest(t); len(evs) == 0 || evs[len(evs)-1].Type != chatevent.TypeResponseDone {
		t.Errorf("bob's resumable turn r1: %v", turn{events: evs}.types())
	}

	// Alice's question is still hers to answer, her profile and document
	// are intact, and her history holds her turn only.
	_, body = status(t, srv, "GET", "/api/v1/elicitation/pending", aliceToken, "")
	if err := json.Unmarshal([]byte(body), &pending); err != nil || len(pending.Pending) != 1 || pending.Pending[0] != q.ElicitationID {
		t.Errorf("alice's pending questions: %s, want [%s]", body, q.ElicitationID)
	}
	if code, body := status(t, srv, "POST", "/api/v1/elicitation/respond", aliceToken,
		fmt.Sprintf(`{"elicitation_id": %q, "action": "accept", "content": {"email": "ada@example.com", "date": %q}}`, q.ElicitationID, nextWeekday())); code != http.StatusOK {
		t.Fatalf("alice answering: %d %s", code, body)
	}
	if a := answerOf(booking.rest(t)); !strings.Contains(a, "ada@example.com") || strings.Contains(a, "evil") {
		t.Errorf("alice's booking answer: %q", a)
	}
	if code, body := status(t, srv, "GET", "/api/v1/users/ada/profile", aliceToken, ""); code != http.StatusOK || !strings.Contains(body, "Ada") {
		t.Errorf("alice's user ada: %d %s", code, body)
	}
	if code, _ := status(t, srv, "GET", "/api/v1/documents/shared/"+doc.ID, aliceToken, ""); code != http.StatusOK {
		t.Errorf("alice's document: %d", code)
	}
	var hist struct{ Messages []chatbot.HistoryMessage }
	_, body = status(t, srv, "GET", "/api/v1/chat/shared/history", aliceToken, "")
	if err := json.Unmarshal([]byte(body), &hist); err != nil || len(hist.Messages) != 2 || !strings.Contains(hist.Messages[0].Content, "Ada") {
		t.Errorf("alice's history of \"shared\": %s, want her one exchange", body)
	}
}

// TestCrossSiteRequestsRefused replays the attacks on the open loopback
// demo: a cross-site form posting text/plain to answer a victim's
// question, a request from another origin, and a DNS-rebinding page whose
// requests carry its own host name. None of them reaches the question,
// which the victim then answers.
func TestCrossSiteRequestsRefused(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	victim := startTurn(t, srv, "", `{"conversation_id": "victim1", "message": "I would like to book a demo"}`)
	q := victim.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	attack := fmt.Sprintf(`{"elicitation_id": %q, "action": "accept", "content": {"email": "attacker@evil.example", "date": %q}}`, q.ElicitationID, nextWeekday())

	for _, c := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"text/plain form", []string{"Content-Type", "text/plain", "Origin", "http://evil.example"}, http.StatusForbidden},
		{"text/plain, no origin", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"urlencoded form", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"foreign origin", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"null origin", []string{"Origin", "null"}, http.StatusForbidden},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"rebound host", []string{"Host", "attacker.example:8080"}, http.StatusMisdirectedRequest},
	} {
		if code, body := status(t, srv, "POST", "/api/v1/elicitation/respond", "", attack, c.headers...); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	// DNS rebinding also reads: every GET with a foreign host is refused.
	if code, _ := status(t, srv, "GET", "/api/v1/elicitation/pending", "", "", "Host", "attacker.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("pending with a rebound host: %d, want 421", code)
	}
	if code, _ := status(t, srv, "POST", "/api/v1/chat", "", `{"message": "hi=there", "conversation_id": "victim1"}`, "Content-Type", "text/plain"); code != http.StatusUnsupportedMediaType {
		t.Errorf("a text/plain chat: %d, want 415", code)
	}

	// The page's own origin, and localhost, are served.
	answer := fmt.Sprintf(`{"elicitation_id": %q, "action": "accept", "content": {"email": "victim@example.com", "date": %q}}`, q.ElicitationID, nextWeekday())
	if code, body := status(t, srv, "POST", "/api/v1/elicitation/respond", "", answer, "Origin", srv.URL, "Host", strings.TrimPrefix(srv.URL, "http://")); code != http.StatusOK {
		t.Fatalf("the victim's own answer: %d %s", code, body)
	}
	if a := answerOf(victim.rest(t)); !strings.Contains(a, "victim@example.com") || strings.Contains(a, "attacker") {
		t.Errorf("the victim's booking: %q", a)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if code, _ := status(t, srv, "GET", "/api/v1/tools", "", "", "Host", "localhost:"+port); code != http.StatusOK {
		t.Errorf("Host localhost: %d, want 200", code)
	}
	resp := call(t, srv, "GET", "/", "", "")
	resp.Body.Close()
	if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("the page's X-Frame-Options: %q, want DENY", got)
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestModelAllowList: a request's model must be one of Config.Models (400
// naming the field and the allowed ones); 300 requests with long, distinct
// provider:model names keep the heap flat, as none of them reaches a
// model.
func TestModelAllowList(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", "", `{"message": "What is 3*3?", "model": "haiku"}`); code != http.StatusOK {
		t.Errorf("an allowed model: %d %s", code, body)
	}
	before := heapAfterGC()
	name := strings.Repeat("x", 100<<10)
	for i := range 300 {
		body := fmt.Sprintf(`{"message": "What is 15%% of 240?", "model": "openai:%d-%s"}`, i, name)
		code, resp := status(t, srv, "POST", "/api/v1/chat/sync", "", body)
		if code != http.StatusBadRequest {
			t.Fatalf("request %d with an unknown model: %d %.200s, want 400", i, code, resp)
		}
		var e struct{ Error, Field string }
		if err := json.Unmarshal([]byte(resp), &e); err != nil || e.Field != "model" || !strings.Contains(e.Error, "sonnet, haiku") || len(e.Error) > 400 {
			t.Fatalf("request %d: %.500s, want a short error naming the field model and the allowed models", i, resp)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	after := heapAfterGC()
	// 300 names of 100 KiB are 30 MiB; anything kept per name shows.
	if grew := int64(after) - int64(before); grew > 8<<20 {
		t.Errorf("the heap grew by %d MiB over 300 requests with unknown models", grew>>20)
	}
}

// TestRequestIDsScopedToTurn: two turns with the same request id, in two
// conversations of one principal and in two principals, each ask a
// question; both questions stay pending, and each is answered and
// completes its own turn.
func TestRequestIDsScopedToTurn(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	type side struct {
		token string
		turn  *liveTurn
		q     chatevent.ElicitationRequest
	}
	sides := []*side{{token: aliceToken}, {token: aliceToken}, {token: bobToken}}
	for i, s := range sides {
		s.turn = startTurn(t, srv, s.token, fmt.Sprintf(`{"conversation_id": "dup%d", "request_id": "dup1", "message": "I would like to book a demo"}`, i))
		s.q = s.turn.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	}
	// Alice's second turn with dup1 is going, and bob's too: none of them
	// took the others' questions.
	var pending struct{ Pending []string }
	_, body := status(t, srv, "GET", "/api/v1/elicitation/pending", aliceToken, "")
	if err := json.Unmarshal([]byte(body), &pending); err != nil || len(pending.Pending) != 2 {
		t.Fatalf("alice's pending questions: %s, want two", body)
	}
	for i, s := range sides {
		email := fmt.Sprintf("user%d@example.com", i)
		answer := fmt.Sprintf(`{"elicitation_id": %q, "action": "accept", "content": {"email": %q, "date": %q}}`, s.q.ElicitationID, email, nextWeekday())
		if code, body := status(t, srv, "POST", "/api/v1/elicitation/respond", s.token, answer); code != http.StatusOK {
			t.Fatalf("answering question %d: %d %s", i, code, body)
		}
		if a := answerOf(s.turn.rest(t)); !strings.Contains(a, email) {
			t.Errorf("turn %d's answer lacks its booking for %s: %q", i, email, a)
		}
	}
}

// TestUnansweredQuestionReleasesConversation: a question nobody answers
// holds its conversation for Config.AnswerTimeout only; then its turn
// goes on without the answer and the conversation's next turn runs.
func TestUnansweredQuestionReleasesConversation(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{AnswerTimeout: 200 * time.Millisecond})
	asked := startTurn(t, srv, "", `{"conversation_id": "held", "message": "I would like to book a demo"}`)
	asked.until(t, chatevent.TypeElicitationRequest)
	next := make(chan turn, 1)
	go func() {
		tr, _ := chatErr(srv, "held", "Hello!")
		next <- tr
	}()
	evs := asked.rest(t)
	if last := evs[len(evs)-1].Type; last != chatevent.TypeResponseDone {
		t.Errorf("the unanswered turn ended with %s, want an answer without the booking; events %v", last, turn{events: evs}.types())
	}
	select {
	case tr := <-next:
		if tr.last() != chatevent.TypeResponseDone {
			t.Errorf("the next turn ended with %s; events %v", tr.last(), tr.types())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the conversation's next turn did not run within 30s of its unanswered question")
	}
}

// TestShutdownEndsUnansweredTurn: Close, with a turn waiting for an
// answer that no one will give, ends that turn at once: its stream gets
// an error event saying the server is shutting down, then ends.
func TestShutdownEndsUnansweredTurn(t *testing.T) {
	bot, err := chatbot.New(t.Context(), chatbot.Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bot.Handler())
	defer srv.Close()
	asked := startTurn(t, srv, "", `{"message": "I would like to book a demo"}`)
	asked.until(t, chatevent.TypeElicitationRequest)
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		closed <- bot.Close(ctx)
	}()
	evs := asked.rest(t)
	if len(evs) == 0 || evs[len(evs)-1].Type != event.TypeError {
		t.Fatalf("the stream ended with %v, want an error event", turn{events: evs}.types())
	}
	if p := evs[len(evs)-1].Payload.(event.Error); p.Code != "shutting_down" || !strings.Contains(p.Message, "shutting down") {
		t.Errorf("error event %+v, want code shutting_down", p)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
}

// TestSlowBodyTimesOut: a client sending its body slower than
// Config.BodyTimeout gets 408 and its connection closed, instead of
// holding it forever.
func TestSlowBodyTimesOut(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{BodyTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/chat/sync HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"mess", strings.TrimPrefix(srv.URL, "http://"))
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a stalled body within 30s: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "BodyTimeout") {
		t.Errorf("stalled body: %s %s, want 408 naming BodyTimeout", resp.Status, b)
	}
	// And an SSE turn lives past the body's deadline.
	tr := chat(t, srv, "after-body", "Hello!")
	if tr.last() != chatevent.TypeResponseDone {
		t.Errorf("a turn after the body's deadline: %v", tr.types())
	}
}

// TestStreamLimitPerPrincipal: a principal holding Config.MaxStreams chat
// streams open gets 429 for another, while another principal is served.
func TestStreamLimitPerPrincipal(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, MaxStreams: 1})
	held := startTurn(t, srv, aliceToken, `{"message": "I would like to book a demo"}`)
	q := held.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"message": "Hello!"}`); code != http.StatusTooManyRequests || !strings.Contains(body, "MaxStreams") {
		t.Errorf("alice's second stream: %d %s, want 429 naming MaxStreams", code, body)
	}
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", bobToken, `{"message": "Hello!"}`); code != http.StatusOK {
		t.Errorf("bob's stream: %d %s", code, body)
	}
	if code, body := status(t, srv, "DELETE", "/api/v1/elicitation/"+q.ElicitationID, aliceToken, ""); code != http.StatusOK {
		t.Fatalf("declining: %d %s", code, body)
	}
	held.rest(t)

	// A resumable turn left running by its client still counts: alice
	// cannot park turns beyond her share of the server's.
	parked := startTurn(t, srv, aliceToken, `{"message": "I would like to book a demo", "request_id": "parked", "resumable": true}`)
	pq := parked.until(t, chatevent.TypeElicitationRequest).Payload.(chatevent.ElicitationRequest)
	parked.resp.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := status(t, srv, "POST", "/api/v1/chat", aliceToken, `{"message": "Hello!", "resumable": true}`)
		if code == http.StatusTooManyRequests && strings.Contains(body, "resumable turns of yours") {
			break
		}
		// Until the parked turn's handler has returned, its stream counts.
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("alice's second resumable turn with one parked: %d %s, want 429 for her running resumable turns", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := status(t, srv, "POST", "/api/v1/chat/sync", bobToken, `{"message": "Hello!"}`); code != http.StatusOK {
		t.Errorf("bob's stream with alice's turn parked: %d %s", code, body)
	}
	if code, body := status(t, srv, "DELETE", "/api/v1/elicitation/"+pq.ElicitationID, aliceToken, ""); code != http.StatusOK {
		t.Fatalf("declining the parked question: %d %s", code, body)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		code, body := status(t, srv, "POST", "/api/v1/chat/sync", aliceToken, `{"message": "Hello!"}`)
		if code == http.StatusOK {
			break
		}
		// The first stream's handler may still be returning.
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("alice's stream once the first ended: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCorruptStoreDiagnostics garbles the data pages of conversations.db
// between two runs (the pages a fresh store does not have: the schema and
// the tables' root pages stay readable): /health says unhealthy and names
// the file; a turn fails with a generic message and a request id, not the
// SQL error, which is in the log with "turn failed".
func TestCorruptStoreDiagnostics(t *testing.T) {
	fresh := t.TempDir()
	bot, err := chatbot.New(t.Context(), chatbot.Config{Offline: true, DataDir: fresh})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	schema, err := os.Stat(filepath.Join(fresh, "conversations.db"))
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	bot, err = chatbot.New(t.Context(), chatbot.Config{Offline: true, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Long messages, so that the conversations fill pages of their own.
	long := "What is 15% of 240? " + strings.Repeat("Please show the steps. ", 60)
	for i := range 20 {
		for _, err := range bot.Chat(t.Context(), chatbot.Request{ConversationID: fmt.Sprintf("c%d", i), Message: long}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := bot.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "conversations.db")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	if info.Size() < schema.Size()+4*4096 {
		t.Fatalf("conversations.db holds %d bytes after 20 turns, a fresh one %d: the turns' data does not fill pages of its own", info.Size(), schema.Size())
	}
	garbage := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
	for off := schema.Size(); off+4096 <= info.Size(); off += 4096 {
		if _, err := f.WriteAt(garbage, off); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	core, logs := observer.New(zap.DebugLevel)
	bot, err = chatbot.New(t.Context(), chatbot.Config{Offline: true, DataDir: dir, Logger: zap.New(core)})
	if err != nil {
		t.Fatalf("New on a store with garbled data pages: %v; want it to start, and /health to say what is damaged", err)
	}
	srv := httptest.NewServer(bot.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = bot.Close(context.Background())
	})
	code, body := status(t, srv, "GET", "/health", "", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"unhealthy"`) || !strings.Contains(body, "conversations.db") {
		t.Errorf("/health with a corrupt conversations.db: %d %s, want 503 unhealthy naming the file", code, body)
	}
	code, body = status(t, srv, "POST", "/api/v1/chat/sync", "", `{"conversation_id": "c1", "message": "Hello!", "request_id": "req-corrupt"}`)
	if code != http.StatusInternalServerError || strings.Contains(strings.ToLower(body), "sqlite") || strings.Contains(body, "malformed") || !strings.Contains(body, "req-corrupt") {
		t.Errorf("a turn on the corrupt store: %d %s, want 500 with a generic message and the request id", code, body)
	}
	// The cause is logged for the operator: by the turn when the store
	// fails inside it, by the request when it fails before the turn starts
	// (admitting the conversation reads the store first).
	var failed bool
	for _, msg := range []string{"chatbot: turn failed", "chatbot: request failed"} {
		for _, e := range logs.FilterMessage(msg).All() {
			for _, f := range e.Context {
				if f.Key == "error" && f.Interface != nil || f.Key == "error" && f.String != "" {
					failed = true
				}
			}
		}
	}
	if !failed {
		t.Errorf("no \"chatbot: turn failed\" or \"chatbot: request failed\" log with its error; logs: %v", logs.All())
	}
}

// TestPageSendsToken drives the page in headless Chromium against a
// server with authentication: given once in the fragment as #token=
// (never sent to the server) and taken once the user confirms (see
// TestPageFragmentTokenAsks), the token leaves the address bar, stays in
// the tab, and authenticates the chat, whose answer shows; without a token
// the page shows its token field, and a token in the query (?token=,
// which reached the server and its logs) is not taken.
func TestPageSendsToken(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/#token="+aliceToken),
		chromedp.Click(chromedp.CSS("#linktoken-use")),
		chromedp.WaitVisible(chromedp.CSS("#tokenbox")),
		chromedp.SendKeys(chromedp.CSS("#message"), "What is 15% of 240?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	if answer := text(t, ctx, ".turn:nth-of-type(1) .answer"); !strings.Contains(answer, "= 36") {
		t.Errorf("answer with the token:\n%s", answer)
	}
	if strings.Contains(url, "token") {
		t.Errorf("the token stayed in the address bar: %s", url)
	}
	// The conversation is alice's: its history is there for her token only.
	conv, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem("conversation")`))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := status(t, srv, "GET", "/api/v1/chat/"+conv+"/history", aliceToken, ""); code != http.StatusOK {
		t.Errorf("alice's history of the page's conversation: %d, want 200", code)
	}
	if code, _ := status(t, srv, "GET", "/api/v1/chat/"+conv+"/history", bobToken, ""); code != http.StatusNotFound {
		t.Errorf("bob's history of alice's page conversation: %d, want 404", code)
	}

	// Without a token, a message fails with 401 and the field is focused.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`sessionStorage.removeItem("token"), true`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?token="+aliceToken),
		chromedp.SendKeys(chromedp.CSS("#message"), "Hello!"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .error")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if e := text(t, ctx, ".turn:nth-of-type(1) .error"); !strings.Contains(e, "Authorization") {
		t.Errorf("the unauthenticated turn's error: %q", e)
	}
}

// TestResumeWithBadLastEventID resumes a turn with Last-Event-ID values
// that name no event (negative, beyond 64 bits, not a number; also as
// the lastEventId query parameter): each is answered 400 with the API's
// JSON error naming the field, not the stream's plain text, and a valid
// one still resumes.
func TestResumeWithBadLastEventID(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals})
	turn := startTurn(t, srv, aliceToken, `{"request_id": "lei1", "resumable": true, "message": "hello"}`)
	turn.rest(t)
	for _, bad := range []string{"-1", "99999999999999999999", "abc", "1e3"} {
		for _, how := range []string{"header", "query"} {
			path, headers := "/api/v1/chat/stream/lei1", []string{"Last-Event-ID", bad}
			if how == "query" {
				path, headers = path+"?lastEventId="+url.QueryEscape(bad), nil
			}
			resp := call(t, srv, "GET", path, aliceToken, "", headers...)
			var e struct{ Error, Field string }
			err := json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || err != nil || e.Field != "Last-Event-ID" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Last-Event-ID %q in the %s: %d %s %+v (%v); want 400 JSON naming Last-Event-ID", bad, how, resp.StatusCode, resp.Header.Get("Content-Type"), e, err)
			}
		}
	}
	if code, body := status(t, srv, "GET", "/api/v1/chat/stream/lei1", aliceToken, "", "Last-Event-ID", "1"); code != http.StatusOK || !strings.Contains(body, "id: 2") {
		t.Fatalf("resume after event 1: %d %.200s", code, body)
	}
}
