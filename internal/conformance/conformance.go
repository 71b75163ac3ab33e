// Package conformance runs the checks of a store conformance suite
// (memory/memorytest, document/documenttest, cognition/cognitiontest): each
// check as a subtest, on a fresh store made for that subtest.
package conformance

import "testing"

// Check is one named check of a store of type S.
type Check[S any] struct {
	Name string
	Fn   func(t *testing.T, s S)
}

// Run runs checks, in order, as subtests of t. For each it calls newStore
// with the subtest's t, which must return an empty store (released with
// t.Cleanup), and passes the store to the check.
func Run[S any](t *testing.T, newStore func(t *testing.T) S, checks []Check[S]) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) { c.Fn(t, newStore(t)) })
	}
}
