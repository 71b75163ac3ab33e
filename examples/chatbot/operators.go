package chatbot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
)

// mcpSeparator joins a server and its tool in a qualified tool name, as
// the bot's mcp.Registry does (mcp.RegistryConfig.Separator's default).
const mcpSeparator = "__"

// bundledServers returns the bundled MCP servers that run: none with
// Config.NoBundledServers, those Config.BundledServers names, or all.
func (b *Bot) bundledServers() ([]mcpservers.Server, error) {
	all := mcpservers.Bundled()
	if b.cfg.NoBundledServers {
		return nil, nil
	}
	if b.cfg.BundledServers == nil {
		return all, nil
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	var out []mcpservers.Server
	for _, want := range b.cfg.BundledServers {
		i := slices.IndexFunc(all, func(s mcpservers.Server) bool { return s.Name == want })
		if i < 0 {
			return nil, fmt.Errorf("chatbot: Config.BundledServers: %q is not a bundled server; the bundled servers are %s", want, strings.Join(names, ", "))
		}
		if !slices.ContainsFunc(out, func(s mcpservers.Server) bool { return s.Name == want }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// builtinTool names a tool of a bundled server as the built-in operators
// call it: qualified by the server while that server runs, so that
// another server offering a tool of the same name (which makes the bare
// name ambiguous) does not break them; the bare name otherwise, for a
// server of the user's that offers it.
func (b *Bot) builtinTool(server, tool string) string {
	if slices.Contains(b.bundled, server) {
		return server + mcpSeparator + tool
	}
	return tool
}

// registerBuiltins registers package operator's built-in operators, on
// the bundled servers' tools (see builtinTool). A built-in operator whose
// tools no server offers (its bundled server left out and no other server
// offering the tool) is left out, and logged, rather than advertised by
// list_operators and failing when called.
func (b *Bot) registerBuiltins(ctx context.Context) error {
	all := operator.NewRegistry(operator.Deps{})
	err := operator.RegisterBuiltins(all, operator.BuiltinConfig{
		FastModel: b.cfg.FastModel, SmartModel: b.cfg.WriterModel,
		RAGSearchTool: b.builtinTool("knowledge", "search_knowledge"),
		WebSearchTool: b.builtinTool("websearch", "web_search"),
		// The calculator server's run_code runs Python-like (Starlark)
		// code; coder has no other language here.
		CodeTools: map[string]string{"python": b.builtinTool("calculator", "run_code")},
	})
	if err != nil {
		return fmt.Errorf("chatbot: registering operators: %w", err)
	}
	for _, m := range all.All() {
		if missing, sure := b.missingMCPTools(ctx, m.MCPTools); len(missing) > 0 && sure {
			b.log.Info("chatbot: a built-in operator is left out: no MCP server offers its tools",
				zap.String("operator", m.Name), zap.Strings("tools", missing))
			continue
		}
		name := m.Name
		err := b.ops.Register(m, func(d operator.Deps) (operator.Operator, error) {
			op, _, err := all.WithDeps(d).New(name)
			return op, err
		})
		if err != nil {
			return fmt.Errorf("chatbot: registering operator %s: %w", name, err)
		}
	}
	return nil
}

// missingMCPTools returns the names among tools that no MCP server
// offers, and whether that is sure: false when a server could not be
// reached to list its tools.
func (b *Bot) missingMCPTools(ctx context.Context, tools []string) (missing []string, sure bool) {
	for _, t := range tools {
		if _, _, err := b.mcpReg.Resolve(ctx, t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil, true
	}
	for _, h := range b.mcpReg.Health() {
		if !h.Available() {
			return missing, false
		}
	}
	return missing, true
}

// checkOperatorTools checks that every tool an operator declares
// (Metadata.MCPTools, which list_operators advertises) exists: a local
// tool, an operator, or an MCP tool one server offers. It fails naming
// each operator, its missing tool and the fix; a name several servers
// offer fails naming them. While an MCP server cannot be reached, a tool
// that may be its is logged, not refused.
func (b *Bot) checkOperatorTools(ctx context.Context) error {
	var errs []error
	for _, m := range b.ops.All() {
		for _, t := range m.MCPTools {
			_, err := b.provider.Lookup(ctx, t)
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var amb *mcp.AmbiguousToolError
			if _, _, rerr := b.mcpReg.Resolve(ctx, t); errors.As(rerr, &amb) {
				errs = append(errs, fmt.Errorf("operator %s calls tool %q, which several MCP servers offer; name one of %s in its Metadata.MCPTools, or rename the tool on one server",
					m.Name, t, strings.Join(amb.Qualified, ", ")))
				continue
			}
			if _, sure := b.missingMCPTools(ctx, []string{t}); !sure {
				b.log.Warn("chatbot: an operator's tool is not offered now; an MCP server cannot be reached",
					zap.String("operator", m.Name), zap.String("tool", t))
				continue
			}
			errs = append(errs, fmt.Errorf("operator %s calls tool %q, which no MCP server offers; add the server that offers it (Config.MCPServers or MCPConfigPath), correct Metadata.MCPTools, or leave the operator out",
				m.Name, t))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chatbot: operators call tools that do not exist: %w", err)
	}
	return nil
}
