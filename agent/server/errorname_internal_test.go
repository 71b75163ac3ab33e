package server

import (
	"errors"
	"fmt"
	"testing"
)

// TestErrorNameOfUnexportedTypes: an error of an unexported type, however
// wrapped, is named "Error", not by its implementation type; an exported
// type keeps its name. (TestErrorNameNotInternal drove this through a run
// from a missing checkpoint, which is now refused when the run is made.)
func TestErrorNameOfUnexportedTypes(t *testing.T) {
	type unexportedErr struct{ error }
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("x"), "Error"},
		{fmt.Errorf("loading: %w", errors.New("x")), "Error"},
		{&unexportedErr{errors.New("x")}, "Error"},
		{&requestError{status: 422, msg: "x"}, "ValidationError"},
		{ErrThreadLocked, "Error"},
	} {
		if got := errorName(c.err); got != c.want {
			t.Errorf("errorName(%T %v): %q; want %q", c.err, c.err, got, c.want)
		}
	}
}
