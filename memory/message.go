package memory

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/internal/storeid"
)

// Role says who wrote a [Message].
type Role string

// Roles of the messages in a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
type Message struct {
	// Seq is the message's position in its conversation: 1 for the first
	// message, then consecutive. A [Store] assigns it on Append; any value
	// set by the caller is ignored.
	Seq int64
	// Role says who wrote the message. Required.
	Role Role
	// Name optionally names the author within its role: a tool's name, a
	// user's display name.
	Name string
	// Content is the message text. It may be empty.
	Content string
	// Time is when the message was written. A Store sets it to the current
	// time on Append when it is zero. SQL stores keep microsecond precision.
	Time time.Time
}

// String renders the message as one line of a transcript: "user: hello",
// or "tool web_search: 3 results" when Name is set.
func (m Message) String() string {
	var b strings.Builder
	b.Grow(len(m.Role) + len(m.Name) + len(m.Content) + 3)
	b.WriteString(string(m.Role))
	if m.Name != "" {
		b.WriteByte(' ')
		b.WriteString(m.Name)
	}
	b.WriteString(": ")
	b.WriteString(m.Content)
	return b.String()
}

// ValidateAppend checks the arguments of a [Store.Append] call: a non-empty
// conversation id and a Role on every message. Store implementations call it
// first so that every store rejects the same input with the same errors.
func ValidateAppend(conversationID string, msgs []Message) error {
	if err := ValidateID(conversationID); err != nil {
		return err
	}
	for i, m := range msgs {
		if m.Role == "" {
			return fmt.Errorf("memory: message %d of %d has an empty Role; set it to memory.RoleUser, RoleAssistant, RoleSystem, RoleTool or a role of your own", i+1, len(msgs))
		}
	}
	return nil
}

// MaxIDBytes bounds a conversation id, as document.MaxIDBytes.
const MaxIDBytes = storeid.MaxBytes

// ValidateID checks a conversation id: it must not be empty (ErrEmptyID)
// and must be UTF-8 without NUL bytes of at most [MaxIDBytes], which every
// store holds alike (a [*ValidationError] otherwise). [Store.Delete]
// accepts any non-empty id, so that a conversation stored before the check
// can still be removed.
func ValidateID(conversationID string) error {
	switch {
	case conversationID == "":
		return ErrEmptyID
	case storeid.Problem(conversationID) != "":
		return invalid("conversation id", "%s", storeid.Problem(conversationID))
	}
	return nil
}
