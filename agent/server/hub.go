package server

import "sync"

// hub wakes the readers of a run's event log when the log grows or the run
// ends, and hands them the events this process appended, so that a stream
// on the instance that executes its run reads the store once, to catch
// up, and then follows the run from memory. A run's entry exists only
// while someone watches it, so the map is bounded by the open streams and
// waits, and each entry's tail by maxTail.
type hub struct {
	mu   sync.Mutex
	runs map[string]*runHub
}

// maxTail bounds the events a watched run's entry keeps.
const maxTail = 64

type runHub struct {
	ch     chan struct{} // closed on the next change
	refs   int
	thread string // the run's thread, when a watcher named it
	// tail is the run's latest events appended by this process (and
	// stored) while the run was watched, oldest first.
	tail []Event
}

// watch returns a channel closed at the run's next change, and the function
// that ends the watch. threadID, the run's thread ("" when the watcher
// does not know it), lets notifyThread wake the watch.
func (h *hub) watch(runID, threadID string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.runs[runID]
	if e == nil {
		e = &runHub{ch: make(chan struct{})}
		h.runs[runID] = e
	}
	if e.thread == "" {
		e.thread = threadID
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

// notifyThread wakes the watchers of the thread's runs (those watched
// with the thread named), for a change that may end them: a worker that
// ends after Close, leaving the thread's pending runs to no one here.
// The watchers of other threads' runs are not woken (each would read its
// run from the store again for nothing).
func (h *hub) notifyThread(threadID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.runs {
		if e.thread == threadID {
			close(e.ch)
			e.ch = make(chan struct{})
		}
	}
}

// publish wakes the run's watchers with an event this process appended to
// the run's log, once the store holds it.
func (h *hub) publish(runID string, ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.runs[runID]
	if e == nil {
		return
	}
	if len(e.tail) == maxTail {
		n := copy(e.tail, e.tail[1:])
		e.tail = e.tail[:n]
	}
	if e.tail == nil {
		// A run of a small graph streams a few events (metadata, values,
		// end): room for them at once, not grown from one by doubling.
		e.tail = make([]Event, 0, 4)
	}
	e.tail = append(e.tail, ev)
	close(e.ch)
	e.ch = make(chan struct{})
}

// since returns the events after id after that the run's entry holds,
// when it holds the event after+1 (so that none between is missing): the
// ones with consecutive ids from there. It returns nil events otherwise;
// the caller then reads the store. changed is the channel closed at the
// run's next change after this call (nil when the run is not watched): a
// watcher that waits on it after handling the events is woken by the
// next event, and not by one it already has, which would cost it a read
// of the store that finds nothing.
func (h *hub) since(runID string, after int64) (evs []Event, changed <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.runs[runID]
	if e == nil {
		return nil, nil
	}
	for i, ev := range e.tail {
		if ev.ID != after+1 {
			continue
		}
		j := i + 1
		for j < len(e.tail) && e.tail[j].ID == e.tail[j-1].ID+1 {
			j++
		}
		return append([]Event(nil), e.tail[i:j]...), e.ch
	}
	return nil, e.ch
}
