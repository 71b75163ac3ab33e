package cognition

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/internal/oneline"
)

// Expertise is how much a user knows about the subjects they ask about.
type Expertise string

// Expertise levels. The zero value means not known yet.
const (
	Novice       Expertise = "novice"
	Intermediate Expertise = "intermediate"
	Expert       Expertise = "expert"
)

// Style is how a user prefers to be answered.
type Style string

// Communication styles. The zero value means not known yet.
const (
	Concise   Style = "concise"
	Detailed  Style = "detailed"
	Technical Style = "technical"
)

// MaxInterests is how many domain interests a [Profile] keeps, most recent
// first.
const MaxInterests = 10

// MaxPreferences is how many preferences a [Profile] keeps; the least
// recently stated are dropped first.
const MaxPreferences = 20

// Bounds of one learned text, in characters: what a [ProfileUpdate] or a
// [Learning] may hold. Learning keeps only texts within them, on one line
// of visible characters (no newline, control, bidi or other invisible
// character); [Learning.Validate] refuses the others, so that a model is
// asked again.
const (
	// MaxInterestLen bounds an interest and a knowledge gap.
	MaxInterestLen = 60
	// MaxPreferenceKeyLen bounds a preference's key.
	MaxPreferenceKeyLen = 40
	// MaxPreferenceValueLen bounds a preference's value.
	MaxPreferenceValueLen = 200
	// MaxSummaryLen bounds an episode's summary.
	MaxSummaryLen = 500
)

// checkLearned says what is wrong with one learned text (trimmed), or ""
// when it is non-empty, at most max characters long and shown on one line
// of visible characters.
func checkLearned(s string, max int) string {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return "is empty"
	case n > max:
		return fmt.Sprintf("is %d characters long, more than %d; shorten it", n, max)
	}
	if at, what, where := oneline.Check(s, false); what != "" {
		return fmt.Sprintf("holds %s at byte %d%s; write it on one line of visible characters", what, at, where)
	}
	return ""
}

// valid reports whether e is one of the expertise levels.
func (e Expertise) valid() bool { return e == Novice || e == Intermediate || e == Expert }

// valid reports whether s is one of the communication styles.
func (s Style) valid() bool { return s == Concise || s == Detailed || s == Technical }

// Profile is what the agent believes about one user (its theory of mind):
// how expert they are, how they like to be answered, what they are
// interested in and what they have asked for. Learning updates it after
// turns; [Service.Context] reads it.
type Profile struct {
	// UserID identifies the user.
	UserID string `json:"user_id"`
	// Expertise is the user's inferred expertise; empty until learned.
	Expertise Expertise `json:"expertise,omitempty"`
	// Style is the user's preferred communication style; empty until
	// learned.
	Style Style `json:"style,omitempty"`
	// Interests are domain interests, most recently mentioned first, at
	// most [MaxInterests], lower-case and unique, each at most
	// [MaxInterestLen] characters on one line.
	Interests []string `json:"interests,omitempty"`
	// Preferences are stated or inferred preferences by key ("language":
	// "Go", "format": "bullet lists"), at most [MaxPreferences]; keys are
	// lower-case, at most [MaxPreferenceKeyLen] characters, values at most
	// [MaxPreferenceValueLen], each on one line.
	Preferences map[string]Preference `json:"preferences,omitempty"`
	// Interactions counts the turns learned from.
	Interactions int `json:"interactions"`
	// Created is when the profile was first saved.
	Created time.Time `json:"created"`
	// Updated is when the profile was last changed.
	Updated time.Time `json:"updated"`
}

// Preference is one preference of a user and when it was last stated.
type Preference struct {
	// Value is the preference ("Go", "bullet lists").
	Value string `json:"value"`
	// Updated is when it was last learned.
	Updated time.Time `json:"updated"`
}

// IsZero reports whether nothing has been learned about the user.
func (p Profile) IsZero() bool {
	return p.Expertise == "" && p.Style == "" && len(p.Interests) == 0 && len(p.Preferences) == 0 && p.Interactions == 0
}

// Render formats the profile for a prompt, one fact a line, under the
// heading "User profile:". It returns "" for a profile with nothing learned.
// What a user's words taught is quoted as a Go string literal (escaping
// newlines and invisible characters), so that it can add no line and reads
// as data: up to five interests (- Interests: "go", "sql"), and the
// preferences by key in alphabetical order (- Prefers "format": "bullet
// lists"), at most [MaxPreferences]. An expertise or a style that is not
// one of the known values (from a store written by other code) is left out.
func (p Profile) Render() string {
	if p.Expertise == "" && p.Style == "" && len(p.Interests) == 0 && len(p.Preferences) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("User profile:")
	if p.Expertise.valid() {
		fmt.Fprintf(&b, "\n- Expertise: %s", p.Expertise)
	}
	if p.Style.valid() {
		fmt.Fprintf(&b, "\n- Style preference: %s", p.Style)
	}
	if len(p.Interests) > 0 {
		b.WriteString("\n- Interests: ")
		for i, s := range p.Interests[:min(len(p.Interests), 5)] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", s)
		}
	}
	for i, k := range slices.Sorted(maps.Keys(p.Preferences)) {
		if i == MaxPreferences {
			break
		}
		fmt.Fprintf(&b, "\n- Prefers %q: %q", k, p.Preferences[k].Value)
	}
	return b.String()
}

// apply merges a learned update into the profile at time now. What does
// not fit (an unknown expertise or style; an interest, key or value that
// is empty, too long or not one line of visible characters; preferences
// past the first [MaxPreferences] of the update by key) is left out.
func (p *Profile) apply(u ProfileUpdate, now time.Time) {
	if u.Expertise.valid() {
		p.Expertise = u.Expertise
	}
	if u.Style.valid() {
		p.Style = u.Style
	}
	if len(u.Interests) > 0 {
		fresh := make([]string, 0, len(u.Interests)+len(p.Interests))
		for _, s := range u.Interests {
			s = strings.ToLower(strings.TrimSpace(s))
			if checkLearned(s, MaxInterestLen) == "" && !slices.Contains(fresh, s) {
				fresh = append(fresh, s)
			}
		}
		for _, s := range p.Interests {
			if !slices.Contains(fresh, s) {
				fresh = append(fresh, s)
			}
		}
		p.Interests = fresh[:min(len(fresh), MaxInterests)]
	}
	for i, k := range slices.Sorted(maps.Keys(u.Preferences)) {
		if i == MaxPreferences {
			break
		}
		v := strings.TrimSpace(u.Preferences[k])
		k = strings.ToLower(strings.TrimSpace(k))
		if checkLearned(k, MaxPreferenceKeyLen) != "" || checkLearned(v, MaxPreferenceValueLen) != "" {
			continue
		}
		if p.Preferences == nil {
			p.Preferences = make(map[string]Preference)
		}
		p.Preferences[k] = Preference{Value: v, Updated: now}
	}
	for len(p.Preferences) > MaxPreferences {
		var oldest string
		for k, v := range p.Preferences {
			if oldest == "" || v.Updated.Before(p.Preferences[oldest].Updated) ||
				(v.Updated.Equal(p.Preferences[oldest].Updated) && k < oldest) {
				oldest = k
			}
		}
		delete(p.Preferences, oldest)
	}
	p.Interactions++
	if p.Created.IsZero() {
		p.Created = now
	}
	p.Updated = now
}
