package server

import (
	"strings"
	"testing"
)

// TestCheckDepthAllocatesNothing: checking a body that nests within
// MaxJSONDepth makes no string of its fields or values, however many.
func TestCheckDepthAllocatesNothing(t *testing.T) {
	body := []byte(`{` + strings.Repeat(`"field":"value",`, 1000) + `"last":[[1]]}`)
	if n := testing.AllocsPerRun(10, func() {
		if err := checkDepth(body); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("checkDepth: %v allocations, want 0", n)
	}
}
