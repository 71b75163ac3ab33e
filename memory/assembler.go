package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// DefaultBudget is the token budget of an [Assembler] whose
// AssemblerConfig.Budget is zero.
const DefaultBudget = 4000

// EstimateTokens is the default token estimate: one token per four bytes of
// UTF-8, rounded up. It is close for English prose and code with the BPE
// tokenizers of current models (OpenAI, Anthropic, Llama average 3.5 to 4.5
// bytes per token), safe to run offline, and costs nothing. It
// underestimates text in scripts that tokenize densely (Chinese, Japanese,
// emoji: about one token per 3 bytes); give AssemblerConfig.Estimate a real
// tokenizer, or a lower Budget, when that matters.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Priority orders the parts of an assembled context for trimming: parts of
// lower priority are trimmed first. Sources choose the priority of the parts
// they return; see the package documentation for the built-in order.
type Priority int

// Priorities of the built-in sources, from first trimmed to never trimmed.
const (
	// PriorityHistory is the summary of older messages (conversation.summary).
	PriorityHistory Priority = 10
	// PriorityRecent is the recent conversation (conversation.recent).
	PriorityRecent Priority = 20
	// PriorityCatalog is the tool catalogue (tools.summaries).
	PriorityCatalog Priority = 30
	// PriorityTurn is what happened this turn (actions.this_turn,
	// results.all).
	PriorityTurn Priority = 40
	// PriorityRequested is something asked for by name
	// (results.step(ID), tools.schema(NAME)).
	PriorityRequested Priority = 50
	// PriorityPinned parts are never trimmed (query).
	PriorityPinned Priority = 100
)

// Item is one trimmable unit of a [Part]: a message, a result, an action, a
// tool summary.
type Item struct {
	// Text is the item as it goes into a prompt.
	Text string
	// Tokens is the item's estimated size, set by the assembler.
	Tokens int
}

// Part is the content one requirement contributed to an assembled context.
type Part struct {
	// Requirement is the parsed requirement.
	Requirement Requirement
	// Priority orders parts for trimming; lower goes first.
	Priority Priority
	// Items are the part's units, in the order they go into the prompt,
	// which is also the order they are trimmed in: oldest first.
	Items []Item
}

// Text returns the part's items, one per line.
func (p Part) Text() string {
	switch len(p.Items) {
	case 0:
		return ""
	case 1:
		return p.Items[0].Text
	}
	n := len(p.Items) - 1
	for _, it := range p.Items {
		n += len(it.Text)
	}
	var b strings.Builder
	b.Grow(n)
	for i, it := range p.Items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(it.Text)
	}
	return b.String()
}

// Source serves the requirements whose source is its registered name.
// Implementations are safe for concurrent use.
type Source interface {
	// Check reports whether the source can serve req (its method and
	// argument), without fetching anything. Errors say what forms the
	// source accepts.
	Check(req Requirement) error
	// Fetch returns the content for req in turn. It sets the Part's
	// Priority and Items; the assembler fills in the rest.
	Fetch(ctx context.Context, turn *Turn, req Requirement) (Part, error)
}

// SourceFunc adapts a function to the [Source] interface. Its Check accepts
// every requirement; write a type for a source that validates.
type SourceFunc func(ctx context.Context, turn *Turn, req Requirement) (Part, error)

// Check accepts every requirement.
func (f SourceFunc) Check(Requirement) error { return nil }

// Fetch calls f.
func (f SourceFunc) Fetch(ctx context.Context, turn *Turn, req Requirement) (Part, error) {
	return f(ctx, turn, req)
}

// AssemblerConfig configures [NewAssembler].
type AssemblerConfig struct {
	// Conversations serves conversation.recent(N) and conversation.summary.
	// Nil leaves the "conversation" source unregistered.
	Conversations *Conversations
	// Tools serves tools.summaries and tools.schema(NAME). Nil leaves the
	// "tools" source unregistered (register one later with
	// [Assembler.Register] and [ToolSource]).
	Tools Tools
	// Budget is the most estimated tokens an assembled context may hold.
	// Zero means [DefaultBudget] (4000); negative means no limit.
	Budget int
	// Estimate returns the estimated token count of a string. Nil means
	// [EstimateTokens] (four bytes per token).
	Estimate func(string) int
	// Logger receives a debug line for every trimmed context. Nil means no
	// logging.
	Logger *zap.Logger
}

