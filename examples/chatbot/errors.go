package chatbot

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned for work started after Close.
	ErrClosed = errors.New("chatbot: bot is closed; create a new Bot")
	// ErrUnknownElicitation is returned when an answer names no pending
	// question.
	ErrUnknownElicitation = errors.New("chatbot: no pending elicitation with that id")
	// ErrUnknownStream is returned when a resumption names no resumable
	// turn that is running or ended recently.
	ErrUnknownStream = errors.New("chatbot: no resumable turn with request_id")
	// ErrStopped ends a resumable turn its client stopped with
	// DELETE /api/v1/chat/stream/{request_id}; its stream's last event is
	// an error event with code "cancelled".
	ErrStopped = errors.New("chatbot: the turn was stopped by its client")
	// ErrTurnEnded is returned when DELETE /api/v1/chat/stream/{request_id}
	// names a resumable turn that has already ended: there is nothing to
	// stop, and its stream did not end with a "cancelled" error event.
	ErrTurnEnded = errors.New("chatbot: the turn has already ended, nothing to stop")
	// ErrBusy is returned when a resumable turn cannot start because
	// Config.MaxResumableTurns of them are running.
	ErrBusy = errors.New("chatbot: too busy")
	// ErrNoCognition is returned by the user endpoints of a bot without
	// cognition (Config.Cognition is nil).
	ErrNoCognition = errors.New("chatbot: cognition is off; set Config.Cognition (chatbot serve -cognition)")
	// ErrUnknownUser is returned for a user the bot knows nothing about
	// (of the caller's principal).
	ErrUnknownUser = errors.New("chatbot: nothing is known about user_id")
	// ErrConversationLimit is wrapped by the error of a turn refused
	// because its principal keeps Config.MaxConversations conversations
	// and the turn would start another, or because its conversation keeps
	// Config.MaxConversationTurns turns. Over HTTP it is 429.
	ErrConversationLimit = errors.New("chatbot: conversation limit reached")
	// ErrUnknownConversation is returned for a conversation that has no
	// messages (of the caller's principal).
	ErrUnknownConversation = errors.New("chatbot: no conversation with conversation_id")
)

// RequestError is a chat request that is not valid. Field names the
// offending JSON field.
type RequestError struct {
	Field  string
	Reason string
}

// Error names the request field and what is wrong with it.
func (e *RequestError) Error() string {
	return fmt.Sprintf("chatbot: invalid request: %s: %s", e.Field, e.Reason)
}
