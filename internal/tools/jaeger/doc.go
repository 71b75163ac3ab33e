// Package jaeger pins the Jaeger all-in-one binary the end-to-end telemetry
// tests export to. It is a module of its own so that Jaeger's dependencies
// never enter agentgraph's go.mod. Build it with
//
//	go build -C internal/tools/jaeger -o "$PWD/bin/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
package jaeger
