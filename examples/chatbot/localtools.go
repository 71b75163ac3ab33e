package chatbot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// about describes the chatbot for self_info and list_capabilities.
type about struct {
	// Name and Version identify the agent ("Acme Assistant", "1.4.0").
	Name    string
	Version string
	// Description says in a sentence what the agent is for.
	Description string
	// ReleaseNotes lists what changed recently, newest first.
	ReleaseNotes []string
	// Capabilities lists what the agent can do, in plain words.
	Capabilities []string
	// Limitations lists what it cannot do.
	Limitations []string
}

// registerLocalTools registers the chatbot's local tools in r: self_info
// and list_capabilities describe it with about, list_tools lists the
// catalogue of the provider it is called through and list_operators the
// operators of ops.
func registerLocalTools(r *operator.LocalRegistry, about about, ops *operator.Registry) error {
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	return r.Register(
		operator.LocalFunc(operator.LocalInfo{Name: "self_info", Description: "Tells the agent's name, version, purpose and recent release notes", InputSchema: noArgs},
			func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
				var b strings.Builder
				fmt.Fprintf(&b, "%s %s", about.Name, about.Version)
				if about.Description != "" {
					fmt.Fprintf(&b, "\n%s", about.Description)
				}
				if len(about.ReleaseNotes) > 0 {
					b.WriteString("\nRelease notes:")
					for _, n := range about.ReleaseNotes {
						fmt.Fprintf(&b, "\n- %s", n)
					}
				}
				return operator.TextResult("self_info", b.String(), map[string]any{"name": about.Name, "version": about.Version,
					"description": about.Description, "release_notes": about.ReleaseNotes}), nil
			}),
		operator.LocalFunc(operator.LocalInfo{Name: "list_capabilities", Description: "Lists what the agent can and cannot do", InputSchema: noArgs},
			func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
				var b strings.Builder
				b.WriteString("I can:")
				for _, s := range about.Capabilities {
					fmt.Fprintf(&b, "\n- %s", s)
				}
				if len(about.Limitations) > 0 {
					b.WriteString("\nI cannot:")
					for _, s := range about.Limitations {
						fmt.Fprintf(&b, "\n- %s", s)
					}
				}
				return operator.TextResult("list_capabilities", b.String(), map[string]any{"can": about.Capabilities, "cannot": about.Limitations}), nil
			}),
		operator.LocalFunc(operator.LocalInfo{Name: "list_tools", Description: "Lists every tool the agent can use: local tools, operators and MCP tools", InputSchema: noArgs},
			func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
				if c.Provider == nil {
					return nil, fmt.Errorf("list_tools needs the provider it is called through")
				}
				text, err := c.Provider.Text(ctx)
				if err != nil {
					return nil, err
				}
				sums, _ := c.Provider.ToolSummaries(ctx)
				return operator.TextResult("list_tools", strings.TrimSpace(text), sums), nil
			}),
		operator.LocalFunc(operator.LocalInfo{Name: "list_operators", Description: "Lists the registered operators with their type, model and tools", InputSchema: noArgs},
			func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
				if ops == nil {
					return operator.TextResult("list_operators", "No operators are registered.", []operator.Metadata{}), nil
				}
				all := ops.All()
				var b strings.Builder
				for i, m := range all {
					if i > 0 {
						b.WriteByte('\n')
					}
					fmt.Fprintf(&b, "- %s (%s", m.Name, m.Type)
					if m.Model != "" {
						fmt.Fprintf(&b, ", model %s", m.Model)
					}
					if len(m.MCPTools) > 0 {
						fmt.Fprintf(&b, ", tools %s", strings.Join(m.MCPTools, ", "))
					}
					fmt.Fprintf(&b, "): %s", m.Description)
				}
				return operator.TextResult("list_operators", b.String(), all), nil
			}),
	)
}
