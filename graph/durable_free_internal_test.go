package graph

import "testing"

// TestFreeDrunDropsEncodings: a pooled run's bookkeeping keeps no encoded
// value of the last run's state.
func TestFreeDrunDropsEncodings(t *testing.T) {
	r := &run[struct{ A []int }]{}
	r.d = &drun[struct{ A []int }]{chans: []chanRun{{prev: []byte("[1,2,3]")}}}
	r.freeDrun()
	if r.dfree == nil {
		t.Fatal("freeDrun kept no bookkeeping to reuse")
	}
	for i, c := range r.dfree.chans {
		if c.prev != nil {
			t.Errorf("channel %d of the freed run still holds %q", i, c.prev)
		}
	}
}
