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
// over HTTP on loopback (POST /threads/{id}/runs/stream, read to the end of
// the stream), with 1, 10 and 50 clients each on its own thread: runs/s,
// and the time from sending the request to the first event, p50 and p99;
// the allocations per run and, on Unix, cpu-us/run: the CPU time the
// process used per run (the server's and its clients', which share the
// process; the JS server's runs in processes of its own). It measures this server (server=agentgraph) and, in the same sitting,
// LangChain's open-source JS server on the same graph (server=js, from
// testdata/jsserver; skipped unless installed with npm ci --prefix
// agent/server/testdata/jsserver):
//
//	go test -run '^$' -bench BenchmarkRunStream -benchtime 3s ./agent/server
func BenchmarkRunStream(b *testing.B) {
	b.Run("server=agentgraph", func(b *testing.B) {
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
		benchClients(b, hs.URL)
	})
	b.Run("server=js", func(b *testing.B) {
		benchClients(b, startJSServer(b))
	})
}

// benchClients runs benchStream at 1, 10 and 50 clients.
func benchClients(b *testing.B, url string) {
	for _, clients := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchStream(b, url, clients) })
	}
}

// benchStream streams b.N runs of the graph "trivial" from clients
// goroutines, each on a thread of its own, and reports runs/s and the
// time to the first event.
func benchStream(b *testing.B, url string, clients int) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	threads := make([]string, clients)
	for i := range threads {
		resp, err := hc.Post(url+"/threads", "application/json", strings.NewReader(`{}`))
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
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
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
				resp, err := hc.Post(url+"/threads/"+threads[c]+"/runs/stream", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				if resp.StatusCode != 200 {
					resp.Body.Close()
					b.Errorf("runs/stream: %s", resp.Status)
					return
				}
				sc := bufio.NewScanner(resp.Body)
				first, values := true, 0
				for sc.Scan() {
					line := sc.Text()
					if first && strings.HasPrefix(line, "event: ") {
						local = append(local, time.Since(t0))
						first = false
					}
					if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"reply":"hi x"`) {
						values++
					}
					if line == "event: end" || line == "event: error" {
						break
					}
				}
				resp.Body.Close()
				if values == 0 {
					b.Error("a run's stream ended without the final values")
					return
				}
			}
			mu.Lock()
			ttfe = append(ttfe, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if cpu1, ok := processCPU(); ok && cpuOK && b.N > 0 {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-us/run")
	}
	slices.Sort(ttfe)
	if len(ttfe) > 0 {
		b.ReportMetric(float64(len(ttfe))/elapsed.Seconds(), "runs/s")
		b.ReportMetric(float64(ttfe[len(ttfe)/2].Microseconds())/1000, "ttfe-p50-ms")
		b.ReportMetric(float64(ttfe[(len(ttfe)*99)/100].Microseconds())/1000, "ttfe-p99-ms")
	}
}
