package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// BuiltinConfig configures the operators [RegisterBuiltins] adds. The zero
// value gives the standard names.
type BuiltinConfig struct {
	// FastModel is the model alias of query_rewriter. Empty means "haiku".
	FastModel string
	// SmartModel is the model alias of synthesizer, writer, analyzer and
	// coder. Empty means "sonnet".
	SmartModel string
	// RAGSearchTool is the MCP tool rag_retriever calls, with arguments
	// {"query", "top_k"}. Empty means "rag_search".
	RAGSearchTool string
	// RAGTopK is the number of passages rag_retriever asks for. Zero means 5.
	RAGTopK int
	// WebSearchTool is the MCP tool web_searcher calls, with argument
	// {"query"}. Empty means "web_search".
	WebSearchTool string
	// CodeTools maps a language to the MCP tool coder runs its code with,
	// with argument {"code"}. Nil means python → "run_python" and
	// javascript → "run_javascript".
	CodeTools map[string]string
}

func (c *BuiltinConfig) defaults() {
	if c.FastModel == "" {
		c.FastModel = "haiku"
	}
	if c.SmartModel == "" {
		c.SmartModel = "sonnet"
	}
	if c.RAGSearchTool == "" {
		c.RAGSearchTool = "rag_search"
	}
	if c.RAGTopK == 0 {
		c.RAGTopK = 5
	}
	if c.WebSearchTool == "" {
		c.WebSearchTool = "web_search"
	}
	if c.CodeTools == nil {
		c.CodeTools = map[string]string{"python": "run_python", "javascript": "run_javascript"}
	}
}

// The prompts of the built-in LLM operators. Each is a format string; %s
// verbs are filled in order with the values the operator's doc names.
const (
	// QueryRewriterPrompt: the query, the assembled context.
	QueryRewriterPrompt = `You rewrite a user's question into search queries.
Write one query for the organisation's internal documents and one for the public web.
Keep the user's intent, expand abbreviations, add the key terms a search engine needs, drop filler words.

Question: %s

Context:
%s

Answer with JSON only: {"internal_query": "...", "external_query": "..."}`

	// SynthesizerPrompt: the query, the sources, the assembled context.
	SynthesizerPrompt = `You combine research results into one accurate account.
Use only the sources below. Where they agree, state the fact once; where they conflict, say so and name each side.
Note which source each fact comes from. Do not invent facts; say what is missing.

Question: %s

Sources:
%s

Context:
%s

Write the synthesis as concise Markdown.`

	// WriterPrompt: the query, the content, the assembled context.
	WriterPrompt = `You write the final answer to the user.
Answer the question directly first, then give the supporting details. Be clear and concise, use Markdown where it helps,
keep the facts of the content below exactly, and do not mention tools, steps or sources the user cannot see.

Question: %s

Content:
%s

Context:
%s`

	// AnalyzerPrompt: the query, the data, the assembled context.
	AnalyzerPrompt = `You analyse data to answer a question.
Identify the relevant figures, compare them, compute what the question needs (differences, ratios, trends) and state
your conclusions with the numbers that support them. Say plainly when the data cannot answer the question.

Question: %s

Data:
%s

Context:
%s`

	// CoderPrompt: the language, the task, the assembled context.
	CoderPrompt = `You write a complete, runnable %s program for the task below.
It must print its result to standard output, use only the standard library, and need no input.

Task: %s

Context:
%s

Answer with the code only, in one fenced code block.`
)

