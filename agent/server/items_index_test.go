package server_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/memory"
)

// TestPutItemIndex: PUT /store/items accepts index false or null (no
// semantic index) and refuses a list of fields to index with 422 naming
// index, storing nothing, rather than ignoring it.
func TestPutItemIndex(t *testing.T) {
	ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	for _, idx := range []string{``, `,"index":false`, `,"index":null`} {
		if code, body := raw(t, "PUT", ts.URL+"/store/items", `{"namespace":["a"],"key":"k","value":{"x":1}`+idx+`}`, nil); code != 204 {
			t.Errorf("put with %q: %d %s; want 204", idx, code, body)
		}
	}
	code, body := raw(t, "PUT", ts.URL+"/store/items", `{"namespace":["a"],"key":"indexed","value":{"x":1},"index":["x"]}`, nil)
	if code != 422 || !strings.Contains(body, "index: ") || !strings.Contains(body, "semantic") {
		t.Fatalf("put with an index list: %d %s; want 422 naming index", code, body)
	}
	if code, body := raw(t, "GET", ts.URL+"/store/items?namespace=a&key=indexed", "", nil); code == 200 && body != "null" && !strings.Contains(body, "not found") {
		t.Fatalf("the refused item was stored: %d %s", code, body)
	}
}
