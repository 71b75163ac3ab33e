// Package postgres keeps cognition's profiles, episodes and identities
// ([cognition.Store]) in PostgreSQL through pgx.
//
// Three tables hold the data: cognition_profiles (one row per user, the
// profile as JSONB), cognition_episodes (one row per episode, keyed by user
// and episode ID) and cognition_identities (one row per agent, as JSONB).
// [New] creates them, or brings them up to date, with versioned migrations
// recorded in cognition_migrations; running them again, or from several
// processes at once, is safe. Set Config.Schema to keep the tables out of
// the default schema.
//
// Updates run in a transaction that first takes a transaction-scoped
// advisory lock on the user (or agent), so read-modify-write updates from
// any number of processes are atomic, for users with no rows yet too.
package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/internal/update"
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

// Store is a [cognition.Store] in PostgreSQL. It is safe for concurrent
// use.
type Store struct {
	pool  *pgxpool.Pool
	owned bool
	log   *zap.Logger
	q     queries
}

var _ cognition.Store = (*Store)(nil)

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
// Never edit a released migration; append a new one. {profiles},
// {episodes} and {identities} stand for the schema-qualified table names.
var migrations = []string{
	`CREATE TABLE {profiles} (
		user_id TEXT PRIMARY KEY,
		data    JSONB NOT NULL,
		updated TIMESTAMPTZ NOT NULL DEFAULT now()
	);
	CREATE TABLE {episodes} (
		user_id         TEXT NOT NULL,
		id              TEXT NOT NULL,
		conversation_id TEXT NOT NULL DEFAULT '',
		summary         TEXT NOT NULL,
		topics          TEXT[] NOT NULL DEFAULT '{}',
		outcome         TEXT NOT NULL DEFAULT '',
		importance      DOUBLE PRECISION NOT NULL,
		mentions        INT NOT NULL,
		access_count    INT NOT NULL DEFAULT 0,
		created         TIMESTAMPTZ NOT NULL,
		updated         TIMESTAMPTZ NOT NULL,
		last_accessed   TIMESTAMPTZ,
		PRIMARY KEY (user_id, id)
	);
	CREATE TABLE {identities} (
		agent   TEXT PRIMARY KEY,
		data    JSONB NOT NULL,
		updated TIMESTAMPTZ NOT NULL DEFAULT now()
	)`,
	`CREATE TABLE {tasks} (
		id           BIGSERIAL PRIMARY KEY,
		kind         TEXT NOT NULL,
		user_id      TEXT NOT NULL DEFAULT '',
		payload      BYTEA NOT NULL,
		state        TEXT NOT NULL DEFAULT 'pending',
		attempts     INT NOT NULL DEFAULT 0,
		max_attempts INT NOT NULL,
		last_error   TEXT NOT NULL DEFAULT '',
		token        TEXT NOT NULL DEFAULT '',
		lease_until  TIMESTAMPTZ,
		created      TIMESTAMPTZ NOT NULL DEFAULT now()
	);
	CREATE INDEX ON {tasks} (state, id)`,
}

type queries struct {
	schema, migrations string
	replace            *strings.Replacer

	profile, saveProfile, episodes, putEpisode, deleteEpisode, touch, identity, saveIdentity, deleteProfile, deleteEpisodes string
}

