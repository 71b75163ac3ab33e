package postgres

import "github.com/agentgraph/agentgraph/graph/checkpoint"

var _ checkpoint.AsyncCommitter = (*Saver)(nil)

// CommitsAsync implements [checkpoint.AsyncCommitter]: it reports
// Config.AsyncCommit.
func (s *Saver) CommitsAsync() bool { return s.async }
