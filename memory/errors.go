package memory

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Conditions a caller branches on with [errors.Is].
var (
	// ErrEmptyID is returned for a conversation id that is the empty string.
	ErrEmptyID = errors.New("memory: conversation id is empty; pass the id that names the conversation")
	// ErrSummaryConflict is returned by [Store.SaveSummary] when the stored
	// summary no longer covers the messages the caller read: another writer
	// folded messages into it first. Reload and try again, or leave the
	// messages for the next fold.
	ErrSummaryConflict = errors.New("memory: summary changed since it was read")
	// ErrNotFound is matched by the error the assembler returns when a
	// requirement names something that is not there this turn (a step with
	// no result, a tool the catalogue does not know), and by the error of
	// [Items.Get] for a record that is missing or has expired.
	ErrNotFound = errors.New("memory: not found")
	// ErrUnknownSource is matched by the error the assembler returns for a
	// requirement whose source is not registered.
	ErrUnknownSource = errors.New("memory: unknown context source")
	// ErrOverBudget is matched by the error the assembler returns when the
	// parts it may not trim (the query) alone exceed the token budget.
	ErrOverBudget = errors.New("memory: context over token budget")
)

// SyntaxError reports a requirement string that does not follow the
// requirements grammar (see the package documentation).
type SyntaxError struct {
	// Requirement is the string as given.
	Requirement string
	// Offset is the byte offset in Requirement where parsing failed; it
	// equals len(Requirement) when the string ended too early.
	Offset int
	// Expected says what the parser expected at Offset.
	Expected string
}

// Error returns `memory: bad requirement "conversation.recent(5": at byte 21:
// expected ")" to close the argument; the form is source, source.method or
// source.method(argument)`.
func (e *SyntaxError) Error() string {
	found := "end of input"
	if e.Offset < len(e.Requirement) {
		r, size := utf8.DecodeRuneInString(e.Requirement[e.Offset:])
		if r == utf8.RuneError && size == 1 {
			found = fmt.Sprintf("byte 0x%02x", e.Requirement[e.Offset])
		} else {
			found = strconv.QuoteRune(r)
		}
	}
	return fmt.Sprintf("memory: bad requirement %q: at byte %d: expected %s, found %s; the form is source, source.method or source.method(argument)",
		e.Requirement, e.Offset, e.Expected, found)
}

// RequirementError reports a well-formed requirement that its source cannot
// serve: an unknown source or method, a bad argument, or a failed fetch.
type RequirementError struct {
	// Requirement is the requirement in canonical form.
	Requirement string
	// Err says what went wrong; it may match [ErrUnknownSource] or
	// [ErrNotFound].
	Err error
}

// Error returns "memory: requirement "results.step(step_9)": <Err>".
func (e *RequirementError) Error() string {
	msg := e.Err.Error()
	msg = strings.TrimPrefix(msg, "memory: ")
	return "memory: requirement " + strconv.Quote(e.Requirement) + ": " + msg
}

// Unwrap returns Err.
func (e *RequirementError) Unwrap() error { return e.Err }

// SummarizeError is returned by [Conversations.Append] when the messages
// were stored but folding those that left the window into the summary
// failed. The messages are not lost: they stay in the store, the assembled
// summary shows them verbatim, and the next append (or
// [Conversations.Summarize]) tries again. Do not repeat the Append.
type SummarizeError struct {
	// ConversationID names the conversation.
	ConversationID string
	// Pending is the number of messages waiting to be summarized; 0 when
	// the failure came before they were counted.
	Pending int
	// Err is the summarizer's error.
	Err error
}

// Error says what failed and that nothing was lost.
func (e *SummarizeError) Error() string {
	if e.Pending == 0 {
		return fmt.Sprintf("memory: the messages of conversation %q were stored, but summarizing failed; messages that left the window are kept and will be folded into the summary on a later append: %v",
			e.ConversationID, e.Err)
	}
	return fmt.Sprintf("memory: summarizing %d messages of conversation %q failed; they are kept and will be folded into the summary on a later append: %v",
		e.Pending, e.ConversationID, e.Err)
}

// Unwrap returns Err.
func (e *SummarizeError) Unwrap() error { return e.Err }

// BudgetError is returned by [Assembler.Assemble] when the parts that are
// never trimmed (the query) alone need more tokens than the budget. It
// matches [ErrOverBudget].
type BudgetError struct {
	// Budget is the configured budget in estimated tokens.
	Budget int
	// Needed is the estimate for the untrimmable parts.
	Needed int
}

// Error says how far over the budget the context is and what to do.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("memory: the query alone needs ~%d tokens, more than the budget of %d; raise AssemblerConfig.Budget or shorten the query",
		e.Needed, e.Budget)
}

// Is reports whether target is [ErrOverBudget].
func (e *BudgetError) Is(target error) bool { return target == ErrOverBudget }
