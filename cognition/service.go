package cognition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/internal/keyedmutex"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/resilience"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// Defaults of [Config].
const (
	DefaultAgent          = "default"
	DefaultMemories       = 5
	DefaultContextTimeout = 100 * time.Millisecond
	DefaultTaskLease      = time.Minute
	DefaultTaskPoll       = time.Second
)

// Config configures [New]. Every field is optional.
type Config struct {
	// Store keeps profiles, episodes and identities. Nil means a new
	// [InMemoryStore].
	Store Store
	// Learner draws profile updates, episodes and knowledge gaps from
	// turns; usually an [LLMLearner]. Nil learns only the identity's
	// metrics.
	Learner Learner
	// Agent names the identity of this agent in the store. Empty means
	// [DefaultAgent].
	Agent string
	// Goals are the agent's learning goals, shown in every context and
	// saved with the identity.
	Goals []string
	// Values are the agent's core values (honesty, privacy...), shown in
	// every context and saved with the identity.
	Values []string
	// Similarity decides which episodes are near-duplicates. Nil means
	// [TokenJaccard].
	Similarity Similarity
	// Retention bounds and ranks episodes; see [Retention] for defaults.
	Retention Retention
	// Memories is how many episodes [Service.Context] returns at most.
	// Zero means [DefaultMemories]; negative means none.
	Memories int
	// ContextTimeout bounds [Service.Context]. Zero means
	// [DefaultContextTimeout] (100 ms); negative means only the caller's
	// context bounds it.
	ContextTimeout time.Duration
	// Workers and QueueSize size the background queue (see [QueueConfig]).
	Workers, QueueSize int
	// Retry is the retry policy of background tasks (see
	// QueueConfig.Retry).
	Retry *resilience.Config
	// OnFailure is called with every background task that failed for good
	// (see QueueConfig.OnFailure).
	OnFailure func(Task, error)
	// Monitor configures the meta-monitor.
	Monitor MonitorConfig
	// Disabled turns components off; the zero value keeps all on.
	Disabled Disabled
	// Tasks, if set, holds the learning of the turns Observe takes
	// instead of the in-process queue: a durable [TaskQueue] (the SQLite
	// or PostgreSQL store) keeps turns that were queued, or being learned,
	// when the process died, and lets several processes share the work.
	// Workers goroutines claim its tasks. Nil keeps learning in memory.
	Tasks TaskQueue
	// TaskLease is how long a worker holds a claimed task before another
	// may take it (see [TaskQueue.Claim]); it also bounds one learning
	// run. Zero means [DefaultTaskLease].
	TaskLease time.Duration
	// TaskAttempts is how many times a task is tried before it is dead.
	// Zero means [DefaultTaskAttempts].
	TaskAttempts int
	// TaskPoll is how often idle workers look for tasks queued by other
	// processes (turns observed here wake them at once). Zero means
	// [DefaultTaskPoll].
	TaskPoll time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// NewID returns a new episode ID. Nil means a random UUID.
	NewID func() string
	// Logger receives failures of background work and of the read path.
	// Nil means no logging.
	Logger *zap.Logger
}

// Disabled names the components of cognition to turn off, each a switch
// of the configuration (cognition_enabled, theory_of_mind_enabled,
// episodic_memory_enabled, identity_enabled set to false).
type Disabled struct {
	// Cognition turns everything off: Context returns an empty context,
	// Observe and Learn record and learn nothing.
	Cognition bool
	// TheoryOfMind turns the user profiles off: Context loads none and
	// learning neither reads nor updates them.
	TheoryOfMind bool
	// EpisodicMemory turns episodes off: Context recalls none and learning
	// neither reads nor stores them.
	EpisodicMemory bool
	// Identity turns the agent's identity off: Context loads none (only
	// Config.Agent) and learning does not update it.
	Identity bool
}

