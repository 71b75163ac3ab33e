package chatbot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/cognition"
	cogsqlite "github.com/agentgraph/agentgraph/cognition/sqlite"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/memory"
)

// CognitionConfig turns on cognition (package cognition): the bot
// remembers its users across conversations. Before each turn of a request
// with a user_id, the supervisor and the writer see what is known about
// the user (profile, memories relevant to the message) and about the bot
// itself (identity); after the turn, a background worker asks a model
// (Config.FastModel) what to learn from it. That is one more model call
// per turn, off the request path. Requests without a user_id are neither
// enriched nor learned from.
//
// The zero value uses the defaults: the store is DataDir/cognition.db, or
// memory when DataDir is empty; the learner is a cognition.LLMLearner on
// the bot's model client and Config.FastModel.
type CognitionConfig struct {
	// Store keeps profiles, episodes and identities. Nil means a
	// cognition/sqlite store in DataDir/cognition.db (closed by Close),
	// or a cognition.InMemoryStore when DataDir is empty.
	Store cognition.Store
	// Learner draws what to remember from a turn. Nil means a
	// cognition.LLMLearner on Config.FastModel.
	Learner cognition.Learner
	// Goals are the bot's learning goals, shown in every context.
	Goals []string
	// Memories is how many episodes the supervisor sees at most. Zero
	// means cognition.DefaultMemories.
	Memories int
	// Workers and QueueSize size the background learning queue (see
	// cognition.Config). A turn whose learning finds the queue full is
	// not learned from (logged at warn level).
	Workers, QueueSize int
	// ContextTimeout bounds the loading of a user's context before a turn.
	// Zero means cognition.DefaultContextTimeout.
	ContextTimeout time.Duration
}

// cognitionHeading starts the cognitive context in the supervisor's and
// the writer's Conversation section.
const cognitionHeading = "What you know about this user from earlier conversations (use it to tailor the answer):"

// botCognition is the bot's cognition service and its store.
type botCognition struct {
	svc   *cognition.Service
	store cognition.Store
}

// openCognition starts the cognition service when Config.Cognition is set,
// and registers its context source as "cognition" (cognition.profile,
// cognition.memories(N), cognition.identity) for operators that ask.
func (b *Bot) openCognition(ctx context.Context) error {
	cc := b.cfg.Cognition
	if cc == nil {
		return nil
	}
	store := cc.Store
	var tasks cognition.TaskQueue
	switch {
	case store != nil:
	case b.pg != nil:
		st, q, err := b.postgresCognition(ctx)
		if err != nil {
			return err
		}
		store, tasks = st, q
	case b.cfg.DataDir != "":
		if err := privateFile(filepath.Join(b.cfg.DataDir, "cognition.db"), b.log, os.Chmod); err != nil {
			return err
		}
		st, err := cogsqlite.New(ctx, cogsqlite.Config{Path: filepath.Join(b.cfg.DataDir, "cognition.db"), Logger: b.log})
		if err != nil {
			return fmt.Errorf("chatbot: cognition store: %w", err)
		}
		b.closers = append(b.closers, func(context.Context) error { return st.Close() })
		store = st
	default:
		store = cognition.NewInMemoryStore()
	}
	learner := cc.Learner
	if learner == nil {
		learner = &cognition.LLMLearner{Model: b.turnModel(), Options: []agent.Option{agent.WithModel(b.cfg.FastModel)}}
	}
	svc, err := cognition.New(cognition.Config{
		Store: store, Learner: learner, Agent: "chatbot", Goals: cc.Goals, Memories: cc.Memories,
		ContextTimeout: cc.ContextTimeout, Workers: cc.Workers, QueueSize: cc.QueueSize, Tasks: tasks, Logger: b.log,
		Monitor: cognition.MonitorConfig{OnPattern: func(p cognition.Pattern) {
			b.log.Warn("chatbot: cognition's monitor sees a problem", zap.String("pattern", p.String()))
		}},
	})
	if err != nil {
		return fmt.Errorf("chatbot: Config.Cognition: %w", err)
	}
	// Closed before the store (closers run in reverse order), after the
	// turns, whose learning it then waits for.
	b.closers = append(b.closers, func(ctx context.Context) error {
		if err := svc.Close(ctx); err != nil {
			return fmt.Errorf("chatbot: cognition learning: %w", err)
		}
		return nil
	})
	b.cog = &botCognition{svc: svc, store: store}
	if err := b.assembler.Register("cognition", svc.Source()); err != nil {
		return fmt.Errorf("chatbot: context assembler: %w", err)
	}
	return nil
}

