// Command mcpconformance is the MCP client that the official conformance
// suite (@modelcontextprotocol/conformance) drives. It is built on the
// project's mcp package, so the suite grades that package.
//
// The suite runs it as
//
//	mcpconformance [-v] <server-url>
//
// with the scenario name in MCP_CONFORMANCE_SCENARIO and, for some
// authorization scenarios, a JSON object of credentials in
// MCP_CONFORMANCE_CONTEXT. The process exits 0 when the client did its part
// of the scenario; the suite grades what the server saw.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"go.uber.org/zap"
)

func main() {
	verbose := flag.Bool("v", false, "log the client's steps to stderr")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: mcpconformance [-v] <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	log := zap.NewNop()
	if *verbose {
		log, _ = zap.NewDevelopment()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if err := run(ctx, log, scenario, flag.Arg(flag.NArg()-1)); err != nil {
		fmt.Fprintf(os.Stderr, "mcpconformance: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

// credentials are what MCP_CONFORMANCE_CONTEXT may carry.
type credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	PrivateKey   string `json:"private_key_pem"`
	// Enterprise-managed authorization (SEP-990).
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

// clientMetadataURL is the Client ID Metadata Document URL the suite expects
// a client to present when the authorization server supports them.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func run(ctx context.Context, log *zap.Logger, scenario, serverURL string) error {
	server := mcp.Server{Name: "conformance", URL: serverURL}
	if strings.HasPrefix(scenario, "auth/") {
		var cred credentials
		if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
			if err := json.Unmarshal([]byte(raw), &cred); err != nil {
				return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
			}
		}
		server.OAuth = &mcp.OAuth{
			ClientID: cred.ClientID, ClientSecret: cred.ClientSecret, PrivateKey: cred.PrivateKey,
			ClientMetadataURL: clientMetadataURL, Authorize: headlessAuthorize,
			// The suite's authorization servers listen on ports not
			// known in advance.
			AnyAuthorizationServer: true,
		}
		if strings.HasPrefix(scenario, "auth/client-credentials") {
			server.OAuth.GrantType = "client_credentials"
		}
		if cred.IdPIDToken != "" {
			server.OAuth.Enterprise = &mcp.EnterpriseIdP{
				TokenEndpoint: cred.IdPTokenEndpoint, ClientID: cred.IdPClientID,
				IDToken: func(context.Context) (string, error) { return cred.IdPIDToken, nil },
			}
		}
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{
		Logger:     log,
		ClientName: "agentgraph-conformance-client",
		// Answer every form with the schema's defaults (SEP-1034): the
		// manager fills in what the answer leaves out.
		Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
			return elicit.Response{Action: elicit.Accept, Content: map[string]any{}}, nil
		},
	})
	if err != nil {
		return err
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(server); err != nil {
		return err
	}
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		return err
	}
	tools, err := r.Tools(ctx)
	if err != nil {
		return err
	}
	if scenario == "initialize" {
		return nil
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	for _, t := range tools {
		args := map[string]any{}
		if t.Tool == "add_numbers" {
			args = map[string]any{"a": 5, "b": 3}
		}
		res, err := s.CallTool(ctx, mcp.ToolCall{Server: t.Server, Name: t.Tool, Arguments: args})
		if err != nil {
			var ce *mcp.CallError
			if errors.As(err, &ce) && ce.Kind == mcp.KindExecution {
				continue // the server refused this call; the scenario grades the rest
			}
			return fmt.Errorf("call %s: %w", t.Tool, err)
		}
		log.Info("called", zap.String("tool", t.Tool), zap.Bool("is_error", res.IsError), zap.String("text", res.Text()))
	}
	return nil
}

// headlessAuthorize plays the user agent: it opens the authorization URL and,
// instead of following the redirect back to the client, reads it.
func headlessAuthorize(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, fmt.Errorf("authorization server answered %d without a redirect", resp.StatusCode)
	}
	return url.Parse(loc)
}
