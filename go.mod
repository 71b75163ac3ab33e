module github.com/agentgraph/agentgraph

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
)

require github.com/stretchr/testify v1.11.1 // indirect