// RegisterBuiltins registers the standard operators in r: query_rewriter,
// synthesizer, writer and analyzer (pure LLM), rag_retriever and
// web_searcher (MCP-backed) and coder (hybrid).
func RegisterBuiltins(r *Registry, cfg BuiltinConfig) error {
	cfg.defaults()
	var codeTools []string
	for _, t := range cfg.CodeTools {
		codeTools = append(codeTools, t)
	}
	ops := []struct {
		m Metadata
		f Factory
	}{
		{Metadata{Name: "query_rewriter", Description: "Rewrites and expands a question into search queries for internal documents and the web",
			Type: PureLLM, Model: cfg.FastModel, ContextRequirements: []string{"query", "conversation.recent(3)"}, MaxRetries: 1,
			Capabilities: Capabilities{OutputTypes: []OutputType{OutputJSON}}},
			llmFactory(cfg.FastModel, rewrite)},
		{Metadata{Name: "synthesizer", Description: "Combines results from several sources into one account, noting agreements and conflicts",
			Type: PureLLM, Model: cfg.SmartModel, ContextRequirements: []string{"query", "results.all"}, MaxRetries: 1},
			llmFactory(cfg.SmartModel, promptOp(SynthesizerPrompt, "sources"))},
		{Metadata{Name: "writer", Description: "Writes the final answer for the user from gathered content",
			Type: PureLLM, Model: cfg.SmartModel, ContextRequirements: []string{"query", "conversation.summary", "conversation.recent(5)", "results.all"}, MaxRetries: 1,
			Capabilities: Capabilities{OutputTypes: []OutputType{OutputText, OutputHTML}}},
			llmFactory(cfg.SmartModel, promptOp(WriterPrompt, "content"))},
		{Metadata{Name: "analyzer", Description: "Analyses data to answer a question with figures and conclusions",
			Type: PureLLM, Model: cfg.SmartModel, ContextRequirements: []string{"query", "results.all"}, MaxRetries: 1},
			llmFactory(cfg.SmartModel, promptOp(AnalyzerPrompt, "data"))},
		{Metadata{Name: "rag_retriever", Description: "Searches the internal knowledge base",
			Type: MCPBacked, MCPTools: []string{cfg.RAGSearchTool}, ContextRequirements: []string{"query", "tools.schema(" + cfg.RAGSearchTool + ")"},
			MaxRetries: 1, Capabilities: Capabilities{OutputTypes: []OutputType{OutputText, OutputImage}}},
			toolFactory(cfg.RAGSearchTool, map[string]any{"top_k": cfg.RAGTopK})},
		{Metadata{Name: "web_searcher", Description: "Searches the public web",
			Type: MCPBacked, MCPTools: []string{cfg.WebSearchTool}, ContextRequirements: []string{"query", "tools.schema(" + cfg.WebSearchTool + ")"},
			MaxRetries: 1, Capabilities: Capabilities{OutputTypes: []OutputType{OutputText}}},
			toolFactory(cfg.WebSearchTool, nil)},
		{Metadata{Name: "coder", Description: "Writes code for a task and runs it, returning the code and its output",
			Type: Hybrid, Model: cfg.SmartModel, MCPTools: codeTools, ContextRequirements: []string{"query"},
			Capabilities: Capabilities{OutputTypes: []OutputType{OutputText, OutputJSON}, Progress: true}},
			func(d Deps) (Operator, error) {
				m, err := d.Model(cfg.SmartModel)
				if err != nil {
					return nil, err
				}
				return coder{model: m, tools: cfg.CodeTools}, nil
			}},
	}
	var errs []error
	for _, op := range ops {
		errs = append(errs, r.Register(op.m, op.f))
	}
	return errors.Join(errs...)
}

type llmFunc func(ctx context.Context, m model.Model, oc *Context) (*Result, error)

func llmFactory(alias string, f llmFunc) Factory {
	return func(d Deps) (Operator, error) {
		m, err := d.Model(alias)
		if err != nil {
			return nil, err
		}
		return Func(func(ctx context.Context, oc *Context) (*Result, error) { return f(ctx, m, oc) }), nil
	}
}

// ask sends prompt to m as one user message and returns the reply's text.
func ask(ctx context.Context, m model.Model, prompt string) (string, error) {
	resp, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User(prompt)}})
	if err != nil {
		return "", err
	}
	return resp.Text(), nil
}

func assembled(oc *Context) string {
	if oc.Assembled == nil {
		return "(none)"
	}
	return oc.Assembled.String()
}

func rewrite(ctx context.Context, m model.Model, oc *Context) (*Result, error) {
	text, err := ask(ctx, m, fmt.Sprintf(QueryRewriterPrompt, oc.Query, assembled(oc)))
	if err != nil {
		return nil, err
	}
	var out struct {
		Internal string `json:"internal_query"`
		External string `json:"external_query"`
	}
	if err := decodeObject(text, &out); err != nil {
		return nil, err
	}
	if out.Internal == "" || out.External == "" {
		return nil, fmt.Errorf("query_rewriter: the model's answer lacks internal_query or external_query: %q", truncate(text, 200))
	}
	return &Result{Output: map[string]any{"internal_query": out.Internal, "external_query": out.External}}, nil
}

