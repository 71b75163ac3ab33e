// Package postgres keeps documents ([document.Store]) in PostgreSQL through
// pgx, for services that run on several nodes.
//
// Two tables hold them: document_documents (one row per document, with its
// original content as bytea) and document_chunks (one row per chunk,
// deleted with its document). A create takes a transaction-scoped advisory
// lock on its conversation while it counts the conversation's documents,
// so the per-conversation limit holds across any number of processes.
//
// [New] creates the tables, or brings them up to date, with versioned
// migrations recorded in document_migrations; running them again, or from
// several processes at once, is safe. Set Config.Schema to keep the tables
// out of the default schema.
//
// PostgreSQL keeps times to the microsecond; Created and Updated come back
// truncated to it.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/internal/stored"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/sqlstore"
	"github.com/agentgraph/agentgraph/internal/storeid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Config configures [New]. Set Pool or DSN.
type Config struct {
	// Pool is the connection pool to use. The Store does not close it.
	Pool *pgxpool.Pool
	// DSN opens a pool of the Store's own when Pool is nil, e.g.
	// "postgres://user@host:5432/db?sslmode=disable"; [Store.Close]
	// closes it.
	DSN string
	// Schema is the schema that holds the tables; New creates it if
	// needed. Empty means the connection's search_path (normally "public").
	Schema string
	// SkipMigrate leaves the tables alone in New; run [Store.Migrate] (or
	// your own migration tool) before use.
	SkipMigrate bool
	// Logger receives a line per applied migration. Nil means no logging.
	Logger *zap.Logger
}

// Store is a [document.Store] in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	owned bool
	log   *zap.Logger
	q     queries
}

var _ document.Store = (*Store)(nil)

// New connects (when cfg.DSN is used) and migrates (unless
// cfg.SkipMigrate), and returns the store.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{log: cfg.Logger, q: newQueries(cfg.Schema)}
	var err error
	if s.pool, s.owned, err = pgdb.Setup(ctx, cfg.Pool, cfg.DSN, s.migrations(), !cfg.SkipMigrate); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the pool if the Store opened it from Config.DSN.
func (s *Store) Close() {
	if s.owned {
		s.pool.Close()
	}
}

// migrations are applied in order, once each; version i+1 is migrations[i].
// Never edit a released migration; append a new one. {documents} and
// {chunks} stand for the schema-qualified table names.
var migrations = []string{
	`CREATE TABLE {documents} (
		id              TEXT PRIMARY KEY,
		conversation_id TEXT NOT NULL,
		owner           TEXT NOT NULL DEFAULT '',
		name            TEXT NOT NULL,
		content_type    TEXT NOT NULL,
		size            BIGINT NOT NULL,
		status          TEXT NOT NULL,
		error           TEXT NOT NULL DEFAULT '',
		summary         TEXT NOT NULL DEFAULT '',
		chunks          INT NOT NULL DEFAULT 0,
		tokens          INT NOT NULL DEFAULT 0,
		created         TIMESTAMPTZ NOT NULL,
		updated         TIMESTAMPTZ NOT NULL,
		content         BYTEA NOT NULL
	);
	CREATE INDEX ON {documents} (conversation_id, created, id);
	CREATE INDEX ON {documents} (status, created, id);
	CREATE TABLE {chunks} (
		document_id TEXT NOT NULL REFERENCES {documents} (id) ON DELETE CASCADE,
		idx         INT NOT NULL,
		text        TEXT NOT NULL,
		start_byte  INT NOT NULL,
		end_byte    INT NOT NULL,
		rune_start  INT NOT NULL,
		rune_end    INT NOT NULL,
		tokens      INT NOT NULL,
		summary     TEXT NOT NULL,
		PRIMARY KEY (document_id, idx)
	)`,
	// Usage counts and sums an owner's documents from this index. Its
	// build holds a SHARE lock on the documents table (writes wait):
	// CONCURRENTLY cannot run in the migration's transaction.
	`CREATE INDEX ON {documents} (owner, size)`,
}

const docColumns = `id, conversation_id, owner, name, content_type, size, status, error, summary, chunks, tokens, created, updated`