// Service is the cognition layer of an agent. [Service.Context] reads what
// is known about a user and the agent, fast and without a model call, for
// the prompt of the current turn; [Service.Observe] hands a finished turn
// to the background queue, where the learner updates the profile, episodes
// and identity. It is safe for concurrent use; build one per agent and
// Close it on shutdown.
type Service struct {
	store    Store
	learner  Learner
	agent    string
	goals    []string
	values   []string
	sim      Similarity
	ret      Retention
	memories int
	timeout  time.Duration
	now      func() time.Time
	newID    func() string
	log      *zap.Logger
	queue    *Queue
	monitor  *Monitor
	tasks    *taskRunner
	off      Disabled

	// users serializes the learning of each user within the process, so
	// that concurrent workers do not ask the learner about the same user
	// at once with stale profiles. Stores keep updates atomic regardless.
	users keyedmutex.Mutex
}

// New returns a service and starts its background workers.
func New(cfg Config) (*Service, error) {
	if cfg.Memories > 1000 {
		return nil, fmt.Errorf("%w: Config.Memories is %d; use at most 1000", ErrInvalid, cfg.Memories)
	}
	if t := cfg.Retention.DedupThreshold; t < 0 || t > 1 {
		return nil, fmt.Errorf("%w: Config.Retention.DedupThreshold is %v; use a similarity between 0 and 1 (0 means 0.6)", ErrInvalid, t)
	}
	if cfg.Retention.MaxPerUser < 0 || cfg.Retention.HalfLife < 0 {
		return nil, fmt.Errorf("%w: Config.Retention.MaxPerUser and HalfLife must not be negative", ErrInvalid)
	}
	s := &Service{
		store:    cfg.Store,
		learner:  cfg.Learner,
		agent:    cmp.Or(cfg.Agent, DefaultAgent),
		goals:    slices.Clone(cfg.Goals),
		values:   slices.Clone(cfg.Values),
		sim:      cfg.Similarity,
		ret:      cfg.Retention.withDefaults(),
		memories: cmp.Or(cfg.Memories, DefaultMemories),
		timeout:  cmp.Or(cfg.ContextTimeout, DefaultContextTimeout),
		now:      cfg.Now,
		newID:    cfg.NewID,
		log:      cfg.Logger,
		monitor:  NewMonitor(cfg.Monitor),
		off:      cfg.Disabled,
	}
	if s.store == nil {
		s.store = NewInMemoryStore()
	}
	if s.sim == nil {
		s.sim = TokenJaccard
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = uuid.NewString
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	q, err := NewQueue(QueueConfig{Workers: cfg.Workers, Size: cfg.QueueSize, Retry: cfg.Retry, OnFailure: cfg.OnFailure, Logger: s.log})
	if err != nil {
		return nil, err
	}
	s.queue = q
	if cfg.Tasks != nil {
		if cfg.TaskLease < 0 || cfg.TaskAttempts < 0 || cfg.TaskPoll < 0 {
			q.Close(context.Background())
			return nil, fmt.Errorf("%w: Config.TaskLease, TaskAttempts and TaskPoll must not be negative (0 means the default)", ErrInvalid)
		}
		s.tasks = startTasks(s, cfg.Tasks, cmp.Or(cfg.Workers, 1), cmp.Or(cfg.TaskLease, DefaultTaskLease),
			cmp.Or(cfg.TaskAttempts, DefaultTaskAttempts), cmp.Or(cfg.TaskPoll, DefaultTaskPoll))
	}
	return s, nil
}

// CognitiveContext is what the agent knows for one turn with one user.
type CognitiveContext struct {
	// UserID is the user.
	UserID string
	// Profile is the user's profile.
	Profile Profile
	// Episodes are the user's episodes most relevant to the query, best
	// first.
	Episodes []Recalled
	// Identity is the agent's identity.
	Identity Identity
}

// Render formats the context for a prompt: the profile, the relevant
// memories and the identity, as blocks separated by blank lines, leaving
// out empty ones. It returns "" when nothing is known.
func (c *CognitiveContext) Render() string {
	if c == nil {
		return ""
	}
	var blocks []string
	if p := c.Profile.Render(); p != "" {
		blocks = append(blocks, p)
	}
	if m := renderEpisodes(c.Episodes); m != "" {
		blocks = append(blocks, m)
	}
	if id := c.Identity.Render(); id != "" {
		blocks = append(blocks, id)
	}
	return strings.Join(blocks, "\n\n")
}

// String returns Render().
func (c *CognitiveContext) String() string { return c.Render() }

func renderEpisodes(eps []Recalled) string {
	if len(eps) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Relevant memories:")
	for _, e := range eps {
		b.WriteString("\n- ")
		b.WriteString(episodeLine(&e.Episode))
	}
	return b.String()
}

// episodeLine is e on one line, its summary and outcome quoted: an
// episode stored by other code can hold any text.
func episodeLine(e *Episode) string {
	if e.Outcome == "" {
		return strconv.Quote(e.Summary)
	}
	if !e.Outcome.valid() {
		return strconv.Quote(e.Summary) + " (" + strconv.Quote(string(e.Outcome)) + ")"
	}
	return strconv.Quote(e.Summary) + " (" + string(e.Outcome) + ")"
}

// Context returns what is known about the user for a turn with query: the
// profile, the episodes most relevant to the query (see [Retention]; the
// first [MaxQueryTerms] distinct words of the query count) and the agent's
// identity. It only reads the store (no model call) and is bounded
// by Config.ContextTimeout. Retrieved episodes have their access recorded in
// the background.
//
// On error the returned context is never nil: it holds what was loaded
// before the failure, and renders as such, so that a turn can go on
// without cognition (or with part of it). Errors wrap the store's error or
// the context's.
func (s *Service) Context(ctx context.Context, userID, query string) (*CognitiveContext, error) {
	out := &CognitiveContext{UserID: userID, Identity: Identity{Agent: s.agent, Goals: s.goals, Values: s.values}}
	if err := ValidateID("user ID", userID); err != nil {
		return out, err
	}
	if s.off.Cognition {
		out.Identity.Goals, out.Identity.Values = nil, nil
		return out, nil
	}
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	if !s.off.TheoryOfMind {
		p, err := s.store.Profile(ctx, userID)
		if err != nil {
			return out, fmt.Errorf("cognition: context for %q: profile: %w", userID, err)
		}
		out.Profile = p
	}
	if !s.off.EpisodicMemory {
		var err error
		out.Episodes, err = s.recall(ctx, userID, query, s.memories)
		if err != nil {
			return out, fmt.Errorf("cognition: context for %q: episodes: %w", userID, err)
		}
	}
	if s.off.Identity {
		out.Identity = Identity{Agent: s.agent}
		return out, nil
	}
	id, err := s.identity(ctx)
	if err != nil {
		return out, fmt.Errorf("cognition: context for %q: identity: %w", userID, err)
	}
	out.Identity = id
	return out, nil
}

// identity loads the agent's identity with the configured goals.
func (s *Service) identity(ctx context.Context) (Identity, error) {
	id, err := s.store.Identity(ctx, s.agent)
	if err != nil {
		return Identity{}, err
	}
	if len(s.goals) > 0 {
		id.Goals = s.goals
	}
	if len(s.values) > 0 {
		id.Values = s.values
	}
	return id, nil
}

// recall returns the user's n episodes most relevant to query and records
// their access in the background.
func (s *Service) recall(ctx context.Context, userID, query string, n int) ([]Recalled, error) {
	if n <= 0 {
		return nil, nil
	}
	eps, err := s.store.Episodes(ctx, userID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	got := s.ret.rank(eps, query, n, now)
	if len(got) == 0 {
		return nil, nil
	}
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	touch := func(ctx context.Context) error { return s.store.Touch(ctx, userID, ids, now) }
	if err := s.queue.Enqueue(Task{Name: "touch", UserID: userID, Run: touch}); err != nil {
		// Access counts only weigh in pruning; record them inline rather
		// than lose them, and do not fail the read for them.
		if err := touch(ctx); err != nil {
			s.log.Warn("cognition: recording episode access failed", zap.String("user", userID), zap.Error(err))
		}
	}
	return got, nil
}

// Observe records a finished turn with the meta-monitor and queues its
// learning in the background; it does not block. The learning runs
// after the request is over, so it does not take the request's context: it
// stops only when [Service.Close] gives up waiting. Observe returns an error
// wrapping [ErrInvalid] for an invalid interaction, [ErrQueueFull] when the
// background queue is full and [ErrClosed] after Close; in those cases
// nothing is learned from the turn (the monitor has still recorded a valid
// one).
func (s *Service) Observe(in Interaction) error {
	if err := in.validate(); err != nil {
		return err
	}
	if s.off.Cognition {
		return nil
	}
	if in.Time.IsZero() {
		in.Time = s.now()
	}
	in.Messages = append([]memory.Message(nil), in.Messages...)
	in.Tools = append([]ToolOutcome(nil), in.Tools...)
	s.monitor.Record(in)
	if s.tasks != nil {
		return s.tasks.enqueue(in)
	}
	st := &learnState{in: in}
	return s.queue.Enqueue(Task{Name: "learn", UserID: in.UserID, Run: func(ctx context.Context) error { return s.learn(ctx, st) }})
}

// Learn is Observe done synchronously: it records the turn with the
// monitor and learns from it before returning, without retries. Use it in
// batch jobs and tests; a request path should call Observe.
func (s *Service) Learn(ctx context.Context, in Interaction) error {
	if err := in.validate(); err != nil {
		return err
	}
	if s.off.Cognition {
		return nil
	}
	if in.Time.IsZero() {
		in.Time = s.now()
	}
	s.monitor.Record(in)
	return s.learn(ctx, &learnState{in: in})
}

// learnState is the progress of one learning task, so that a retry
// resumes at the step that failed instead of learning twice.
type learnState struct {
	in                          Interaction
	learned                     *Learning
	profile, episodes, identity bool
}

func (s *Service) learn(ctx context.Context, st *learnState) error {
	in := &st.in
	unlock, err := s.users.Lock(ctx, in.UserID)
	if err != nil {
		return err
	}
	defer unlock()
	now := s.now()
	if st.learned == nil {
		var l Learning
		if s.learner != nil {
			var profile Profile
			var related []Recalled
			if !s.off.TheoryOfMind {
				if profile, err = s.store.Profile(ctx, in.UserID); err != nil {
					return fmt.Errorf("cognition: learn for %q: profile: %w", in.UserID, err)
				}
			}
			if !s.off.EpisodicMemory {
				eps, err := s.store.Episodes(ctx, in.UserID)
				if err != nil {
					return fmt.Errorf("cognition: learn for %q: episodes: %w", in.UserID, err)
				}
				related = s.ret.rank(eps, turnText(in), 5, now)
			}
			l, err = s.learner.Learn(ctx, LearnInput{Interaction: *in, Profile: profile, Related: related})
			if err != nil {
				return fmt.Errorf("cognition: learn for %q: %w", in.UserID, classifyLearnErr(err))
			}
		}
		st.learned = &l
	}
	l := st.learned
	if !st.profile && s.learner != nil && !s.off.TheoryOfMind {
		_, err := s.store.UpdateProfile(ctx, in.UserID, func(p *Profile) error {
			p.apply(l.Profile, now)
			return nil
		})
		if err != nil {
			return fmt.Errorf("cognition: learn for %q: update profile: %w", in.UserID, err)
		}
		st.profile = true
	}
	if !st.episodes && !s.off.EpisodicMemory {
		// An episode without an outcome of its own takes the turn's.
		drafts := make([]EpisodeDraft, len(l.Episodes))
		for i, d := range l.Episodes {
			if d.Outcome == "" {
				d.Outcome = in.Outcome
			}
			drafts[i] = d
		}
		err := s.store.UpdateEpisodes(ctx, in.UserID, func(stored []Episode) (EpisodeChanges, error) {
			return s.ret.consolidate(stored, drafts, in.UserID, in.ConversationID, s.sim, now, s.newID), nil
		})
		if err != nil {
			return fmt.Errorf("cognition: learn for %q: update episodes: %w", in.UserID, err)
		}
		st.episodes = true
	}
	if !st.identity && !s.off.Identity {
		_, err := s.store.UpdateIdentity(ctx, s.agent, func(id *Identity) error {
			if len(s.goals) > 0 {
				id.Goals = s.goals
			}
			if len(s.values) > 0 {
				id.Values = s.values
			}
			id.apply(in, l.Gaps, now)
			return nil
		})
		if err != nil {
			return fmt.Errorf("cognition: learn for %q: update identity: %w", in.UserID, err)
		}
		st.identity = true
	}
	return nil
}

// classifyLearnErr marks learner errors that a retry of the task will not
// fix as permanent: replies that never fit the schema (the structured
// caller already asked again) and invalid arguments. Provider errors keep
// their class; the agent client has already retried transient ones.
func classifyLearnErr(err error) error {
	var structured *agent.StructuredOutputError
	if errors.Is(err, ErrInvalid) || errors.As(err, &structured) {
		return resilience.MarkPermanent(err)
	}
	return err
}

// turnText is the user's side of a turn, for finding related episodes.
func turnText(in *Interaction) string {
	var b strings.Builder
	for _, m := range in.Messages {
		if m.Role == memory.RoleUser {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Monitor returns the service's meta-monitor.
func (s *Service) Monitor() *Monitor { return s.monitor }

// TaskCounts counts the learning tasks: with Config.Tasks, the durable
// queue's pending, claimed and dead tasks (of every process sharing it);
// otherwise the in-process queue's waiting, running and failed ones.
func (s *Service) TaskCounts(ctx context.Context) (TaskCounts, error) {
	if s.tasks != nil {
		return s.tasks.q.Counts(ctx)
	}
	st := s.queue.Stats()
	return TaskCounts{Pending: st.Queued, Claimed: st.Running, Dead: int(st.Failed)}, nil
}

// QueueStats returns the in-process background queue's counters.
func (s *Service) QueueStats() QueueStats { return s.queue.Stats() }

// Flush waits until the background work queued before the call has
// finished: the learning of every turn Observe took, and the recording of
// episode accesses. Work queued during the call is not waited for, so
// Flush returns even while turns keep arriving. It returns nil, or ctx's
// error if ctx ends first (the work goes on). Flush does not say whether
// the learning succeeded: failures are logged, counted in [QueueStats] and
// handed to Config.OnFailure before Flush returns. After Close it returns
// nil once Close has drained or dropped the queue. See [Queue.Flush].
// With Config.Tasks it first waits until that queue has no pending or
// claimed task, of any process sharing it (dead tasks are not waited
// for); tasks claimed by a dead process are waited for until their leases
// end and they are learned again.
func (s *Service) Flush(ctx context.Context) error {
	if s.tasks != nil {
		if err := s.tasks.flush(ctx); err != nil {
			return err
		}
	}
	return s.queue.Flush(ctx)
}

// Forget deletes everything known about the user: profile and episodes.
// Learning tasks of the user still queued will start a new profile.
func (s *Service) Forget(ctx context.Context, userID string) error {
	if err := s.store.DeleteUser(ctx, userID); err != nil {
		return fmt.Errorf("cognition: forget %q: %w", userID, err)
	}
	return nil
}

// Close stops accepting turns and waits for queued learning to finish (see
// [Queue.Close]). It does not close the Store; Context keeps working
// (recording episode access inline) and Learn too.
func (s *Service) Close(ctx context.Context) error {
	var err error
	if s.tasks != nil {
		err = s.tasks.close(ctx)
	}
	return errors.Join(err, s.queue.Close(ctx))
}
