package postgres_test

import (
	"context"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

// Use the application's pool, keep checkpoints in their own schema, and
// prune periodically: at most 100 checkpoints a thread, and threads idle
// for 30 days deleted.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	saver, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: "agent_state"})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		tick := time.NewTicker(time.Hour)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			p, err := saver.Prune(ctx, checkpoint.Retention{KeepLatest: 100, MaxIdle: 30 * 24 * time.Hour})
			if err != nil {
				log.Print(err)
				continue
			}
			log.Printf("pruned %d threads, %d checkpoints", p.Threads, p.Checkpoints)
		}
	}()
}
