package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Errors a [Store] returns, matched with errors.Is.
var (
	// ErrNotFound: no thread, run or event log of that id.
	ErrNotFound = errors.New("server: not found")
	// ErrExists: a thread or run of that id already exists.
	ErrExists = errors.New("server: already exists")
	// ErrLimit: a bound of [Config] (MaxQueuedRuns, MaxThreads,
	// MaxActiveRuns, MaxThreadBytes...) is reached.
	ErrLimit = errors.New("server: limit reached")
	// ErrThreadLocked: a [LockingRecorder] method found the thread's
	// lock held by another holder, and changed nothing.
	ErrThreadLocked = errors.New("server: the thread's lock is held elsewhere")
	// ErrLeaseLost: a run's end named the worker and attempt that
	// executed the run ([RunEnd].Worker), and the run is no longer
	// theirs: its lease expired and another worker took it over (or
	// the run ended otherwise). Nothing was recorded; the run's record
	// and its thread are the new owner's to write.
	ErrLeaseLost = errors.New("server: the run's lease was lost to another worker")
)

// Thread statuses (the Agent Server API's; see the package doc).
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// Run statuses.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunTimeout     = "timeout"
	RunInterrupted = "interrupted"
)

// Thread is the server's record of one thread. The graph's state itself is
// in the graph's checkpointer; Values and Interrupts are the copy the thread
// endpoints return, refreshed when a run ends.
type Thread struct {
	ID string `json:"thread_id"`
	// Owner is the principal that created the thread: only it can see or
	// use the thread.
	Owner     string         `json:"-"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Metadata  map[string]any `json:"metadata"`
	Status    string         `json:"status"`
	Config    map[string]any `json:"config"`
	// Values is the thread's last known state, as JSON.
	Values json.RawMessage `json:"values"`
	// Interrupts maps a task id to the interrupts it waits on.
	Interrupts map[string][]Interrupt `json:"interrupts"`
	// GraphID is the graph that runs on the thread, set by its first run
	// (or by metadata.graph_id at creation).
	GraphID string `json:"-"`
	// Head, when set, is the checkpoint the thread's state is read from and
	// its next run starts from, instead of the latest: a rollback sets it to
	// the checkpoint the rolled-back run started from.
	Head string `json:"-"`
	// Rolled is true when a rollback left the thread with no checkpoint of
	// its own (the rolled-back run was its first).
	Rolled bool `json:"-"`
}

// Interrupt is a pause of a run waiting for a value: its id and payload.
type Interrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
}

// Run is the server's record of one run.
type Run struct {
	ID          string    `json:"run_id"`
	ThreadID    string    `json:"thread_id"`
	AssistantID string    `json:"assistant_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	Status      string    `json:"status"`
	// Metadata is the run's metadata. Its numbers are json.Number when it
	// was decoded from a request or read from the SQLite or PostgreSQL
	// store, so an integer beyond 2^53 keeps its digits.
	Metadata map[string]any `json:"metadata"`
	// Kwargs is the run's request as received (input, command, config,
	// stream options...); the run is executed from it, so any instance that
	// claims the run can execute it.
	Kwargs            json.RawMessage `json:"kwargs"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	// Owner is the principal that created the run.
	Owner string `json:"-"`
	// Worker names the instance executing the run, and LeaseUntil how long
	// its claim holds: a backend shared by several instances lets another
	// instance claim a running run whose lease expired.
	Worker     string    `json:"-"`
	LeaseUntil time.Time `json:"-"`
	// Attempt counts the claims of the run: 1 for the first, more when
	// the run was taken over from an instance whose lease expired.
	Attempt int `json:"-"`
	// Started is set when the run first starts executing, and Start is
	// then the thread's checkpoint ("" for a thread without one): a
	// taken-over run that finds the thread past Start resumes from the
	// latest checkpoint instead of starting again, and a rollback returns
	// the thread to Start.
	Started bool   `json:"-"`
	Start   string `json:"-"`
	// Cancel is a cancellation (interrupt or rollback) requested by an
	// instance that does not execute the run; the executing instance
	// acts on it.
	Cancel string `json:"-"`
	// Error is the error message of a run that failed.
	Error string `json:"-"`
}

// Event is one event of a run's stream, as sent over SSE. IDs increase by
// one from 0 within a run, except that a store whose event logs a crash
// can lose (the PostgreSQL store's) numbers the events of a run's next
// attempt, when it finds the run's log lost, from a base above every id
// of the attempts before.
type Event struct {
	ID   int64           `json:"id"`
	Name string          `json:"event"`
	Data json.RawMessage `json:"data"`
}

// ThreadQuery selects threads for [Store.SearchThreads].
type ThreadQuery struct {
	Owner string   // only the threads of this principal
	IDs   []string // when set, only these threads
	// Metadata keeps the threads whose metadata contains these pairs, as
	// PostgreSQL's jsonb @> decides containment (LangGraph's semantics):
	// a nested object matches one with more keys, an array one with more
	// elements.
	Metadata map[string]any
	// Values keeps the threads whose values (a JSON object) contain these
	// pairs, as Metadata (see ThreadQuery.ValuesMatch).
	Values map[string]any
	Status string // when set, only threads of this status
	Limit  int
	Offset int
	// SortBy is thread_id, status, created_at (the default) or updated_at;
	// SortDesc reverses the order.
	SortBy   string
	SortDesc bool
	// MaxBytes, when positive, bounds the page by bytes, by the sum of
	// its threads' [Thread.Size], as [RunQuery.MaxBytes] bounds runs
	// (the thread past the bound is returned too). The count is not
	// changed by it.
	MaxBytes int
}

// RunQuery selects runs of one thread for [Store.Runs].
type RunQuery struct {
	ThreadID string // the thread whose runs are listed
	Status   string // when set, only runs of this status
	// Newest lists the newest runs first; by default the oldest come
	// first (by creation).
	Newest bool
	// Offset skips that many runs of the order; Limit, when positive,
	// bounds the runs returned.
	Offset int
	Limit  int
	// MaxBytes, when positive, bounds the page by bytes: the page stops
	// at the run that takes the sum of its runs' [Run.Size] past
	// MaxBytes. That run is returned too (as is the first whatever its
	// size), so that a caller that cuts the page at MaxBytes, as the
	// server does, learns that it was cut. This is the one convention of
	// every MaxBytes of a store query ([ThreadQuery.MaxBytes],
	// memory.ItemQuery.MaxBytes). A store decodes no more runs than it
	// returns; a SQL store's database may still read (and send) up to
	// the Limit rows of the statement.
	MaxBytes int
}

// Store keeps the server's threads, runs and run event logs. Graph state is
// not here: it is in each graph's checkpoint.Saver.
//
// The methods are safe for concurrent use. The in-memory and SQLite stores
// serve one process. A store shared by several instances (such as one on
// PostgreSQL) implements Claim with a row lock that skips locked rows and a
// lease the claiming instance renews with Renew, so that a run whose instance
// died is claimed again once its lease expires; its event log is addressed by
// run id and event id, so any instance can replay it.
type Store interface {
	// CreateThread saves a new thread; ErrExists if its id is taken.
	CreateThread(ctx context.Context, t *Thread) error
	// Thread loads a thread; ErrNotFound if there is none.
	Thread(ctx context.Context, id string) (*Thread, error)
	// UpdateThread loads the thread, calls fn on it and saves what fn left,
	// atomically; fn's error aborts the update and is returned.
	UpdateThread(ctx context.Context, id string, fn func(*Thread) error) (*Thread, error)
	// DeleteThread deletes the thread with its runs and their event logs.
	// Deleting a missing thread is not an error.
	DeleteThread(ctx context.Context, id string) error
	// SearchThreads returns the threads q selects, and how many it selects
	// without Limit and Offset.
	SearchThreads(ctx context.Context, q ThreadQuery) ([]*Thread, int, error)

	// CreateRun saves a new run; ErrExists if its id is taken.
	CreateRun(ctx context.Context, r *Run) error
	// Run loads a run; ErrNotFound if there is none.
	Run(ctx context.Context, id string) (*Run, error)
	// UpdateRun loads the run, calls fn on it and saves what fn left,
	// atomically.
	UpdateRun(ctx context.Context, id string, fn func(*Run) error) (*Run, error)
	// DeleteRun deletes a run and its event log.
	DeleteRun(ctx context.Context, id string) error
	// Runs lists the runs of q.ThreadID that q selects, in the order
	// and page q asks for; it reads only the runs of that page.
	Runs(ctx context.Context, q RunQuery) ([]*Run, error)
	// Claim takes the thread's oldest pending run for worker when no run of
	// the thread is running (or the running one's lease expired), marks it
	// running with a lease until now+lease and returns it; nil when there is
	// nothing to claim.
	Claim(ctx context.Context, threadID, worker string, lease time.Duration) (*Run, error)
	// ClaimDue claims for worker, as Claim does, a run of any thread:
	// the oldest pending run whose time has come, or a running run whose
	// lease expired, of a thread with no run under a live lease; nil when
	// there is none. It is how an instance picks up the runs no instance
	// executes: queued before a restart, delayed, or left by an instance
	// that died. Claim and ClaimDue increment the claimed run's Attempt.
	// A Store that instances share may leave a pending run to the
	// instance that created it for a short grace after its UpdatedAt
	// (the creating instance claims it at once), so that one instance's
	// sweep does not take the runs another has just created.
	ClaimDue(ctx context.Context, worker string, lease time.Duration) (*Run, error)
	// Renew extends worker's lease on a running run.
	Renew(ctx context.Context, runID, worker string, lease time.Duration) error
	// Prune drops the event logs and kwargs of the runs that ended (their
	// status is neither pending nor running) before endedBefore, keeping
	// their records, and deletes the ended runs of each thread beyond the
	// thread's keep newest ended runs (by creation), records and event
	// logs. It returns how many runs it pruned or deleted. A zero
	// endedBefore prunes no run by age; keep ≤ 0 deletes no run. Pending
	// and running runs are never touched.
	Prune(ctx context.Context, endedBefore time.Time, keep int) (int, error)

	// AppendEvent adds an event to the run's log and returns it with its id.
	// The log keeps at most max events: older ones are dropped, and
	// Events reports where the log starts.
	AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (Event, error)
	// Events returns up to limit events of the run's log with ids greater
	// than after (-1 for all), and the id of the oldest event still kept.
	// A Store whose logs can restart (lose their events and number the
	// next ones from 0 again, as the PostgreSQL store's after a database
	// crash) returns the log from its start when after is at or past the
	// log's next id: the only case where it returns ids ≤ after, which
	// the server's streams report as dropped events.
	Events(ctx context.Context, runID string, after int64, limit int) (evs []Event, first int64, err error)
}

// A RunWatcher is a [Store] shared by several server instances that tells
// each instance about the changes the others make to runs, so that it
// wakes its streams and waits on them, and acts on a cancellation asked of
// a run it executes. A server whose store implements it watches from New
// to Close. Each server needs a Store value of its own: changes made
// through the same value are not reported to it.
type RunWatcher interface {
	// WatchRuns calls fn with the id of each run whose record or event
	// log another instance changed, until ctx ends (returning nil) or the
	// watch fails. fn may be called again for a change already reported;
	// a change may go unreported while the watch reconnects, so readers
	// also poll.
	WatchRuns(ctx context.Context, fn func(runID string)) error
}

// A ThreadLocker is a [Store] shared by several server instances that
// serialises, across them, what the server does to a thread under its
// lock: creating a run with its double-texting strategy, recording a
// run's end and the thread's new status, updating the thread's state. One
// process serialises these with a mutex of its own, which the server
// takes first, so an instance waits on the store's lock at most once per
// thread.
type ThreadLocker interface {
	// LockThread waits until it holds the thread's lock, or ctx ends, and
	// returns the function that releases it. The thread need not exist.
	// A lock whose holder died is released after a time the
	// implementation documents.
	LockThread(ctx context.Context, threadID string) (unlock func(), err error)
}

// An ActiveRunLister is a [Store] that lists a thread's pending and running
// runs in one call. The server lists them before it creates a run and
// when a run ends; when the store implements ActiveRunLister it does so
// with one call instead of two calls of Runs.
type ActiveRunLister interface {
	// ActiveRuns returns the thread's running runs, then its pending
	// runs, each oldest first.
	ActiveRuns(ctx context.Context, threadID string) ([]*Run, error)
}

// A RunRecorder is a [Store] that makes the reads and writes the server
// makes on every run each in one round trip, where the server otherwise
// makes them with Thread then ActiveRuns, Claim then Thread, CreateRun
// then UpdateThread, and UpdateRun and UpdateThread (a read-modify-write
// each). The server uses it when the store implements it; each method
// has the effect of the calls it replaces.
type RunRecorder interface {
	// ThreadActive is Thread and ActiveRuns (the thread's running
	// runs, then its pending runs, each oldest first) in one call;
	// ErrNotFound if there is no thread.
	ThreadActive(ctx context.Context, threadID string) (*Thread, []*Run, error)
	// ClaimThread is Claim that also returns the run's thread, read
	// with the claim (nil with a nil run).
	ClaimThread(ctx context.Context, threadID, worker string, lease time.Duration) (*Run, *Thread, error)
	// CreateRunBusy saves a new run as CreateRun does (ErrExists if its
	// id is taken, ErrNotFound if its thread is missing) and, with it,
	// marks its thread busy running graphID: Status ThreadBusy,
	// UpdatedAt r.UpdatedAt, GraphID graphID, and the pairs of md added
	// to its Metadata.
	CreateRunBusy(ctx context.Context, r *Run, graphID string, md map[string]any) error
	// StartRun sets the run's Started and its Start to start, unless
	// Started is already set (Start then stays), and returns the run's
	// record; ErrNotFound if there is none.
	StartRun(ctx context.Context, runID, start string) (*Run, error)
	// EndRun sets the run's Status, Error and UpdatedAt, clears its
	// Worker and LeaseUntil, and returns its record; ErrNotFound if there
	// is none.
	EndRun(ctx context.Context, runID, status, msg string, at time.Time) (*Run, error)
	// RefreshThread applies f to the thread as [ThreadRefresh.Apply]
	// does, with active the number of the thread's pending and running
	// runs not in f.Exclude, and returns active; a missing thread is
	// not an error (it returns 0).
	RefreshThread(ctx context.Context, threadID string, f ThreadRefresh) (active int, err error)
}

// An OwnedEnder is a store that ends a run only if the worker that
// executed it still owns it. The server uses it, when its store is one,
// for a run's end recorded step by step ([RunRecorder.EndRun]'s place),
// so that a worker whose lease was taken over does not overwrite the
// new owner's end.
type OwnedEnder interface {
	// EndRunOwned is EndRun made only if the run is running under worker
	// with attempt (the claim's Worker and Attempt): otherwise it writes
	// nothing and returns ErrLeaseLost, or ErrNotFound if there is no
	// run.
	EndRunOwned(ctx context.Context, runID, status, msg string, at time.Time, worker string, attempt int) (*Run, error)
}

// An AttemptRenewer is a [Store] that renews a lease for one attempt of
// a run. The server renews with it, when the store is one, rather than
// with Renew, which checks only the worker: after this instance's own
// sweeper took over one of its runs (same worker, the next attempt), the
// stale execution's renewals are refused and it is cancelled, and a run's
// end renews the lease with it, so that no other instance claims the run
// while the end is being recorded.
type AttemptRenewer interface {
	// RenewAttempt extends the lease on the run if it is running under
	// worker with attempt (the claim's Worker and Attempt), expired or
	// not; otherwise it writes nothing and returns ErrNotFound.
	RenewAttempt(ctx context.Context, runID, worker string, attempt int, lease time.Duration) error
}

// A LockingRecorder is a [RunRecorder] and [ThreadLocker] whose methods
// make the sections of a run's life that the server makes under the
// thread's lock (the run's creation, its claim, its end) each in one
// transaction that takes the thread's lock, as LockThread does, and
// releases it as it commits: no round trip of its own for the take or
// the release. The server still holds its process-local lock of the
// thread around each call; the store's lock is for the other instances.
// When another holder has a live lease on the thread's lock, a method
// changes nothing and returns ErrThreadLocked (it does not wait): the
// server then takes the lock with LockThread, waiting for it, and makes
// the RunRecorder calls.
type LockingRecorder interface {
	RunRecorder
	ThreadLocker
	// CreateRunLocked takes the thread's lock, reads the thread (nil
	// when there is none) and its active runs (running, then pending,
	// each oldest first) and calls plan with them. plan returns the run
	// to create with [RunRecorder.CreateRunBusy]'s graphID and md, or a
	// nil run to create nothing (CreateRunLocked then returns false); an
	// error of plan's is returned as is. The run is created and the lock
	// released at one commit, so what plan read still holds when the run
	// is created. plan makes no call of the Store: it runs while the lock
	// is held. plan reads of the thread only its ID, Owner, Metadata,
	// GraphID, Head and Rolled, and of each active run only its ID,
	// ThreadID and Status: a store may leave the other fields zero (the
	// PostgreSQL store reads no others). A store may call plan twice: a
	// first time, before it takes the lock, on what it remembers of the
	// thread (with no active run), creating the run that call returns
	// only if it finds, under the lock, the thread and its active runs
	// as plan was passed them, and otherwise calling plan again on what
	// it read; plan is therefore a function of its arguments, and one
	// that creates no run, or fails, on the first call may be called
	// again.
	CreateRunLocked(ctx context.Context, threadID string, plan func(t *Thread, active []*Run) (r *Run, graphID string, md map[string]any, err error)) (created bool, err error)
	// ClaimThreadLocked is ClaimThread under the thread's lock. The
	// thread is returned only with a claimed run.
	ClaimThreadLocked(ctx context.Context, threadID, worker string, lease time.Duration) (*Run, *Thread, error)
	// FinishRunLocked records a run's end under its thread's lock, at one
	// commit: the thread's refresh (RefreshThread with e.Refresh), the
	// run's last event (AppendEvent with e.EventName, e.EventData and
	// e.MaxEvents) and the run's end (EndRun with e.Status, e.Error and
	// e.At). It returns the active runs counted by the refresh and the
	// event, not the run's record (the server makes it, for a run's
	// webhook, from the run it holds and e); ErrNotFound if the run is
	// missing (the thread, if any, is refreshed all the same).
	FinishRunLocked(ctx context.Context, e RunEnd) (active int, ev Event, err error)
}

// An EventEnder is a [Store] that records a run's end and appends the
// run's last event at one commit. The server ends a run with it, when the
// store is one, where it would otherwise append the last event and then
// record the end (a store that is no LockingRecorder, or one whose lock
// of the thread is held elsewhere): a client that receives the end event
// and reads the run finds it ended, and no crash between the two leaves
// clients an end event the store never recorded, or a run recorded ended
// without its last event. It is all or nothing: an EndRunEvent that
// fails records neither the event nor the end. The server then tries it
// once more (not when its outcome is unknown, an [*UnknownAppendError],
// for a run no worker claimed: that end could be recorded twice); if
// that fails too, the run stays running with no last event, and its
// streams open, until its lease expires and another instance takes it
// over.
type EventEnder interface {
	// EndRunEvent is EndRun(ctx, e.RunID, e.Status, e.Error, e.At) and
	// AppendEvent(ctx, e.RunID, e.EventName, e.EventData, e.MaxEvents)
	// at one commit; e.ThreadID and e.Refresh are not used. When
	// e.Worker is set the run is ended only if it is running under
	// e.Worker with e.Attempt: otherwise nothing is written and the
	// error is ErrLeaseLost. It returns the run's record as ended and
	// the event; ErrNotFound, with nothing written, if there is no run.
	EndRunEvent(ctx context.Context, e RunEnd) (ended *Run, ev Event, err error)
}

// A LastEventReader is a [Store] that reads the newest event of a given
// name in a run's log in one read, whatever the log's length. The server
// reads the error of a failed run (its newest error event, recorded with
// its end) with it, when the store is one; otherwise it pages through the
// run's log. The error event need not be the log's last: an execution of
// the run that lost its lease may still append events after the one that
// holds the lease ended the run.
type LastEventReader interface {
	// LastEvent returns the event named name of the run's log with the
	// highest id, and false when the log holds no event of that name (or
	// there is no run).
	LastEvent(ctx context.Context, runID, name string) (Event, bool, error)
}

// A LastEventIDReader is a [Store] that reads the id of the last event of
// a run's log in one read, whatever the log's length. A join of a run's
// stream without Last-Event-ID (live events only) starts after that
// event: with a store that is one the server reads the id alone,
// otherwise the whole log. The memory, SQLite and PostgreSQL stores are
// ones.
type LastEventIDReader interface {
	// LastEventID returns the highest event id of the run's log, and
	// false when the log holds no event (or there is no run).
	LastEventID(ctx context.Context, runID string) (int64, bool, error)
}

// A LostLogAppender is a [Store] whose run event logs can be lost while
// their run executes (the PostgreSQL store's, whose log tables a database
// crash empties) and that can number the log an append then creates above
// the ids the run's execution gave out. The server appends a running
// execution's events with it, when the store is one, so that a run's
// event ids keep increasing across such a loss, within an attempt as
// across attempts: no id a client was given is given to another event,
// and a client that resumes with Last-Event-ID is sent an EventsDropped
// error event for the events lost, then the events after them. That
// holds for as many losses as the store has room for above an attempt's
// base (the PostgreSQL store: 255 per attempt, see its package doc);
// past them a new log may give ids given before.
type LostLogAppender interface {
	// AppendEventAfter is AppendEvent by an execution of the run's
	// attempt attempt that was given event ids up to after (-1 for
	// none). When the run's log is missing, the log it creates numbers
	// its events above every id the attempt can have given out: from
	// the next multiple of 2^32 above after (an execution's appends
	// whose replies were lost included) and above the attempt's base,
	// or, with after -1, from the attempt's base (0 for the first; a
	// multiple of 2^40 for a later attempt, as a log its start
	// creates). Only a log that holds every event of its attempt starts
	// at the attempt's base: the server sends a client joining from the
	// start of any other log an EventsDropped error event. An append
	// whose outcome is unknown (its reply lost: it may have created a
	// log and stored the event) returns an [*UnknownAppendError], whose
	// MaxID the server counts as given, so that its next append numbers
	// a log lost again above the ids this one may have given.
	AppendEventAfter(ctx context.Context, runID string, attempt int, after int64, name string, data json.RawMessage, max int) (Event, error)
}

// An UnknownAppendError is the error of a [LostLogAppender]'s append (or
// an [EventEnder]'s end) whose outcome is unknown: the store's reply was
// lost, and the event may have been stored, and given to clients, with an
// id up to MaxID. The server counts MaxID as given to the run's
// execution (see [LostLogAppender.AppendEventAfter]).
type UnknownAppendError struct {
	// MaxID is the highest id the append may have given its event.
	MaxID int64
	// Err is the store's error.
	Err error
}

// Error describes the error and the ids it may have given.
func (e *UnknownAppendError) Error() string {
	return fmt.Sprintf("%v (the outcome is unknown: the event may have been stored with an id up to %d)", e.Err, e.MaxID)
}

// Unwrap returns e.Err.
func (e *UnknownAppendError) Unwrap() error { return e.Err }

// A RunClaimer is a [LockingRecorder] that creates a run already claimed
// by the instance that creates it, in the creation's transaction, so
// that the instance executes the run without claiming it (one round
// trip and one commit fewer per run). The server creates every run of
// such a store through CreateRunClaimedLocked, and its plan returns the
// run running only when the run will run here at once: the thread has no
// pending or running run, the run is not delayed (after_seconds), and
// this instance has no worker of the thread; otherwise pending. A run so
// created is to the other instances a run claimed by its worker: when
// the instance dies, its lease expires and another instance takes it
// over as it takes over any claimed run.
type RunClaimer interface {
	LockingRecorder
	// CreateRunClaimedLocked is CreateRunLocked, except that a run plan
	// returns with Status RunRunning is created claimed as Claim claims
	// a run: with its Worker and Attempt as plan set them (Attempt 1,
	// Claim's count for a run's first claim) and a lease until the
	// store's clock plus lease, the clock Claim and Renew read (the
	// run's LeaseUntil is not stored). A run plan returns pending is
	// created pending, as CreateRunLocked creates it. plan is called at
	// most twice per call, as CreateRunLocked's.
	CreateRunClaimedLocked(ctx context.Context, threadID string, lease time.Duration, plan func(t *Thread, active []*Run) (r *Run, graphID string, md map[string]any, err error)) (created bool, err error)
}

// A CountingClaimer is a [RunClaimer] and [OwnerCounter] that also
// counts a principal's pending and running runs (as
// [OwnerCounter].CountActiveRuns counts them) in the read of a run's
// creation, so that a run's creation under Config.MaxActiveRuns needs no
// statement of its own for the count. The server creates the runs of a
// principal it bounds through CreateRunClaimedCountActive, except a
// stateless run's (whose count is checked before its thread is made) and
// a creation that waits for LockThread's lock, which count with
// CountActiveRuns.
type CountingClaimer interface {
	RunClaimer
	OwnerCounter
	// CreateRunClaimedCountActive is CreateRunClaimedLocked whose plan is
	// passed, beside the thread and its active runs, activeRuns: the
	// count of owner's pending and running runs on every thread (and,
	// for a store several instances share, on every instance), read
	// with them. On plan's first call (see CreateRunLocked) activeRuns
	// may be more than the count: the run it returns is created only if
	// the count read under the lock is at most activeRuns, so a plan
	// that creates a run for a count creates it for any smaller count
	// (as a bound on the active runs does).
	CreateRunClaimedCountActive(ctx context.Context, threadID, owner string, lease time.Duration, plan func(t *Thread, active []*Run, activeRuns int) (r *Run, graphID string, md map[string]any, err error)) (created bool, err error)
}

// A RunStarter is a [RunRecorder] that records a run's start and appends
// the run's first event in one call. The server then appends a run's
// metadata event with its start, once it read where the run starts,
// instead of before that read.
type RunStarter interface {
	RunRecorder
	// StartRunEvent is StartRun(ctx, runID, start) and AppendEvent(ctx,
	// runID, name, data, max) at one commit: it returns, of the run's
	// record, its Cancel alone (a cancellation asked of the run before
	// its start: the one field of the record the server reads there),
	// and the event; ErrNotFound, with nothing written, if there is no
	// run.
	StartRunEvent(ctx context.Context, runID, start, name string, data json.RawMessage, max int) (cancel string, ev Event, err error)
}

// A NextClaimer is a [LockingRecorder] that claims a thread's next run
// in the transaction that records the end of the run before it: the
// thread's worker goes on to its next queued run without a claim of its
// own (one round trip and one commit fewer per queued run). The server
// calls FinishClaimNextLocked only from the thread's worker, which
// executes the run claimed next, and only while a run created on this
// instance for the thread may be waiting (the claim is a statement more,
// wasted on a lone run); the claim then takes the thread's first due run,
// whichever instance created it. Other runs are claimed apart, with
// ClaimThreadLocked. When the end commits but its reply is lost, a store
// that can tell its own commit (and the claim made in it) apart from
// another's returns them as if the reply had come; otherwise the run it
// claimed waits for its lease to expire and is then claimed again
// (attempt 2): the server does not adopt a claim it cannot tell apart
// from its sweeper's.
type NextClaimer interface {
	LockingRecorder
	// FinishClaimNextLocked is FinishRunLocked followed, at the same
	// commit, by ClaimThreadLocked's claim for worker with lease: next
	// and t are the run claimed and its thread, nil when the thread has
	// no run to claim. The claim is made when the run is missing too
	// (err is then ErrNotFound, as FinishRunLocked's); when the lock is
	// held elsewhere nothing is recorded (ErrThreadLocked), and a run is
	// claimed only if that lock expired in between: it is returned with
	// the error, for the caller to execute.
	FinishClaimNextLocked(ctx context.Context, e RunEnd, worker string, lease time.Duration) (active int, ev Event, next *Run, t *Thread, err error)
}

// RunEnd is what [LockingRecorder.FinishRunLocked] records.
type RunEnd struct {
	// RunID is the run that ended, ThreadID its thread.
	RunID, ThreadID string
	// Refresh is the thread's refresh; its Exclude lists RunID.
	Refresh ThreadRefresh
	// EventName and EventData are the run's last event; MaxEvents bounds
	// the run's log as AppendEvent's max does.
	EventName string
	EventData json.RawMessage
	MaxEvents int
	// Status, Error and At are the run's end, as EndRun's.
	Status, Error string
	At            time.Time
	// Worker and Attempt, when Worker is set, are the worker that
	// executed the run and the attempt it claimed: the end is recorded
	// only if the run is still running under them, and otherwise
	// nothing is, and the store returns ErrLeaseLost (a worker whose
	// lease was taken over does not overwrite the new owner's end). A
	// store may ignore them.
	Worker  string
	Attempt int
	// Next is one more than the highest event id the run's execution
	// was given (0 for none): a store whose logs can be lost numbers a
	// log the end creates from there on, as
	// [LostLogAppender.AppendEventAfter] does with after Next-1 for
	// Attempt. A store may ignore it.
	Next int64
}

// ThreadRefresh is the change a run's end (or a cancellation) makes to
// its thread's record: the thread's latest state, when known, and its new
// status.
type ThreadRefresh struct {
	// State says that Values, Interrupts and Next are the thread's
	// latest state; when false the thread's values are left as they are.
	State bool
	// Values and Interrupts are the state's values and its tasks'
	// interrupts; Next says the state has tasks to run.
	Values     json.RawMessage
	Interrupts map[string][]Interrupt
	Next       bool
	// Failed says the last run failed; Cancelled, that it was cancelled
	// (a cancelled run leaves the thread idle even with next tasks).
	Failed    bool
	Cancelled bool
	// Exclude lists runs not to count as active (the run that ended).
	Exclude []string
	// At is the thread's new UpdatedAt.
	At time.Time
	// Sized says that Bytes is the bytes of checkpoints the thread
	// keeps in the checkpointer and, unless SubgraphBytes is negative
	// (the stored count is then left as it is), that SubgraphBytes is
	// its durable subgraph threads' (Config.MaxThreadBytes): a
	// [RunRecorder] that is a [ByteCounter] records them on the
	// thread's record with the refresh (RefreshThread,
	// FinishRunLocked). For another ByteCounter the server records them
	// with SetThreadBytes after the refresh; [ThreadRefresh.Apply]
	// ignores them.
	Sized                bool
	Bytes, SubgraphBytes int64
}

// Apply applies f to t, whose thread has active pending or running runs
// (not counting f.Exclude): a thread without a Head of its own and not
// Rolled takes the state's values; its status is error when the run
// failed, else interrupted when the state has next tasks (unless the run
// was cancelled, or the thread has a Head or is Rolled), else busy when
// runs are active, else idle.
func (f ThreadRefresh) Apply(t *Thread, active int) {
	own := t.Head == "" && !t.Rolled
	if f.State && own {
		t.Values, t.Interrupts = f.Values, f.Interrupts
	}
	switch {
	case f.Failed:
		t.Status = ThreadError
	case !f.Cancelled && f.State && f.Next && own:
		t.Status = ThreadInterrupted
	case active > 0:
		t.Status = ThreadBusy
	default:
		t.Status = ThreadIdle
	}
	t.UpdatedAt = f.At
}

// ValuesMatch reports whether values, a thread's values as JSON, contain
// every pair of q.Values as jsonb @> decides it ({"obj":{"x":1}} matches
// {"obj":{"x":1,"y":2}}, [1] matches [1,2]), numbers compared as JSON
// values (1 and 1.0 are equal, numbers exactly: 9007199254740993 is not
// 9007199254740992);
// true when q.Values is empty. Values that are not a JSON object match
// no pair. A Store may filter on Values with it after its query.
func (q ThreadQuery) ValuesMatch(values json.RawMessage) bool {
	return valuesHold(values, q.Values)
}

// An OwnerCounter is a [Store] that counts a principal's threads and
// active runs itself, in its query language, rather than by reading
// them. The server counts with it, when the store is one, before it
// creates a thread (Config.MaxThreads) and a run (Config.MaxActiveRuns;
// a [CountingClaimer], which is an OwnerCounter, counts a run's in the
// creation's read instead, except where CountingClaimer says); without
// it, threads are counted with SearchThreads and active runs are not
// bounded.
type OwnerCounter interface {
	// CountThreads returns how many threads owner has.
	CountThreads(ctx context.Context, owner string) (int, error)
	// CountActiveRuns returns how many runs of owner are pending or
	// running, on any thread (and, for a store several instances
	// share, on any instance).
	CountActiveRuns(ctx context.Context, owner string) (int, error)
}

// A ByteCounter is a [Store] that keeps, on each thread's record, the
// bytes of checkpoints the thread keeps in the server's checkpointer
// (its own, and its durable subgraph threads', as a
// checkpoint.UsageReporter reports them), and sums them by principal in
// its query language. The server bounds a principal's threads by those
// bytes (Config.MaxThreadBytes) only with a store that is one, as the
// memory, SQLite and PostgreSQL stores are. A thread's counts start at
// zero and go with its record. A [RunRecorder] that is one also records
// them with the refresh of [RunRecorder.RefreshThread] and
// [LockingRecorder.FinishRunLocked] ([ThreadRefresh].Sized).
type ByteCounter interface {
	// SetThreadBytes records that the thread's own checkpoints take
	// bytes and, unless subgraphBytes is negative (the stored count is
	// then left as it is), that its durable subgraph threads' take
	// subgraphBytes. A missing thread is not an error.
	SetThreadBytes(ctx context.Context, threadID string, bytes, subgraphBytes int64) error
	// CountBytes returns the sum, over owner's threads, of the bytes
	// SetThreadBytes recorded (their own and their subgraphs').
	CountBytes(ctx context.Context, owner string) (int64, error)
}
