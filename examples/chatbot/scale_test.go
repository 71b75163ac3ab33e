package chatbot_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// testPostgres returns the DSN of the test PostgreSQL server and a schema
// of the test's own (dropped when it ends), or skips the test when no
// server answers.
func testPostgres(t testing.TB) (dsn, schema string) {
	t.Helper()
	dsn = os.Getenv("AGENTGRAPH_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		t.Skipf("PostgreSQL does not answer at %s (%v); start it or set AGENTGRAPH_TEST_POSTGRES to a server's DSN to run this test", dsn, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema = "chatbot_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
		pool.Close()
	})
	return dsn, schema
}

// TestConversationListSurvivesRestart chats as two principals, closes the
// bot and opens another on the same store: each principal's conversation
// list is the same as before (most recent first, titled by the first
// message), and neither sees the other's. With SQLite (DataDir) and
// PostgreSQL (Config.Postgres).
func TestConversationListSurvivesRestart(t *testing.T) {
	stores := map[string]func(t *testing.T) chatbot.Config{
		"sqlite": func(t *testing.T) chatbot.Config { return chatbot.Config{DataDir: t.TempDir()} },
		"postgres": func(t *testing.T) chatbot.Config {
			dsn, schema := testPostgres(t)
			return chatbot.Config{Postgres: dsn, PostgresSchema: schema}
		},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			cfg := store(t)
			cfg.Offline = true
			alice := chatbot.WithPrincipal(t.Context(), "alice")
			bob := chatbot.WithPrincipal(t.Context(), "bob.smith")
			turns := []struct {
				ctx        context.Context
				conv, text string
			}{
				{alice, "a1", "What is 15% of 240?"},
				{bob, "b1", "Hello!"},
				{alice, "a2", "How much does the Team plan cost?"},
				{alice, "a1", "And 20% of 240?"},
			}
			bot, err := chatbot.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range turns {
				for _, err := range bot.Chat(tr.ctx, chatbot.Request{ConversationID: tr.conv, Message: tr.text}) {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := bot.Close(t.Context()); err != nil {
				t.Fatal(err)
			}

			bot, err = chatbot.New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close(context.Background())
			type entry struct{ ID, Title string }
			list := func(ctx context.Context) []entry {
				l, err := bot.Conversations(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var out []entry
				for _, c := range l {
					out = append(out, entry{c.ID, c.Title})
				}
				return out
			}
			if diff := cmp.Diff([]entry{{"a1", "What is 15% of 240?"}, {"a2", "How much does the Team plan cost?"}}, list(alice)); diff != "" {
				t.Errorf("alice's list after restart (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]entry{{"b1", "Hello!"}}, list(bob)); diff != "" {
				t.Errorf("bob's list after restart (-want +got):\n%s", diff)
			}
			if l := list(chatbot.WithPrincipal(t.Context(), "carol")); len(l) != 0 {
				t.Errorf("carol lists %v", l)
			}
		})
	}
}