// Cognition returns the bot's cognition service, or nil when
// Config.Cognition is nil. Its Flush waits for the learning of the turns
// so far; its QueueStats say how much learning is queued, done or failed.
func (b *Bot) Cognition() *cognition.Service {
	if b.cog == nil {
		return nil
	}
	return b.cog.svc
}

// loadCognition returns the cognitive context of the turn's user for the
// query, rendered for the prompts; "" without cognition or user. A failure
// is logged and leaves what was loaded: the turn goes on.
func (b *Bot) loadCognition(ctx context.Context, user, query string) string {
	if b.cog == nil || user == "" {
		return ""
	}
	cc, err := b.cog.svc.Context(ctx, user, query)
	if err != nil {
		b.log.Warn("chatbot: loading the user's cognitive context failed; the turn goes on with what was loaded", zap.Error(err))
	}
	return cc.Render()
}

// withCognition returns a prompt's conversation context preceded by the
// turn's cognitive context, if any.
func withCognition(cognitive, conversation string) string {
	if cognitive == "" {
		return conversation
	}
	return strings.TrimSpace(cognitionHeading + "\n" + cognitive + "\n\n" + conversation)
}

// observeTurn hands a finished turn of a user to the cognition service for
// learning: the exchange, its outcome (success; partial for a clarifying
// question; failure for a graceful failure or an error), its latency,
// token usage and tool calls. It does not block; a full queue only loses
// this turn's learning, which is logged.
// user and conversation are the stored ids (scoped to the principal).
func (b *Bot) observeTurn(req Request, user, conversation string, s State, turnErr error, start time.Time) {
	msgs := []memory.Message{{Role: memory.RoleUser, Content: req.Message}}
	if s.FinalResponse != "" {
		msgs = append(msgs, memory.Message{Role: memory.RoleAssistant, Content: s.FinalResponse})
	}
	outcome := cognition.Success
	switch {
	case turnErr != nil, s.Blocked:
		outcome = cognition.Failure
	case s.Decision.Action == supervisor.ActionClarify:
		outcome = cognition.Partial
	}
	var tools []cognition.ToolOutcome
	for _, o := range s.Observations {
		if o.Source != "" {
			tools = append(tools, cognition.ToolOutcome{Name: o.Source, Err: o.Err})
		}
	}
	err := b.cog.svc.Observe(cognition.Interaction{
		UserID: user, ConversationID: conversation, Messages: msgs, Outcome: outcome,
		Latency: time.Since(start), Tokens: s.Usage.Total(), Tools: tools,
	})
	switch {
	case errors.Is(err, cognition.ErrQueueFull):
		b.log.Warn("chatbot: cognition queue is full; this turn is not learned from (raise CognitionConfig.QueueSize or Workers)",
			zap.String("request_id", req.RequestID))
	case err != nil:
		b.log.Warn("chatbot: cognition did not take the turn", zap.String("request_id", req.RequestID), zap.Error(err))
	}
}

// UserProfile is the answer of GET /api/v1/users/{user_id}/profile: what
// the bot has learned about a user.
type UserProfile struct {
	UserID string `json:"user_id"`
	// Profile is the user's profile (zero values when nothing is known).
	Profile cognition.Profile `json:"profile"`
	// Memories counts the user's stored episodes.
	Memories int `json:"memories"`
	// Episodes are the stored episodes, most recently learned first.
	Episodes []cognition.Episode `json:"episodes"`
}

