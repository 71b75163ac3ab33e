package swarm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/mcp"
)

// stockServers are a calculator and a web search whose pages are about
// stocks, for the seed's §8 request.
func stockServers(t *testing.T) []mcp.Server {
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	web, err := websearch.New(websearch.Config{Pages: []websearch.Page{
		{Title: "Stocks to research: ACME and Globex", URL: "https://example.com/markets/stocks",
			Snippet: "Research on stocks: ACME closed at $112.40 (+1.2%), Globex at $58.10 (-0.4%).",
			Body:    "ACME closed at $112.40, up 1.2%. Globex closed at $58.10, down 0.4%."},
		{Title: "Gardening tips", URL: "https://example.com/garden", Snippet: "Water tomatoes in the morning.", Body: "Water tomatoes in the morning."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return []mcp.Server{{Name: "calculator", InProcess: calc}, {Name: "websearch", InProcess: web}}
}

// TestArchitect: the seed's §8 request makes the Architect design a team of
// two single-purpose agents (StockResearcher on the web search, ReportWriter
// answering from the model) and its workflow, register it, and run it as a
// sub-swarm whose report is the answer. The team is saved: a new swarm on
// the same storage has it as a node, and a request for it runs it as one.
func TestArchitect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := swarm.OpenStorage(ctx, swarm.StorageConfig{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := swarm.Config{Servers: stockServers(t), Checkpointer: st.Checkpointer, Skills: st.Memory, Workflows: st.Memory}
	s := newSwarm(t, cfg)
	events, out := run(t, s, seedTeamRequest)

	teams := ofKind(events, swarm.EventTeam)
	if len(teams) != 1 {
		t.Fatalf("team events = %v, want one", teams)
	}
	spec := *teams[0].Team
	if err := spec.Validate(); err != nil {
		t.Errorf("the designed team is not valid: %v", err)
	}
	if spec.Name != "stock_report_team" || len(spec.Agents) < 2 {
		t.Fatalf("team = %+v, want stock_report_team with at least two agents", spec)
	}
	servers := map[string]string{}
	for _, a := range spec.Agents {
		servers[a.Name] = a.Server
	}
	if servers["StockResearcher"] != "websearch" || servers["ReportWriter"] != "" {
		t.Errorf("agents' servers = %v, want StockResearcher on websearch and ReportWriter on none", servers)
	}
	if len(spec.Workflow) != 2 || len(spec.Workflow[1].DependsOn) != 1 {
		t.Errorf("workflow = %+v, want the report after the research", spec.Workflow)
	}
	if out.Status != swarm.StatusComplete || len(out.Results) != 1 || out.Results[0].Agent != swarm.Architect {
		t.Fatalf("outcome %q, results %+v; want the architect's one result, complete", out.Status, out.Results)
	}
	for _, want := range []string{"findings = [", "ACME closed at $112.40", "def report():"} {
		if !strings.Contains(out.Answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, out.Answer)
		}
	}
	// The sub-swarm's agents ran: the research called the web search, the
	// writer answered from the model.
	var research, write bool
	for _, e := range out.Trace {
		research = research || e.Node == "team_stock_report_team/StockResearcher" && e.Kind == swarm.TraceToolCall
		write = write || e.Node == "team_stock_report_team/ReportWriter" && e.Kind == swarm.TraceAnswer
	}
	if !research || !write {
		t.Errorf("trace: research tool call %v, writer answer %v; want both:\n%+v", research, write, out.Trace)
	}
	if !strings.Contains(strings.Join(s.Agents(), " "), "team_stock_report_team") {
		t.Errorf("agents = %v, want the team registered as a node", s.Agents())
	}

	// A new swarm (as in a new process) on the same storage has the team.
	again := newSwarm(t, cfg)
	if !strings.Contains(strings.Join(again.Agents(), " "), "team_stock_report_team") {
		t.Fatalf("agents after restart = %v, want the saved team", again.Agents())
	}
	_, out = run(t, again, "Use the stock report team on this week's stocks")
	if len(out.Results) != 1 || out.Results[0].Agent != "team_stock_report_team" || !out.Results[0].OK {
		t.Fatalf("results = %+v, want the team run as one node", out.Results)
	}
	if !strings.Contains(out.Answer, "ACME closed at $112.40") {
		t.Errorf("answer lacks the team's research:\n%s", out.Answer)
	}
}

// TestRegisterValidation: a design that breaks the schema is refused with
// the field named.
func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{Servers: stockServers(t)})
	good := swarm.TeamSpec{Name: "pair_team", Description: "Two agents.",
		Agents: []swarm.AgentSpec{{Name: "Finder", Role: "finds", Server: "websearch"}, {Name: "Writer", Role: "writes"}},
		Workflow: []swarm.Step{{ID: "step_1", Agent: "Finder", Task: "find", Status: swarm.StepPending},
			{ID: "step_2", Agent: "Writer", Task: "write", Status: swarm.StepPending, DependsOn: []string{"step_1"}}}}
	for _, c := range []struct {
		field string
		edit  func(*swarm.TeamSpec)
	}{
		{"name", func(t *swarm.TeamSpec) { t.Name = "Bad Name" }},
		{"owner", func(t *swarm.TeamSpec) { t.Owner = "alice.smith" }},
		{"owner", func(t *swarm.TeamSpec) { t.Owner = strings.Repeat("a", 65) }},
		{"agents", func(t *swarm.TeamSpec) { t.Agents = t.Agents[:1] }},
		{"agents[1].name", func(t *swarm.TeamSpec) { t.Agents[1].Name = "Finder" }},
		{"agents[0].server", func(t *swarm.TeamSpec) { t.Agents[0].Server = "yahoo_finance" }},
		{"workflow[1].agent", func(t *swarm.TeamSpec) { t.Workflow[1].Agent = "Nobody" }},
		{"workflow[0].depends_on", func(t *swarm.TeamSpec) { t.Workflow[0].DependsOn = []string{"step_2"} }},
	} {
		spec := good
		spec.Agents = append([]swarm.AgentSpec(nil), good.Agents...)
		spec.Workflow = append([]swarm.Step(nil), good.Workflow...)
		c.edit(&spec)
		err := s.Register(context.Background(), spec)
		var fe *agent.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: Register = %v, want a FieldError naming %s", c.field, err, c.field)
		}
	}
	if err := s.Register(context.Background(), good); err != nil {
		t.Fatalf("Register(valid) = %v", err)
	}
	if got := s.Teams(); len(got) != 1 || got[0].Name != "pair_team" {
		t.Errorf("Teams = %+v", got)
	}
}
