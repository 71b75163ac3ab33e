// Package sqlite keeps documents ([document.Store]) in an SQLite database
// file, with the pure-Go modernc.org/sqlite driver: no cgo, no server. It
// suits single-node services, desktop and edge agents, and tests that
// should survive a restart.
//
// Two tables hold the data: document_documents (one row per document, with
// its original content) and document_chunks (one row per chunk, deleted
// with its document). [New] creates them, or brings them up to date, with
// versioned migrations recorded in document_migrations; running them again
// is safe.
//
// Writes take SQLite's write lock at the start of their transaction
// (BEGIN IMMEDIATE) and wait up to Config.BusyTimeout for it, so the
// per-conversation and per-owner bounds of Create hold across goroutines
// and processes sharing the file.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/internal/stored"
	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/internal/sqlstore"
	"go.uber.org/zap"
)

// DefaultBusyTimeout is how long a write waits for another writer's lock
// when Config.BusyTimeout is zero.
const DefaultBusyTimeout = sqlitedb.DefaultBusyTimeout

// Config configures [New]. Set Path or DB.
type Config struct {
	// Path is the database file, created if missing; ":memory:" keeps the
	// database in memory for the life of the Store. New opens it in WAL
	// mode with immediate write transactions, and [Store.Close] closes it.
	Path string
	// DB is an open database to use instead of Path, opened with the
	// modernc.org/sqlite driver; the Store does not close it. Open it with
	// "_txlock=immediate" and a busy timeout in its DSN (memory/sqlite.DSN
	// builds one), or concurrent creates may fail with SQLITE_BUSY.
	DB *sql.DB
	// BusyTimeout is how long a write waits for the lock held by another
	// writer, with Path. Zero means [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// SkipMigrate leaves the tables alone in New; run [Store.Migrate]
	// before use.
	SkipMigrate bool
	// Logger receives a line per applied migration. Nil means no logging.
	Logger *zap.Logger
}

// Store is a [document.Store] in SQLite. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	owned bool
	log   *zap.Logger
}

var _ document.Store = (*Store)(nil)

// New opens (with cfg.Path) and migrates (unless cfg.SkipMigrate) the
// database and returns the store.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{log: cfg.Logger}
	var err error
	o := sqlitedb.Options{BusyTimeout: cfg.BusyTimeout, ForeignKeys: true}
	if s.db, s.owned, err = sqlitedb.Setup(ctx, cfg.DB, cfg.Path, o, s.migrations(), !cfg.SkipMigrate); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database if the Store opened it from Config.Path.
func (s *Store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// migrations are applied in order, once each; version i+1 is
// migrations[i]. Never edit a released migration; append a new one.
var migrations = []string{
	`CREATE TABLE document_documents (
		id              TEXT PRIMARY KEY,
		conversation_id TEXT NOT NULL,
		owner           TEXT NOT NULL DEFAULT '',
		name            TEXT NOT NULL,
		content_type    TEXT NOT NULL,
		size            INTEGER NOT NULL,
		status          TEXT NOT NULL,
		error           TEXT NOT NULL DEFAULT '',
		summary         TEXT NOT NULL DEFAULT '',
		chunks          INTEGER NOT NULL DEFAULT 0,
		tokens          INTEGER NOT NULL DEFAULT 0,
		created         INTEGER NOT NULL,
		updated         INTEGER NOT NULL,
		content         BLOB NOT NULL
	);
	CREATE INDEX document_documents_conversation ON document_documents (conversation_id, created, id);
	CREATE INDEX document_documents_status ON document_documents (status, created, id);
	CREATE TABLE document_chunks (
		document_id TEXT NOT NULL REFERENCES document_documents (id) ON DELETE CASCADE,
		idx         INTEGER NOT NULL,
		text        TEXT NOT NULL,
		start       INTEGER NOT NULL,
		end_        INTEGER NOT NULL,
		rune_start  INTEGER NOT NULL,
		rune_end    INTEGER NOT NULL,
		tokens      INTEGER NOT NULL,
		summary     TEXT NOT NULL,
		PRIMARY KEY (document_id, idx)
	) WITHOUT ROWID`,
	// Usage counts and sums an owner's documents from this index alone.
	`CREATE INDEX document_documents_owner ON document_documents (owner, size)`,
}

// Migrate creates the tables or brings them up to date, in one immediate
// transaction, recording each applied version in document_migrations; it is
// idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	return sqlitedb.Migrate(ctx, s.db, s.migrations())
}

