package postgres_test

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

type greeting struct {
	Name  string `json:"name"`
	Reply string `json:"reply"`
}

var greetingReply = graph.Replace(func(s *greeting) *string { return &s.Reply })

// BenchmarkRunStream measures runs of a trivial one-node graph streamed
// over HTTP on loopback (POST /threads/{id}/runs/stream, read to the end
// event) with PostgreSQL storage (threads, runs, events and checkpoints),
// on one instance and on two sharing the database, each instance a child
// process (this test binary run again, as the instance tests do; the
// clients alternate between the instances), with 1, 10 and 50 clients
// each on its own thread: runs/s, and the time from sending the request
// to the first event, p50 and p99. Rerun on a quiet machine with
//
//	go test ./agent/server/postgres -run '^$' -bench RunStream -benchtime 3000x
//
// The instances use Config.SharedCheckpoints and the checkpoint saver's
// Config.AsyncCommit, as examples/agentserver does: a run waits for two
// WAL flushes, its creation's and its end's. With
// AGENTSERVER_TEST_SYNCHRONOUS_COMMIT=off in the environment the
// instances' connections commit without waiting for the WAL flush at
// all (see "Commit durability" in the package doc for what that risks):
// that compares no flush wait with those two, not with every commit
// waiting, which no setting of the benchmark gives.
func BenchmarkRunStream(b *testing.B) {
	for _, instances := range []int{1, 2} {
		b.Run(fmt.Sprintf("instances=%d", instances), func(b *testing.B) {
			c := newCluster(b)
			urls := make([]string, instances)
			for i := range urls {
				urls[i] = c.start(false).URL
			}
			for _, clients := range []int{1, 10, 50} {
				b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchStream(b, urls, clients) })
			}
		})
	}
}

// benchStream streams b.N runs of the graph "trivial" from clients
// goroutines, each on a thread of its own, alternating between the
// instances at urls.
func benchStream(b *testing.B, urls []string, clients int) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	threads := make([]string, clients)
	for i := range threads {
		resp, err := hc.Post(urls[i%len(urls)]+"/threads", "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		var th struct {
			ID string `json:"thread_id"`
		}
		if err := jsonDecode(resp, &th); err != nil {
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
				url := urls[(c+i)%len(urls)]
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
					if line == "event: error" {
						errored = true
						continue
					}
					if line == "event: end" {
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
}
