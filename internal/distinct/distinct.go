// Package distinct collects the distinct terms of a query in the order
// they first appear, as memory's item search and cognition's recall both
// do: a few terms are compared one by one, which costs less than a set,
// and a set takes over past them.
package distinct

import "slices"

// scanTerms is the number of distinct terms up to which [Terms.Add] finds
// a repeated term by comparing, which costs less than a set.
const scanTerms = 8

// Terms is a list of distinct terms. The zero value is empty. Its size is
// bounded by the caller, which stops adding at its own limit.
type Terms struct {
	list []string
	seen map[string]struct{} // once list is long enough to need it
}

// Add appends t unless it is already there, and reports whether it did.
func (s *Terms) Add(t string) bool {
	switch {
	case s.seen != nil:
		if _, dup := s.seen[t]; dup {
			return false
		}
		s.seen[t] = struct{}{}
	case slices.Contains(s.list, t):
		return false
	case len(s.list) == scanTerms:
		s.seen = make(map[string]struct{}, 2*scanTerms)
		for _, o := range s.list {
			s.seen[o] = struct{}{}
		}
		s.seen[t] = struct{}{}
	}
	s.list = append(s.list, t)
	return true
}

// Len returns the number of terms.
func (s *Terms) Len() int { return len(s.list) }

// List returns the terms in the order they were first added.
func (s *Terms) List() []string { return s.list }
