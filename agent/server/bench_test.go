package server_test

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

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// BenchmarkRunStream measures runs of a trivial one-node graph streamed
// over HTTP on loopback (POST /threads/{id}/runs/stream, read to the end
// event), with 1, 10 and 50 clients each on its own thread: runs/s, and the
// time from sending the request to the first event, p50 and p99.
func BenchmarkRunStream(b *testing.B) {
	for _, clients := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			srv, err := server.New(server.Config{})
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
			defer func() { hs.Close(); srv.Close(context.Background()) }()
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			threads := make([]string, clients)
			for i := range threads {
				resp, err := hc.Post(hs.URL+"/threads", "application/json", strings.NewReader(`{}`))
				if err != nil {
					b.Fatal(err)
				}
				var th struct {
					ID string `json:"thread_id"`
				}
				if err := decodeJSON(resp, &th); err != nil {
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
					for range n {
						t0 := time.Now()
						resp, err := hc.Post(hs.URL+"/threads/"+threads[c]+"/runs/stream", "application/json", strings.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						sc := bufio.NewScanner(resp.Body)
						first := true
						for sc.Scan() {
							line := sc.Text()
							if first && strings.HasPrefix(line, "event: ") {
								local = append(local, time.Since(t0))
								first = false
							}
							if line == "event: end" || line == "event: error" {
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