type queries struct {
	schema, documents, chunks string

	lock, count, insert, get, list, conversations, usage, unfinished, content, chunkRows, exists, setStatus, complete, deleteChunks, insertChunks, delete string
}

func newQueries(schema string) queries {
	ident := func(table string) string { return pgdb.Table(schema, table) }
	q := queries{schema: schema, documents: ident("document_documents"), chunks: ident("document_chunks")}
	r := q.replacer()
	// The locks are taken in the order of their keys' hashes, whatever
	// the order of the names, so that two creations never wait for each
	// other (OFFSET 0 keeps the sort below the calls).
	q.lock = `SELECT count(pg_advisory_xact_lock(h)) FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($1::text[]) AS k ORDER BY h OFFSET 0) AS l`
	q.count = r.Replace(`SELECT COUNT(*) FROM {documents} WHERE conversation_id = $1`)
	q.insert = r.Replace(`INSERT INTO {documents} (` + docColumns + `, content)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`)
	q.get = r.Replace(`SELECT ` + docColumns + ` FROM {documents} WHERE id = $1`)
	q.list = r.Replace(`SELECT ` + docColumns + ` FROM {documents} WHERE conversation_id = $1 ORDER BY created, id`)
	q.conversations = r.Replace(`SELECT DISTINCT conversation_id FROM {documents} ORDER BY conversation_id`)
	q.usage = r.Replace(`SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM {documents} WHERE owner = $1`)
	q.unfinished = r.Replace(`SELECT ` + docColumns + ` FROM {documents} WHERE status IN ('pending', 'processing') ORDER BY created, id`)
	q.content = r.Replace(`SELECT content FROM {documents} WHERE id = $1`)
	q.chunkRows = r.Replace(`SELECT idx, text, start_byte, end_byte, rune_start, rune_end, tokens, summary
		FROM {chunks} WHERE document_id = $1 ORDER BY idx`)
	q.exists = r.Replace(`SELECT true FROM {documents} WHERE id = $1`)
	q.setStatus = r.Replace(`UPDATE {documents} SET status = $2, error = $3, summary = '', chunks = 0, updated = $4
		WHERE id = $1 RETURNING ` + docColumns)
	q.complete = r.Replace(`UPDATE {documents} SET status = 'ready', error = '', summary = $2, chunks = $3, updated = $4
		WHERE id = $1 RETURNING ` + docColumns)
	q.deleteChunks = r.Replace(`DELETE FROM {chunks} WHERE document_id = $1`)
	q.insertChunks = r.Replace(`INSERT INTO {chunks} (document_id, idx, text, start_byte, end_byte, rune_start, rune_end, tokens, summary)
		SELECT $1, * FROM unnest($2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int[], $8::int[], $9::text[])`)
	q.delete = r.Replace(`DELETE FROM {documents} WHERE id = $1`)
	return q
}

func (q queries) replacer() *strings.Replacer {
	return strings.NewReplacer("{documents}", q.documents, "{chunks}", q.chunks)
}

// Migrate creates the tables or brings them up to date. Each migration runs
// once, recorded in document_migrations, in one transaction, so Migrate is
// idempotent; a transaction-scoped advisory lock lets several processes
// start at once.
func (s *Store) Migrate(ctx context.Context) error {
	return pgdb.Migrate(ctx, s.pool, s.migrations())
}

func (s *Store) migrations() pgdb.Migrations {
	return pgdb.Migrations{
		Schema:   s.q.schema,
		Table:    "document_migrations",
		Lock:     "agentgraph/document/postgres",
		Steps:    migrations,
		Replacer: s.q.replacer(),
		Logger:   s.log,
		Message:  "postgres: applied document migration",
	}
}

func scanDoc(row sqlstore.Row) (document.Document, error) {
	var d document.Document
	var status string
	err := row.Scan(&d.ID, &d.ConversationID, &d.Owner, &d.Name, &d.ContentType, &d.Size, &status,
		&d.Error, &d.Summary, &d.Chunks, &d.Tokens, &d.Created, &d.Updated)
	d.Status = document.Status(status)
	return d, err
}

