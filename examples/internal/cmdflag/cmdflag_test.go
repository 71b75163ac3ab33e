package cmdflag_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/examples/internal/cmdflag"
)

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"a", []string{"a"}},
		{" a , b,,c ", []string{"a", "b", "c"}},
	} {
		if got := cmdflag.List(c.in); !slices.Equal(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("List(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
