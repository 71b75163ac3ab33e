package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/internal/heaptest"
	"github.com/agentgraph/agentgraph/memory"
)

// churningItems is a memory.Items whose contents change after each
// search once churn is set: a new record is put that sorts before every
// other, as another client's put between two reads would.
type churningItems struct {
	memory.Items
	churn atomic.Bool
	n     atomic.Int64
}

func (c *churningItems) Search(ctx context.Context, q memory.ItemQuery) ([]memory.Record, error) {
	got, err := c.Items.Search(ctx, q)
	if err == nil && c.churn.Load() {
		key := fmt.Sprintf("a%03d", c.n.Add(1))
		if err := c.Items.Put(ctx, memory.Record{Namespace: []string{"ns"}, Key: key, Value: json.RawMessage(`{"v":0}`)}); err != nil {
			return nil, err
		}
	}
	return got, err
}

// TestStoreSearchOnePage: a store search of more than ten items, while
// the store's contents change between reads, answers each record once
// and none skipped: the page is one read of the store, not several
// offset pages that a put between them shifts.
func TestStoreSearchOnePage(t *testing.T) {
	items := &churningItems{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})}
	ts := newTestServer(t, server.Config{Items: items})
	for i := range 30 {
		if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"ns"}, "key": fmt.Sprintf("k%03d", i), "value": map[string]int{"v": i}}, nil, nil); code != http.StatusNoContent {
			t.Fatalf("put: %d", code)
		}
	}
	items.churn.Store(true)
	_, h, b := call(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{"ns"}, "limit": 30})
	var page struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	if h.Get(server.TruncatedHeader) != "" {
		t.Fatalf("a small page was cut: %s", h)
	}
	seen := map[string]bool{}
	for _, it := range page.Items {
		if seen[it.Key] {
			t.Fatalf("key %q answered twice in one page: %d items", it.Key, len(page.Items))
		}
		seen[it.Key] = true
	}
	for i := range 30 {
		if k := fmt.Sprintf("k%03d", i); !seen[k] {
			t.Fatalf("key %q skipped: %d items", k, len(page.Items))
		}
	}
}

// TestStoreSearchReadsToBudget: a store search of a page of large items
// past Config.MaxResponseBytes reads the items up to the bound, not the
// whole page: 100 items of 100 KiB (10 MB), searched with a limit of 100
// and a bound of 256 KiB, allocate about the bound, and the answer is
// cut there with X-Pagination-Truncated.
func TestStoreSearchReadsToBudget(t *testing.T) {
	const n, pad, budget = 100, 100 << 10, 256 << 10
	ts := newTestServer(t, server.Config{MaxResponseBytes: budget, Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	big := strings.Repeat("x", pad)
	for i := range n {
		if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"ns"}, "key": fmt.Sprintf("k%03d", i), "value": map[string]any{"pad": big}}, nil, nil); code != http.StatusNoContent {
			t.Fatalf("put: %d", code)
		}
	}
	var h http.Header
	var b []byte
	a := heaptest.Allocated(5, func() {
		_, h, b = call(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{"ns"}, "limit": n})
	})
	var page struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) == 0 || len(page.Items) > budget/pad || h.Get(server.TruncatedHeader) != "true" {
		t.Fatalf("%d items, %s %q; want at most %d, cut", len(page.Items), server.TruncatedHeader, h.Get(server.TruncatedHeader), budget/pad)
	}
	if a > n*pad/4 {
		t.Errorf("a search of %d items of %d KiB cut at %d KiB allocated %d KiB; want about the bound, under %d KiB", n, pad>>10, budget>>10, a>>10, n*pad/4>>10)
	}
}
