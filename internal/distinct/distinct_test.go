package distinct

import (
	"fmt"
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	var s Terms
	var want []string
	for i := range 3 * scanTerms {
		w := fmt.Sprint("t", i)
		if !s.Add(w) || s.Add(w) {
			t.Fatalf("Add(%q) twice: want true then false", w)
		}
		want = append(want, w)
		if s.Add("t0") {
			t.Fatalf("t0 added again after %d terms", i+1)
		}
	}
	if !slices.Equal(s.List(), want) || s.Len() != len(want) {
		t.Errorf("List() = %v, want %v", s.List(), want)
	}
}