func (s *Store) migrations() sqlitedb.Migrations {
	return sqlitedb.Migrations{
		Table: "document_migrations", Steps: migrations, Logger: s.log, Message: "sqlite: applied document migration",
	}
}

func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return sqlitedb.Tx(ctx, s.db, fn)
}

const docColumns = `id, conversation_id, owner, name, content_type, size, status, error, summary, chunks, tokens, created, updated`

func scanDoc(row sqlstore.Row) (document.Document, error) {
	var d document.Document
	var status string
	var created, updated int64
	err := row.Scan(&d.ID, &d.ConversationID, &d.Owner, &d.Name, &d.ContentType, &d.Size, &status,
		&d.Error, &d.Summary, &d.Chunks, &d.Tokens, &created, &updated)
	d.Status, d.Created, d.Updated = document.Status(status), time.Unix(0, created), time.Unix(0, updated)
	return d, err
}

// Create implements [document.Store]. Its transaction takes the write lock
// at once (BEGIN IMMEDIATE), so the counts of q's checks hold until the
// insert, for every connection and process on the file.
func (s *Store) Create(ctx context.Context, doc document.Document, content []byte, q document.Quota) error {
	doc, content, err := stored.Create(doc, content)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM document_documents WHERE id = ?`, doc.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %q", document.ErrExists, doc.ID)
		}
		if q.PerConversation > 0 {
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM document_documents WHERE conversation_id = ?`, doc.ConversationID).Scan(&n); err != nil {
				return err
			}
			if n >= q.PerConversation {
				return fmt.Errorf("%w: conversation %q holds %d documents, the limit; delete one first", document.ErrTooMany, doc.ConversationID, n)
			}
		}
		if q.BindsOwner(doc) {
			var u document.Usage
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM document_documents WHERE owner = ?`, doc.Owner).Scan(&u.Documents, &u.Bytes); err != nil {
				return err
			}
			if err := q.CheckOwner(doc, u); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO document_documents (`+docColumns+`, content)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			doc.ID, doc.ConversationID, doc.Owner, doc.Name, doc.ContentType, doc.Size, string(doc.Status),
			doc.Error, doc.Summary, doc.Chunks, doc.Tokens, doc.Created.UnixNano(), doc.Updated.UnixNano(), content)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create document %q: %w", doc.ID, err)
	}
	return nil
}

// Get implements [document.Store].
func (s *Store) Get(ctx context.Context, id string) (document.Document, error) {
	d, err := scanDoc(s.db.QueryRowContext(ctx, `SELECT `+docColumns+` FROM document_documents WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return document.Document{}, stored.NotFound(id)
	}
	if err != nil {
		return document.Document{}, fmt.Errorf("sqlite: get document %q: %w", id, err)
	}
	return d, nil
}

// List implements [document.Store].
func (s *Store) List(ctx context.Context, conversationID string) ([]document.Document, error) {
	docs, err := s.query(ctx, `SELECT `+docColumns+` FROM document_documents
		WHERE conversation_id = ? ORDER BY created, id`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list documents of %q: %w", conversationID, err)
	}
	return docs, nil
}

