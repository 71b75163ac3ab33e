package mcp_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/resilience"
)

// serverEnv makes the test binary serve the test server over stdio instead
// of running tests: stdio servers in these tests are the test binary itself.
const serverEnv = "AGENTGRAPH_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if n, ok := os.LookupEnv(badServerEnv); ok {
		hangAfter, _ := strconv.Atoi(n)
		badServer(hangAfter)
		os.Exit(0)
	}
	testserver.Main(m, serverEnv)
}

// stdioServer describes the test server run as a subprocess.
func stdioServer(name string) mcp.Server {
	return mcp.Server{Name: name, Command: os.Args[0], Env: map[string]string{serverEnv: name}}
}

// fastRetry is the MCP preset with tiny delays for tests.
func fastRetry() *resilience.Config {
	r := resilience.MCP()
	r.Retry.BaseDelay, r.Retry.MaxDelay = time.Millisecond, 2*time.Millisecond
	r.Breaker.RecoveryTime = 300 * time.Millisecond
	return &r
}

// newManager returns a manager with the given servers, shut down when the
// test ends.
func newManager(t *testing.T, cfg mcp.ManagerConfig, servers ...mcp.Server) *mcp.Manager {
	t.Helper()
	if cfg.Resilience == nil {
		cfg.Resilience = fastRetry()
	}
	m, err := mcp.NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(servers...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return m
}

// transports returns the test server reachable over each transport that
// carries server-to-client requests, with the server object for the
// in-process and HTTP ones (nil for stdio, which runs in a subprocess).
func transports(t *testing.T, name string) []struct {
	name   string
	server mcp.Server
	ts     *testserver.Server
} {
	t.Helper()
	inproc := testserver.New(name)
	httpSrv := testserver.New(name)
	hs := httpSrv.HTTP()
	t.Cleanup(hs.Close)
	return []struct {
		name   string
		server mcp.Server
		ts     *testserver.Server
	}{
		{"inprocess", mcp.Server{Name: name, InProcess: inproc.MCP}, inproc},
		{"stdio", stdioServer(name), nil},
		{"http", mcp.Server{Name: name, URL: hs.URL}, httpSrv},
	}
}
