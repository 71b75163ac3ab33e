package postgres

// EndsState reports whether s is sending a batch of runs' ends, and how
// many ends wait for it.
func EndsState(s *Store) (sending bool, waiting int) {
	s.ends.mu.Lock()
	defer s.ends.mu.Unlock()
	return s.ends.sending, len(s.ends.waiting)
}
