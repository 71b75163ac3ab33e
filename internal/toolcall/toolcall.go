// Package toolcall lets a caller of tools and the tools it calls share the
// storage of a call's result. A tool that implements [Into] writes its
// result into the caller's [model.ToolResult], and a short text into the
// caller's [Room], so that a call whose caller holds both in one allocation
// (the prebuilt agent's tool message) allocates nothing more for a small
// result, where Call would allocate the result apart.
package toolcall

import (
	"context"
	"encoding/json"

	"github.com/agentgraph/agentgraph/agent/model"
)

// TextLen is the longest text a [Room] holds: the JSON of any value of a
// predeclared integer type or a bool ("-9223372036854775808",
// "18446744073709551615").
const TextLen = 20

// Room is storage for a small result's content, owned by the caller and
// written once by the tool: one text part, and the text's bytes twice, as
// the result's Structured JSON (which the result's holder may modify) and
// as the part's text (which nothing modifies after the call).
type Room struct {
	Parts [1]model.Part
	Raw   [TextLen]byte
	Text  [TextLen]byte
}

// Into is a tool whose result can be written into storage its caller owns.
type Into interface {
	// CallInto runs the tool as Call does and, where Call returns a
	// result, writes it to *res, using room for a small result's content
	// (which then stays in room: the caller must keep room as long as
	// res). An error is returned as Call returns it, and *res is then
	// left as it was.
	CallInto(ctx context.Context, args json.RawMessage, res *model.ToolResult, room *Room) error
}