// UserProfile returns what the bot has learned about the user of ctx's
// principal ([WithPrincipal]). It fails with ErrUnknownUser when nothing
// is known, and with ErrNoCognition when Config.Cognition is nil.
func (b *Bot) UserProfile(ctx context.Context, userID string) (UserProfile, error) {
	if b.cog == nil {
		return UserProfile{}, ErrNoCognition
	}
	stored := scoped(PrincipalFromContext(ctx), userID)
	p, err := b.cog.store.Profile(ctx, stored)
	if err != nil {
		return UserProfile{}, err
	}
	p.UserID = userID
	eps, err := b.cog.store.Episodes(ctx, stored)
	if err != nil {
		return UserProfile{}, err
	}
	if p.IsZero() && len(eps) == 0 {
		return UserProfile{}, fmt.Errorf("%w: %q", ErrUnknownUser, userID)
	}
	for i := range eps {
		eps[i].UserID = userID
	}
	slices.SortFunc(eps, func(x, y cognition.Episode) int { return y.Updated.Compare(x.Updated) })
	return UserProfile{UserID: userID, Profile: p, Memories: len(eps), Episodes: eps}, nil
}

// ForgetUser deletes everything the bot has learned about the user of
// ctx's principal (cognition.Service.Forget). It fails when
// Config.Cognition is nil.
func (b *Bot) ForgetUser(ctx context.Context, userID string) error {
	if b.cog == nil {
		return ErrNoCognition
	}
	return b.cog.svc.Forget(ctx, scoped(PrincipalFromContext(ctx), userID))
}

func (b *Bot) userRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/users/{user_id}/profile", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("user_id")
		if !idPattern.MatchString(id) {
			b.writeError(w, r, &RequestError{Field: "user_id", Reason: idRule})
			return
		}
		p, err := b.UserProfile(r.Context(), id)
		if err != nil {
			b.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("DELETE /api/v1/users/{user_id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("user_id")
		if !idPattern.MatchString(id) {
			b.writeError(w, r, &RequestError{Field: "user_id", Reason: idRule})
			return
		}
		if err := b.ForgetUser(r.Context(), id); err != nil {
			b.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "forgotten", "user_id": id})
	})
}

// CognitionHealth is the "cognition" entry of GET /health when cognition
// is on: the background learning queue's counters and the problems the
// meta-monitor sees in recent turns.
type CognitionHealth struct {
	Queued   int   `json:"queued"`
	Running  int   `json:"running"`
	Done     int64 `json:"done"`
	Failed   int64 `json:"failed"`
	Rejected int64 `json:"rejected"`
	// Dead counts learning tasks that failed for good and are kept for
	// inspection (cognition.Service.TaskCounts).
	Dead       int      `json:"dead"`
	Confidence float64  `json:"confidence"`
	Patterns   []string `json:"patterns"`
}

// health is the cognition entry of GET /health for principal. An admin
// (see Config.Admins) sees every pattern; another principal sees the
// patterns of the whole agent, the struggling users of its own (by the
// ids it named), and the failing tools without their errors (which may
// quote other principals' arguments).
func (c *botCognition) health(ctx context.Context, principal string, admin bool) CognitionHealth {
	st := c.svc.QueueStats()
	h := CognitionHealth{Queued: st.Queued, Running: st.Running, Done: st.Done, Failed: st.Failed, Rejected: st.Rejected,
		Confidence: c.svc.Monitor().Confidence(""), Patterns: []string{}}
	if tc, err := c.svc.TaskCounts(ctx); err == nil {
		h.Dead = tc.Dead
	}
	for _, p := range c.svc.Monitor().Patterns() {
		if admin {
			h.Patterns = append(h.Patterns, p.String())
			continue
		}
		switch p.Kind {
		case cognition.UserStruggling:
			if p.Subject == "" || !ownID(principal, p.Subject) {
				continue // another principal's user, or a count of every principal's
			}
			p.Subject = unscoped(principal, p.Subject)
		case cognition.ToolFailing:
			p.Detail = "failed several times in a row (the errors are shown to Config.Admins)"
		}
		h.Patterns = append(h.Patterns, p.String())
	}
	return h
}
