package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Transport names how the manager reaches a server.
type Transport string

// The transports.
const (
	// TransportStdio runs the server as a subprocess and speaks over its
	// stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is MCP streamable HTTP.
	TransportHTTP Transport = "http"
	// TransportSSE is the legacy HTTP+SSE transport (protocol 2024-11-05). It
	// cannot carry server-to-client requests: tools that ask for elicitation
	// or sampling do not work over it (see [ErrServerRequestsUnsupported]).
	TransportSSE Transport = "sse"
	// TransportInProcess calls an mcp-go server in the same binary.
	TransportInProcess Transport = "inprocess"
)

// Protocol versions for [Server].ProtocolVersion.
const (
	// ProtocolLegacy is MCP 2025-11-25, the revision the reference servers
	// speak. It is the default.
	ProtocolLegacy = "2025-11-25"
	// ProtocolModern is MCP 2026-07-28 (stateless, no initialize).
	ProtocolModern = "2026-07-28"
	// ProtocolProbe lets the client probe with server/discover and fall back
	// to initialize. A stdio server that exits on an unknown first message
	// cannot be reached this way, and a lenient server that answers every
	// method is taken for a modern one: use it only for servers known to
	// cope.
	ProtocolProbe = "probe"
)

// Server describes one MCP server. Name and the fields of one transport are
// required; the rest have defaults.
type Server struct {
	// Name identifies the server; tool names from it are namespaced with it
	// when they collide.
	Name string `json:"-"`
	// Transport is inferred when empty: InProcess set means in-process,
	// Command means stdio, URL means streamable HTTP.
	Transport Transport `json:"type,omitempty"`

	// Command, Args, Env and Dir start a stdio server. Env adds to the
	// manager process's environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`

	// URL and Headers reach a remote (HTTP or SSE) server. Requests, and
	// with them Headers and the OAuth token, go to URL's origin only: a
	// redirect to another origin is not followed (the request fails), so
	// set URL to the address that answers.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// InProcess is an mcp-go server in this binary.
	InProcess *server.MCPServer `json:"-"`

	// ProtocolVersion pins the MCP revision. Empty means [ProtocolLegacy];
	// set [ProtocolModern] for servers known to speak 2026-07-28, or
	// [ProtocolProbe] to negotiate.
	ProtocolVersion string `json:"protocolVersion,omitempty"`

	// NoListen turns off the standalone GET stream of a streamable HTTP
	// server. The stream is on by default: without it server-initiated
	// messages (logging, list_changed, roots, some elicitations) are lost.
	NoListen bool `json:"noListen,omitempty"`
	// ListenRetries bounds how many failed attempts in a row to open the GET
	// stream are retried (one a second) before listening stops for this
	// connection. Zero means 5.
	ListenRetries int `json:"listenRetries,omitempty"`

	// MaxConcurrent bounds the calls in flight to this server, not counting
	// those whose elicitation waits for its answer, nor, while one of
	// several elicitations open at once in a call still waits, that call
	// (see ManagerConfig.MaxConcurrent). Zero means the manager's default
	// (10).
	MaxConcurrent int `json:"maxConcurrent,omitempty"`

	// CallTimeout bounds each attempt of a call to this server's tools.
	// Zero means ManagerConfig.CallTimeout; negative means no limit.
	CallTimeout time.Duration `json:"-"`
	// ToolTimeouts bounds the attempts of calls to the named tools,
	// overriding CallTimeout; a negative value means no limit.
	ToolTimeouts map[string]time.Duration `json:"-"`

	// OAuth authorizes requests to a remote server behind OAuth 2.1. Nil
	// means no authorization.
	OAuth *OAuth `json:"-"`
}

// transport returns the effective transport.
func (s *Server) transport() Transport {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.InProcess != nil:
		return TransportInProcess
	case s.Command != "":
		return TransportStdio
	default:
		return TransportHTTP
	}
}

