package cortexr

import "strings"

// Persona is the seed's persona: how answers are written. The decision
// prompt carries it to the model.
type Persona struct {
	// Tone is the answers' tone, e.g. "concise".
	Tone string `yaml:"tone"`
	// Verbosity is "low", "medium" or "high".
	Verbosity string `yaml:"verbosity"`
	// BehaviorTags describe the agent, e.g. rational, focused, tool-using.
	BehaviorTags []string `yaml:"behavior_tags"`
}

// line is the persona as one line of the decision prompt, or "".
func (p Persona) line() string {
	var parts []string
	if p.Tone != "" {
		parts = append(parts, "tone "+p.Tone)
	}
	if p.Verbosity != "" {
		parts = append(parts, "verbosity "+p.Verbosity)
	}
	if len(p.BehaviorTags) > 0 {
		parts = append(parts, "behaviour "+strings.Join(p.BehaviorTags, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "write the final answer with " + strings.Join(parts, "; ") + "."
}
