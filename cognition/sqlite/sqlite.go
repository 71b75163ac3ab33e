// Package sqlite keeps cognition's profiles, episodes and identities
// ([cognition.Store]) in an SQLite database file, with the pure-Go
// modernc.org/sqlite driver: no cgo, no server.
//
// Three tables hold the data: cognition_profiles (one row per user, the
// profile as JSON), cognition_episodes (one row per episode, keyed by user
// and episode ID, indexed by user) and cognition_identities (one row per
// agent, as JSON). [New] creates them, or brings them up to date, with
// versioned migrations recorded in cognition_migrations. The tables can
// live in the same file as those of package memory/sqlite.
//
// Updates run in immediate transactions (BEGIN IMMEDIATE), which take
// SQLite's write lock first and wait up to Config.BusyTimeout for it, so
// read-modify-write updates from goroutines or processes sharing the file
// are atomic.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/internal/update"
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
	// "_txlock=immediate" and a busy timeout in its DSN (see [DSN]), or
	// concurrent updates may fail with SQLITE_BUSY.
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

// DSN returns the data source name New uses for a database file: WAL
// journal, immediate write transactions and the given busy timeout.
func DSN(path string, busyTimeout time.Duration) string {
	return sqlitedb.DSN(path, sqlitedb.Options{BusyTimeout: busyTimeout})
}

// Store is a [cognition.Store] in SQLite. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	owned bool
	log   *zap.Logger
}

var _ cognition.Store = (*Store)(nil)

// New opens (with cfg.Path) and migrates (unless cfg.SkipMigrate) the
// database and returns the store.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{log: cfg.Logger}
	var err error
	if s.db, s.owned, err = sqlitedb.Setup(ctx, cfg.DB, cfg.Path, sqlitedb.Options{BusyTimeout: cfg.BusyTimeout}, s.migrations(), !cfg.SkipMigrate); err != nil {
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
	`CREATE TABLE cognition_profiles (
		user_id TEXT PRIMARY KEY,
		data    TEXT NOT NULL,
		updated INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE TABLE cognition_episodes (
		user_id         TEXT NOT NULL,
		id              TEXT NOT NULL,
		conversation_id TEXT NOT NULL DEFAULT '',
		summary         TEXT NOT NULL,
		topics          TEXT NOT NULL DEFAULT '[]',
		outcome         TEXT NOT NULL DEFAULT '',
		importance      REAL NOT NULL,
		mentions        INTEGER NOT NULL,
		access_count    INTEGER NOT NULL DEFAULT 0,
		created         INTEGER NOT NULL,
		updated         INTEGER NOT NULL,
		last_accessed   INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (user_id, id)
	) WITHOUT ROWID;
	CREATE TABLE cognition_identities (
		agent   TEXT PRIMARY KEY,
		data    TEXT NOT NULL,
		updated INTEGER NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE cognition_tasks (
		id           INTEGER PRIMARY KEY AUTOINCREMENT,
		kind         TEXT NOT NULL,
		user_id      TEXT NOT NULL DEFAULT '',
		payload      BLOB NOT NULL,
		state        TEXT NOT NULL DEFAULT 'pending',
		attempts     INTEGER NOT NULL DEFAULT 0,
		max_attempts INTEGER NOT NULL,
		last_error   TEXT NOT NULL DEFAULT '',
		token        TEXT NOT NULL DEFAULT '',
		lease_until  INTEGER NOT NULL DEFAULT 0,
		created      INTEGER NOT NULL
	);
	CREATE INDEX cognition_tasks_ready ON cognition_tasks (state, id)`,
}

// Migrate creates the tables or brings them up to date, in one immediate
// transaction, recording each applied version in cognition_migrations; it
// is idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	return sqlitedb.Migrate(ctx, s.db, s.migrations())
}

func (s *Store) migrations() sqlitedb.Migrations {
	return sqlitedb.Migrations{
		Table: "cognition_migrations", Steps: migrations, Logger: s.log, Message: "sqlite: applied cognition migration",
	}
}

func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return sqlitedb.Tx(ctx, s.db, fn)
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Profile implements [cognition.Store].
func (s *Store) Profile(ctx context.Context, userID string) (cognition.Profile, error) {
	return get(ctx, s, update.Profiles, profileQuery, userID)
}

// UpdateProfile implements [cognition.Store].
func (s *Store) UpdateProfile(ctx context.Context, userID string, fn func(*cognition.Profile) error) (cognition.Profile, error) {
	return put(ctx, s, update.Profiles, profileQuery, `INSERT INTO cognition_profiles (user_id, data, updated) VALUES (?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET data = excluded.data, updated = excluded.updated`, userID, fn)
}

// The queries that load a profile and an identity.
const (
	profileQuery  = `SELECT data FROM cognition_profiles WHERE user_id = ?`
	identityQuery = `SELECT data FROM cognition_identities WHERE agent = ?`
)

// loadJSON returns the JSON value of the row that query finds for key,
// through q, or zero when there is none; what names it in errors.
func loadJSON[T any](ctx context.Context, q querier, query, key, what string, zero T) (T, error) {
	return sqlstore.JSON(q.QueryRowContext(ctx, query, key), sql.ErrNoRows, what, zero)
}

