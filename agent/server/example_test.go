package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

type greeting struct {
	Name  string `json:"name"`
	Reply string `json:"reply"`
}

var greetingReply = graph.Replace(func(s *greeting) *string { return &s.Reply })

// A graph served over the Agent Server API: the official clients create
// threads and run it by its graph id.
func ExampleRegister() {
	srv, err := server.New(server.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())
	g := graph.New[greeting]()
	g.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		return greetingReply.Set("Hello, " + s.Name + "!"), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		panic(err)
	}
	if err := server.Register(srv, "greeter", app); err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv) // in a program: http.ListenAndServe(addr, srv)
	defer hs.Close()

	// What client.runs.wait(null, "greeter", {input: {name: "Ada"}}) sends.
	resp, err := http.Post(hs.URL+"/runs/wait", "application/json", strings.NewReader(`{"assistant_id":"greeter","input":{"name":"Ada"}}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.TrimSpace(string(body)))
	// Output: {"name":"Ada","reply":"Hello, Ada!"}
}