func newQueries(schema string) queries {
	ident := func(table string) string { return pgdb.Table(schema, table) }
	q := queries{schema: schema, migrations: ident("cognition_migrations")}
	q.replace = strings.NewReplacer("{profiles}", ident("cognition_profiles"), "{episodes}", ident("cognition_episodes"),
		"{identities}", ident("cognition_identities"), "{tasks}", ident("cognition_tasks"))
	r := q.replace
	q.profile = r.Replace(`SELECT data FROM {profiles} WHERE user_id = $1`)
	q.saveProfile = r.Replace(`INSERT INTO {profiles} (user_id, data, updated) VALUES ($1, $2, now())
		ON CONFLICT (user_id) DO UPDATE SET data = EXCLUDED.data, updated = EXCLUDED.updated`)
	q.episodes = r.Replace(`SELECT id, user_id, conversation_id, summary, topics, outcome, importance, mentions,
		access_count, created, updated, last_accessed FROM {episodes} WHERE user_id = $1 ORDER BY id`)
	q.putEpisode = r.Replace(`INSERT INTO {episodes} (id, user_id, conversation_id, summary, topics, outcome,
		importance, mentions, access_count, created, updated, last_accessed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (user_id, id) DO UPDATE SET conversation_id = EXCLUDED.conversation_id, summary = EXCLUDED.summary,
			topics = EXCLUDED.topics, outcome = EXCLUDED.outcome, importance = EXCLUDED.importance,
			mentions = EXCLUDED.mentions, access_count = EXCLUDED.access_count, created = EXCLUDED.created,
			updated = EXCLUDED.updated, last_accessed = EXCLUDED.last_accessed`)
	q.deleteEpisode = r.Replace(`DELETE FROM {episodes} WHERE user_id = $1 AND id = ANY($2)`)
	q.touch = r.Replace(`UPDATE {episodes} SET access_count = access_count + 1, last_accessed = $3
		WHERE user_id = $1 AND id = ANY($2)`)
	q.identity = r.Replace(`SELECT data FROM {identities} WHERE agent = $1`)
	q.saveIdentity = r.Replace(`INSERT INTO {identities} (agent, data, updated) VALUES ($1, $2, now())
		ON CONFLICT (agent) DO UPDATE SET data = EXCLUDED.data, updated = EXCLUDED.updated`)
	q.deleteProfile = r.Replace(`DELETE FROM {profiles} WHERE user_id = $1`)
	q.deleteEpisodes = r.Replace(`DELETE FROM {episodes} WHERE user_id = $1`)
	return q
}

// Migrate creates the tables or brings them up to date. Each migration runs
// once, recorded in cognition_migrations, in one transaction, so Migrate
// is idempotent; a transaction-scoped advisory lock lets several processes
// start at once.
func (s *Store) Migrate(ctx context.Context) error {
	return pgdb.Migrate(ctx, s.pool, s.migrations())
}

func (s *Store) migrations() pgdb.Migrations {
	return pgdb.Migrations{
		Schema:   s.q.schema,
		Table:    "cognition_migrations",
		Lock:     "agentgraph/cognition/postgres",
		Steps:    migrations,
		Replacer: s.q.replace,
		Logger:   s.log,
		Message:  "postgres: applied cognition migration",
	}
}

// locked runs fn in a transaction holding the advisory lock of key. The
// transaction is read committed whatever the database's
// default_transaction_isolation: fn reads what the holders before it
// committed (under repeatable read the snapshot would be taken by the
// lock's statement, before the lock is granted).
func (s *Store) locked(ctx context.Context, key string, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "agentgraph/cognition:"+s.q.migrations+":"+key); err != nil {
			return err
		}
		return fn(tx)
	})
}

// loadJSON returns the JSON value of the row that query finds for key,
// through q, or zero when there is none; what names it in errors.
func loadJSON[T any](ctx context.Context, q pgdb.Querier, query, key, what string, zero T) (T, error) {
	return sqlstore.JSON(q.QueryRow(ctx, query, key), pgx.ErrNoRows, what, zero)
}

// Profile implements [cognition.Store].
func (s *Store) Profile(ctx context.Context, userID string) (cognition.Profile, error) {
	return get(ctx, s, update.Profiles, s.q.profile, userID)
}

// UpdateProfile implements [cognition.Store].
func (s *Store) UpdateProfile(ctx context.Context, userID string, fn func(*cognition.Profile) error) (cognition.Profile, error) {
	return put(ctx, s, update.Profiles, "user:", s.q.profile, s.q.saveProfile, userID, fn)
}

// get returns the record r of id, which query loads.
func get[T any](ctx context.Context, s *Store, r update.Record[T], query, id string) (T, error) {
	return update.Get(r, "postgres", id, func(none T) (T, error) { return loadJSON(ctx, s.pool, query, id, r.What, none) })
}

