module github.com/agentgraph/agentgraph

go 1.26