// validate reports the first problem in s.
func (s *Server) validate() error {
	if s.Name == "" {
		return fmt.Errorf("mcp: server has no Name; set Server.Name (the key in mcpServers)")
	}
	switch s.transport() {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("mcp: server %q: stdio needs Command", s.Name)
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			return fmt.Errorf("mcp: server %q: %s needs URL, or set Command for a stdio server", s.Name, s.transport())
		}
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return fmt.Errorf("mcp: server %q: URL %q must start with http:// or https://", s.Name, s.URL)
		}
	case TransportInProcess:
		if s.InProcess == nil {
			return fmt.Errorf("mcp: server %q: in-process needs InProcess (an *server.MCPServer)", s.Name)
		}
	default:
		return fmt.Errorf("mcp: server %q: unknown transport %q; use stdio, http, sse or inprocess", s.Name, s.Transport)
	}
	switch s.ProtocolVersion {
	case "", ProtocolLegacy, ProtocolModern, ProtocolProbe, "2025-06-18", "2025-03-26", "2024-11-05":
	default:
		return fmt.Errorf("mcp: server %q: unknown protocolVersion %q; use %q, %q or %q", s.Name, s.ProtocolVersion, ProtocolLegacy, ProtocolModern, ProtocolProbe)
	}
	if s.MaxConcurrent < 0 || s.ListenRetries < 0 {
		return fmt.Errorf("mcp: server %q: maxConcurrent and listenRetries must not be negative", s.Name)
	}
	return nil
}

// equal reports whether two specs describe the same server.
func (s *Server) equal(o *Server) bool {
	return s.Name == o.Name && s.transport() == o.transport() && s.Command == o.Command &&
		slices.Equal(s.Args, o.Args) && maps.Equal(s.Env, o.Env) && s.Dir == o.Dir &&
		s.URL == o.URL && maps.Equal(s.Headers, o.Headers) && s.InProcess == o.InProcess &&
		s.ProtocolVersion == o.ProtocolVersion && s.NoListen == o.NoListen &&
		s.ListenRetries == o.ListenRetries && s.MaxConcurrent == o.MaxConcurrent && s.OAuth == o.OAuth &&
		s.CallTimeout == o.CallTimeout && maps.Equal(s.ToolTimeouts, o.ToolTimeouts)
}

// configServer is one entry of an mcpServers object. It accepts the spellings
// the common clients use: "type" or "transport"; "streamable-http",
// "streamableHttp" and "http" for streamable HTTP.
type configServer struct {
	Server
	TransportAlt string `json:"transport,omitempty"`
	Disabled     bool   `json:"disabled,omitempty"`
}

// ParseConfig reads servers from JSON in the common mcpServers shape:
//
//	{"mcpServers": {
//	  "files": {"command": "npx", "args": ["-y", "server-filesystem", "/data"], "env": {"K": "${K}"}, "cwd": "/tmp"},
//	  "search": {"type": "http", "url": "https://search.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
//	  "legacy": {"type": "sse", "url": "https://old.example/sse"}
//	}}
//
// ${VAR} in env and header values is replaced from the environment. Entries
// with "disabled": true are skipped. Servers come back sorted by name.
func ParseConfig(r io.Reader) ([]Server, error) {
	var doc struct {
		MCPServers map[string]configServer `json:"mcpServers"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("mcp: config: %w; expected {\"mcpServers\": {\"name\": {...}}}", err)
	}
	if doc.MCPServers == nil {
		return nil, fmt.Errorf("mcp: config: no \"mcpServers\" object; expected {\"mcpServers\": {\"name\": {...}}}")
	}
	out := make([]Server, 0, len(doc.MCPServers))
	for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		cs := doc.MCPServers[name]
		if cs.Disabled {
			continue
		}
		s := cs.Server
		s.Name = name
		t := string(s.Transport)
		if t == "" {
			t = cs.TransportAlt
		}
		switch strings.ToLower(t) {
		case "":
			s.Transport = ""
		case "stdio":
			s.Transport = TransportStdio
		case "http", "streamable-http", "streamablehttp", "streamable_http":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		default:
			return nil, fmt.Errorf("mcp: config: server %q: unknown type %q; use stdio, http or sse", name, t)
		}
		s.Env = expandValues(s.Env)
		s.Headers = expandValues(s.Headers)
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("mcp: config: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// LoadConfig reads servers from a JSON file in the mcpServers shape; see
// [ParseConfig].
func LoadConfig(path string) ([]Server, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mcp: config: %w", err)
	}
	defer f.Close()
	servers, err := ParseConfig(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return servers, nil
}

func expandValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.ExpandEnv(v)
	}
	return out
}

// FetchServers reads the server list from a discovery service: an HTTP GET of
// url that answers the mcpServers JSON of [ParseConfig]. A nil client means
// http.DefaultClient; the request is bounded by ctx and by 30 s.
func FetchServers(ctx context.Context, client *http.Client, url string) ([]Server, error) {
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: discovery URL %q: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcp: discovery: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("mcp: discovery %s: status %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	servers, err := ParseConfig(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%w (from discovery %s)", err, url)
	}
	return servers, nil
}
