package chatbot

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/cognition"
	cogpg "github.com/agentgraph/agentgraph/cognition/postgres"
	"github.com/agentgraph/agentgraph/document"
	docpg "github.com/agentgraph/agentgraph/document/postgres"
	"github.com/agentgraph/agentgraph/memory"
	mempg "github.com/agentgraph/agentgraph/memory/postgres"
)

// openPostgres opens the pool of Config.Postgres, which every store
// shares, and the conversation store (with its cross-instance locks) and
// the conversation list on it. The tables are
// created or migrated; several instances starting at once is safe.
func (b *Bot) openPostgres(ctx context.Context) (memory.Store, error) {
	pool, err := pgxpool.New(ctx, b.cfg.Postgres)
	if err != nil {
		return nil, fmt.Errorf("chatbot: Config.Postgres: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { pool.Close(); return nil })
	if err := pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("chatbot: Config.Postgres: PostgreSQL does not answer at %s: %w", pool.Config().ConnConfig.Host, err)
	}
	b.pg = pool
	b.stores.dir = "" // no SQLite files
	b.stores.servers = append(b.stores.servers, serverCheck{name: "postgres", ping: pool.Ping})
	schema := b.cfg.PostgresSchema
	ms, err := mempg.New(ctx, mempg.Config{Pool: pool, Schema: schema, Logger: b.log, LockLease: b.cfg.InstanceLease})
	if err != nil {
		return nil, fmt.Errorf("chatbot: conversation store: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { ms.Close(); return nil })
	items, err := mempg.NewItems(ctx, mempg.Config{Pool: pool, Schema: schema, Logger: b.log})
	if err != nil {
		return nil, fmt.Errorf("chatbot: conversation list: %w", err)
	}
	b.convIndex = &conversationIndex{items: items, log: b.log}
	return ms, nil
}

// postgresDocuments opens the document store on Config.Postgres.
func (b *Bot) postgresDocuments(ctx context.Context) (document.Store, error) {
	st, err := docpg.New(ctx, docpg.Config{Pool: b.pg, Schema: b.cfg.PostgresSchema, Logger: b.log})
	if err != nil {
		return nil, fmt.Errorf("chatbot: document store: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { st.Close(); return nil })
	return st, nil
}

// postgresCognition opens the cognition store on Config.Postgres; it is
// also the durable learning queue (cognition.Config.Tasks), whose tasks
// any instance's workers claim with FOR UPDATE SKIP LOCKED.
func (b *Bot) postgresCognition(ctx context.Context) (cognition.Store, cognition.TaskQueue, error) {
	st, err := cogpg.New(ctx, cogpg.Config{Pool: b.pg, Schema: b.cfg.PostgresSchema, Logger: b.log})
	if err != nil {
		return nil, nil, fmt.Errorf("chatbot: cognition store: %w", err)
	}
	b.closers = append(b.closers, func(context.Context) error { st.Close(); return nil })
	return st, st, nil
}
