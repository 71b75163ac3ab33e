package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"

	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/memory"
)

// tools is a fixed tool catalogue; in an agent, the unified tool provider
// implements memory.Tools.
type tools map[string]string

func (t tools) ToolSummaries(context.Context) ([]model.ToolSummary, error) {
	return []model.ToolSummary{{Name: "web_search", Description: t["web_search"]}}, nil
}

func (t tools) ToolSchema(_ context.Context, name string) (string, error) {
	if _, ok := t[name]; !ok {
		return "", fmt.Errorf("%w: no tool %q", memory.ErrNotFound, name)
	}
	return `{"type":"object","properties":{"query":{"type":"string"}}}`, nil
}

// A supervisor declares what it needs to decide, and the assembler fetches
// it from the conversation, the tool catalogue and the current turn.
func ExampleAssembler() {
	ctx := context.Background()
	conv, err := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore()})
	if err != nil {
		log.Fatal(err)
	}
	conv.Append(ctx, "conv-1",
		memory.Message{Role: memory.RoleUser, Content: "Hi, I run a bakery."},
		memory.Message{Role: memory.RoleAssistant, Content: "Hello! How can I help?"},
	)

	asm := memory.NewAssembler(memory.AssemblerConfig{
		Conversations: conv,
		Tools:         tools{"web_search": "Search the web"},
		Budget:        1000,
	})

	turn := memory.NewTurn("conv-1", "What do competitors charge for croissants?")
	id := turn.Actions.Begin("call_tool", "web_search", "croissant prices")
	turn.Results.Put(memory.Result{ID: "call_1", Name: "web_search", Output: "3 bakeries: $2.50-$3.80"})
	turn.Actions.Finish(id, nil)

	c, err := asm.Assemble(ctx, turn,
		"query", "conversation.recent(5)", "conversation.summary", "tools.summaries", "results.all")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(c)
	fmt.Println("---")
	fmt.Println(c.Text("results.all"))
	// Output:
	// ## query
	// What do competitors charge for croissants?
	//
	// ## conversation.recent(5)
	// user: Hi, I run a bakery.
	// assistant: Hello! How can I help?
	//
	// ## tools.summaries
	// - web_search: Search the web
	//
	// ## results.all
	// call_1 (web_search): 3 bakeries: $2.50-$3.80
	// ---
	// call_1 (web_search): 3 bakeries: $2.50-$3.80
}

// When the context is over budget, the least important and oldest parts go
// first, and the assembled context says what was trimmed.
func ExampleAssembler_trimming() {
	ctx := context.Background()
	conv, _ := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore(), Window: 10})
	for i := 1; i <= 6; i++ {
		conv.Append(ctx, "conv-1", memory.Message{Role: memory.RoleUser, Content: fmt.Sprintf("message %d, padded to use some tokens", i)})
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{Conversations: conv, Budget: 45})
	c, err := asm.Assemble(ctx, memory.NewTurn("conv-1", "Summarize our chat."), "query", "conversation.recent(6)")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(c)
	for _, t := range c.Trimmed {
		fmt.Printf("trimmed %d oldest items (%d tokens) of %s\n", t.Items, t.Tokens, t.Requirement)
	}
	fmt.Printf("%d of %d tokens\n", c.Tokens, c.Budget)
	// Output:
	// ## query
	// Summarize our chat.
	//
	// ## conversation.recent(6)
	// user: message 5, padded to use some tokens
	// user: message 6, padded to use some tokens
	// trimmed 4 oldest items (48 tokens) of conversation.recent(6)
	// 42 of 45 tokens
}

