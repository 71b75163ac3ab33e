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
// written at most once, by one call: one text part, and the text's bytes
// twice, as the result's Structured JSON (which the result's holder may
// modify) and as the part's text (which nothing modifies after the call).
// A Room must be zero when given to a call: a tool given a Room already
// written leaves it as it is and allocates the result's content, so that
// the text of an earlier result never changes.
type Room struct {
	Parts [1]model.Part
	Raw   [TextLen]byte
	Text  [TextLen]byte
}

// Into is a tool whose result can be written into storage its caller owns.
// Only a tool whose results may fit a [Room] implements it: a caller gives
// room to the tools that do, and to no other, which would leave it unused.
type Into interface {
	// CallInto runs the tool as Call does and, where Call returns a
	// result, writes the same result to *res, using room, which must be
	// zero, for a small result's content (which then stays in room: the
	// caller keeps room as long as res); room may be nil, and the result
	// is then allocated as Call's. The result's Content and
	// Structured are then what Call's would be: the caller may clip them
	// as it would Call's. An error is returned as Call returns it, and
	// *res and room are then left as they were. CallInto is safe for
	// concurrent use as Call is, each call with its own res and room.
	CallInto(ctx context.Context, args json.RawMessage, res *model.ToolResult, room *Room) error
}