// put updates the record r of id with fn, under the lock of lock and id:
// it loads the record with load and saves it with save.
func put[T any](ctx context.Context, s *Store, r update.Record[T], lock, load, save, id string, fn func(*T) error) (T, error) {
	return update.Put(r, "postgres", id, fn,
		func(body func(pgx.Tx) error) error { return s.locked(ctx, lock+id, body) },
		func(tx pgx.Tx, none T) (T, error) { return loadJSON(ctx, tx, load, id, r.What, none) },
		func(tx pgx.Tx, data []byte) error {
			_, err := tx.Exec(ctx, save, id, string(data))
			return err
		})
}

func (s *Store) episodes(ctx context.Context, q pgdb.Querier, userID string) ([]cognition.Episode, error) {
	rows, err := q.Query(ctx, s.q.episodes, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []cognition.Episode
	for rows.Next() {
		var (
			e            cognition.Episode
			outcome      string
			lastAccessed *time.Time
		)
		if err := rows.Scan(&e.ID, &e.UserID, &e.ConversationID, &e.Summary, &e.Topics, &outcome,
			&e.Importance, &e.Mentions, &e.AccessCount, &e.Created, &e.Updated, &lastAccessed); err != nil {
			return nil, err
		}
		if len(e.Topics) == 0 {
			e.Topics = nil
		}
		e.Outcome = cognition.Outcome(outcome)
		if lastAccessed != nil {
			e.LastAccessed = *lastAccessed
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Episodes implements [cognition.Store].
func (s *Store) Episodes(ctx context.Context, userID string) ([]cognition.Episode, error) {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return nil, err
	}
	out, err := s.episodes(ctx, s.pool, userID)
	if err != nil {
		return nil, fmt.Errorf("postgres: episodes of %q: %w", userID, err)
	}
	return out, nil
}

// UpdateEpisodes implements [cognition.Store].
func (s *Store) UpdateEpisodes(ctx context.Context, userID string, fn func([]cognition.Episode) (cognition.EpisodeChanges, error)) error {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return err
	}
	err := s.locked(ctx, "episodes:"+userID, func(tx pgx.Tx) error {
		cur, err := s.episodes(ctx, tx, userID)
		if err != nil {
			return err
		}
		ch, err := update.Episodes(userID, cur, fn)
		if err != nil {
			return err
		}
		if len(ch.Delete) > 0 {
			if _, err := tx.Exec(ctx, s.q.deleteEpisode, userID, ch.Delete); err != nil {
				return err
			}
		}
		if len(ch.Put) == 0 {
			return nil
		}
		var b pgx.Batch
		for _, e := range ch.Put {
			topics := e.Topics
			if topics == nil {
				topics = []string{}
			}
			var last *time.Time
			if !e.LastAccessed.IsZero() {
				last = &e.LastAccessed
			}
			b.Queue(s.q.putEpisode, e.ID, userID, e.ConversationID, e.Summary, topics, string(e.Outcome),
				e.Importance, e.Mentions, e.AccessCount, e.Created, e.Updated, last)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	return update.Err(err, "postgres: update episodes of %q", userID)
}

// Touch implements [cognition.Store].
func (s *Store) Touch(ctx context.Context, userID string, ids []string, at time.Time) error {
	if err := cognition.ValidateID("user ID", userID); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, s.q.touch, userID, ids, at); err != nil {
		return fmt.Errorf("postgres: touch episodes of %q: %w", userID, err)
	}
	return nil
}

// Identity implements [cognition.Store].
func (s *Store) Identity(ctx context.Context, agent string) (cognition.Identity, error) {
	return get(ctx, s, update.Identities, s.q.identity, agent)
}

// UpdateIdentity implements [cognition.Store].
func (s *Store) UpdateIdentity(ctx context.Context, agent string, fn func(*cognition.Identity) error) (cognition.Identity, error) {
	return put(ctx, s, update.Identities, "agent:", s.q.identity, s.q.saveIdentity, agent, fn)
}

// DeleteUser implements [cognition.Store].
func (s *Store) DeleteUser(ctx context.Context, userID string) error {
	if userID == "" {
		return cognition.ValidateID("user ID", userID)
	}
	if !storeid.Storable(userID) {
		// PostgreSQL holds no such id.
		return ctx.Err()
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q.deleteEpisodes, userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q.deleteProfile, userID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: delete user %q: %w", userID, err)
	}
	return nil
}