// get returns the record r of id, which query loads.
func get[T any](ctx context.Context, s *Store, r update.Record[T], query, id string) (T, error) {
	return update.Get(r, "sqlite", id, func(none T) (T, error) { return loadJSON(ctx, s.db, query, id, r.What, none) })
}

// put updates the record r of id with fn, in a write transaction: it
// loads the record with load and saves it with save, whose arguments are
// id, the record's JSON and the time in Unix nanoseconds.
func put[T any](ctx context.Context, s *Store, r update.Record[T], load, save, id string, fn func(*T) error) (T, error) {
	return update.Put(r, "sqlite", id, fn,
		func(body func(*sql.Tx) error) error { return s.tx(ctx, body) },
		func(tx *sql.Tx, none T) (T, error) { return loadJSON(ctx, tx, load, id, r.What, none) },
		func(tx *sql.Tx, data []byte) error {
			_, err := tx.ExecContext(ctx, save, id, string(data), time.Now().UnixNano())
			return err
		})
}

const episodeColumns = `id, user_id, conversation_id, summary, topics, outcome, importance, mentions, access_count, created, updated, last_accessed`

func episodes(ctx context.Context, q querier, userID string) ([]cognition.Episode, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+episodeColumns+` FROM cognition_episodes WHERE user_id = ? ORDER BY id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []cognition.Episode
	for rows.Next() {
		var (
			e                              cognition.Episode
			topics, outcome                string
			created, updated, lastAccessed int64
		)
		if err := rows.Scan(&e.ID, &e.UserID, &e.ConversationID, &e.Summary, &topics, &outcome,
			&e.Importance, &e.Mentions, &e.AccessCount, &created, &updated, &lastAccessed); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(topics), &e.Topics); err != nil {
			return nil, fmt.Errorf("decode topics of episode %s: %w", e.ID, err)
		}
		e.Outcome = cognition.Outcome(outcome)
		e.Created, e.Updated = fromNanos(created), fromNanos(updated)
		e.LastAccessed = fromNanos(lastAccessed)
		out = append(out, e)
	}
	return out, rows.Err()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Episodes implements [cognition.Store].
func (s *Store) Episodes(ctx context.Context, userID string) ([]cognition.Episode, error) {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return nil, err
	}
	out, err := episodes(ctx, s.db, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: episodes of %q: %w", userID, err)
	}
	return out, nil
}

// UpdateEpisodes implements [cognition.Store].
func (s *Store) UpdateEpisodes(ctx context.Context, userID string, fn func([]cognition.Episode) (cognition.EpisodeChanges, error)) error {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return err
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := episodes(ctx, tx, userID)
		if err != nil {
			return err
		}
		ch, err := update.Episodes(userID, cur, fn)
		if err != nil {
			return err
		}
		for _, id := range ch.Delete {
			if _, err := tx.ExecContext(ctx, `DELETE FROM cognition_episodes WHERE user_id = ? AND id = ?`, userID, id); err != nil {
				return err
			}
		}
		for _, e := range ch.Put {
			topics, err := json.Marshal(e.Topics)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO cognition_episodes (`+episodeColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				e.ID, userID, e.ConversationID, e.Summary, string(topics), string(e.Outcome),
				e.Importance, e.Mentions, e.AccessCount, toNanos(e.Created), toNanos(e.Updated), toNanos(e.LastAccessed))
			if err != nil {
				return err
			}
		}
		return nil
	})
	return update.Err(err, "sqlite: update episodes of %q", userID)
}

// Touch implements [cognition.Store].
func (s *Store) Touch(ctx context.Context, userID string, ids []string, at time.Time) error {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+2)
	args = append(args, toNanos(at), userID)
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE cognition_episodes SET access_count = access_count + 1, last_accessed = ?
		WHERE user_id = ? AND id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return fmt.Errorf("sqlite: touch episodes of %q: %w", userID, err)
	}
	return nil
}

// Identity implements [cognition.Store].
func (s *Store) Identity(ctx context.Context, agent string) (cognition.Identity, error) {
	return get(ctx, s, update.Identities, identityQuery, agent)
}

// UpdateIdentity implements [cognition.Store].
func (s *Store) UpdateIdentity(ctx context.Context, agent string, fn func(*cognition.Identity) error) (cognition.Identity, error) {
	return put(ctx, s, update.Identities, identityQuery, `INSERT INTO cognition_identities (agent, data, updated) VALUES (?, ?, ?)
		ON CONFLICT (agent) DO UPDATE SET data = excluded.data, updated = excluded.updated`, agent, fn)
}

// DeleteUser implements [cognition.Store].
func (s *Store) DeleteUser(ctx context.Context, userID string) error {
	if userID == "" {
		return cognition.ValidateID("user ID", userID)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM cognition_episodes WHERE user_id = ?`, userID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM cognition_profiles WHERE user_id = ?`, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete user %q: %w", userID, err)
	}
	return nil
}