// promptOp fills prompt with the query, the named parameter (or, without
// it, the turn's results) and the assembled context.
func promptOp(prompt, param string) llmFunc {
	return func(ctx context.Context, m model.Model, oc *Context) (*Result, error) {
		material := materialOf(oc, param)
		text, err := ask(ctx, m, fmt.Sprintf(prompt, oc.Query, material, assembled(oc)))
		if err != nil {
			return nil, err
		}
		return &Result{Output: strings.TrimSpace(text)}, nil
	}
}

func materialOf(oc *Context, param string) string {
	v, ok := oc.Params[param]
	if !ok && oc.Turn != nil {
		var b strings.Builder
		for _, r := range oc.Turn.Results.All() {
			fmt.Fprintf(&b, "[%s] %s\n", r.ID, r.Text())
		}
		return b.String()
	}
	if list, ok := v.([]any); ok {
		var b strings.Builder
		for i, e := range list {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, Text(e))
		}
		return b.String()
	}
	return Text(v)
}

// toolOp calls one MCP tool with the query and fixed arguments.
type toolOp struct {
	tool  string
	extra map[string]any
}

func toolFactory(tool string, extra map[string]any) Factory {
	return func(Deps) (Operator, error) { return toolOp{tool: tool, extra: extra}, nil }
}

func (t toolOp) Execute(ctx context.Context, oc *Context) (*Result, error) {
	args := map[string]any{"query": oc.Query}
	for k, v := range t.extra {
		args[k] = v
	}
	res, err := callTool(ctx, oc, t.tool, args)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"results": res.Text()}
	if res.Structured != nil {
		out["structured"] = res.Structured
	}
	return &Result{Output: out, Contents: res.Contents,
		Metadata: map[string]any{"tool": t.tool, "content_count": len(res.Contents)}}, nil
}

func callTool(ctx context.Context, oc *Context, tool string, args map[string]any) (*toolresult.Result, error) {
	if oc.Tools == nil {
		return nil, ErrNeedsMCP
	}
	res, err := oc.Tools.CallTool(ctx, tool, args)
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", tool, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s reported an error: %s", tool, res.Error)
	}
	return res, nil
}

// coder asks the model for code, then runs it with the language's tool.
type coder struct {
	model model.Model
	tools map[string]string
}

func (c coder) Execute(ctx context.Context, oc *Context) (*Result, error) {
	lang := strings.ToLower(oc.Param("language"))
	if lang == "" {
		lang = "python"
	}
	tool, ok := c.tools[lang]
	if !ok {
		return nil, Permanent(fmt.Errorf("coder: no tool runs %s code; configure BuiltinConfig.CodeTools", lang))
	}
	_ = oc.Messenger.Progress(ctx, 0.1, "Writing "+lang+" code")
	text, err := ask(ctx, c.model, fmt.Sprintf(CoderPrompt, lang, oc.Query, assembled(oc)))
	if err != nil {
		return nil, err
	}
	code := stripFence(text)
	_ = oc.Messenger.Progress(ctx, 0.5, "Running the code")
	res, err := callTool(ctx, oc, tool, map[string]any{"code": code})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"language": lang, "code": code, "result": res.Text()}
	if res.Structured != nil {
		out["structured"] = res.Structured
	}
	return &Result{Output: out, Contents: res.Contents}, nil
}

// stripFence returns the content of the first fenced code block in s, or s.
func stripFence(s string) string {
	i := strings.Index(s, "```")
	if i < 0 {
		return strings.TrimSpace(s)
	}
	rest := s[i+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:]
	}
	if j := strings.Index(rest, "```"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// decodeObject decodes the first JSON object in text into v.
func decodeObject(text string, v any) error {
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return fmt.Errorf("the model's answer holds no JSON object: %q", truncate(text, 200))
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), v); err != nil {
		return fmt.Errorf("the model's answer is not valid JSON (%v): %q", err, truncate(text, 200))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
