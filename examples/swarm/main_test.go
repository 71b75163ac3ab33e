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
	goleak.VerifyTestMain(m)
}
