package elicit_test

import (
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/operator/elicit"
)

func TestActionValid(t *testing.T) {
	for _, a := range []elicit.Action{elicit.Accept, elicit.Decline, elicit.Cancel} {
		if !a.Valid() {
			t.Errorf("%q: not valid", a)
		}
	}
	for _, a := range []elicit.Action{"", "maybe", "ACCEPT"} {
		if a.Valid() {
			t.Errorf("%q: valid", a)
		}
	}
}

// The JSON field names are MCP's and the chat protocol's wire form.
func TestWireForm(t *testing.T) {
	b, err := json.Marshal(elicit.Request{ElicitationID: "e1", Tool: "book", Message: "Which day?", Options: []string{"Mon", "Tue"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"elicitation_id":"e1","tool":"book","message":"Which day?","options":["Mon","Tue"]}`; string(b) != want {
		t.Errorf("request:\n got %s\nwant %s", b, want)
	}
	var resp elicit.Response
	if err := json.Unmarshal([]byte(`{"elicitation_id":"e1","action":"accept","content":{"day":"Mon"}}`), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ElicitationID != "e1" || resp.Action != elicit.Accept || resp.Content["day"] != "Mon" {
		t.Errorf("response: %+v", resp)
	}
}
