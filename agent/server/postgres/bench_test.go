package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

type greeting struct {
	Name  string `json:"name"`
	Reply string `json:"reply"`
}

var greetingReply = graph.Replace(func(s *greeting) *string { return &s.Reply })

// benchInstance is a server with a Store, a checkpoint saver and a pool of
// its own on the schema, behind a loopback HTTP server.
func benchInstance(b *testing.B, schema string) string {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	st, err := postgres.New(context.Background(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	saver, err := cppg.New(context.Background(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Checkpointer: saver})
	if err != nil {
		b.Fatal(err)
	}
	g := graph.New[greeting]()
	g.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		return greetingReply.Set("hi " + s.Name), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		b.Fatal(err)
	}
	if err := server.Register(srv, "trivial", app); err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() { hs.Close(); srv.Close(context.Background()) })
	return hs.URL
}

// BenchmarkRunStream measures runs of a trivial one-node graph streamed
// over HTTP on loopback (POST /threads/{id}/runs/stream, read to the end
// event) with PostgreSQL storage (threads, runs, events and checkpoints),
// on one instance and on two sharing the database (in this process, each
// with its own Store, saver and pool; clients alternate between them), 50
// clients each on its own thread: runs/s, and the time from sending the
// request to the first event, p50 and p99. Rerun on a quiet machine with
//
//	go test ./agent/server/postgres -run '^$' -bench RunStream -benchtime 3000x
func BenchmarkRunStream(b *testing.B) {
	for _, instances := range []int{1, 2} {
		b.Run(fmt.Sprintf("instances=%d/clients=50", instances), func(b *testing.B) {
			const clients = 50
			_, schema := postgrestest.Schema(b, "agentserver_bench_")
			urls := make([]string, instances)
			for i := range urls {
				urls[i] = benchInstance(b, schema)
			}
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			threads := make([]string, clients)
			for i := range threads {
				resp, err := hc.Post(urls[i%instances]+"/threads", "application/json", strings.NewReader(`{}`))
				if err != nil {
					b.Fatal(err)
				}
				var th struct {
					ID string `json:"thread_id"`
				}
				err = jsonDecode(resp, &th)
				if err != nil {
					b.Fatal(err)
				}
				threads[i] = th.ID
			}
			var mu sync.Mutex
			var ttfe []time.Duration
			var wg sync.WaitGroup
			body := `{"assistant_id":"trivial","input":{"name":"x"},"stream_mode":["values"]}`
			b.ResetTimer()
			start := time.Now()
			for c := range clients {
				n := b.N / clients
				if c < b.N%clients {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					local := make([]time.Duration, 0, n)
					for i := range n {
						url := urls[(c+i)%instances]
						t0 := time.Now()
						resp, err := hc.Post(url+"/threads/"+threads[c]+"/runs/stream", "application/json", strings.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						sc := bufio.NewScanner(resp.Body)
						first, errored := true, false
						for sc.Scan() {
							line := sc.Text()
							if errored {
								b.Errorf("a run failed: %s", line)
								break
							}
							if first && strings.HasPrefix(line, "event: ") {
								local = append(local, time.Since(t0))
								first = false
							}
							if line == "event: end" || line == "event: error" {
								if line == "event: error" {
									errored = true
									continue
								}
								break
							}
						}
						resp.Body.Close()
					}
					mu.Lock()
					ttfe = append(ttfe, local...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(ttfe)
			if len(ttfe) > 0 {
				b.ReportMetric(float64(len(ttfe))/elapsed.Seconds(), "runs/s")
				b.ReportMetric(float64(ttfe[len(ttfe)/2].Microseconds())/1000, "ttfe-p50-ms")
				b.ReportMetric(float64(ttfe[(len(ttfe)*99)/100].Microseconds())/1000, "ttfe-p99-ms")
			}
		})
	}
}
