package swarm

import (
	"context"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Skill is one past successful execution, Voyager's skill: the task, the
// tool call that solved it and what the reflection taught on the way.
type Skill struct {
	// Owner is the principal whose run learnt the skill (see principalOf):
	// only that principal's runs find it. Empty for runs without one (a
	// library or CLI run), whose skills only such runs find.
	Owner string `json:"owner,omitempty"`
	// Agent is the agent that solved the task.
	Agent string `json:"agent"`
	// Task is the task as the agent received it.
	Task string `json:"task"`
	// Tool and Arguments are the tool call that produced the approved
	// output: the solution to reuse.
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// Answer is the approved output of a step the agent answered from the
	// model (Tool empty).
	Answer string `json:"answer,omitempty"`
	// Lesson is the feedback of the rejected attempts that led to the
	// solution; empty when the first attempt was approved.
	Lesson string `json:"lesson,omitempty"`
	// Score is the similarity to the task it was retrieved for, in [0, 1];
	// set by Find.
	Score float64 `json:"score,omitempty"`
}

// SkillStore keeps skills and finds those similar to a task. Implementations
// must be safe for concurrent use; a vector database fits behind it.
type SkillStore interface {
	// Find returns at most limit skills of owner's agent whose tasks are
	// similar to task, most similar first, with Score set. Skills of another
	// owner are never returned.
	Find(ctx context.Context, owner, agent, task string, limit int) ([]Skill, error)
	// Save adds a skill.
	Save(ctx context.Context, s Skill) error
}

// SkillLibrary is an in-memory SkillStore that ranks skills by the overlap
// of their tasks' words (Jaccard similarity over lower-cased words without
// stop words). The zero value is ready to use.
type SkillLibrary struct {
	// MinScore is the similarity below which a skill is not returned.
	// Zero means 0.3.
	MinScore float64
	// Max bounds the skills kept per owner (Skill.Owner): an owner's
	// oldest go first, so one principal's skills never push out
	// another's. Zero means DefaultMaxSkills.
	Max int
	// MaxTotal bounds the skills kept of all owners together, the number
	// of owners being unbounded: beyond it the oldest go first, whoever's,
	// so the skills of principals who stopped running go before those of
	// the others. Zero means DefaultMaxTotalSkills.
	MaxTotal int

	mu     sync.Mutex
	skills []Skill
}

var _ SkillStore = (*SkillLibrary)(nil)

// DefaultMaxSkills is SkillLibrary's bound per owner when Max is zero.
const DefaultMaxSkills = 10000

// DefaultMaxTotalSkills is SkillLibrary's bound on all owners' skills
// together when MaxTotal is zero.
const DefaultMaxTotalSkills = 100000

// Save implements SkillStore.
func (l *SkillLibrary) Save(ctx context.Context, s Skill) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.Score = 0
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skills = append(l.skills, s)
	limit := l.Max
	if limit <= 0 {
		limit = DefaultMaxSkills
	}
	n := 0
	for _, k := range l.skills {
		if k.Owner == s.Owner {
			n++
		}
	}
	if over := n - limit; over > 0 { // drop the owner's oldest
		l.skills = slices.DeleteFunc(l.skills, func(k Skill) bool {
			if k.Owner != s.Owner || over == 0 {
				return false
			}
			over--
			return true
		})
	}
	total := l.MaxTotal
	if total <= 0 {
		total = DefaultMaxTotalSkills
	}
	if over := len(l.skills) - total; over > 0 { // drop the oldest, whoever's
		l.skills = slices.Delete(l.skills, 0, over)
	}
	return nil
}

// Find implements SkillStore.
func (l *SkillLibrary) Find(ctx context.Context, owner, agent, task string, limit int) ([]Skill, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	min := l.MinScore
	if min == 0 {
		min = 0.3
	}
	words := wordSet(task)
	l.mu.Lock()
	var found []Skill
	for _, s := range l.skills {
		if s.Agent != agent || s.Owner != owner {
			continue
		}
		if score := jaccard(words, wordSet(s.Task)); score >= min {
			s.Score = score
			found = append(found, s)
		}
	}
	l.mu.Unlock()
	slices.SortStableFunc(found, func(a, b Skill) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if limit > 0 && len(found) > limit {
		found = found[:limit]
	}
	return found, nil
}

// Len returns the number of skills saved.
func (l *SkillLibrary) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.skills)
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "in": true, "on": true,
	"and": true, "or": true, "is": true, "are": true, "what": true, "how": true, "much": true,
	"it": true, "its": true, "s": true, "me": true, "find": true, "then": true, "with": true,
	"from": true, "by": true, "do": true, "does": true, "this": true, "that": true, "our": true,
	"please": true, "be": true, "at": true, "as": true, "which": true, "using": true,
}

// words splits text into lower-case words, digits and symbols such as %
// kept as words of their own, stop words removed.
func words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%' && r != '$'
	}) {
		// Split "15%" into "15" and "%" so that the shape of a task counts.
		f = strings.ReplaceAll(f, "%", " % ")
		for _, w := range strings.Fields(f) {
			if !stopWords[w] {
				out = append(out, w)
			}
		}
	}
	return out
}

func wordSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range words(text) {
		// Numbers differ between similar tasks; count them as one shape.
		if w[0] >= '0' && w[0] <= '9' {
			w = "#"
		}
		set[w] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
