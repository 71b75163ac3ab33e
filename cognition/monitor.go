package cognition

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MonitorConfig configures [NewMonitor]. The zero value uses every
// default.
type MonitorConfig struct {
	// Window is how many recent turns rates and latency percentiles are
	// computed over. Zero means 100.
	Window int
	// ToolStreak is how many consecutive failures of one tool raise
	// [ToolFailing]. Zero means 3.
	ToolStreak int
	// UserStreak is how many consecutive turns of one user without success
	// raise [UserStruggling]. Zero means 3.
	UserStreak int
	// MaxUsers bounds the users whose streak is tracked at a time. When a
	// new user would exceed it, a tenth of them are forgotten: the streaks
	// below UserStreak first, then those of struggling users counted in the
	// summary pattern (see MaxUserPatterns), then any. Zero means 10000.
	MaxUsers int
	// MaxUserPatterns bounds the [UserStruggling] patterns that name a
	// user. Users who start struggling while that many are listed are
	// counted in one more UserStruggling pattern with an empty Subject
	// instead. Zero means 100.
	MaxUserPatterns int
	// MaxTools bounds the tools with their own [ToolStats]. Calls of tools
	// first seen once that many are known are counted under the name
	// [OtherTools]. Zero means 1000.
	MaxTools int
	// FailureRate is the share of failed turns in the window, once it holds
	// at least MinTurns turns, that raises [HighFailureRate]. Zero means
	// 0.5.
	FailureRate float64
	// MinTurns is the fewest turns in the window for [HighFailureRate] and
	// [SlowTurns]. Zero means 10.
	MinTurns int
	// SlowTurn is the 95th-percentile latency above which [SlowTurns] is
	// raised. Zero means 30 s.
	SlowTurn time.Duration
	// OnPattern, if set, is called when a pattern starts (not again while
	// it lasts), from the goroutine that recorded the turn. It must not
	// block or call the Monitor.
	OnPattern func(Pattern)
}

// PatternKind names a kind of pattern the [Monitor] flags.
type PatternKind string

// Pattern kinds.
const (
	// ToolFailing: a tool failed ToolStreak times in a row. Subject is
	// the tool.
	ToolFailing PatternKind = "tool_failing"
	// UserStruggling: a user's last UserStreak turns did not succeed.
	// Subject is the user ID; it is empty for the pattern that counts the
	// struggling users beyond MonitorConfig.MaxUserPatterns.
	UserStruggling PatternKind = "user_struggling"
	// HighFailureRate: the share of failed turns in the window is at least
	// FailureRate.
	HighFailureRate PatternKind = "high_failure_rate"
	// SlowTurns: the window's 95th-percentile latency is above SlowTurn.
	SlowTurns PatternKind = "slow_turns"
)

// OtherTools is the [Snapshot.Tools] entry that counts the calls of tools
// first seen after MonitorConfig.MaxTools tools were known.
const OtherTools = "(other tools)"

// Pattern is a problem the [Monitor] sees in recent turns.
type Pattern struct {
	// Kind says what the problem is.
	Kind PatternKind
	// Subject is the tool or user concerned; empty for the whole agent.
	Subject string
	// Detail describes the evidence in a sentence.
	Detail string
	// Since is when the pattern started.
	Since time.Time
}

// String returns the kind, the subject if any, and the detail.
func (p Pattern) String() string {
	if p.Subject != "" {
		return fmt.Sprintf("%s(%s): %s", p.Kind, p.Subject, p.Detail)
	}
	return fmt.Sprintf("%s: %s", p.Kind, p.Detail)
}

// ToolStats are the counters of one tool.
type ToolStats struct {
	// Calls and Failures count the tool's calls since the Monitor started.
	Calls, Failures int
	// Streak is the tool's current run of consecutive failures.
	Streak int
	// LastError is the tool's last failure message.
	LastError string
}

// Snapshot is the meta-monitor's view of recent turns.
type Snapshot struct {
	// Turns, Successes, Partials and Failures count turns since the
	// Monitor started.
	Turns, Successes, Partials, Failures int
	// Tokens sums the turns' token usage since the Monitor started.
	Tokens int
	// Window is how many recent turns the fields below cover.
	Window int
	// SuccessRate is the share of successful turns among those with an
	// outcome in the window.
	SuccessRate float64
	// P50 and P95 are latency percentiles over the window.
	P50, P95 time.Duration
	// Tools are the counters of every tool seen, by name.
	Tools map[string]ToolStats
	// Patterns are the active patterns, sorted by kind then subject.
	Patterns []Pattern
	// Confidence is [Monitor.Confidence] for no particular user.
	Confidence float64
}