// Create implements [document.Store]. With a bound in q it takes a
// transaction-scoped advisory lock on the conversation, the owner or both
// (in one order, so that two creations cannot wait for each other), then
// checks the id is new, counts and inserts, in a read committed
// transaction whatever the database's default isolation: creations in the
// same conversation or of the same owner, from any process on the
// database, run one after another.
func (s *Store) Create(ctx context.Context, doc document.Document, content []byte, q document.Quota) error {
	doc, content, err := stored.Create(doc, content)
	if err != nil {
		return err
	}
	var keys []string
	if q.PerConversation > 0 {
		keys = append(keys, "agentgraph/document:"+s.q.documents+":"+doc.ConversationID)
	}
	if q.BindsOwner(doc) {
		keys = append(keys, "agentgraph/document-owner:"+s.q.documents+":"+doc.Owner)
	}
	// Read committed whatever the database's default_transaction_isolation:
	// each statement sees what was committed before it, so the counts read
	// after the lock see the creations that held it before. Under
	// repeatable read the snapshot would be taken by the lock's statement,
	// before the lock is granted, and two racing creations would both fit.
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if len(keys) > 0 {
			if _, err := tx.Exec(ctx, s.q.lock, keys); err != nil {
				return err
			}
			// An id the store holds is ErrExists, not a quota refusal:
			// checked under the lock, which serializes creations bound
			// like this one.
			var found bool
			err := tx.QueryRow(ctx, s.q.exists, doc.ID).Scan(&found)
			switch {
			case err == nil:
				return fmt.Errorf("%w: %q", document.ErrExists, doc.ID)
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
		}
		if q.PerConversation > 0 {
			var n int
			if err := tx.QueryRow(ctx, s.q.count, doc.ConversationID).Scan(&n); err != nil {
				return err
			}
			if n >= q.PerConversation {
				return fmt.Errorf("%w: conversation %q holds %d documents, the limit; delete one first", document.ErrTooMany, doc.ConversationID, n)
			}
		}
		if q.BindsOwner(doc) {
			var u document.Usage
			if err := tx.QueryRow(ctx, s.q.usage, doc.Owner).Scan(&u.Documents, &u.Bytes); err != nil {
				return err
			}
			if err := q.CheckOwner(doc, u); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, s.q.insert, doc.ID, doc.ConversationID, doc.Owner, doc.Name, doc.ContentType, doc.Size,
			string(doc.Status), doc.Error, doc.Summary, doc.Chunks, doc.Tokens, doc.Created, doc.Updated, content)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %q", document.ErrExists, doc.ID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: create document %q: %w", doc.ID, err)
	}
	return nil
}

// Get implements [document.Store].
func (s *Store) Get(ctx context.Context, id string) (document.Document, error) {
	if !storeid.Storable(id) {
		return document.Document{}, stored.NotFound(id)
	}
	d, err := scanDoc(s.pool.QueryRow(ctx, s.q.get, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return document.Document{}, stored.NotFound(id)
	}
	if err != nil {
		return document.Document{}, fmt.Errorf("postgres: get document %q: %w", id, err)
	}
	return d, nil
}

// List implements [document.Store].
func (s *Store) List(ctx context.Context, conversationID string) ([]document.Document, error) {
	if !storeid.Storable(conversationID) {
		return nil, ctx.Err()
	}
	docs, err := s.query(ctx, s.q.list, conversationID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list documents of %q: %w", conversationID, err)
	}
	return docs, nil
}

// Conversations implements [document.Store].
func (s *Store) Conversations(ctx context.Context) ([]string, error) {
	ids, err := pgdb.Strings(ctx, s.pool, s.q.conversations)
	if err != nil {
		return nil, fmt.Errorf("postgres: list conversations with documents: %w", err)
	}
	return ids, nil
}

// Usage implements [document.Store].
func (s *Store) Usage(ctx context.Context, owner string) (document.Usage, error) {
	var u document.Usage
	if !storeid.Storable(owner) {
		return u, ctx.Err()
	}
	if err := s.pool.QueryRow(ctx, s.q.usage, owner).Scan(&u.Documents, &u.Bytes); err != nil {
		return document.Usage{}, fmt.Errorf("postgres: usage of owner %q: %w", owner, err)
	}
	return u, nil
}

// Unfinished implements [document.Store].
func (s *Store) Unfinished(ctx context.Context) ([]document.Document, error) {
	docs, err := s.query(ctx, s.q.unfinished)
	if err != nil {
		return nil, fmt.Errorf("postgres: list unfinished documents: %w", err)
	}
	return docs, nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]document.Document, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Collect(rows, scanDoc)
}

