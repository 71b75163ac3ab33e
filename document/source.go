package document

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/memory"
)

// ContextSource returns a memory.Source that serves a conversation's
// documents to a [memory.Assembler]; register it under "documents":
//
//	asm.Register("documents", document.ContextSource(store, 2000))
//
// It serves two requirements:
//
//   - documents.summaries: one [Describe] line per document of the turn's
//     conversation, so the model can decide which to load (priority
//     memory.PriorityTurn: trimmed after the conversation and the tool
//     catalogue, since the model should check documents first).
//   - documents.load(ID): the document's text, chunks ranked by relevance
//     to the turn's query and kept within loadBudget tokens (zero or
//     negative: the whole document), in document order (priority
//     memory.PriorityRequested). A document that is not ready yields a
//     line saying so (pending, processing, or failed and why) instead of
//     its text; an id the turn's conversation does not hold is an error
//     matching memory.ErrNotFound.
func ContextSource(s Store, loadBudget int) memory.Source {
	return contextSource{s: s, budget: loadBudget}
}

type contextSource struct {
	s      Store
	budget int
}

func (contextSource) Check(req memory.Requirement) error {
	switch {
	case req.Method == "summaries" && !req.HasArg:
		return nil
	case req.Method == "load" && req.HasArg && req.Arg != "":
		return nil
	}
	return fmt.Errorf(`the documents source serves documents.summaries and documents.load(ID); got %q`, req.String())
}

func (c contextSource) Fetch(ctx context.Context, turn *memory.Turn, req memory.Requirement) (memory.Part, error) {
	if turn.ConversationID == "" {
		return memory.Part{}, errors.New("the turn has no ConversationID; create it with memory.NewTurn(conversationID, query)")
	}
	if req.Method == "summaries" {
		docs, err := c.s.List(ctx, turn.ConversationID)
		if err != nil {
			return memory.Part{}, err
		}
		p := memory.Part{Priority: memory.PriorityTurn, Items: make([]memory.Item, len(docs))}
		for i, d := range docs {
			p.Items[i].Text = Describe(d)
		}
		return p, nil
	}
	doc, err := c.s.Get(ctx, req.Arg)
	if err == nil && doc.ConversationID != turn.ConversationID {
		err = notFound(req.Arg)
	}
	if errors.Is(err, ErrNotFound) {
		return memory.Part{}, fmt.Errorf("%w: conversation %q has no document %q; see documents.summaries for the ids", memory.ErrNotFound, turn.ConversationID, req.Arg)
	}
	if err != nil {
		return memory.Part{}, err
	}
	if doc.Status != StatusReady {
		// Say so in the context rather than fail the whole assembly: the
		// reader decides whether to wait.
		note := fmt.Sprintf("Document %q (id %s) is %s; its content is not loaded yet.", doc.Name, doc.ID, doc.Status)
		if doc.Status == StatusFailed {
			note = fmt.Sprintf("Document %q (id %s) could not be processed (%s); its content is not available.", doc.Name, doc.ID, doc.Error)
		}
		return memory.Part{Priority: memory.PriorityRequested, Items: []memory.Item{{Text: note}}}, nil
	}
	l, err := Load(ctx, c.s, req.Arg, LoadOptions{Query: turn.Query, Budget: c.budget})
	if err != nil {
		return memory.Part{}, err
	}
	head := fmt.Sprintf("Document %q (id %s", l.Document.Name, l.Document.ID)
	if !l.Complete {
		head += fmt.Sprintf(", %d of %d chunks, the most relevant", len(l.Chunks), l.Document.Chunks)
	}
	return memory.Part{Priority: memory.PriorityRequested, Items: []memory.Item{{Text: head + "):\n" + l.Text()}}}, nil
}
