package chatbot_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// BenchmarkChatHTTP runs chats over loopback HTTP from 50 concurrent
// clients on the offline model with SQLite storage, each chat a new
// conversation, the five kinds of question in turn. It reports chats/s,
// the time to the first event (p50, p99) and the heap kept per
// conversation.
func BenchmarkChatHTTP(b *testing.B) {
	benchChatHTTP(b, chatbot.Config{Offline: true, DataDir: b.TempDir()}, false)
}

// BenchmarkChatHTTPCognition is BenchmarkChatHTTP with cognition on and
// each chat from one of 50 users: the cost of the read path, of Observe
// and of the learning that runs meanwhile (one offline model call and
// SQLite writes per learned turn). It also reports the share of chats
// learned from while the benchmark ran and the share whose learning was
// refused by a full queue.
func BenchmarkChatHTTPCognition(b *testing.B) {
	benchChatHTTP(b, chatbot.Config{Offline: true, DataDir: b.TempDir(), Cognition: &chatbot.CognitionConfig{}}, true)
}

// BenchmarkChatHTTPAuth is BenchmarkChatHTTP with authentication on:
// each of the 50 clients is its own principal with its own bearer token,
// so every request is authenticated and every id scoped to its principal.
func BenchmarkChatHTTPAuth(b *testing.B) {
	tokens := map[string]string{}
	for i := range benchClients {
		tokens[benchToken(i)] = fmt.Sprintf("client-%d", i)
	}
	benchChatHTTP(b, chatbot.Config{Offline: true, DataDir: b.TempDir(), Tokens: tokens}, false)
}

// BenchmarkChatHTTPPostgres is BenchmarkChatHTTP with every store in
// PostgreSQL (Config.Postgres, a schema of its own) instead of SQLite.
func BenchmarkChatHTTPPostgres(b *testing.B) {
	dsn, schema := testPostgres(b)
	benchChatHTTPOn(b, chatbot.Config{Offline: true, Postgres: dsn, PostgresSchema: schema}, false, 1)
}

// BenchmarkChatHTTPPostgresTwo is BenchmarkChatHTTPPostgres on two
// instances sharing the database and a NATS server (Config.NATS), the
// clients split between them; each turn takes its conversation's
// PostgreSQL advisory lock.
func BenchmarkChatHTTPPostgresTwo(b *testing.B) {
	benchChatHTTPOn(b, sharedConfig(b), false, 2)
}

// benchClients is how many clients the benchmarks run.
const benchClients = 50

func benchToken(i int) string { return fmt.Sprintf("bench-token-%04d-0123456789abcdef", i) }

func benchChatHTTP(b *testing.B, cfg chatbot.Config, users bool) {
	benchChatHTTPOn(b, cfg, users, 1)
}

// benchChatHTTPOn runs the benchmark on instances bots configured by cfg,
// client i sending to instance i%instances.
func benchChatHTTPOn(b *testing.B, cfg chatbot.Config, users bool, instances int) {
	var (
		bot  *chatbot.Bot
		urls []string
	)
	for range instances {
		bi, err := chatbot.New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(bi.Handler())
		defer func() {
			srv.Close()
			_ = bi.Close(context.Background())
		}()
		if bot == nil {
			bot = bi
		}
		urls = append(urls, srv.URL)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	questions := []string{"Hello!", "What is 15% of 240?", "How much does the Team plan cost?",
		"Update the document", "Compare our pricing to competitors"}

	const clients = benchClients
	auth := len(cfg.Tokens) > 0
	var clientSeq atomic.Int64
	b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var (
		mu     sync.Mutex
		firsts []time.Duration
		seq    atomic.Int64
	)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		n := int(clientSeq.Add(1) - 1)
		token := benchToken(n % clients)
		url := urls[n%len(urls)]
		var mine []time.Duration
		for pb.Next() {
			i := seq.Add(1)
			body := fmt.Sprintf(`{"conversation_id": "bench-%d", "message": %q}`, i, questions[i%int64(len(questions))])
			if users {
				body = fmt.Sprintf(`{"conversation_id": "bench-%d", "user_id": "user-%d", "message": %q}`, i, i%clients, questions[i%int64(len(questions))])
			}
			t0 := time.Now()
			req, err := http.NewRequest(http.MethodPost, url+"/api/v1/chat", bytes.NewReader([]byte(body)))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			if auth {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			first := true
			for _, err := range chatevent.ReadEvents(resp.Body) {
				if err != nil {
					b.Error(err)
					break
				}
				if first {
					mine = append(mine, time.Since(t0))
					first = false
				}
			}
			resp.Body.Close()
		}
		mu.Lock()
		firsts = append(firsts, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	slices.Sort(firsts)
	if len(firsts) > 0 {
		b.ReportMetric(float64(len(firsts))/elapsed.Seconds(), "chats/s")
		b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "first-event-p50-ms")
		b.ReportMetric(float64(firsts[len(firsts)*99/100].Microseconds())/1000, "first-event-p99-ms")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(len(firsts)), "heap-B/conversation")
		if c := bot.Cognition(); c != nil {
			st := c.QueueStats()
			b.ReportMetric(float64(st.Done)/float64(len(firsts)), "learned/chat")
			b.ReportMetric(float64(st.Rejected)/float64(len(firsts)), "refused/chat")
		}
	}
}
