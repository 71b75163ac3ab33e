package checkpoint

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewIDFormatAndTime(t *testing.T) {
	now := time.Now()
	id := NewID()
	if !uuidV7.MatchString(id) {
		t.Fatalf("NewID() = %q, not a UUID version 7", id)
	}
	// The first 48 bits are the Unix time in milliseconds.
	var ms uint64
	for _, c := range id[:8] + id[9:13] {
		ms = ms<<4 | uint64(hexVal(byte(c)))
	}
	if d := int64(ms) - now.UnixMilli(); d < 0 || d > 1000 {
		t.Errorf("NewID() = %q holds time %d ms, want about %d", id, ms, now.UnixMilli())
	}
}

func hexVal(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// TestNewIDOrder checks that IDs sort in the order they were made, also
// when made concurrently, when many share a millisecond and when the clock
// steps back.
func TestNewIDOrder(t *testing.T) {
	tests := []struct {
		name  string
		times func(i int) time.Time
	}{
		{"now", func(int) time.Time { return time.Now() }},
		{"one millisecond", func(int) time.Time { return time.UnixMilli(1_700_000_000_000) }},
		{"clock steps back", func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 - int64(i)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 5000
			ids := make([]string, n)
			for i := range ids {
				ids[i] = newID(tt.times(i))
				if !uuidV7.MatchString(ids[i]) {
					t.Fatalf("id %d = %q, not a UUID version 7", i, ids[i])
				}
			}
			if !slices.IsSorted(ids) {
				t.Errorf("IDs made in order do not sort in order")
			}
			if len(slices.Compact(ids)) != n {
				t.Errorf("IDs repeat")
			}
		})
	}
	t.Run("concurrent", func(t *testing.T) {
		const g, n = 8, 2000
		per := make([][]string, g)
		var wg sync.WaitGroup
		for k := range per {
			wg.Go(func() {
				for range n {
					per[k] = append(per[k], NewID())
				}
			})
		}
		wg.Wait()
		var all []string
		for _, ids := range per {
			if !slices.IsSorted(ids) {
				t.Errorf("one goroutine's IDs do not sort in order")
			}
			all = append(all, ids...)
		}
		slices.Sort(all)
		if len(slices.Compact(all)) != g*n {
			t.Errorf("concurrent IDs repeat")
		}
	})
}

func BenchmarkNewID(b *testing.B) {
	for b.Loop() {
		_ = NewID()
	}
}

// TestBadIDMatchesRule checks badID's word-at-a-time pass against the rule
// it implements, with a NUL byte or a non-ASCII byte at every position of
// IDs of every length around the 8-byte words.
func TestBadIDMatchesRule(t *testing.T) {
	for n := 0; n <= 19; n++ {
		for pos := -1; pos < n; pos++ {
			for _, c := range []byte{0, 0x7f, 0x80, 0xc3, 0xff, 0x01} {
				b := []byte(strings.Repeat("a", n))
				if pos >= 0 {
					b[pos] = c
				}
				s := string(b)
				want := strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
				if got := badID(s) == ""; got != want {
					t.Errorf("badID(%q) passes = %v; want %v", s, got, want)
				}
			}
		}
	}
	if badID("é"+strings.Repeat("x", 9)) != "" || badID(strings.Repeat("x", 9)+"é") != "" {
		t.Errorf("badID refuses valid UTF-8")
	}
}
