package graph_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: runs,
// streams and parallel steps must all clean up after themselves.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