// Monitor is the meta-monitor: it records the outcome of every turn
// (success, latency, tool failures, token usage), keeps counters and a
// window of recent turns, and flags patterns such as a tool that keeps
// failing. It is in-process and safe for concurrent use; its zero value is
// not usable, call [NewMonitor].
type Monitor struct {
	cfg MonitorConfig

	mu      sync.Mutex
	total   Snapshot
	recent  []turnRecord // ring buffer of the window
	next    int
	tools   map[string]*ToolStats
	users   map[string]userStreak
	active  map[patternKey]Pattern
	pending []Pattern // patterns started by the current Record
	// listed counts the UserStruggling patterns that name a user;
	// unlisted counts the struggling users in the summary pattern.
	listed, unlisted int
}

// userStreak is one user's run of turns without success.
type userStreak struct {
	n int
	// unlisted: the user struggles but is counted in the summary pattern
	// rather than named in one of their own.
	unlisted bool
}

type turnRecord struct {
	outcome Outcome
	latency time.Duration
}

type patternKey struct {
	kind    PatternKind
	subject string
}

// NewMonitor returns a monitor with no turns recorded.
func NewMonitor(cfg MonitorConfig) *Monitor {
	cfg.Window = cmp.Or(cfg.Window, 100)
	cfg.ToolStreak = cmp.Or(cfg.ToolStreak, 3)
	cfg.UserStreak = cmp.Or(cfg.UserStreak, 3)
	cfg.FailureRate = cmp.Or(cfg.FailureRate, 0.5)
	cfg.MinTurns = cmp.Or(cfg.MinTurns, 10)
	cfg.SlowTurn = cmp.Or(cfg.SlowTurn, 30*time.Second)
	cfg.MaxUsers = cmp.Or(max(cfg.MaxUsers, 0), 10000)
	cfg.MaxUserPatterns = cmp.Or(max(cfg.MaxUserPatterns, 0), 100)
	cfg.MaxTools = cmp.Or(max(cfg.MaxTools, 0), 1000)
	return &Monitor{
		cfg:    cfg,
		recent: make([]turnRecord, 0, cfg.Window),
		tools:  make(map[string]*ToolStats),
		users:  make(map[string]userStreak),
		active: make(map[patternKey]Pattern),
	}
}

// Record adds one turn. Its Time (or now, when zero) dates the patterns it
// starts.
func (m *Monitor) Record(in Interaction) {
	at := in.Time
	if at.IsZero() {
		at = time.Now()
	}
	m.mu.Lock()
	m.total.Turns++
	switch in.Outcome {
	case Success:
		m.total.Successes++
	case Partial:
		m.total.Partials++
	case Failure:
		m.total.Failures++
	}
	m.total.Tokens += in.Tokens
	rec := turnRecord{outcome: in.Outcome, latency: in.Latency}
	if len(m.recent) < m.cfg.Window {
		m.recent = append(m.recent, rec)
	} else {
		m.recent[m.next] = rec
		m.next = (m.next + 1) % m.cfg.Window
	}

	for _, c := range in.Tools {
		name := c.Name
		st := m.tools[name]
		if st == nil && len(m.tools) >= m.cfg.MaxTools {
			name = OtherTools
			st = m.tools[name]
		}
		if st == nil {
			st = &ToolStats{}
			m.tools[name] = st
		}
		st.Calls++
		if c.Err == "" {
			st.Streak = 0
			m.clear(ToolFailing, name)
			continue
		}
		st.Failures++
		st.Streak++
		st.LastError = c.Err
		if st.Streak >= m.cfg.ToolStreak {
			m.raise(ToolFailing, name, at, fmt.Sprintf("failed %d times in a row; last error: %s", st.Streak, c.Err))
		}
	}

	if in.UserID != "" && in.Outcome != "" {
		if in.Outcome == Success {
			m.forgetUser(in.UserID)
		} else {
			m.struggle(in.UserID, at)
		}
	}

	w := m.window()
	if w.n >= m.cfg.MinTurns {
		if rate := float64(w.failures) / float64(w.n); rate >= m.cfg.FailureRate {
			m.raise(HighFailureRate, "", at, fmt.Sprintf("%d of the last %d turns failed", w.failures, w.n))
		} else {
			m.clear(HighFailureRate, "")
		}
		if w.p95 > m.cfg.SlowTurn {
			m.raise(SlowTurns, "", at, fmt.Sprintf("95th-percentile latency %s over the last %d turns", w.p95, w.n))
		} else {
			m.clear(SlowTurns, "")
		}
	}
	started := m.pending
	m.pending = nil
	m.mu.Unlock()
	if m.cfg.OnPattern != nil {
		for _, p := range started {
			m.cfg.OnPattern(p)
		}
	}
}

