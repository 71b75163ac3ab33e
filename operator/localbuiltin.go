package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// About describes the agent for self_info and list_capabilities.
type About struct {
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

// RegisterLocalBuiltins registers self_info, list_capabilities, list_tools and
// list_operators in r, describing the agent with about.
func RegisterLocalBuiltins(r *LocalRegistry, about About) error {
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	return r.Register(
		LocalFunc(LocalInfo{Name: "self_info", Description: "Tells the agent's name, version, purpose and recent release notes", InputSchema: noArgs},
			func(ctx context.Context, c LocalCall) (*ToolResult, error) {
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
				return TextResult("self_info", b.String(), map[string]any{"name": about.Name, "version": about.Version,
					"description": about.Description, "release_notes": about.ReleaseNotes}), nil
			}),
		LocalFunc(LocalInfo{Name: "list_capabilities", Description: "Lists what the agent can and cannot do", InputSchema: noArgs},
			func(ctx context.Context, c LocalCall) (*ToolResult, error) {
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
				return TextResult("list_capabilities", b.String(), map[string]any{"can": about.Capabilities, "cannot": about.Limitations}), nil
			}),
		LocalFunc(LocalInfo{Name: "list_tools", Description: "Lists every tool the agent can use: local tools, operators and MCP tools", InputSchema: noArgs},
			func(ctx context.Context, c LocalCall) (*ToolResult, error) {
				if c.Provider == nil {
					return nil, fmt.Errorf("list_tools needs the provider it is called through")
				}
				text, err := c.Provider.Text(ctx)
				if err != nil {
					return nil, err
				}
				sums, _ := c.Provider.ToolSummaries(ctx)
				return TextResult("list_tools", strings.TrimSpace(text), sums), nil
			}),
		LocalFunc(LocalInfo{Name: "list_operators", Description: "Lists the registered operators with their type, model and tools", InputSchema: noArgs},
			func(ctx context.Context, c LocalCall) (*ToolResult, error) {
				if c.Provider == nil || c.Provider.cfg.Operators == nil {
					return TextResult("list_operators", "No operators are registered.", []Metadata{}), nil
				}
				all := c.Provider.cfg.Operators.All()
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
				return TextResult("list_operators", b.String(), all), nil
			}),
	)
}
