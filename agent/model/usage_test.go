package model_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/google/go-cmp/cmp"
)

func TestUsageMergeAndJSON(t *testing.T) {
	a := model.Usage{InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200}
	b := model.Usage{InputTokens: 1, OutputTokens: 2, ThinkingTokens: 3, CacheReadTokens: 4, CacheWriteTokens: 5}
	want := model.Usage{InputTokens: 1501, OutputTokens: 802, ThinkingTokens: 5003, CacheReadTokens: 204, CacheWriteTokens: 5}
	if diff := cmp.Diff(want, a.Merge(b)); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if a.Merge(model.Usage{}) != a || !(model.Usage{}).IsZero() {
		t.Error("the zero usage is not the identity of Merge")
	}
	got, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"input_tokens":1500,"output_tokens":800,"thinking_tokens":5000,"cache_read_tokens":200,"cache_write_tokens":0,"total_tokens":7500}`
	if string(got) != wantJSON {
		t.Errorf("JSON = %s\nwant   %s", got, wantJSON)
	}
	var back model.Usage
	if err := json.Unmarshal(got, &back); err != nil || back != a {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

func TestUsageSaturates(t *testing.T) {
	huge := model.Usage{InputTokens: math.MaxInt, OutputTokens: math.MaxInt, ThinkingTokens: 1}
	if got := huge.Total(); got != math.MaxInt {
		t.Errorf("Total of MaxInt tokens = %d, want math.MaxInt", got)
	}
	m := huge.Merge(huge)
	if m.InputTokens != math.MaxInt || m.OutputTokens != math.MaxInt || m.ThinkingTokens != 2 {
		t.Errorf("Merge of MaxInt tokens = %+v, want saturated sums", m)
	}
	neg := model.Usage{InputTokens: -1000000, OutputTokens: 5, CacheReadTokens: -5}
	if got := neg.Total(); got != 5 {
		t.Errorf("Total with negative fields = %d, want 5 (negatives count as zero)", got)
	}
	if got := neg.Merge(model.Usage{InputTokens: 3}); got != (model.Usage{InputTokens: 3, OutputTokens: 5}) {
		t.Errorf("Merge with negative fields = %+v, want negatives as zero", got)
	}
}
