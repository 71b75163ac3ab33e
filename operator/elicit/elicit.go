// Package elicit defines a question for the user asked in the middle of a
// tool call, and its answer, whoever asks: an operator (a confirmation or a
// choice) or an MCP server (an elicitation request).
//
// A [Request] carries the question, a [Response] the user's answer: an
// [Action] (accept, decline or cancel, as in MCP) and, when accepted, the
// content. The question's ElicitationID ties the two together. An
// [Elicitor] asks a question and waits for its answer; [Func] makes one of
// a function.
//
// The package imports only the standard library, so that the MCP client
// (package mcp) and the operator layer (package operator) share it without
// depending on each other.
package elicit

import (
	"context"
	"encoding/json"
)

// Action is what the user did with a question.
type Action string

// The actions, as in MCP.
const (
	// Accept: the user answered; Response.Content holds the answer.
	Accept Action = "accept"
	// Decline: the user said no.
	Decline Action = "decline"
	// Cancel: the user dismissed the question without choosing.
	Cancel Action = "cancel"
)

// Valid reports whether a is [Accept], [Decline] or [Cancel].
func (a Action) Valid() bool { return a == Accept || a == Decline || a == Cancel }

// Request is a question for the user.
type Request struct {
	// ElicitationID identifies the question; its answer carries it. It may
	// be empty on a server's request; whoever relays the question to a
	// user sets one.
	ElicitationID string `json:"elicitation_id"`
	// Server is the MCP server that asks, if one does.
	Server string `json:"server,omitempty"`
	// Tool is the tool or operator that asks; empty when the question
	// could not be tied to a call.
	Tool string `json:"tool,omitempty"`
	// Message tells the user what is asked and why.
	Message string `json:"message"`
	// Mode is "form" (answer with Content matching Schema) or "url" (send
	// the user to URL; answer Accept when they are done). Empty means
	// "form".
	Mode string `json:"mode,omitempty"`
	// Options lists the allowed answers of a choice, if it is one.
	Options []string `json:"options,omitempty"`
	// Schema is the JSON Schema of a structured answer, if any: a flat
	// object of primitive properties, possibly with defaults.
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is where the user is sent in "url" mode.
	URL string `json:"url,omitempty"`
}

// Response is the user's answer to a [Request].
type Response struct {
	ElicitationID string `json:"elicitation_id"`
	// Action is Accept, Decline or Cancel.
	Action Action `json:"action"`
	// Content is the answer when Action is Accept.
	Content map[string]any `json:"content,omitempty"`
}

// Elicitor asks the user a question and waits for the answer, until the
// user answers, declines or cancels, or ctx ends. The answer carries the
// request's ElicitationID.
type Elicitor interface {
	Elicit(ctx context.Context, req Request) (Response, error)
}

// Func is an [Elicitor] that is a function.
type Func func(ctx context.Context, req Request) (Response, error)

// Elicit calls f.
func (f Func) Elicit(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
