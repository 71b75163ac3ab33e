// Command agent is the tool-calling agent of package react on a weather
// and calculator task: the model calls get_weather for each city and the
// calculator until it can answer, the answer streams as it is written, and
// each thread is a conversation kept in SQLite (or PostgreSQL).
//
//	go run ./examples/agent "Is it warmer in Paris or in Rome, and by how much?"
//	go run ./examples/agent "Which cities did I ask about?"      # same thread: it remembers
//	go run ./examples/agent -thread other -postgres postgres://localhost/db "..."
//
// With OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST set (or
// AGENTGRAPH_MODEL; see package provider) it uses that model. Without any it
// runs offline with a scripted demo model, labelled as such, that follows
// the same protocol: it calls the tools, reads their results and answers.
// The weather data is a fixed table: this is a demonstration, not a
// forecast.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/operator"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// run parses the flags, opens the thread store and asks the question.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	db := fs.String("db", "agent.db", "SQLite file keeping the conversations")
	pg := fs.String("postgres", "", "PostgreSQL DSN keeping the conversations instead of SQLite")
	schema := fs.String("schema", "", "PostgreSQL schema (default public)")
	thread := fs.String("thread", "default", "conversation to continue")
	if err := fs.Parse(args); err != nil {
		return err
	}
	question := strings.Join(fs.Args(), " ")
	if question == "" {
		question = "Is it warmer in Paris or in Rome, and by how much?"
	}
	var saver checkpoint.Saver
	if *pg != "" {
		s, err := postgres.New(ctx, postgres.Config{DSN: *pg, Schema: *schema})
		if err != nil {
			return err
		}
		defer s.Close()
		saver = s
	} else {
		s, err := sqlite.New(ctx, sqlite.Config{Path: *db})
		if err != nil {
			return err
		}
		defer s.Close()
		saver = s
	}
	m, err := chooseModel(out)
	if err != nil {
		return err
	}
	return ask(ctx, m, saver, *thread, question, out)
}

// chooseModel returns the configured provider's model, or the offline demo
// model when no provider is configured.
func chooseModel(out io.Writer) (model.Model, error) {
	if len(provider.Configured()) == 0 && os.Getenv(provider.EnvModel) == "" {
		fmt.Fprintln(out, "[offline demo model: scripted, not a language model; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST for a real one]")
		return demoModel{}, nil
	}
	return provider.FromEnv()
}

// WeatherArgs are get_weather's arguments.
type WeatherArgs struct {
	City string `json:"city" jsonschema:"description=the city, such as Paris" validate:"required"`
}

// CalcArgs are calculate's arguments.
type CalcArgs struct {
	A  float64 `json:"a"`
	Op string  `json:"op" jsonschema:"enum=+,enum=-,enum=*,enum=/" validate:"oneof=+ - * /"`
	B  float64 `json:"b"`
}

// ask is the agent: the tools, the constructor and one streamed run.
func ask(ctx context.Context, m model.Model, saver checkpoint.Saver, thread, question string, out io.Writer) error {
	weather := operator.MustFuncTool("get_weather", "Current temperature of a city in °C.", getWeather)
	calc := operator.MustFuncTool("calculate", "Compute a op b.", calculate)
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{weather, calc}, Checkpointer: saver,
		Instructions: "Answer weather questions with get_weather; do arithmetic with calculate."})
	if err != nil {
		return err
	}
	for ev, err := range ag.Thread(thread).Stream(ctx, react.Input(question), graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
		if err != nil {
			return err
		}
		if c, ok := ev.Chunk(); ok && c.Kind == model.ChunkText {
			fmt.Fprint(out, c.Text) // the answer, as the model writes it
		}
		if ev.Mode == graph.StreamValues && ev.State.Outcome != react.OutcomeNone {
			fmt.Fprintf(out, "\n[%s; this run: %d tokens, thread: %d tokens]\n", ev.State.Outcome, ev.State.RunUsage.Total(), ev.State.Usage.Total())
		}
	}
	return nil
}

// demoWeather is the demo's fixed weather table.
var demoWeather = map[string]float64{"paris": 18, "rome": 24, "london": 14, "berlin": 16, "madrid": 27, "oslo": 9}

func getWeather(_ context.Context, in WeatherArgs) (string, error) {
	t, ok := demoWeather[strings.ToLower(in.City)]
	if !ok {
		return "", fmt.Errorf("no weather for %q; known cities: Paris, Rome, London, Berlin, Madrid, Oslo", in.City)
	}
	return fmt.Sprintf("%g °C in %s", t, in.City), nil
}

func calculate(_ context.Context, in CalcArgs) (float64, error) {
	switch in.Op {
	case "+":
		return in.A + in.B, nil
	case "-":
		return in.A - in.B, nil
	case "*":
		return in.A * in.B, nil
	}
	if in.B == 0 {
		return 0, errors.New("division by zero")
	}
	return in.A / in.B, nil
}
