package knowledge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

// eras runs f over both protocol eras and both transports: 2026-07-28
// (input_required results) and 2025-11-25 (elicitation/create requests).
func eras(t *testing.T, elicit func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error), f func(t *testing.T, c *clienttest.Client)) {
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "2025-11-25"
		}
		t.Run(name, func(t *testing.T) {
			transports(t, clienttest.Options{Legacy: legacy, Elicit: elicit}, f)
		})
	}
}

func answer(action mcp.ElicitationResponseAction, content map[string]any) *mcp.ElicitationResult {
	r := &mcp.ElicitationResult{}
	r.Action = action
	if content != nil {
		r.Content = content
	}
	return r
}

func TestBookDemoElicitation(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		reply   *mcp.ElicitationResult
		want    knowledge.Booking
		isError string
	}{
		{
			name:  "accept",
			args:  map[string]any{"product": "Forecast"},
			reply: answer(mcp.ElicitationResponseActionAccept, map[string]any{"email": "ana@shop.example", "date": "2030-01-07", "product": "Forecast"}),
			want:  knowledge.Booking{Status: "booked", Email: "ana@shop.example", Date: "2030-01-07", Product: "Forecast"},
		},
		{
			name:  "accept fills only the missing date",
			args:  map[string]any{"email": "ana@shop.example"},
			reply: answer(mcp.ElicitationResponseActionAccept, map[string]any{"date": "2030-01-08"}),
			want:  knowledge.Booking{Status: "booked", Email: "ana@shop.example", Date: "2030-01-08", Product: "Insights"},
		},
		{name: "decline", reply: answer(mcp.ElicitationResponseActionDecline, nil), want: knowledge.Booking{Status: "declined"}},
		{name: "cancel", reply: answer(mcp.ElicitationResponseActionCancel, nil), want: knowledge.Booking{Status: "cancelled"}},
		{
			name:    "accept with a bad date",
			reply:   answer(mcp.ElicitationResponseActionAccept, map[string]any{"email": "ana@shop.example", "date": "soon"}),
			isError: `date: "soon" is not a date`,
		},
		{
			name:    "accept without the email",
			reply:   answer(mcp.ElicitationResponseActionAccept, map[string]any{"date": "2030-01-07"}),
			isError: "left out the email or the date",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Int32
			elicit := func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				asked.Add(1)
				schema, _ := req.Params.RequestedSchema.(map[string]any)
				if req.Params.Message == "" || toJSON(schema["required"]) != `["email","date"]` {
					t.Errorf("elicitation request %+v lacks a message or the required fields", req.Params)
				}
				return tt.reply, nil
			}
			eras(t, elicit, func(t *testing.T, c *clienttest.Client) {
				before := asked.Load()
				res, _, err := c.Call(ctx(t), "book_demo", tt.args, false)
				if err != nil {
					t.Fatal(err)
				}
				if asked.Load() != before+1 {
					t.Errorf("user asked %d times, want once", asked.Load()-before)
				}
				if tt.isError != "" {
					if !res.IsError || !strings.Contains(clienttest.Text(res), tt.isError) {
						t.Errorf("result %q, want an error containing %q", clienttest.Text(res), tt.isError)
					}
					return
				}
				if res.IsError {
					t.Fatalf("tool error: %s", clienttest.Text(res))
				}
				var got knowledge.Booking
				clienttest.Structured(t, res, &got)
				if tt.want.Status == "booked" && !strings.HasPrefix(got.Reference, "DEMO-") {
					t.Errorf("reference %q, want DEMO-…", got.Reference)
				}
				got.Reference = ""
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("booking (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestBookDemoWithAllArgumentsDoesNotAsk(t *testing.T) {
	elicit := func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		t.Error("user was asked although every detail was given")
		return nil, errors.New("unexpected")
	}
	eras(t, elicit, func(t *testing.T, c *clienttest.Client) {
		res, _, err := c.Call(ctx(t), "book_demo", map[string]any{"email": "bo@x.example", "date": "2030-01-09", "product": "API"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(clienttest.Text(res), "Booked a 45-minute API demo on Wednesday 9 January 2030") {
			t.Errorf("result %q", clienttest.Text(res))
		}
	})
}

func TestBookDemoWithoutElicitationCapability(t *testing.T) {
	// A client that cannot ask its user gets a tool error saying which
	// arguments to pass instead.
	eras(t, nil, func(t *testing.T, c *clienttest.Client) {
		res, _, err := c.Call(ctx(t), "book_demo", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(clienttest.Text(res), "needs the email and date arguments") {
			t.Errorf("result isError=%v %q", res.IsError, clienttest.Text(res))
		}
	})
}

func TestBookDemoUsesConfiguredClock(t *testing.T) {
	now := time.Date(2031, 3, 3, 15, 0, 0, 0, time.UTC) // a Monday
	s, err := knowledge.New(knowledge.Config{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	for date, wantErr := range map[string]bool{"2031-03-03": true, "2031-03-04": false} {
		res, _, err := c.Call(ctx(t), "book_demo", map[string]any{"email": "a@b.example", "date": date}, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != wantErr {
			t.Errorf("date %s: isError=%v %q, want isError=%v", date, res.IsError, clienttest.Text(res), wantErr)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
