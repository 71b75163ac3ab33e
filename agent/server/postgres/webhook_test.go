package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// finishCounter is a Store that counts its FinishRunLocked calls that
// recorded an end. With remove set, each such call then deletes the
// run's thread (and with it the run), as DELETE /threads/{id}, or a
// stateless run's end, may right after the commit, keeping in ended the
// run's record as the end left it, read before the deletion.
type finishCounter struct {
	*postgres.Store
	ends   atomic.Int32
	remove atomic.Bool
	ended  atomic.Pointer[server.Run]
}

func (f *finishCounter) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, error) {
	active, ev, err := f.Store.FinishRunLocked(ctx, e)
	if err == nil {
		f.ends.Add(1)
		if f.remove.Load() {
			r, rerr := f.Store.Run(ctx, e.RunID)
			if rerr == nil {
				f.ended.Store(r)
				rerr = f.Store.DeleteThread(ctx, e.ThreadID)
			}
			if rerr != nil {
				return active, ev, fmt.Errorf("test: deleting the thread of an ended run: %w", rerr)
			}
		}
	}
	return active, ev, err
}

// TestWebhookOfFoldedEnd: a run whose end is recorded in one
// transaction (FinishRunLocked, which returns no record of the run) sends
// its webhook with the run as ended: its status, its error, its end's
// time and the fields of its creation, as the store holds them, and the
// thread's values as the end left them; also when the run's thread, and
// the run, are deleted right after the end's commit, before the webhook
// is sent.
func TestWebhookOfFoldedEnd(t *testing.T) {
	base, schema := postgrestest.Schema(t, "agentserver_webhook_")
	pst, err := postgres.New(t.Context(), postgres.Config{Pool: base, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st := &finishCounter{Store: pst}
	got := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
	}))
	defer hook.Close()
	hs := serveGreet(t, server.Config{Store: st, WebhookAllowPrivate: true, SweepInterval: time.Hour}, "greet",
		func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
			if s.Name == "boom" {
				return graph.Update[greeting]{}, errors.New("boom")
			}
			return greetingReply.Set("hi " + s.Name), nil
		})
	for _, c := range []struct {
		name, status, err string
		remove            bool
	}{
		{"ada", server.RunSuccess, "", false}, {"boom", server.RunError, "boom", false},
		{"ada", server.RunSuccess, "", true}, {"boom", server.RunError, "boom", true},
	} {
		st.remove.Store(c.remove)
		st.ended.Store(nil)
		resp, err := http.Post(hs.URL+"/threads", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var th createdThread
		if err := jsonDecode(resp, &th); err != nil {
			t.Fatal(err)
		}
		before := st.ends.Load()
		resp, err = http.Post(hs.URL+"/threads/"+th.ID+"/runs", "application/json",
			strings.NewReader(`{"assistant_id":"greet","input":{"name":"`+c.name+`"},"metadata":{"k":"v"},"webhook":"`+hook.URL+`/done"}`))
		if err != nil {
			t.Fatal(err)
		}
		var run struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &run); err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		select {
		case body = <-got:
		case <-time.After(time.Minute): // a guard against a hang only
			t.Fatalf("%s (thread deleted after the end: %v): the webhook was never called", c.name, c.remove)
		}
		if st.ends.Load() == before {
			t.Fatalf("%s: the run's end was not recorded by FinishRunLocked", c.name)
		}
		r, err := pst.Run(t.Context(), run.ID)
		if c.remove {
			if !errors.Is(err, server.ErrNotFound) {
				t.Fatalf("%s: the run after its thread's deletion: %+v, %v; want ErrNotFound", c.name, r, err)
			}
			if r = st.ended.Load(); r == nil {
				t.Fatalf("%s: the run's thread was not deleted after its end", c.name)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if values, _ := body["values"].(map[string]any); values["name"] != c.name ||
			c.err == "" && values["reply"] != "hi "+c.name {
			t.Fatalf("%s (thread deleted after the end: %v): webhook values %v; want the thread's values as the run's end left them", c.name, c.remove, body["values"])
		}
		md, _ := body["metadata"].(map[string]any)
		var wantErr any
		if c.err != "" {
			if !strings.Contains(r.Error, c.err) {
				t.Fatalf("%s: the run's error %q; want it to name %q", c.name, r.Error, c.err)
			}
			wantErr = r.Error
		}
		if body["run_id"] != run.ID || body["thread_id"] != th.ID || body["status"] != c.status || r.Status != c.status ||
			body["error"] != wantErr || body["assistant_id"] != r.AssistantID || md["k"] != "v" ||
			body["multitask_strategy"] != r.MultitaskStrategy || body["created_at"] == nil {
			t.Fatalf("%s: webhook body %v; want run %s %s with error %v, as stored: %+v", c.name, body, run.ID, c.status, wantErr, r)
		}
		ended, err := time.Parse(time.RFC3339Nano, body["run_ended_at"].(string))
		if err != nil || !ended.Equal(r.UpdatedAt) || body["updated_at"] != body["run_ended_at"] {
			t.Fatalf("%s: webhook run_ended_at %v, updated_at %v; want the end's time %v", c.name, body["run_ended_at"], body["updated_at"], r.UpdatedAt)
		}
	}
}
