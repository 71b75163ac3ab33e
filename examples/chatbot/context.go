package chatbot

import (
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// newAssembler returns the context assembler of the bot's operators: the
// conversation (conversation.recent(N), conversation.summary) from the
// bot's conversations, the turn's query, results and actions, and
// tools.summaries and tools.schema(NAME) from the tool provider, which is
// given to the assembler once it exists (the provider needs the assembler
// in its Config, so the assembler is built first).
func newAssembler(convs *memory.Conversations, cfg Config) *memory.Assembler {
	return memory.NewAssembler(memory.AssemblerConfig{Conversations: convs, Logger: cfg.Logger})
}

// serveTools registers p as asm's "tools" source.
func serveTools(asm *memory.Assembler, p *operator.Provider) error {
	if err := asm.Register("tools", memory.ToolSource(p)); err != nil {
		return fmt.Errorf("chatbot: context assembler: %w", err)
	}
	return nil
}

// checkRequirements reports, at startup, every operator whose
// ContextRequirements the assembler cannot serve (a syntax error, a source
// that is not registered, a method the source does not have), so that a
// misconfigured operator stops New instead of failing each call.
func checkRequirements(ops *operator.Registry, asm *memory.Assembler) error {
	var errs []error
	for _, m := range ops.All() {
		if err := asm.Check(m.ContextRequirements...); err != nil {
			errs = append(errs, fmt.Errorf("operator %s: Metadata.ContextRequirements: %w", m.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chatbot: operators need context the assembler cannot give; fix their ContextRequirements: %w", err)
	}
	return nil
}
