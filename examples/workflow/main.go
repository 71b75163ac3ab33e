// Command workflow runs the plan "Compare our pricing to competitors" with
// the built-in operators: the query rewriter and the synthesizer on a
// language model, the two searches on the chatbot's bundled MCP servers
// (knowledge and websearch) running in this process. It prints the run's
// events as the SSE lines a client receives, then the answer.
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (see
// agent.ConfigFromEnv) the model is real; without, a scripted model
// answers, so the program runs anywhere.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// planJSON is what a supervisor's model writes for the question.
const planJSON = `{
  "goal": "Compare our pricing to competitors",
  "steps": [
    {"id": "step_1", "name": "Rewrite Query", "operator": "query_rewriter",
     "input_mapping": {"query": "{{user_query}}"}, "depends_on": []},
    {"id": "step_2", "name": "Search Internal Docs", "operator": "rag_retriever",
     "input_mapping": {"query": "{{step_1.internal_query}}"}, "depends_on": ["step_1"]},
    {"id": "step_3", "name": "Search Web", "operator": "web_searcher",
     "input_mapping": {"query": "{{step_1.external_query}}"}, "depends_on": ["step_1"]},
    {"id": "step_4", "name": "Synthesize", "operator": "synthesizer",
     "input_mapping": {"sources": ["{{step_2.results}}", "{{step_3.results}}"]},
     "depends_on": ["step_2", "step_3"]}
  ]
}`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	model, err := newModel()
	if err != nil {
		return err
	}
	ops := operator.NewRegistry(operator.Deps{Models: operator.AliasModels(model)})
	// The knowledge server calls its search tool search_knowledge.
	if err := operator.RegisterBuiltins(ops, operator.BuiltinConfig{RAGSearchTool: "search_knowledge", RAGTopK: 2}); err != nil {
		return err
	}

	// The MCP servers, in-process; in production they are commands or URLs
	// in an mcpServers configuration (mcp.LoadConfig).
	kb, err := knowledge.New(knowledge.Config{})
	if err != nil {
		return err
	}
	web, err := websearch.New(websearch.Config{})
	if err != nil {
		return err
	}
	manager, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		return err
	}
	defer manager.Shutdown(context.Background())
	if err := manager.Add(mcp.Server{Name: "knowledge", InProcess: kb}, mcp.Server{Name: "websearch", InProcess: web}); err != nil {
		return err
	}
	servers, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: manager})
	if err != nil {
		return err
	}

	def, err := plan.Parse([]byte(planJSON))
	if err != nil {
		return err
	}
	wf, err := workflow.Compile(def, workflow.Config{Operators: ops})
	if err != nil {
		return err
	}

	// What the run reports, one line each, as a log or a client would show it.
	var mu sync.Mutex // the steps run in parallel
	report := operator.ReporterFunc(func(_ context.Context, r operator.Report) error {
		mu.Lock()
		defer mu.Unlock()
		switch r := r.(type) {
		case workflow.RunStart:
			fmt.Fprintf(w, "plan: %d steps to %q\n", r.Steps, r.Goal)
		case workflow.StepStart:
			fmt.Fprintf(w, "step %d started: %s (%s)\n", r.Step, r.Name, r.Operator)
		case workflow.StepEnd:
			fmt.Fprintf(w, "step %d %s\n", r.Step, r.Status)
		case workflow.RunEnd:
			fmt.Fprintf(w, "plan done: %d steps ran\n", r.Steps)
		case operator.ToolStart:
			fmt.Fprintf(w, "  tool %s started\n", r.Tool)
		case operator.ToolProgress:
			fmt.Fprintf(w, "  tool %s: %.0f%% %s\n", r.Tool, 100*r.Progress, r.Message)
		case operator.ToolOutput:
			fmt.Fprintf(w, "  tool %s: %s content\n", r.Tool, r.Content.MIMEType)
		case operator.ToolComplete:
			fmt.Fprintf(w, "  tool %s done: %d items\n", r.Tool, r.ContentCount)
		case operator.ToolFailed:
			fmt.Fprintf(w, "  tool %s failed: %v\n", r.Tool, r.Err)
		}
		return nil
	})

	// One MCP session per request; its progress and content are reported too.
	session := servers.NewSession(mcptool.Callbacks(report, nil))
	question := "Compare our pricing to competitors"
	res, err := wf.Run(ctx, question, operator.Env{Reporter: report, Tools: mcptool.Session(session), Turn: memory.NewTurn("demo", question)})
	session.Close()
	if err != nil {
		return err
	}
	if err := res.Err(); err != nil {
		return err
	}
	for _, id := range []string{"step_2", "step_3"} {
		st, _ := res.Step(id)
		found, _ := st.Output.(map[string]any)["results"].(string)
		first, _, _ := strings.Cut(found, "\n")
		fmt.Fprintf(w, "%s: %s\n", st.Name, first)
	}
	answer, _ := res.Step("step_4")
	fmt.Fprintf(w, "answer: %v\n", answer.Output)
	return nil
}

// newModel returns the agent client over the configured providers, or over
// a scripted model when none is configured.
func newModel() (*agent.Client, error) {
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if cfg.OpenAI == nil && cfg.Anthropic == nil && cfg.Ollama == nil {
		fmt.Fprintln(os.Stderr, "no model configured (set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST); using a scripted model")
		cfg.Model = llmtest.New().
			On("search queries", llmtest.Text(`{"internal_query": "Acme pricing plans", "external_query": "SaaS competitor pricing per user"}`)).
			On("combine research results", llmtest.Text("(scripted) Acme Analytics charges per editor seat and never for viewers; Initech Dashboards charges $15-$35 and Northwind Metrics $40-$75 per user, viewers included."))
	}
	return agent.New(cfg)
}
