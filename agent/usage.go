package agent

import "github.com/agentgraph/agentgraph/agent/model"

// TokenUsage counts the tokens of one or more model calls. It is
// [model.Usage]; see there.
type TokenUsage = model.Usage
