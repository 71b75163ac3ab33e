package cognition

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/internal/storeid"
)

// Store persists profiles, episodes and identities. Every method is safe
// for concurrent use, and the Update methods are atomic: fn sees the
// current value and its result is saved before any other Update of the
// same user (or agent) reads it, also across processes for stores shared
// by several, as the SQL ones are. fn may be called more than once; it
// must not have side effects. An error from fn is returned unchanged and
// nothing is saved.
//
// [NewInMemoryStore] implements it here; packages
// [github.com/agentgraph/agentgraph/cognition/sqlite] and
// [github.com/agentgraph/agentgraph/cognition/postgres] persist it, and
// package [github.com/agentgraph/agentgraph/cognition/cognitiontest]
// checks any implementation against this contract.
type Store interface {
	// Profile returns the user's profile, or a zero Profile with UserID
	// set when there is none.
	Profile(ctx context.Context, userID string) (Profile, error)
	// UpdateProfile applies fn to the user's profile (a zero Profile with
	// UserID set when there is none) and saves the result. fn must not
	// change UserID.
	UpdateProfile(ctx context.Context, userID string, fn func(*Profile) error) (Profile, error)
	// Episodes returns all the user's episodes, in no particular order.
	Episodes(ctx context.Context, userID string) ([]Episode, error)
	// UpdateEpisodes applies the changes fn returns for the user's current
	// episodes. Every Put episode must have the user's UserID and an ID.
	UpdateEpisodes(ctx context.Context, userID string, fn func([]Episode) (EpisodeChanges, error)) error
	// Touch records that the user's episodes ids were retrieved at at:
	// their AccessCount grows by one and LastAccessed becomes at. Unknown
	// IDs are ignored (the episode may have been pruned meanwhile).
	Touch(ctx context.Context, userID string, ids []string, at time.Time) error
	// Identity returns the agent's identity, or a zero Identity with Agent
	// set when there is none.
	Identity(ctx context.Context, agent string) (Identity, error)
	// UpdateIdentity applies fn to the agent's identity and saves it.
	UpdateIdentity(ctx context.Context, agent string, fn func(*Identity) error) (Identity, error)
	// DeleteUser removes the user's profile and episodes (for a user's
	// request to be forgotten). It accepts any non-empty id, also one
	// [ValidateID] refuses, so that a user stored before that check can
	// be forgotten.
	DeleteUser(ctx context.Context, userID string) error
}

// MaxIDBytes is the longest id accepted, in bytes: the limit of
// memory.MaxIDBytes and document.MaxIDBytes, so that a user id can also
// name a conversation.
const MaxIDBytes = storeid.MaxBytes

// ValidateID returns an error wrapping [ErrInvalid] if id, named what
// ("user ID", "agent"), is empty, longer than [MaxIDBytes], not valid
// UTF-8 or holds a NUL byte: ids every store holds alike. Stores call it
// first, but for [Store.DeleteUser].
func ValidateID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is empty; set it", ErrInvalid, what)
	}
	if why := storeid.Problem(id); why != "" {
		return fmt.Errorf("%w: %s %s", ErrInvalid, what, why)
	}
	return nil
}

// CheckChanges returns an error wrapping [ErrInvalid] if ch puts an
// episode with an invalid ID (see [ValidateID]), of another user, or with
// a text field (ConversationID, Summary, Outcome, a topic) that is not
// valid UTF-8 or holds a NUL byte, or deletes an ID that is not valid
// UTF-8 or holds a NUL byte; the error names the field. Stores call it on
// what UpdateEpisodes' fn returns, so that every store refuses alike what
// one of them could not keep as given.
func CheckChanges(userID string, ch EpisodeChanges) error {
	for i, e := range ch.Put {
		if err := ValidateID(fmt.Sprintf("EpisodeChanges.Put[%d].ID", i), e.ID); err != nil {
			return err
		}
		if e.UserID != userID {
			return fmt.Errorf("%w: EpisodeChanges.Put[%d] (%s) belongs to user %q, not %q", ErrInvalid, i, e.ID, e.UserID, userID)
		}
		field := func(name string) string { return fmt.Sprintf("EpisodeChanges.Put[%d] (%s).%s", i, e.ID, name) }
		if err := checkText(field("ConversationID"), e.ConversationID); err != nil {
			return err
		}
		if err := checkText(field("Summary"), e.Summary); err != nil {
			return err
		}
		if err := checkText(field("Outcome"), string(e.Outcome)); err != nil {
			return err
		}
		for j, t := range e.Topics {
			if err := checkText(field(fmt.Sprintf("Topics[%d]", j)), t); err != nil {
				return err
			}
		}
	}
	for i, id := range ch.Delete {
		if err := checkText(fmt.Sprintf("EpisodeChanges.Delete[%d]", i), id); err != nil {
			return err
		}
	}
	return nil
}

