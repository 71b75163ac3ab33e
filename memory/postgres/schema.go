package postgres

import (
	"context"
	"strings"

	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// migrations are applied in order, once each; version i+1 is migrations[i].
// Never edit a released migration; append a new one. {conversations},
// {messages} and {locks} stand for the schema-qualified table names.
var migrations = []string{
	`CREATE TABLE {conversations} (
		id              TEXT PRIMARY KEY,
		last_seq        BIGINT NOT NULL DEFAULT 0,
		summary         TEXT NOT NULL DEFAULT '',
		summary_through BIGINT NOT NULL DEFAULT 0,
		summary_updated TIMESTAMPTZ,
		created         TIMESTAMPTZ NOT NULL DEFAULT now()
	);
	CREATE TABLE {messages} (
		conversation_id TEXT NOT NULL REFERENCES {conversations} (id) ON DELETE CASCADE,
		seq             BIGINT NOT NULL,
		role            TEXT NOT NULL,
		name            TEXT NOT NULL DEFAULT '',
		content         TEXT NOT NULL,
		created         TIMESTAMPTZ NOT NULL,
		PRIMARY KEY (conversation_id, seq)
	)`,
	// Conversation locks: lease rows (internal/pglease). Unlogged: a
	// lock is taken and released without waiting for a WAL flush, and a
	// database crash frees every lock, as it ends every session.
	`CREATE UNLOGGED TABLE {locks} (
		conversation_id text PRIMARY KEY,
		token           text NOT NULL,
		until           timestamptz NOT NULL,
		waited          boolean NOT NULL DEFAULT false
	)`,
}

type queries struct {
	conversations, messages, locks string

	lastSeq, reserve, insert, load, history, summaryState, saveSummary, delete string
}

func newQueries(schema string) queries {
	ident := func(table string) string { return pgdb.Table(schema, table) }
	q := queries{
		conversations: ident("memory_conversations"),
		messages:      ident("memory_messages"),
		locks:         ident("memory_locks"),
	}
	r := strings.NewReplacer("{conversations}", q.conversations, "{messages}", q.messages)
	q.lastSeq = r.Replace(`SELECT last_seq FROM {conversations} WHERE id = $1`)
	q.reserve = r.Replace(`INSERT INTO {conversations} AS c (id, last_seq) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET last_seq = c.last_seq + EXCLUDED.last_seq
		RETURNING last_seq`)
	q.insert = r.Replace(`INSERT INTO {messages} (conversation_id, seq, role, name, content, created)
		SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])`)
	q.load = r.Replace(`SELECT c.summary, c.summary_through, c.summary_updated, c.last_seq,
			m.seq, m.role, m.name, m.content, m.created
		FROM {conversations} c
		LEFT JOIN {messages} m ON m.conversation_id = c.id AND m.seq > c.last_seq - $2
		WHERE c.id = $1
		ORDER BY m.seq`)
	q.history = r.Replace(`SELECT seq, role, name, content, created FROM {messages}
		WHERE conversation_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`)
	q.summaryState = r.Replace(`SELECT last_seq, summary_through FROM {conversations} WHERE id = $1`)
	q.saveSummary = r.Replace(`UPDATE {conversations}
		SET summary = $2, summary_through = $3, summary_updated = $4
		WHERE id = $1 AND summary_through = $5 AND $3 <= last_seq`)
	q.delete = r.Replace(`DELETE FROM {conversations} WHERE id = $1`)
	return q
}

// Migrate creates the tables or brings them up to date. Each migration runs
// once, recorded in memory_migrations, in one transaction, so Migrate
// is idempotent; a transaction-scoped advisory lock lets several processes
// start at once.
func (s *Store) Migrate(ctx context.Context) error {
	return pgdb.Migrate(ctx, s.pool, pgdb.Migrations{
		Schema:   s.schema,
		Table:    "memory_migrations",
		Lock:     "agentgraph/memory/postgres",
		Steps:    migrations,
		Replacer: strings.NewReplacer("{conversations}", s.q.conversations, "{messages}", s.q.messages, "{locks}", s.q.locks),
		Logger:   s.log,
		Message:  "postgres: applied migration",
	})
}
