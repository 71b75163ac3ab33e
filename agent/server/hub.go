package server

import "sync"

// hub wakes the readers of a run's event log when the log grows or the run
// ends. A run's entry exists only while someone watches it, so the map is
// bounded by the open streams and waits.
type hub struct {
	mu   sync.Mutex
	runs map[string]*runHub
}

type runHub struct {
	ch   chan struct{} // closed on the next change
	refs int
}

// watch returns a channel closed at the run's next change, and the function
// that ends the watch.
func (h *hub) watch(runID string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.runs[runID]
	if e == nil {
		e = &runHub{ch: make(chan struct{})}
		h.runs[runID] = e
	}
	e.refs++
	ch := e.ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if e.refs--; e.refs == 0 && h.runs[runID] == e {
				delete(h.runs, runID)
			}
		})
	}
}

// notify wakes the run's watchers.
func (h *hub) notify(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.runs[runID]; e != nil {
		close(e.ch)
		e.ch = make(chan struct{})
	}
}
