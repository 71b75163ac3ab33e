// Package graph is agentgraph's engine: typed state graphs with per-field
// reducers, parallel super-steps, routing, dynamic fan-out, subgraphs and
// streaming.
package graph
