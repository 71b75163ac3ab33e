package offline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

const handbook = `# Travel policy

Employees book flights through the Orbit portal. Economy class is the rule for flights under 6 hours.

# Expenses

Meals are reimbursed up to $45 per day while travelling. Receipts must be filed within 14 days of the trip.`

// TestDocumentSummaries runs package document's LLMSummarizer on the
// offline model: a chunk's summary names its headings and quotes its
// facts, and the document's summary combines the parts', without the
// "no information" answer of a prompt the model does not understand.
func TestDocumentSummaries(t *testing.T) {
	ctx := context.Background()
	s := &document.LLMSummarizer{Model: offline.New(offline.Config{})}
	doc := document.Document{Name: "handbook.md", ContentType: "text/markdown", Chunks: 2}
	chunks, err := document.Chunker{Size: 40, Overlap: -1}.Split(handbook)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("want several chunks, got %d", len(chunks))
	}
	var sums []string
	for _, c := range chunks {
		sum, err := s.SummarizeChunk(ctx, doc, c)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(sum, "no information") || sum == "" {
			t.Fatalf("chunk %d summary %q", c.Index, sum)
		}
		sums = append(sums, sum)
	}
	all := strings.Join(sums, "\n")
	for _, want := range []string{"This part covers Travel policy", "Orbit portal", "$45 per day", "Expenses"} {
		if !strings.Contains(all, want) {
			t.Errorf("chunk summaries lack %q:\n%s", want, all)
		}
	}
	sum, err := s.Combine(ctx, doc, sums)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"handbook.md covers Travel policy and Expenses.", "Orbit portal", "$45"} {
		if !strings.Contains(sum, want) {
			t.Errorf("document summary lacks %q: %s", want, sum)
		}
	}
	if n := strings.Count(sum, ". "); n > 5 {
		t.Errorf("document summary has %d sentences, want at most 6: %s", n+1, sum)
	}
}

// TestSupervisorLoadsDocument checks the supervisor's document rule: a
// question about an uploaded document, or one its summary answers, calls
// load_document with the document's id and the question's topic; other
// questions, and conversations without load_document, go on as before.
func TestSupervisorLoadsDocument(t *testing.T) {
	client, err := agent.New(agent.Config{Model: offline.New(offline.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ready := document.Document{ID: "doc-1", Name: "handbook.md", Status: document.StatusReady, Chunks: 2, Tokens: 60,
		Summary: "handbook.md covers Travel policy and Expenses. Meals are reimbursed up to $45 per day while travelling.", Created: now}
	pending := document.Document{ID: "doc-2", Name: "roadmap.txt", Status: document.StatusProcessing, Tokens: 900, Created: now}
	docs := "Documents the user uploaded to this conversation (load one with load_document):\n" +
		document.Describe(ready) + "\n" + document.Describe(pending)
	tools := []model.ToolDef{
		{Name: "load_document", Description: "Loads a document the user uploaded"},
		{Name: "search_knowledge", Description: "Searches the knowledge base"},
		{Name: "web_search", Description: "Searches the web"},
		{Name: "calculate", Description: "Evaluates arithmetic"},
	}
	tests := []struct {
		name, query, context string
		tools                []model.ToolDef
		action               supervisor.Action
		tool, id, q          string
	}{
		{"asks about the upload", "What does my uploaded document say about meal expenses?", docs, tools,
			supervisor.ActionCallTool, "load_document", "doc-1", "meal expenses"},
		{"summary answers it", "How much are meals reimbursed per day?", docs, tools,
			supervisor.ActionCallTool, "load_document", "doc-1", "meals reimbursed day"},
		{"names the document", "Summarize roadmap.txt", docs, tools,
			supervisor.ActionCallTool, "load_document", "doc-2", "summarize roadmap txt"},
		{"unrelated question", "What is 15% of 240?", docs, tools, supervisor.ActionCallTool, "calculate", "", ""},
		{"a greeting", "Hello!", docs, tools, supervisor.ActionAnswer, "", "", ""},
		{"no documents", "What does my document say about meals?", "user: hi", tools[1:], supervisor.ActionCallTool, "search_knowledge", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dres, err := supervisor.Decide(context.Background(), client, supervisor.DecideInput{Query: tt.query, Tools: tt.tools, Context: tt.context, Iteration: 1})
			d := dres.Value
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tt.action || d.Tool != tt.tool {
				t.Fatalf("decision %s %s, want %s %s: %+v", d.Action, d.Tool, tt.action, tt.tool, d)
			}
			if tt.id == "" {
				return
			}
			if got := d.Arguments["document_id"]; got != tt.id {
				t.Errorf("document_id %v, want %s", got, tt.id)
			}
			if got := d.Arguments["query"]; got != tt.q {
				t.Errorf("query %v, want %q", got, tt.q)
			}
		})
	}
}

// TestAnswerFromDocument checks that once the document is loaded, the
// reflection is satisfied and the writer quotes the document, although
// the question's words "uploaded document say" are not in it.
func TestAnswerFromDocument(t *testing.T) {
	client, err := agent.New(agent.Config{Model: offline.New(offline.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := "What does my uploaded document say about meal expenses?"
	obs := []supervisor.Observation{{Source: "load_document", Content: "# handbook.md\n\n" + handbook}}
	rres, err := supervisor.Reflect(ctx, client, supervisor.ReflectInput{Query: q, Observations: obs, Iteration: 1})
	ref := rres.Value
	if err != nil {
		t.Fatal(err)
	}
	if ref.Assessment != supervisor.AssessSatisfied {
		t.Errorf("reflection %+v, want satisfied", ref)
	}
	dres2, err := supervisor.Decide(ctx, client, supervisor.DecideInput{Query: q, Observations: obs, Iteration: 2,
		Tools: []model.ToolDef{{Name: "load_document", Description: "x"}, {Name: "search_knowledge", Description: "y"}}})
	d := dres2.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionAnswer {
		t.Errorf("decision %+v, want ANSWER", d)
	}
	resp, err := supervisor.Write(ctx, client, supervisor.WriteInput{Query: q, Observations: obs})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Value, "$45 per day") || !strings.Contains(resp.Value, "(load_document: Expenses)") {
		t.Errorf("answer does not quote the document:\n%s", resp.Value)
	}
}
