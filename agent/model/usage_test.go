package model_test

import (
	"encoding/json"
	"math"
	"math/big"
	"math/bits"
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

// Merge saturates and drops negatives around the bounds of its fast path
// (every count below 2^(w-2) for a w-bit int) as it does anywhere: each
// field is compared with a sum in big numbers. The values are built from
// bits.UintSize, so the test means the same on 32-bit platforms.
func TestUsageMergeBounds(t *testing.T) {
	const edge = 1 << (bits.UintSize - 2)
	vals := []int{0, 1, 7, -1, math.MinInt, edge - 1, edge, edge + 1, math.MaxInt - 1, math.MaxInt, edge / 2, edge + edge/2}
	want := func(a, b int) int {
		s := new(big.Int).Add(big.NewInt(int64(max(a, 0))), big.NewInt(int64(max(b, 0))))
		if s.Cmp(big.NewInt(math.MaxInt)) > 0 {
			return math.MaxInt
		}
		return int(s.Int64())
	}
	for _, a := range vals {
		for _, b := range vals {
			for field := range 5 {
				var u, v model.Usage
				pu := []*int{&u.InputTokens, &u.OutputTokens, &u.ThinkingTokens, &u.CacheReadTokens, &u.CacheWriteTokens}
				pv := []*int{&v.InputTokens, &v.OutputTokens, &v.ThinkingTokens, &v.CacheReadTokens, &v.CacheWriteTokens}
				*pu[field], *pv[field] = a, b
				// The other fields small, so that only this one
				// decides the path.
				for k := range 5 {
					if k != field {
						*pu[k], *pv[k] = k, 2*k
					}
				}
				m := u.Merge(v)
				got := []int{m.InputTokens, m.OutputTokens, m.ThinkingTokens, m.CacheReadTokens, m.CacheWriteTokens}
				for k := range 5 {
					w := 3 * k
					if k == field {
						w = want(a, b)
					}
					if got[k] != w {
						t.Fatalf("field %d: %d merged with %d gives %d, want %d (usage %+v)", k, a, b, got[k], w, m)
					}
				}
			}
		}
	}
}
