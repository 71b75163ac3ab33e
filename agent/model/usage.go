package model

import (
	"encoding/json"
	"math"
	"math/bits"
)

// Usage counts the tokens of one or more model calls.
//
// The fields are disjoint, so every token is counted once: InputTokens are
// prompt tokens that were neither read from nor written to the provider's
// prompt cache, OutputTokens are answer tokens, and ThinkingTokens are
// reasoning tokens that the provider reports apart from the answer. Total adds
// all five and equals the provider's own total where it reports one.
//
// Providers that bill thinking as output without reporting it apart
// (Anthropic) count it in OutputTokens and leave ThinkingTokens zero.
//
// A Usage field of a graph state sums itself across nodes through its Merge
// method; the zero value is no usage.
type Usage struct {
	// InputTokens are uncached prompt tokens.
	InputTokens int `json:"input_tokens"`
	// OutputTokens are generated answer tokens.
	OutputTokens int `json:"output_tokens"`
	// ThinkingTokens are reasoning tokens reported apart from the answer.
	ThinkingTokens int `json:"thinking_tokens"`
	// CacheReadTokens are prompt tokens served from the provider's cache.
	CacheReadTokens int `json:"cache_read_tokens"`
	// CacheWriteTokens are prompt tokens written to the provider's cache.
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// Total returns the sum of all counted tokens. A negative field counts as
// zero, and the sum saturates at math.MaxInt rather than wrapping, so a
// provider's absurd figures cannot make a total negative.
func (u Usage) Total() int {
	return add(add(add(add(add(0, u.InputTokens), u.OutputTokens), u.ThinkingTokens), u.CacheReadTokens), u.CacheWriteTokens)
}

// Merge returns the field-wise sum of u and v. A graph state field of type
// Usage is merged with it, so nodes that each return the usage of their own
// calls accumulate the usage of the whole run. As in Total, a negative field
// counts as zero and each sum saturates at math.MaxInt.
func (u Usage) Merge(v Usage) Usage {
	// The usual counts, none negative and each below 2^(w-2) for a w-bit
	// int, sum as they stand: no sum can reach math.MaxInt. One test of
	// all ten tells.
	if (u.InputTokens|u.OutputTokens|u.ThinkingTokens|u.CacheReadTokens|u.CacheWriteTokens|
		v.InputTokens|v.OutputTokens|v.ThinkingTokens|v.CacheReadTokens|v.CacheWriteTokens)>>(bits.UintSize-2) == 0 {
		return Usage{
			InputTokens:      u.InputTokens + v.InputTokens,
			OutputTokens:     u.OutputTokens + v.OutputTokens,
			ThinkingTokens:   u.ThinkingTokens + v.ThinkingTokens,
			CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
			CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		}
	}
	return Usage{
		InputTokens:      add(add(0, u.InputTokens), v.InputTokens),
		OutputTokens:     add(add(0, u.OutputTokens), v.OutputTokens),
		ThinkingTokens:   add(add(0, u.ThinkingTokens), v.ThinkingTokens),
		CacheReadTokens:  add(add(0, u.CacheReadTokens), v.CacheReadTokens),
		CacheWriteTokens: add(add(0, u.CacheWriteTokens), v.CacheWriteTokens),
	}
}

// add returns a+max(b, 0) for a >= 0, saturating at math.MaxInt.
func add(a, b int) int {
	if b <= 0 {
		return a
	}
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// IsZero reports whether u counts no tokens.
func (u Usage) IsZero() bool { return u == Usage{} }

// MarshalJSON encodes the usage with an extra total_tokens member, the shape
// an API response reports to its clients.
func (u Usage) MarshalJSON() ([]byte, error) {
	type fields Usage
	return json.Marshal(struct {
		fields
		TotalTokens int `json:"total_tokens"`
	}{fields(u), u.Total()})
}
