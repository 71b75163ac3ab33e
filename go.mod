module github.com/agentgraph/agentgraph

go 1.26

require go.uber.org/zap v1.28.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
)