// Usage implements [document.Store].
func (s *Store) Usage(ctx context.Context, owner string) (document.Usage, error) {
	var u document.Usage
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM document_documents WHERE owner = ?`, owner).Scan(&u.Documents, &u.Bytes)
	if err != nil {
		return document.Usage{}, fmt.Errorf("sqlite: usage of owner %q: %w", owner, err)
	}
	return u, nil
}

// Conversations implements [document.Store].
func (s *Store) Conversations(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT conversation_id FROM document_documents ORDER BY conversation_id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list conversations with documents: %w", err)
	}
	defer rows.Close()
	ids, err := sqlstore.Collect(rows, func(row sqlstore.Row) (id string, err error) { return id, row.Scan(&id) })
	if err != nil {
		return nil, fmt.Errorf("sqlite: list conversations with documents: %w", err)
	}
	return ids, nil
}

// Unfinished implements [document.Store].
func (s *Store) Unfinished(ctx context.Context) ([]document.Document, error) {
	docs, err := s.query(ctx, `SELECT `+docColumns+` FROM document_documents
		WHERE status IN (?, ?) ORDER BY created, id`, string(document.StatusPending), string(document.StatusProcessing))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list unfinished documents: %w", err)
	}
	return docs, nil
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]document.Document, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Collect(rows, scanDoc)
}

// Content implements [document.Store].
func (s *Store) Content(ctx context.Context, id string) ([]byte, error) {
	var content []byte
	err := s.db.QueryRowContext(ctx, `SELECT content FROM document_documents WHERE id = ?`, id).Scan(&content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stored.NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: content of document %q: %w", id, err)
	}
	return content, nil
}

// Chunks implements [document.Store].
func (s *Store) Chunks(ctx context.Context, id string) ([]document.Chunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT d.id, c.idx, c.text, c.start, c.end_, c.rune_start, c.rune_end, c.tokens, c.summary
		FROM document_documents d LEFT JOIN document_chunks c ON c.document_id = d.id
		WHERE d.id = ? ORDER BY c.idx`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: chunks of document %q: %w", id, err)
	}
	defer rows.Close()
	var out []document.Chunk
	found := false
	for rows.Next() {
		found = true
		var docID string
		var idx, start, end, rs, re, tokens sql.NullInt64
		var text, summary sql.NullString
		if err := rows.Scan(&docID, &idx, &text, &start, &end, &rs, &re, &tokens, &summary); err != nil {
			return nil, fmt.Errorf("sqlite: chunks of document %q: %w", id, err)
		}
		if idx.Valid {
			out = append(out, document.Chunk{Index: int(idx.Int64), Text: text.String, Start: int(start.Int64), End: int(end.Int64),
				RuneStart: int(rs.Int64), RuneEnd: int(re.Int64), Tokens: int(tokens.Int64), Summary: summary.String})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: chunks of document %q: %w", id, err)
	}
	if !found {
		return nil, stored.NotFound(id)
	}
	return out, nil
}

// SetStatus implements [document.Store].
func (s *Store) SetStatus(ctx context.Context, id string, status document.Status, errText string) (document.Document, error) {
	errText, err := stored.Status(status, errText)
	if err != nil {
		return document.Document{}, err
	}
	var d document.Document
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = scanDoc(tx.QueryRowContext(ctx, `UPDATE document_documents
			SET status = ?, error = ?, summary = '', chunks = 0, updated = ?
			WHERE id = ? RETURNING `+docColumns, string(status), errText, time.Now().UnixNano(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return stored.NotFound(id)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM document_chunks WHERE document_id = ?`, id)
		return err
	})
	if err != nil {
		return document.Document{}, fmt.Errorf("sqlite: set status of document %q: %w", id, err)
	}
	return d, nil
}

// Complete implements [document.Store].
func (s *Store) Complete(ctx context.Context, id string, summary string, chunks []document.Chunk) (document.Document, error) {
	if err := document.CheckChunks(chunks); err != nil {
		return document.Document{}, err
	}
	var d document.Document
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = scanDoc(tx.QueryRowContext(ctx, `UPDATE document_documents
			SET status = ?, error = '', summary = ?, chunks = ?, updated = ?
			WHERE id = ? RETURNING `+docColumns, string(document.StatusReady), summary, len(chunks), time.Now().UnixNano(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return stored.NotFound(id)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM document_chunks WHERE document_id = ?`, id); err != nil {
			return err
		}
		// Insert in batches within SQLite's limit of bound parameters.
		const perRow, batch = 9, 100
		for len(chunks) > 0 {
			n := min(len(chunks), batch)
			var q strings.Builder
			q.WriteString(`INSERT INTO document_chunks (document_id, idx, text, start, end_, rune_start, rune_end, tokens, summary) VALUES `)
			args := make([]any, 0, perRow*n)
			for i, c := range chunks[:n] {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
				args = append(args, id, c.Index, c.Text, c.Start, c.End, c.RuneStart, c.RuneEnd, c.Tokens, c.Summary)
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
			chunks = chunks[n:]
		}
		return nil
	})
	if err != nil {
		return document.Document{}, fmt.Errorf("sqlite: complete document %q: %w", id, err)
	}
	return d, nil
}

// Delete implements [document.Store].
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM document_chunks WHERE document_id = ?`, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM document_documents WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return stored.NotFound(id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete document %q: %w", id, err)
	}
	return nil
}
