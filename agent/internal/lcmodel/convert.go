package lcmodel

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Dialect says which provider's langchaingo client a request goes to, for
// the quirks each has.
type Dialect uint8

// The dialects.
const (
	// Generic is any llms.Model: OpenAI-like message shapes, first choice
	// of a response.
	Generic Dialect = iota
	// OpenAI is langchaingo's openai client (also for OpenAI-compatible
	// servers).
	OpenAI
	// Anthropic is langchaingo's anthropic client: one content block per
	// assistant message, one choice per content block in responses.
	Anthropic
	// Ollama is langchaingo's ollama client (native API).
	Ollama
)

// emptyObjectSchema is the parameters schema of a tool without arguments;
// Anthropic requires an input schema for every tool.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Messages converts a conversation into langchaingo messages for dialect d.
//
// Every tool result becomes its own tool message (langchaingo's OpenAI and
// Anthropic clients read one part per tool message). For Anthropic every
// text and tool call of an assistant message becomes its own assistant
// message (its client reads the first part only; the API joins consecutive
// turns of one role). Thinking parts are not sent: langchaingo has no part
// type for them (see package provider's documentation).
func Messages(msgs []model.Message, d Dialect) ([]llms.MessageContent, error) {
	out := make([]llms.MessageContent, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case model.RoleSystem:
			if t := m.Text(); t != "" {
				out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, t))
			}
		case model.RoleUser:
			parts := make([]llms.ContentPart, 0, len(m.Parts))
			for _, p := range m.Parts {
				switch p.Kind {
				case model.PartText:
					parts = append(parts, llms.TextContent{Text: p.Text})
				case model.PartBinary:
					switch {
					case len(p.Data) > 0:
						parts = append(parts, llms.BinaryContent{MIMEType: p.MIMEType, Data: p.Data})
					case p.URL != "" && d != Anthropic:
						parts = append(parts, llms.ImageURLContent{URL: p.URL})
					case p.URL != "":
						return nil, fmt.Errorf("message %d: binary part by URL %q: the Anthropic adapter sends images inline only; set Part.Data", i, p.URL)
					default:
						return nil, fmt.Errorf("message %d: binary part has neither Data nor URL", i)
					}
				default:
					return nil, fmt.Errorf("message %d: a user message cannot hold a %s part", i, p.Kind)
				}
			}
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: parts})
		case model.RoleAssistant:
			var parts []llms.ContentPart
			for _, p := range m.Parts {
				switch p.Kind {
				case model.PartText:
					if p.Text != "" {
						parts = append(parts, llms.TextContent{Text: p.Text})
					}
				case model.PartToolCall:
					if p.ToolCall == nil {
						return nil, fmt.Errorf("message %d: tool call part without ToolCall", i)
					}
					args := string(p.ToolCall.Arguments)
					if args == "" {
						args = "{}"
					}
					parts = append(parts, llms.ToolCall{ID: p.ToolCall.ID, Type: "function",
						FunctionCall: &llms.FunctionCall{Name: p.ToolCall.Name, Arguments: args}})
				case model.PartThinking:
					// Not carried: langchaingo has no thinking part.
				default:
					return nil, fmt.Errorf("message %d: an assistant message cannot hold a %s part", i, p.Kind)
				}
			}
			if len(parts) == 0 {
				continue
			}
			if d == Anthropic {
				for _, p := range parts {
					out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{p}})
				}
				continue
			}
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
		case model.RoleTool:
			for _, p := range m.Parts {
				if p.Kind != model.PartToolResult || p.ToolResult == nil {
					return nil, fmt.Errorf("message %d: a tool message holds only tool results, not %s", i, p.Kind)
				}
				out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
					llms.ToolCallResponse{ToolCallID: p.ToolResult.CallID, Name: p.ToolResult.Name, Content: ResultText(*p.ToolResult)}}})
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q: use system, user, assistant or tool", i, m.Role)
		}
	}
	return out, nil
}

// ResultText is the text a model reads for a tool result: its text parts,
// each binary part described in a note (as "[image/png, 2048 bytes, not
// shown]": langchaingo's tool responses carry text only, and a result that
// is an image is not an empty one), else its structured JSON; a failed
// call is prefixed with "error: " since langchaingo carries no error flag.
func ResultText(r model.ToolResult) string {
	var b strings.Builder
	noted := false // a note ended b: text that follows starts a line
	for _, p := range r.Content {
		switch p.Kind {
		case model.PartText:
			if noted && p.Text != "" {
				b.WriteByte('\n')
				noted = false
			}
			b.WriteString(p.Text)
		case model.PartBinary:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			mt := cmp.Or(p.MIMEType, "application/octet-stream")
			if p.URL != "" && len(p.Data) == 0 {
				fmt.Fprintf(&b, "[%s at %s, not shown]", mt, p.URL)
			} else {
				fmt.Fprintf(&b, "[%s, %d bytes, not shown]", mt, len(p.Data))
			}
			noted = true
		}
	}
	t := b.String()
	if t == "" && len(r.Structured) > 0 {
		t = string(r.Structured)
	}
	if r.IsError && !strings.HasPrefix(strings.ToLower(t), "error") {
		t = "error: " + t
	}
	return t
}

// DefaultMaxTokens is the answer cap of requests without MaxTokens where the
// provider needs one (Anthropic).
const DefaultMaxTokens = 4096