// Register a source of your own; its requirements then work like the
// built-in ones.
func ExampleAssembler_Register() {
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	err := asm.Register("user", memory.SourceFunc(
		func(ctx context.Context, turn *memory.Turn, req memory.Requirement) (memory.Part, error) {
			if req.Method != "profile" {
				return memory.Part{}, fmt.Errorf("the user source serves user.profile")
			}
			return memory.Part{Priority: memory.PriorityRequested, Items: []memory.Item{{Text: "expert; prefers short answers"}}}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	c, err := asm.Assemble(context.Background(), memory.NewTurn("conv-1", "Explain RAG."), "query", "user.profile")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Text("user.profile"))

	// Bad requirements are rejected with the position and the expected form.
	fmt.Println(asm.Check("user.profile(", "memories.all"))
	// Output:
	// expert; prefers short answers
	// memory: bad requirement "user.profile(": at byte 13: expected an argument (letters, digits and _ . - : / @), e.g. recent(5) or schema(web_search), found end of input; the form is source, source.method or source.method(argument)
	// memory: requirement "memories.all": unknown context source "memories"; registered sources: actions, query, results, user (register one with Assembler.Register)
}

func ExampleParseRequirement() {
	r, err := memory.ParseRequirement("tools.schema( web_search )")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("source=%s method=%s arg=%s canonical=%s\n", r.Source, r.Method, r.Arg, r)
	// Output:
	// source=tools method=schema arg=web_search canonical=tools.schema(web_search)
}

// A conversation keeps its last Window messages and a running summary of
// older ones. The summarizer runs only when messages leave the window, and
// folds all of them in one call. This one just lists what it folds; in an
// agent, use memory.LLMSummarizer with a language model.
func ExampleConversations() {
	ctx := context.Background()
	summarizer := memory.SummarizerFunc(func(ctx context.Context, previous string, dropped []memory.Message) (string, error) {
		var b strings.Builder
		b.WriteString(previous)
		for _, m := range dropped {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(m.Content)
		}
		fmt.Printf("summarizer folds %d messages\n", len(dropped))
		return b.String(), nil
	})
	conv, err := memory.NewConversations(memory.ConversationConfig{
		Store:      memory.NewInMemoryStore(),
		Summarizer: summarizer,
		Window:     3,
	})
	if err != nil {
		log.Fatal(err)
	}
	turns := [][2]string{
		{"I run a bakery in Lyon.", "Nice! How can I help?"},
		{"What should croissants cost?", "Around 1.20 EUR locally."},
		{"And pain au chocolat?", "About 1.40 EUR."},
	}
	for _, t := range turns {
		err := conv.Append(ctx, "conv-1",
			memory.Message{Role: memory.RoleUser, Content: t[0]},
			memory.Message{Role: memory.RoleAssistant, Content: t[1]})
		if err != nil {
			log.Fatal(err)
		}
	}
	v, err := conv.View(ctx, "conv-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("summary:", v.Summary.Text)
	for _, m := range v.Recent {
		fmt.Println(m)
	}
	// Output:
	// summarizer folds 1 messages
	// summarizer folds 2 messages
	// summary: I run a bakery in Lyon.; Nice! How can I help?; What should croissants cost?
	// assistant: Around 1.20 EUR locally.
	// user: And pain au chocolat?
	// assistant: About 1.40 EUR.
}

// LLMSummarizer works with any model.Model; a small, fast one is enough.
func ExampleLLMSummarizer() {
	llm, err := provider.OpenAI(provider.OpenAIConfig{APIKey: os.Getenv("OPENAI_API_KEY"), Model: "gpt-4o-mini"})
	if err != nil {
		log.Fatal(err)
	}
	conv, err := memory.NewConversations(memory.ConversationConfig{
		Store:      memory.NewInMemoryStore(),
		Summarizer: &memory.LLMSummarizer{Model: llm, MaxTokens: 300},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = conv // Append as usual; a *memory.SummarizeError means the model failed and nothing was lost.
}

// An agent files what it learns about a user under the user's namespace
// and finds it again in a later conversation.
func ExampleInMemoryItems() {
	ctx := context.Background()
	items := memory.NewInMemoryItems(memory.InMemoryItemsConfig{})
	ns := []string{"users", "u42", "prefs"}
	_ = items.Put(ctx, memory.Record{Namespace: ns, Key: "theme", Value: json.RawMessage(`{"kind": "ui", "value": "dark"}`)})
	_ = items.Put(ctx, memory.Record{Namespace: ns, Key: "lang", Value: json.RawMessage(`{"kind": "locale", "value": "fr"}`)})
	_ = items.Put(ctx, memory.Record{Namespace: []string{"users", "u7", "prefs"}, Key: "theme", Value: json.RawMessage(`{"kind": "ui", "value": "light"}`)})

	r, _ := items.Get(ctx, ns, "theme", false)
	fmt.Println(string(r.Value))

	found, _ := items.Search(ctx, memory.ItemQuery{Prefix: []string{"users"}, Filter: map[string]any{"kind": "ui"}})
	for _, r := range found {
		fmt.Println(r.Namespace, r.Key)
	}
	users, _ := items.Namespaces(ctx, memory.NamespaceQuery{Prefix: []string{"users"}, MaxDepth: 2})
	fmt.Println(users)
	// Output:
	// {"kind":"ui","value":"dark"}
	// [users u42 prefs] theme
	// [users u7 prefs] theme
	// [[users u42] [users u7]]
}
