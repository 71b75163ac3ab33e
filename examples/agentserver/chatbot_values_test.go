package agentserver_test

import (
	"encoding/json"
	"testing"
)

// The chatbot graph's node runs the whole chat graph (its own subgraphs
// included) inside it: over HTTP, its values stream shows the conversation
// as it is, never an empty messages list in the middle of the turn, and its
// updates event holds the reply the node wrote.
func TestChatbotValuesStreamNeverBlanksTheConversation(t *testing.T) {
	hs := serveOffline(t)
	var th map[string]any
	post(t, hs.URL+"/threads", `{}`, &th)
	tid := th["thread_id"].(string)
	names, data := stream(t, hs.URL+"/threads/"+tid+"/runs/stream", `{"assistant_id":"chatbot","input":{"messages":[{"role":"user","content":"hello secret"}]},"stream_mode":["values","updates"]}`)
	var values [][]map[string]any
	var updates []map[string]map[string][]map[string]any
	for i, n := range names {
		switch n {
		case "values":
			var v struct {
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(data[i], &v); err != nil {
				t.Fatal(err)
			}
			values = append(values, v.Messages)
		case "updates":
			var u map[string]map[string][]map[string]any
			if err := json.Unmarshal(data[i], &u); err != nil {
				t.Fatal(err)
			}
			updates = append(updates, u)
		case "error":
			t.Fatalf("chatbot run failed: %s", data[i])
		}
	}
	if len(values) != 2 {
		t.Errorf("%d values events, want 2 (the input, then the answer): %v", len(values), values)
	}
	for i, ms := range values {
		if len(ms) == 0 {
			t.Errorf("values event %d of %d has no messages", i+1, len(values))
		}
	}
	if n := len(values); n > 0 && (len(values[n-1]) != 2 || values[n-1][1]["type"] != "ai") {
		t.Errorf("last values event %v; want the question and the answer", values[n-1])
	}
	if len(updates) != 1 || len(updates[0]["turn"]["messages"]) != 1 || updates[0]["turn"]["messages"][0]["type"] != "ai" {
		t.Errorf("updates events %v; want the turn's reply", updates)
	}
}