// Options converts a request's settings into langchaingo call options for
// dialect d and the provider model id.
func Options(req *model.Request, d Dialect, id string) []llms.CallOption {
	opts := make([]llms.CallOption, 0, 8)
	opts = append(opts, llms.WithModel(id))
	maxTokens := req.MaxTokens
	if maxTokens <= 0 && d == Anthropic {
		maxTokens = DefaultMaxTokens
	}
	thinking := req.Thinking != nil && !req.Thinking.Disabled && req.Thinking.Budget > 0
	if thinking {
		opts = append(opts, llms.WithThinkingBudget(req.Thinking.Budget))
		if maxTokens > 0 || d == Anthropic {
			// Anthropic counts thinking within max_tokens, which must exceed the budget.
			maxTokens += req.Thinking.Budget
		}
	}
	if maxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(maxTokens))
	}
	switch {
	case thinking && d == Anthropic:
		opts = append(opts, llms.WithTemperature(1)) // Anthropic requires 1 while thinking
	case req.Temperature != nil:
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	return Extras(opts, req)
}

// Extras appends to opts the call options of a request's stop sequences,
// response format, tools and tool choice.
func Extras(opts []llms.CallOption, req *model.Request) []llms.CallOption {
	if len(req.Stop) > 0 {
		opts = append(opts, llms.WithStopWords(req.Stop))
	}
	if req.ResponseFormat != nil {
		opts = append(opts, llms.WithJSONMode())
	}
	if len(req.Tools) > 0 {
		opts = append(opts, llms.WithTools(Tools(req.Tools)))
		if tc := toolChoice(req.ToolChoice); tc != nil {
			opts = append(opts, llms.WithToolChoice(tc))
		}
	}
	return opts
}

// DialectOf returns the dialect of a langchaingo model by its type.
func DialectOf(m llms.Model) Dialect {
	switch m.(type) {
	case *openai.LLM:
		return OpenAI
	case *anthropic.LLM:
		return Anthropic
	case *ollama.LLM:
		return Ollama
	}
	return Generic
}

// Tools converts tool definitions.
func Tools(defs []model.ToolDef) []llms.Tool {
	tools := make([]llms.Tool, len(defs))
	for i, t := range defs {
		params := t.Parameters
		if len(params) == 0 {
			params = emptyObjectSchema
		}
		tools[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params}}
	}
	return tools
}

func toolChoice(c model.ToolChoice) any {
	switch c.Mode {
	case model.ToolNone:
		return "none"
	case model.ToolRequired:
		return "required"
	case model.ToolNamed:
		return llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: c.Name}}
	}
	return nil
}

// ErrEmptyResponse reports a response without choices.
var ErrEmptyResponse = errors.New("empty response")

// Response converts langchaingo's response for dialect d. Anthropic returns
// one choice per content block (thinking, text, tool use), which become the
// message's parts in order; other providers return alternatives, of which
// the first is used.
func Response(raw *llms.ContentResponse, d Dialect, id string) (*model.Response, error) {
	if raw == nil || len(raw.Choices) == 0 {
		return nil, ErrEmptyResponse
	}
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant}, Usage: Usage(raw), Model: id}
	stop := ""
	for _, ch := range raw.Choices {
		if ch == nil {
			continue
		}
		text, thinking := choiceText(ch)
		if thinking != "" {
			sig, _ := ch.GenerationInfo["ThinkingSignature"].(string)
			resp.Message.Parts = append(resp.Message.Parts, model.ThinkingPart(thinking, sig))
		}
		if text != "" {
			resp.Message.Parts = append(resp.Message.Parts, model.TextPart(text))
		}
		for _, tc := range ch.ToolCalls {
			resp.Message.Parts = append(resp.Message.Parts, model.ToolCallPart(ToolCall(tc)))
		}
		if ch.StopReason != "" {
			stop = ch.StopReason
		}
		if d != Anthropic {
			break
		}
	}
	resp.FinishReason = Finish(stop, len(resp.Message.ToolCalls()) > 0)
	return resp, nil
}

// ToolCall converts a langchaingo tool call.
func ToolCall(tc llms.ToolCall) model.ToolCall {
	c := model.ToolCall{ID: tc.ID}
	if tc.FunctionCall != nil {
		c.Name = tc.FunctionCall.Name
		if tc.FunctionCall.Arguments != "" {
			c.Arguments = json.RawMessage(tc.FunctionCall.Arguments)
		}
	}
	return c
}

// LLMToolCall converts a tool call to langchaingo's.
func LLMToolCall(c model.ToolCall) llms.ToolCall {
	args := string(c.Arguments)
	if args == "" {
		args = "{}"
	}
	return llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: args}}
}

// Finish maps a provider's stop reason to a FinishReason.
func Finish(stop string, toolCalls bool) model.FinishReason {
	switch stop {
	case "length", "max_tokens", "model_length":
		return model.FinishLength
	case "content_filter", "refusal", "safety":
		return model.FinishContentFilter
	case "tool_calls", "tool_use", "function_call":
		return model.FinishToolCalls
	}
	if toolCalls {
		return model.FinishToolCalls
	}
	return model.FinishStop
}

func choiceText(ch *llms.ContentChoice) (text, thinking string) {
	text = ch.Content
	thinking = ch.ReasoningContent
	if thinking == "" {
		thinking, _ = ch.GenerationInfo["ThinkingContent"].(string)
		// langchaingo's Anthropic client also lifts <thinking> tags out of a
		// text block; the rest of the text is then in OutputContent.
		if out, ok := ch.GenerationInfo["OutputContent"].(string); ok && thinking != "" {
			text = out
		}
	}
	return text, thinking
}

// ChoiceText returns a choice's answer and thinking text, as Response reads
// them.
func ChoiceText(ch *llms.ContentChoice) (text, thinking string) { return choiceText(ch) }
