package chatbot_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestDocumentUploadQueuePerPrincipal fills principal alice's share of the
// processing queue while processing is held: bob's upload is still
// accepted, alice's next gets 429 naming Config.Documents.QueuePerPrincipal.
// Once her documents are processed, or deleted, her share is free again.
func TestDocumentUploadQueuePerPrincipal(t *testing.T) {
	g := gate{open: make(chan struct{})}
	bot, srv := newServer(t, chatbot.Config{
		Authenticate: func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return u, nil
			}
			return "", errors.New("no X-User header")
		},
		Documents: chatbot.DocumentConfig{Workers: 1, Queue: 8, QueuePerPrincipal: 2, Summarizer: g},
	})
	post := func(user string) (int, map[string]any, http.Header) {
		t.Helper()
		resp := call(t, srv, http.MethodPost, "/api/v1/documents", "",
			`{"conversation_id":"conv-1","name":"a.txt","content":"hello"}`, "X-User", user)
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("POST /api/v1/documents as %s: %s: decoding the body: %v", user, resp.Status, err)
		}
		return resp.StatusCode, out, resp.Header
	}
	accept := func(user string) string {
		t.Helper()
		code, out, _ := post(user)
		if code != http.StatusAccepted {
			t.Fatalf("upload as %s: %d %v, want 202", user, code, out)
		}
		return out["id"].(string)
	}
	refused := func(user string) {
		t.Helper()
		code, out, hdr := post(user)
		msg, _ := out["error"].(string)
		if code != http.StatusTooManyRequests || !strings.Contains(msg, "Config.Documents.QueuePerPrincipal") || hdr.Get("Retry-After") == "" {
			t.Fatalf("upload as %s past its share: %d %v (Retry-After %q), want 429 naming Config.Documents.QueuePerPrincipal with Retry-After",
				user, code, out, hdr.Get("Retry-After"))
		}
	}

	a1 := accept("alice") // processing, held by the gate
	a2 := accept("alice") // queued
	refused("alice")
	b1 := accept("bob")
	// Deleting a queued document frees its share once the worker drops it.
	if code, body := status(t, srv, http.MethodDelete, "/api/v1/documents/conv-1/"+a2, "", "", "X-User", "alice"); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("DELETE alice's queued document: %d %s", code, body)
	}
	close(g.open)
	ctx := t.Context()
	// One worker takes the documents in order: once bob's is done,
	// alice's two are finished too.
	for _, id := range []string{a1, b1} {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		d, err := bot.Documents().Wait(wctx, id)
		cancel()
		if err != nil || d.Status != document.StatusReady {
			t.Fatalf("document %s: %s (%v), want ready", id, d.Status, err)
		}
	}
	a3 := accept("alice")
	accept("alice")
	if _, err := bot.Documents().Wait(ctx, a3); err != nil {
		t.Fatal(err)
	}
}
