package cognition

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
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
	// most [MaxInterests], lower-case and unique.
	Interests []string `json:"interests,omitempty"`
	// Preferences are stated or inferred preferences by key ("language":
	// "Go", "format": "bullet lists"), at most [MaxPreferences].
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
// Preferences are listed by key in alphabetical order.
func (p Profile) Render() string {
	if p.Expertise == "" && p.Style == "" && len(p.Interests) == 0 && len(p.Preferences) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("User profile:")
	if p.Expertise != "" {
		fmt.Fprintf(&b, "\n- Expertise: %s", p.Expertise)
	}
	if p.Style != "" {
		fmt.Fprintf(&b, "\n- Style preference: %s", p.Style)
	}
	if len(p.Interests) > 0 {
		fmt.Fprintf(&b, "\n- Interests: %s", strings.Join(p.Interests[:min(len(p.Interests), 5)], ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Preferences)) {
		fmt.Fprintf(&b, "\n- Prefers %s: %s", k, p.Preferences[k].Value)
	}
	return b.String()
}

// apply merges a learned update into the profile at time now.
func (p *Profile) apply(u ProfileUpdate, now time.Time) {
	if u.Expertise != "" {
		p.Expertise = u.Expertise
	}
	if u.Style != "" {
		p.Style = u.Style
	}
	if len(u.Interests) > 0 {
		fresh := make([]string, 0, len(u.Interests)+len(p.Interests))
		for _, s := range u.Interests {
			s = strings.ToLower(strings.TrimSpace(s))
			if s != "" && !slices.Contains(fresh, s) {
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
	for k, v := range u.Preferences {
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "" || v == "" {
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
