package swarm_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child()) // a process of TestKillResume
	}
	if name := os.Getenv(stdioServerEnv); name != "" {
		os.Exit(serveStdio(name)) // an MCP server of TestHotReload
	}
	goleak.VerifyTestMain(m)
}