// Assembler builds the focused context a component asks for with
// requirement strings, from sources registered by name. It is safe for
// concurrent use; build one per agent and share it across requests.
type Assembler struct {
	budget   int
	estimate func(string) int
	log      *zap.Logger

	mu      sync.RWMutex
	sources map[string]Source
}

// NewAssembler returns an assembler with the built-in sources: "query",
// "results" and "actions" always, "conversation" and "tools" when cfg
// provides them.
func NewAssembler(cfg AssemblerConfig) *Assembler {
	a := &Assembler{
		budget:   cmpOr(cfg.Budget, DefaultBudget),
		estimate: cfg.Estimate,
		log:      cfg.Logger,
		sources:  make(map[string]Source),
	}
	if a.estimate == nil {
		a.estimate = EstimateTokens
	}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	a.sources["query"] = querySource{}
	a.sources["results"] = resultSource{}
	a.sources["actions"] = actionSource{}
	if cfg.Conversations != nil {
		a.sources["conversation"] = ConversationSource(cfg.Conversations)
	}
	if cfg.Tools != nil {
		a.sources["tools"] = ToolSource(cfg.Tools)
	}
	return a
}

// Budget returns the token budget; negative means no limit.
func (a *Assembler) Budget() int { return a.budget }

// Register adds a source under name, which must be an identifier (a letter
// or '_', then letters, digits or '_') not already registered.
func (a *Assembler) Register(name string, src Source) error {
	if !validName(name) {
		return fmt.Errorf("memory: source name %q is not an identifier; use a letter or '_' followed by letters, digits or '_'", name)
	}
	if src == nil {
		return fmt.Errorf("memory: source %q is nil", name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.sources[name]; dup {
		return fmt.Errorf("memory: a source named %q is already registered; choose another name", name)
	}
	a.sources[name] = src
	return nil
}

// Sources returns the registered source names, sorted.
func (a *Assembler) Sources() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	names := make([]string, 0, len(a.sources))
	for n := range a.sources {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (a *Assembler) source(req Requirement) (Source, error) {
	a.mu.RLock()
	src := a.sources[req.Source]
	a.mu.RUnlock()
	if src != nil {
		return src, nil
	}
	return nil, &RequirementError{Requirement: req.String(), Err: fmt.Errorf(
		"%w %q; registered sources: %s (register one with Assembler.Register)",
		ErrUnknownSource, req.Source, strings.Join(a.Sources(), ", "))}
}

// Check parses every requirement and asks its source whether it can serve
// it, without fetching anything: use it to validate an operator's
// requirements when it is registered. It returns every problem found,
// joined.
func (a *Assembler) Check(reqs ...string) error {
	var errs []error
	for _, s := range reqs {
		if _, _, err := a.prepare(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *Assembler) prepare(s string) (Requirement, Source, error) {
	req, err := ParseRequirement(s)
	if err != nil {
		return req, nil, err
	}
	src, err := a.source(req)
	if err != nil {
		return req, nil, err
	}
	if err := src.Check(req); err != nil {
		return req, nil, wrapReq(req, err)
	}
	return req, src, nil
}

func wrapReq(req Requirement, err error) error {
	if _, ok := errors.AsType[*RequirementError](err); ok {
		return err
	}
	return &RequirementError{Requirement: req.String(), Err: err}
}

// Assembled is a context built by [Assembler.Assemble].
type Assembled struct {
	// Parts hold the content of each requirement, in the order requested
	// (duplicates removed). A part that was trimmed to nothing, or had
	// nothing to say, has no items.
	Parts []Part
	// Tokens is the estimated size of String().
	Tokens int
	// Budget is the budget the context was assembled for; negative means
	// none.
	Budget int
	// Trimmed lists what was removed to fit the budget, in the order it
	// was removed; empty when everything fit.
	Trimmed []Trim
}

// Trim reports what trimming removed from one part.
type Trim struct {
	// Requirement is the part's requirement, canonical form.
	Requirement string
	// Items is how many items were removed, oldest first.
	Items int
	// Tokens is the estimated size removed.
	Tokens int
	// Emptied reports whether the part lost all its items.
	Emptied bool
}

// Part returns the part for requirement req (in any spelling the parser
// accepts).
func (c *Assembled) Part(req string) (Part, bool) {
	r, err := ParseRequirement(req)
	if err != nil {
		return Part{}, false
	}
	for _, p := range c.Parts {
		if p.Requirement == r {
			return p, true
		}
	}
	return Part{}, false
}

// Text returns the text of the part for requirement req, one item per line;
// empty when there is no such part or it has no items.
func (c *Assembled) Text(req string) string {
	p, _ := c.Part(req)
	return p.Text()
}

// String renders the whole context for a prompt: each part with items as a
// "## requirement" heading followed by its items, one per line, parts
// separated by a blank line.
func (c *Assembled) String() string {
	n := 0
	for _, p := range c.Parts {
		if len(p.Items) > 0 {
			n += len(p.Requirement.Source) + len(p.Requirement.Method) + len(p.Requirement.Arg) + 10
			for _, it := range p.Items {
				n += len(it.Text) + 1
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	first := true
	for _, p := range c.Parts {
		if len(p.Items) == 0 {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString("## ")
		b.WriteString(p.Requirement.String())
		b.WriteByte('\n')
		for _, it := range p.Items {
			b.WriteString(it.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Assemble fetches every requirement for turn, in order, and trims the
// result to the token budget. A requirement that does not parse, names an
// unregistered source or fails to fetch stops assembly with an error naming
// it ([*SyntaxError], [*RequirementError]). Duplicate requirements are
// fetched once. Sources are called one after another in the caller's
// goroutine, and Assemble stops between them when ctx is done.
//
// Trimming removes items from the part of lowest [Priority] first (among
// equal priorities, the part requested last), oldest item first, until the
// context fits; pinned parts (the query) are never trimmed, and if they
// alone exceed the budget Assemble returns a [*BudgetError].
//
// Sizes: each item costs Estimate(text)+1 and each non-empty part
// Estimate(requirement)+2, which covers the separators String adds, so
// with the default estimate EstimateTokens(String()) <= Tokens <= Budget.
func (a *Assembler) Assemble(ctx context.Context, turn *Turn, reqs ...string) (*Assembled, error) {
	if turn == nil {
		return nil, errors.New("memory: Assemble needs a turn; create one with memory.NewTurn")
	}
	out := &Assembled{Parts: make([]Part, 0, len(reqs)), Budget: a.budget}
	headers := make([]int, 0, len(reqs))
	for _, s := range reqs {
		req, src, err := a.prepare(s)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out.Parts, func(p Part) bool { return p.Requirement == req }) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := src.Fetch(ctx, turn, req)
		if err != nil {
			return nil, wrapReq(req, err)
		}
		p.Requirement = req
		h := 0
		if len(p.Items) > 0 {
			h = a.estimate(req.String()) + 2
		}
		out.Tokens += h
		for i := range p.Items {
			p.Items[i].Tokens = a.estimate(p.Items[i].Text) + 1
			out.Tokens += p.Items[i].Tokens
		}
		out.Parts = append(out.Parts, p)
		headers = append(headers, h)
	}
	if a.budget < 0 || out.Tokens <= a.budget {
		return out, nil
	}
	a.trim(out, headers)
	if out.Tokens > a.budget {
		return nil, &BudgetError{Budget: a.budget, Needed: out.Tokens}
	}
	a.log.Debug("memory: context trimmed to fit the token budget",
		zap.Int("budget", a.budget), zap.Int("tokens", out.Tokens), zap.Int("parts_trimmed", len(out.Trimmed)))
	return out, nil
}

// trim removes items until out fits the budget or only pinned parts are
// left.
func (a *Assembler) trim(out *Assembled, headers []int) {
	order := make([]int, 0, len(out.Parts))
	for i, p := range out.Parts {
		if p.Priority < PriorityPinned && len(p.Items) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if px, py := out.Parts[x].Priority, out.Parts[y].Priority; px != py {
			return int(px - py)
		}
		return y - x // later requirement first
	})
	for _, i := range order {
		if out.Tokens <= a.budget {
			return
		}
		p := &out.Parts[i]
		t := Trim{Requirement: p.Requirement.String()}
		for len(p.Items) > 0 && out.Tokens > a.budget {
			t.Items++
			t.Tokens += p.Items[0].Tokens
			out.Tokens -= p.Items[0].Tokens
			p.Items = p.Items[1:]
		}
		if len(p.Items) == 0 {
			t.Emptied = true
			t.Tokens += headers[i]
			out.Tokens -= headers[i]
			p.Items = nil
		}
		out.Trimmed = append(out.Trimmed, t)
	}
}