// CheckProfile returns an error wrapping [ErrInvalid] if p, as an
// UpdateProfile of userID's fn left it, changed UserID, or has a text
// field (Expertise, Style, an interest, a preference's key or value) that
// is not valid UTF-8 or holds a NUL byte; the error names the field.
// Stores call it before saving, so that every store refuses alike what
// one of them could not keep as given.
func CheckProfile(userID string, p Profile) error {
	if p.UserID != userID {
		return fmt.Errorf("%w: UpdateProfile of %q changed UserID to %q", ErrInvalid, userID, p.UserID)
	}
	if err := checkText("Profile.Expertise", string(p.Expertise)); err != nil {
		return err
	}
	if err := checkText("Profile.Style", string(p.Style)); err != nil {
		return err
	}
	for i, s := range p.Interests {
		if err := checkText(fmt.Sprintf("Profile.Interests[%d]", i), s); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Preferences)) {
		if err := checkText(fmt.Sprintf("a key of Profile.Preferences (%q)", k), k); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("Profile.Preferences[%q].Value", k), p.Preferences[k].Value); err != nil {
			return err
		}
	}
	return nil
}

// CheckIdentity returns an error wrapping [ErrInvalid] if id, as an
// UpdateIdentity of agent's fn left it, changed Agent, or has a goal, a
// value or a gap that is not valid UTF-8 or holds a NUL byte; the error
// names the field. Stores call it before saving.
func CheckIdentity(agent string, id Identity) error {
	if id.Agent != agent {
		return fmt.Errorf("%w: UpdateIdentity of %q changed Agent to %q", ErrInvalid, agent, id.Agent)
	}
	for name, list := range map[string][]string{"Goals": id.Goals, "Values": id.Values, "Gaps": id.Gaps} {
		for i, s := range list {
			if err := checkText(fmt.Sprintf("Identity.%s[%d]", name, i), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText returns an error wrapping [ErrInvalid], naming field, if s is
// not valid UTF-8 or holds a NUL byte: text the SQL stores could not keep
// as given (PostgreSQL refuses it; JSON replaces invalid bytes).
func checkText(field, s string) error {
	if why := storeid.TextProblem(s); why != "" {
		return fmt.Errorf("%w: %s %s", ErrInvalid, field, why)
	}
	return nil
}

// InMemoryStore is a [Store] in process memory, for tests and single-process
// services that may forget on restart. The zero value is not usable; call
// [NewInMemoryStore].
type InMemoryStore struct {
	mu         sync.Mutex
	profiles   map[string]Profile
	episodes   map[string]map[string]Episode
	identities map[string]Identity
}

var _ Store = (*InMemoryStore)(nil)

// NewInMemoryStore returns an empty store.
func NewInMemoryStore() *InMemoryStore {
	return &InMemoryStore{
		profiles:   make(map[string]Profile),
		episodes:   make(map[string]map[string]Episode),
		identities: make(map[string]Identity),
	}
}

// Values are copied in and out so that callers never share slices or maps
// with the store.
func cloneProfile(p Profile) Profile {
	p.Interests = slices.Clone(p.Interests)
	p.Preferences = maps.Clone(p.Preferences)
	return p
}

func cloneEpisode(e Episode) Episode {
	e.Topics = slices.Clone(e.Topics)
	return e
}

func cloneIdentity(id Identity) Identity {
	id.Goals = slices.Clone(id.Goals)
	id.Gaps = slices.Clone(id.Gaps)
	return id
}

// checkCall validates id, named what, and checks that ctx is not done:
// the start of every method.
func checkCall(ctx context.Context, what, id string) error {
	if err := ValidateID(what, id); err != nil {
		return err
	}
	return ctx.Err()
}

// lookup returns a copy of m[key], or none when m has no value at key.
// The caller holds the store's lock.
func lookup[T any](m map[string]T, key string, clone func(T) T, none T) T {
	if v, ok := m[key]; ok {
		return clone(v)
	}
	return none
}

// Profile implements [Store].
func (s *InMemoryStore) Profile(ctx context.Context, userID string) (Profile, error) {
	if err := checkCall(ctx, "user ID", userID); err != nil {
		return Profile{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return lookup(s.profiles, userID, cloneProfile, Profile{UserID: userID}), nil
}

// UpdateProfile implements [Store].
func (s *InMemoryStore) UpdateProfile(ctx context.Context, userID string, fn func(*Profile) error) (Profile, error) {
	if err := checkCall(ctx, "user ID", userID); err != nil {
		return Profile{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := lookup(s.profiles, userID, cloneProfile, Profile{UserID: userID})
	if err := fn(&p); err != nil {
		return Profile{}, err
	}
	if err := CheckProfile(userID, p); err != nil {
		return Profile{}, err
	}
	s.profiles[userID] = cloneProfile(p)
	return p, nil
}

// Episodes implements [Store].
func (s *InMemoryStore) Episodes(ctx context.Context, userID string) ([]Episode, error) {
	if err := checkCall(ctx, "user ID", userID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.episodesLocked(userID), nil
}

func (s *InMemoryStore) episodesLocked(userID string) []Episode {
	m := s.episodes[userID]
	out := make([]Episode, 0, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, cloneEpisode(m[id]))
	}
	return out
}

// UpdateEpisodes implements [Store].
func (s *InMemoryStore) UpdateEpisodes(ctx context.Context, userID string, fn func([]Episode) (EpisodeChanges, error)) error {
	if err := checkCall(ctx, "user ID", userID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := fn(s.episodesLocked(userID))
	if err != nil {
		return err
	}
	if err := CheckChanges(userID, ch); err != nil {
		return err
	}
	m := s.episodes[userID]
	if m == nil {
		m = make(map[string]Episode)
		s.episodes[userID] = m
	}
	for _, id := range ch.Delete {
		delete(m, id)
	}
	for _, e := range ch.Put {
		m[e.ID] = cloneEpisode(e)
	}
	return nil
}

// Touch implements [Store].
func (s *InMemoryStore) Touch(ctx context.Context, userID string, ids []string, at time.Time) error {
	if err := checkCall(ctx, "user ID", userID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.episodes[userID]
	for _, id := range ids {
		if e, ok := m[id]; ok {
			e.AccessCount++
			e.LastAccessed = at
			m[id] = e
		}
	}
	return nil
}

// Identity implements [Store].
func (s *InMemoryStore) Identity(ctx context.Context, agent string) (Identity, error) {
	if err := checkCall(ctx, "agent", agent); err != nil {
		return Identity{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return lookup(s.identities, agent, cloneIdentity, Identity{Agent: agent}), nil
}

// UpdateIdentity implements [Store].
func (s *InMemoryStore) UpdateIdentity(ctx context.Context, agent string, fn func(*Identity) error) (Identity, error) {
	if err := checkCall(ctx, "agent", agent); err != nil {
		return Identity{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := lookup(s.identities, agent, cloneIdentity, Identity{Agent: agent})
	if err := fn(&id); err != nil {
		return Identity{}, err
	}
	if err := CheckIdentity(agent, id); err != nil {
		return Identity{}, err
	}
	s.identities[agent] = cloneIdentity(id)
	return id, nil
}

// DeleteUser implements [Store].
func (s *InMemoryStore) DeleteUser(ctx context.Context, userID string) error {
	if userID == "" {
		return ValidateID("user ID", userID)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.profiles, userID)
	delete(s.episodes, userID)
	return nil
}
