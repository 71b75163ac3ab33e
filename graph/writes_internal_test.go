package graph

import "testing"

type sixFields struct{ A, B, C, D, E, F int }

var (
	sixA = Replace(func(s *sixFields) *int { return &s.A })
	sixB = Replace(func(s *sixFields) *int { return &s.B })
	sixC = Replace(func(s *sixFields) *int { return &s.C })
	sixD = Replace(func(s *sixFields) *int { return &s.D })
	sixE = Replace(func(s *sixFields) *int { return &s.E })
	sixF = Replace(func(s *sixFields) *int { return &s.F })
)

// TestUpdateOfInlineWritesAllocatesNothing pins that an update writing up
// to inlineWrites fields (the prebuilt agent's model turn writes five) is
// built without allocating, and that one more field still works.
func TestUpdateOfInlineWritesAllocatesNothing(t *testing.T) {
	if inlineWrites < 6 {
		t.Fatalf("inlineWrites = %d; this test writes 6 fields", inlineWrites)
	}
	var u Update[sixFields]
	allocs := testing.AllocsPerRun(100, func() {
		u = Updates(sixA.Set(1), sixB.Set(2), sixC.Set(3), sixD.Set(4), sixE.Set(5), sixF.Set(6))
	})
	if allocs != 0 {
		t.Errorf("an update of 6 fields allocates %v times, want 0", allocs)
	}
	if u.ops.len() != 6 {
		t.Fatalf("update holds %d writes, want 6", u.ops.len())
	}
	for i, f := range []*Field[sixFields, int]{sixA, sixB, sixC, sixD, sixE, sixF} {
		if v, ok := f.Get(u); !ok || v != i+1 {
			t.Errorf("field %d = %v, %v; want %d, true", i, v, ok, i+1)
		}
	}
}
