package postgres

import (
	"sync"

	"github.com/agentgraph/agentgraph/agent/server"
)

// maxGuesses bounds the threads whose record a Store remembers for the
// one-round-trip creation of their runs (see guesses).
const maxGuesses = 4096

// maxGuessMetadata bounds the metadata of a thread a Store remembers,
// in bytes of its JSON: a thread whose metadata is larger is not
// remembered, its runs' creation takes two round trips. With maxGuesses
// it bounds what the guesses hold (about 4096 × 8 KiB).
const maxGuessMetadata = 8 << 10

// guessSlack is what a creation's guess adds to the count of the
// principal's active runs that the thread's last creation read: the run
// is planned as if the principal had that many, and inserted only if
// it has at most that many (see Store.createGuessed).
const guessSlack = 16

// threadGuess is what a Store remembers of a thread from its last run's
// creation here: the columns of the thread's record that a creation's
// plan reads, as stored (md is the metadata column's JSON, nil for NULL),
// and the count of the principal owner's active runs that creation read
// (n; the count's principal in counter, "" when it did not count), and
// the run that creation inserted (run), until this Store ends it (""
// then): while it may be active, the guess is not used, as the insert
// it would make is refused (the thread has an active run).
type threadGuess struct {
	owner, graphID, head string
	rolled               bool
	md                   []byte
	counter              string
	n                    int
	run                  string
}

// thread returns the thread g describes, with the fields a creation's
// plan reads (those threadFreeActive reads): a new value each time, as
// the plan may keep it.
func (g threadGuess) thread(id string) (*server.Thread, error) {
	t := &server.Thread{ID: id, Owner: g.owner, GraphID: g.graphID, Head: g.head, Rolled: g.rolled}
	if g.md != nil {
		if err := unmarshalNumbers(g.md, &t.Metadata); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// guesses remembers the record of the threads whose runs a Store last
// created, up to maxGuesses threads (when full, an arbitrary one is
// forgotten to make room) whose metadata is at most maxGuessMetadata
// bytes. What it holds is only a guess: the creation
// made from it inserts its run only if the thread's record is still as
// remembered, and reads it afresh otherwise.
type guesses struct {
	mu    sync.Mutex
	m     map[string]threadGuess
	byRun map[string]string // thread of each guess's run, for endedRun
}

// get returns what is remembered of thread.
func (g *guesses) get(thread string) (threadGuess, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	x, ok := g.m[thread]
	return x, ok
}

// put remembers x for thread, or forgets thread when x's metadata is
// over maxGuessMetadata.
func (g *guesses) put(thread string, x threadGuess) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(x.md) > maxGuessMetadata {
		g.drop(thread)
		return
	}
	if g.m == nil {
		g.m = make(map[string]threadGuess)
		g.byRun = make(map[string]string)
	}
	if _, ok := g.m[thread]; !ok && len(g.m) >= maxGuesses {
		for k := range g.m {
			g.drop(k)
			break
		}
	}
	g.drop(thread)
	g.m[thread] = x
	if x.run != "" {
		g.byRun[x.run] = thread
	}
}

// drop forgets thread; g.mu is held.
func (g *guesses) drop(thread string) {
	if x, ok := g.m[thread]; ok {
		delete(g.byRun, x.run)
		delete(g.m, thread)
	}
}

// forget forgets thread, whose record changed or may have.
func (g *guesses) forget(thread string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.drop(thread)
}

// ended records that this Store ended run of thread: when it is the run
// the thread's guess was made with, the guess may be used again.
func (g *guesses) ended(thread, run string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if x, ok := g.m[thread]; ok && x.run == run {
		delete(g.byRun, run)
		x.run = ""
		g.m[thread] = x
	}
}

// endedRun is ended for a run whose thread the caller does not know.
//
// A Store records a run's end here before it sends the end: a client told
// of the end by PostgreSQL (a NOTIFY, or reading the run) may create the
// thread's next run before the end's reply reaches this Store. Recording
// it early is safe: a guess whose run is still active makes a creation
// that inserts nothing, and the thread is then read as before.
func (g *guesses) endedRun(run string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if thread, ok := g.byRun[run]; ok {
		delete(g.byRun, run)
		x := g.m[thread]
		x.run = ""
		g.m[thread] = x
	}
}

// len returns the number of threads remembered.
func (g *guesses) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}