// Content implements [document.Store].
func (s *Store) Content(ctx context.Context, id string) ([]byte, error) {
	if !storeid.Storable(id) {
		return nil, stored.NotFound(id)
	}
	var content []byte
	err := s.pool.QueryRow(ctx, s.q.content, id).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, stored.NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: content of document %q: %w", id, err)
	}
	return content, nil
}

// Chunks implements [document.Store].
func (s *Store) Chunks(ctx context.Context, id string) ([]document.Chunk, error) {
	if !storeid.Storable(id) {
		return nil, stored.NotFound(id)
	}
	var out []document.Chunk
	// One snapshot for the existence check and the chunks.
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, s.q.exists, id).Scan(&ok); errors.Is(err, pgx.ErrNoRows) {
			return stored.NotFound(id)
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, s.q.chunkRows, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c document.Chunk
			if err := rows.Scan(&c.Index, &c.Text, &c.Start, &c.End, &c.RuneStart, &c.RuneEnd, &c.Tokens, &c.Summary); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: chunks of document %q: %w", id, err)
	}
	return out, nil
}

// SetStatus implements [document.Store].
func (s *Store) SetStatus(ctx context.Context, id string, status document.Status, errText string) (document.Document, error) {
	errText, err := stored.Status(status, errText)
	if err != nil {
		return document.Document{}, err
	}
	if !storeid.Storable(id) {
		return document.Document{}, stored.NotFound(id)
	}
	var d document.Document
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		d, err = scanDoc(tx.QueryRow(ctx, s.q.setStatus, id, string(status), errText, time.Now()))
		if errors.Is(err, pgx.ErrNoRows) {
			return stored.NotFound(id)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, s.q.deleteChunks, id)
		return err
	})
	if err != nil {
		return document.Document{}, fmt.Errorf("postgres: set status of document %q: %w", id, err)
	}
	return d, nil
}

// Complete implements [document.Store].
func (s *Store) Complete(ctx context.Context, id string, summary string, chunks []document.Chunk) (document.Document, error) {
	if err := document.CheckChunks(chunks); err != nil {
		return document.Document{}, err
	}
	if !storeid.Storable(id) {
		return document.Document{}, stored.NotFound(id)
	}
	n := len(chunks)
	idx, starts, ends, rs, re, tokens := make([]int, n), make([]int, n), make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	texts, sums := make([]string, n), make([]string, n)
	for i, c := range chunks {
		idx[i], texts[i], starts[i], ends[i], rs[i], re[i], tokens[i], sums[i] = c.Index, c.Text, c.Start, c.End, c.RuneStart, c.RuneEnd, c.Tokens, c.Summary
	}
	var d document.Document
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		d, err = scanDoc(tx.QueryRow(ctx, s.q.complete, id, summary, n, time.Now()))
		if errors.Is(err, pgx.ErrNoRows) {
			return stored.NotFound(id)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q.deleteChunks, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, s.q.insertChunks, id, idx, texts, starts, ends, rs, re, tokens, sums)
		return err
	})
	if err != nil {
		return document.Document{}, fmt.Errorf("postgres: complete document %q: %w", id, err)
	}
	return d, nil
}

// Delete implements [document.Store].
func (s *Store) Delete(ctx context.Context, id string) error {
	if !storeid.Storable(id) {
		return stored.NotFound(id)
	}
	tag, err := s.pool.Exec(ctx, s.q.delete, id)
	if err != nil {
		return fmt.Errorf("postgres: delete document %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return stored.NotFound(id)
	}
	return nil
}
