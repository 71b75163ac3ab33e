package cognition

// Confidence scores, from 0 to 1, how likely the agent's next turn with
// userID is to succeed, from what the monitor has seen: the success rate of
// the window's turns with an outcome, smoothed toward 1/2 (a partial
// success counts half, so with no rated turns the score is 0.5), divided by
// one plus the user's current run of turns that did not succeed, and by
// two when the window's failure rate is high ([HighFailureRate] active).
// An empty userID leaves the user's run out. Callers can use it to hedge
// answers, ask for confirmation, or escalate.
func (m *Monitor) Confidence(userID string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.confidenceLocked(userID)
}

func (m *Monitor) confidenceLocked(userID string) float64 {
	w := m.window()
	partials := w.rated - w.successes - w.failures
	c := (float64(w.successes) + 0.5*float64(partials) + 1) / float64(w.rated+2)
	if userID != "" {
		c /= float64(1 + m.users[userID].n)
	}
	if _, ok := m.active[patternKey{kind: HighFailureRate}]; ok {
		c /= 2
	}
	return c
}
