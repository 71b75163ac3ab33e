package cognition

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/memory"
)

type userKey struct{}

// WithUser returns a copy of ctx that names the user of the current turn,
// for the source of [Service.Source].
func WithUser(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

// UserFrom returns the user named by [WithUser], if any.
func UserFrom(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(userKey{}).(string)
	return u, ok && u != ""
}

// Priorities of the parts [Service.Source] returns, against those of
// package memory: memories are trimmed after the conversation summary and
// before the recent messages; the identity with the tool catalogue; the
// profile, small and always relevant, last among them.
const (
	PriorityMemories = memory.PriorityHistory + 5
	PriorityIdentity = memory.PriorityCatalog
	PriorityProfile  = memory.PriorityRequested
)

// Source returns a [memory.Source] for an [memory.Assembler], to register
// under a name of your choice (the requirements below assume "cognition"):
//
//	cognition.profile        the user's profile, a fact per item
//	cognition.memories(N)    the user's N episodes most relevant to the
//	                         turn's query (N omitted: Config.Memories)
//	cognition.identity       the agent's identity
//
// The user comes from the context given to Assemble: set it with
// [WithUser]. Memories are items in increasing order of relevance, so
// that trimming to the token budget drops the least relevant first. Like
// [Service.Context], fetching reads only the store, within
// Config.ContextTimeout.
func (s *Service) Source() memory.Source { return source{s} }

type source struct{ s *Service }

func (source) Check(req memory.Requirement) error {
	switch req.Method {
	case "profile", "identity":
		if req.HasArg {
			return fmt.Errorf("%s takes no argument; write %q", req.Method, req.Source+"."+req.Method)
		}
		return nil
	case "memories":
		_, err := memoriesArg(req)
		return err
	}
	return fmt.Errorf("the cognition source has no method %q; use profile, memories(N) or identity", req.Method)
}

func memoriesArg(req memory.Requirement) (int, error) {
	if !req.HasArg {
		return 0, nil
	}
	n, err := strconv.Atoi(req.Arg)
	if err != nil || n < 1 || n > 1000 {
		return 0, fmt.Errorf("memories takes an episode count from 1 to 1000, e.g. %s.memories(5); got %q", req.Source, req.Arg)
	}
	return n, nil
}

// lines returns the lines of a rendering without its heading and bullets.
func lines(rendered string) []memory.Item {
	ls := strings.Split(rendered, "\n")
	if len(ls) < 2 {
		return nil
	}
	items := make([]memory.Item, 0, len(ls)-1)
	for _, l := range ls[1:] {
		items = append(items, memory.Item{Text: strings.TrimPrefix(l, "- ")})
	}
	return items
}

func (src source) Fetch(ctx context.Context, turn *memory.Turn, req memory.Requirement) (memory.Part, error) {
	s := src.s
	user, ok := UserFrom(ctx)
	if !ok {
		return memory.Part{}, errors.New("no user in the context; pass cognition.WithUser(ctx, userID) to Assemble")
	}
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	switch req.Method {
	case "profile":
		p, err := s.store.Profile(ctx, user)
		if err != nil {
			return memory.Part{}, err
		}
		return memory.Part{Priority: PriorityProfile, Items: lines(p.Render())}, nil
	case "identity":
		id, err := s.identity(ctx)
		if err != nil {
			return memory.Part{}, err
		}
		return memory.Part{Priority: PriorityIdentity, Items: lines(id.Render())}, nil
	case "memories":
		n, err := memoriesArg(req)
		if err != nil {
			return memory.Part{}, err
		}
		if n == 0 {
			n = s.memories
		}
		got, err := s.recall(ctx, user, turn.Query, n)
		if err != nil {
			return memory.Part{}, err
		}
		p := memory.Part{Priority: PriorityMemories, Items: make([]memory.Item, len(got))}
		for i, r := range got {
			p.Items[len(got)-1-i].Text = episodeLine(&r.Episode)
		}
		return p, nil
	}
	return memory.Part{}, src.Check(req)
}