// struggle counts a turn of user without success.
func (m *Monitor) struggle(user string, at time.Time) {
	u, ok := m.users[user]
	if !ok && len(m.users) >= m.cfg.MaxUsers {
		m.makeRoom()
	}
	u.n++
	if u.n >= m.cfg.UserStreak {
		detail := fmt.Sprintf("the last %d turns did not succeed", u.n)
		switch {
		case u.unlisted:
		case m.active[patternKey{UserStruggling, user}].Kind != "":
			m.raise(UserStruggling, user, at, detail)
		case m.listed < m.cfg.MaxUserPatterns:
			m.listed++
			m.raise(UserStruggling, user, at, detail)
		default:
			u.unlisted = true
			m.unlisted++
		}
	}
	m.users[user] = u
	m.summarise(at)
}

// forgetUser drops user's streak and pattern.
func (m *Monitor) forgetUser(user string) {
	u, ok := m.users[user]
	if !ok {
		return
	}
	delete(m.users, user)
	if u.unlisted {
		m.unlisted--
		m.summarise(time.Now())
	} else if _, ok := m.active[patternKey{UserStruggling, user}]; ok {
		m.listed--
		m.clear(UserStruggling, user)
	}
}

// makeRoom forgets a tenth of MaxUsers (at least one user), so that the
// cost of a sweep is spread over many new users: first those below the
// streak, then the struggling users that no pattern names, then any.
func (m *Monitor) makeRoom() {
	target := m.cfg.MaxUsers - max(m.cfg.MaxUsers/10, 1)
	for pass := 0; pass < 3 && len(m.users) > target; pass++ {
		for id, u := range m.users {
			if len(m.users) <= target {
				break
			}
			if pass == 2 || (pass == 0 && u.n < m.cfg.UserStreak) || (pass == 1 && u.unlisted) {
				m.forgetUser(id)
			}
		}
	}
}

// summarise keeps the UserStruggling pattern without a subject in step
// with the struggling users that no pattern names.
func (m *Monitor) summarise(at time.Time) {
	if m.unlisted == 0 {
		m.clear(UserStruggling, "")
		return
	}
	m.raise(UserStruggling, "", at, fmt.Sprintf("%d more users' last %d or more turns did not succeed (patterns name at most %d users)",
		m.unlisted, m.cfg.UserStreak, m.cfg.MaxUserPatterns))
}

func (m *Monitor) raise(kind PatternKind, subject string, at time.Time, detail string) {
	k := patternKey{kind, subject}
	p, ok := m.active[k]
	if !ok {
		p = Pattern{Kind: kind, Subject: subject, Since: at}
	}
	p.Detail = detail
	m.active[k] = p
	if !ok {
		m.pending = append(m.pending, p)
	}
}

func (m *Monitor) clear(kind PatternKind, subject string) {
	delete(m.active, patternKey{kind, subject})
}

type windowStats struct {
	n, rated, successes, failures int
	p50, p95                      time.Duration
}

func (m *Monitor) window() windowStats {
	w := windowStats{n: len(m.recent)}
	lat := make([]time.Duration, 0, len(m.recent))
	for _, r := range m.recent {
		lat = append(lat, r.latency)
		switch r.outcome {
		case Success:
			w.rated++
			w.successes++
		case Failure:
			w.rated++
			w.failures++
		case Partial:
			w.rated++
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		w.p50 = lat[(len(lat)-1)*50/100]
		w.p95 = lat[(len(lat)-1)*95/100]
	}
	return w
}

// Snapshot returns the counters, the window's rates and percentiles, and
// the active patterns.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.total
	w := m.window()
	s.Window, s.P50, s.P95 = w.n, w.p50, w.p95
	if w.rated > 0 {
		s.SuccessRate = float64(w.successes) / float64(w.rated)
	}
	s.Tools = make(map[string]ToolStats, len(m.tools))
	for name, st := range m.tools {
		s.Tools[name] = *st
	}
	s.Patterns = m.patternsLocked()
	s.Confidence = m.confidenceLocked("")
	return s
}

// Patterns returns the active patterns, sorted by kind then subject.
func (m *Monitor) Patterns() []Pattern {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.patternsLocked()
}

func (m *Monitor) patternsLocked() []Pattern {
	out := make([]Pattern, 0, len(m.active))
	for _, p := range m.active {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Pattern) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Subject, b.Subject))
	})
	return out
}
