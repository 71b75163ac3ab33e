module github.com/agentgraph/agentgraph

go 1.26

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/google/go-cmp v0.7.0
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	go.uber.org/multierr v1.10.0 // indirect
)
