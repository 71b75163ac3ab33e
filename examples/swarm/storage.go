package swarm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	sqlite3 "modernc.org/sqlite"       // the "sqlite" database/sql driver
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// StorageConfig says where a swarm keeps its runs and its memory.
type StorageConfig struct {
	// DataDir holds the SQLite files, checkpoints.db and memory.db, when DSN
	// is empty. It is created if missing.
	DataDir string
	// DSN is a PostgreSQL connection string ("postgres://user@host/db");
	// when set, checkpoints, skills and teams are kept there instead.
	DSN string
	// Schema is the PostgreSQL schema of the tables; empty means "public".
	Schema string
}

// Storage is a swarm's durable state: the checkpointer runs resume from
// and the memory of skills and designed teams. Pass Checkpointer and
// Memory to Config (Config.Skills and Config.Workflows).
type Storage struct {
	// Checkpointer keeps every run's checkpoints.
	Checkpointer checkpoint.Saver
	// Memory keeps skills and teams.
	Memory *Memory

	close func() error
}

// Close closes the databases.
func (s *Storage) Close() error { return s.close() }

var schemaRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// OpenStorage opens (creating as needed) the swarm's databases: SQLite
// files in cfg.DataDir, or PostgreSQL at cfg.DSN.
func OpenStorage(ctx context.Context, cfg StorageConfig) (*Storage, error) {
	if cfg.DSN != "" {
		if cfg.Schema != "" && !schemaRe.MatchString(cfg.Schema) {
			return nil, fmt.Errorf("swarm: StorageConfig.Schema %q is not a lower-case SQL identifier", cfg.Schema)
		}
		saver, err := postgres.New(ctx, postgres.Config{DSN: cfg.DSN, Schema: cfg.Schema})
		if err != nil {
			return nil, fmt.Errorf("swarm: PostgreSQL checkpoints at the DSN: %w", err)
		}
		db, err := sql.Open("pgx", cfg.DSN)
		if err != nil {
			saver.Close()
			return nil, fmt.Errorf("swarm: PostgreSQL memory: %w", err)
		}
		prefix := ""
		if cfg.Schema != "" {
			prefix = cfg.Schema + "."
		}
		mem, err := newMemory(ctx, db, prefix, true)
		if err != nil {
			db.Close()
			saver.Close()
			return nil, err
		}
		return &Storage{Checkpointer: saver, Memory: mem, close: func() error { saver.Close(); return db.Close() }}, nil
	}
	if cfg.DataDir == "" {
		return nil, errors.New("swarm: StorageConfig: set DataDir (SQLite files) or DSN (PostgreSQL)")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("swarm: data folder: %w", err)
	}
	saver, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(cfg.DataDir, "checkpoints.db")})
	if err != nil {
		return nil, fmt.Errorf("swarm: SQLite checkpoints: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(cfg.DataDir, "memory.db")+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)", busyWait.Milliseconds()))
	if err != nil {
		saver.Close()
		return nil, fmt.Errorf("swarm: SQLite memory: %w", err)
	}
	var mem *Memory
	err = retryBusy(ctx, func() (err error) {
		mem, err = newMemory(ctx, db, "", false)
		return err
	})
	if err != nil {
		db.Close()
		saver.Close()
		return nil, err
	}
	return &Storage{Checkpointer: saver, Memory: mem, close: func() error { return errors.Join(db.Close(), saver.Close()) }}, nil
}

// Memory is a SkillStore, WorkflowStore and TaskLog in SQL (SQLite or
// PostgreSQL): skills ranked like SkillLibrary's, among each agent's most
// recent MaxSkillsScanned, the teams the Architect designed (the seed's
// workflows table), and the tasks whose checkpoints are kept.
type Memory struct {
	db     *sql.DB
	prefix string
	pg     bool // PostgreSQL: saves lock their table (see save)
	// MinScore is as SkillLibrary's. Zero means 0.3.
	MinScore float64
	// MaxSkills bounds the skills kept per owner (Skill.Owner): Save drops
	// the owner's oldest beyond it, never another owner's. Zero means
	// MaxStoredSkills.
	MaxSkills int
	// MaxTotalSkills bounds the skills kept of all owners together, the
	// number of owners being unbounded: Save drops every skill saved
	// more than MaxTotalSkills saves ago, whoever's, so the skills of
	// principals who stopped running go first. Zero means
	// MaxStoredSkillsTotal.
	MaxTotalSkills int
}

// Bounds of Memory.
const (
	MaxSkillsScanned = 2000   // skills of one agent Find compares, the most recent
	MaxStoredSkills  = 100000 // skills kept per owner when Memory.MaxSkills is zero; Save drops the owner's oldest beyond

	// MaxStoredSkillsTotal is the skills kept of all owners together
	// when Memory.MaxTotalSkills is zero: Save drops those saved longer
	// ago than that many saves.
	MaxStoredSkillsTotal = 1000000
)

var (
	_ SkillStore    = (*Memory)(nil)
	_ WorkflowStore = (*Memory)(nil)
	_ TaskLog       = (*Memory)(nil)
)

// retryBusy runs fn, which creates the memory tables, again while SQLite
// answers SQLITE_BUSY, for up to busyWait or until ctx ends. The first
// statement of a connection to a new file switches it to WAL, which SQLite
// answers with SQLITE_BUSY at once, without waiting for the busy timeout,
// while another connection (another process opening the same DataDir)
// holds the write lock; the statements are idempotent.
//
// It is the module's internal sqlitedb.RetryBusy (with busyWait as its
// limit), copied: an example imports only public packages, as a program
// outside the module would, and no public package offers the retry, nor
// should one: it is a detail of opening an SQLite file (graph/checkpoint/
// sqlite uses it inside its New), not part of any public package's
// purpose. Keep the two alike in behaviour: the same test for
// SQLITE_BUSY (any extended code), the same pauses (10 ms times the
// attempt, at most 100 ms), no retry past the limit, and on ctx's end the
// busy error joined with ctx.Err().
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(busyWait)
	for attempt := 1; ; attempt++ {
		err := fn()
		var se *sqlite3.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3lib.SQLITE_BUSY || !time.Now().Before(deadline) {
			return err
		}
		t := time.NewTimer(min(time.Duration(attempt)*10*time.Millisecond, 100*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// busyWait is the busy timeout of memory.db, and how long OpenStorage
// tries again when SQLite answers SQLITE_BUSY at once (retryBusy).
const busyWait = 5 * time.Second

func newMemory(ctx context.Context, db *sql.DB, prefix string, pg bool) (*Memory, error) {
	m := &Memory{db: db, prefix: prefix, pg: pg}
	var stmts []string
	if prefix != "" {
		stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+strings.TrimSuffix(prefix, "."))
	}
	stmts = append(stmts,
		`CREATE TABLE IF NOT EXISTS `+prefix+`swarm_skills (agent TEXT NOT NULL, task TEXT NOT NULL, skill TEXT NOT NULL, seq BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS swarm_skills_agent ON `+prefix+`swarm_skills (agent, seq)`,
		`CREATE TABLE IF NOT EXISTS `+prefix+`swarm_workflows (name TEXT PRIMARY KEY, spec TEXT NOT NULL, seq BIGINT NOT NULL)`,
		// Save's MAX(seq) and its pruning of the oldest beyond
		// MaxTotalSkills read this index.
		`CREATE INDEX IF NOT EXISTS swarm_skills_seq ON `+prefix+`swarm_skills (seq)`,
		// The tasks (TaskLog), for Config.KeepTasks and
		// Config.KeepTotalTasks.
		`CREATE TABLE IF NOT EXISTS `+prefix+`swarm_tasks (thread TEXT PRIMARY KEY, owner TEXT NOT NULL, seq BIGINT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS swarm_tasks_owner ON `+prefix+`swarm_tasks (owner, seq)`,
		`CREATE INDEX IF NOT EXISTS swarm_tasks_seq ON `+prefix+`swarm_tasks (seq)`)
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("swarm: creating the memory tables: %w", err)
		}
	}
	if err := m.addOwner(ctx); err != nil {
		return nil, fmt.Errorf("swarm: adding the owner column to swarm_skills: %w", err)
	}
	if _, err := db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS swarm_skills_owner ON `+prefix+`swarm_skills (owner, agent, seq)`); err != nil {
		return nil, fmt.Errorf("swarm: creating the memory tables: %w", err)
	}
	return m, nil
}

// addOwner adds swarm_skills' owner column to a table made before it
// (Skill.Owner); the rows it had belong to no principal, as the skills of
// runs without one. The column is looked up first, so that opening a
// migrated database alters nothing: PostgreSQL's ALTER TABLE takes an
// ACCESS EXCLUSIVE lock, which waits for every reader of the table and
// blocks the readers after it, even when IF NOT EXISTS finds the column.
// Two processes opening a SQLite file of the old shape at once may both
// find it missing: the "duplicate column name" of the second means the
// first added it.
func (m *Memory) addOwner(ctx context.Context) error {
	var n int
	if m.pg {
		q := `SELECT COUNT(*) FROM information_schema.columns
			WHERE table_schema = COALESCE(NULLIF($1, ''), current_schema()) AND table_name = 'swarm_skills' AND column_name = 'owner'`
		if err := m.db.QueryRowContext(ctx, q, strings.TrimSuffix(m.prefix, ".")).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := m.db.ExecContext(ctx, `ALTER TABLE `+m.prefix+`swarm_skills ADD COLUMN IF NOT EXISTS owner TEXT NOT NULL DEFAULT ''`)
		return err
	}
	if err := m.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('swarm_skills') WHERE name = 'owner'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := m.db.ExecContext(ctx, `ALTER TABLE swarm_skills ADD COLUMN owner TEXT NOT NULL DEFAULT ''`)
	if err != nil && strings.Contains(err.Error(), "duplicate column name: owner") {
		return nil // another process added it since the look-up
	}
	return err
}

// Save implements SkillStore. The skill's seq (its recency) and the
// pruning of the owner's skills beyond MaxSkills happen in one transaction, which
// concurrent saves wait for: each skill gets its own seq.
func (m *Memory) Save(ctx context.Context, s Skill) error {
	s.Score = 0
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return m.save(ctx, "swarm_skills", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+m.prefix+`swarm_skills (owner, agent, task, skill, seq)
			SELECT $1, $2, $3, $4, COALESCE(MAX(seq), 0) + 1 FROM `+m.prefix+`swarm_skills`, s.Owner, s.Agent, s.Task, string(b)); err != nil {
			return err
		}
		limit := m.MaxSkills
		if limit <= 0 {
			limit = MaxStoredSkills
		}
		// seq is shared by all owners: the owner's newest beyond limit
		// is found by its rank among the owner's skills.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_skills WHERE owner = $1 AND seq <= (
			SELECT seq FROM `+m.prefix+`swarm_skills WHERE owner = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`, s.Owner, limit); err != nil {
			return err
		}
		// Every skill has its own seq, one more than the highest when it
		// was saved: those above MAX(seq) - total are at most total.
		total := m.MaxTotalSkills
		if total <= 0 {
			total = MaxStoredSkillsTotal
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_skills WHERE seq <= (SELECT MAX(seq) FROM `+m.prefix+`swarm_skills) - $1`, total)
		return err
	})
}

// save runs fn in a transaction that it commits when fn returns nil. On
// PostgreSQL the transaction first locks table, which makes the other
// saves to table wait until it ends, so that the MAX(seq) it reads is
// still the highest when it inserts: PostgreSQL's READ COMMITTED lets two
// transactions read the same MAX. The lock mode conflicts with itself and
// with writes, not with reads. SQLite needs none, provided the
// transaction's first statement writes: it then takes the database's
// write lock (waiting up to the busy timeout for another writer) and
// holds it until it ends. A SQLite transaction whose first statement
// reads cannot wait for the write lock later: it fails with SQLITE_BUSY
// when another transaction writes meanwhile, so the first statement of
// every fn here writes.
func (m *Memory) save(ctx context.Context, table string, fn func(*sql.Tx) error) error {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m.pg {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE `+m.prefix+table+` IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Find implements SkillStore.
func (m *Memory) Find(ctx context.Context, owner, agent, task string, limit int) ([]Skill, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT owner, skill FROM `+m.prefix+`swarm_skills WHERE owner = $1 AND agent = $2 ORDER BY seq DESC LIMIT $3`, owner, agent, MaxSkillsScanned)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	lib := &SkillLibrary{MinScore: m.MinScore, Max: MaxSkillsScanned}
	var all []Skill
	for rows.Next() {
		var o, raw string
		if err := rows.Scan(&o, &raw); err != nil {
			return nil, err
		}
		var s Skill
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			continue
		}
		s.Owner = o // the column decides, not the JSON
		all = append(all, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(all) // oldest first, as SkillLibrary keeps them
	for _, s := range all {
		_ = lib.Save(ctx, s)
	}
	return lib.Find(ctx, owner, agent, task, limit)
}

// SaveTeam implements WorkflowStore.
func (m *Memory) SaveTeam(ctx context.Context, t TeamSpec, drop []TeamSpec) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return m.save(ctx, "swarm_workflows", func(tx *sql.Tx) error {
		// The first statement writes (see save): a SQLite transaction
		// that read first could not take the write lock another holds.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_workflows WHERE name = $1`, t.key()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+m.prefix+`swarm_workflows (name, spec, seq)
			SELECT $1, $2, COALESCE(MAX(seq), 0) + 1 FROM `+m.prefix+`swarm_workflows`, t.key(), string(b)); err != nil {
			return err
		}
		return m.deleteTeams(ctx, tx, drop)
	})
}

// DeleteTeams implements WorkflowStore.
func (m *Memory) DeleteTeams(ctx context.Context, teams []TeamSpec) error {
	if len(teams) == 0 {
		return nil
	}
	return m.save(ctx, "swarm_workflows", func(tx *sql.Tx) error { return m.deleteTeams(ctx, tx, teams) })
}

// deleteTeams deletes the saved teams of teams, in tx: a statement each
// (a swarm drops one team per registration, and deletes more only at its
// start).
func (m *Memory) deleteTeams(ctx context.Context, tx *sql.Tx, teams []TeamSpec) error {
	for _, t := range teams {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_workflows WHERE name = $1`, t.key()); err != nil {
			return err
		}
	}
	return nil
}

// Teams implements WorkflowStore.
func (m *Memory) Teams(ctx context.Context) ([]TeamSpec, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT name, spec FROM `+m.prefix+`swarm_workflows ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TeamSpec
	for rows.Next() {
		var key, raw string
		if err := rows.Scan(&key, &raw); err != nil {
			return nil, err
		}
		var t TeamSpec
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("a saved team is not valid JSON: %w", err)
		}
		// The key is owner.name (TeamSpec.key); a row saved before
		// teams had owners is the bare name: no principal's.
		if owner, _, ok := strings.Cut(key, "."); ok {
			t.Owner = owner
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Record implements TaskLog, in one transaction, which concurrent calls
// wait for (see save).
func (m *Memory) Record(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error) {
	var drop []string
	err := m.save(ctx, "swarm_tasks", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_tasks WHERE thread = $1`, thread); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+m.prefix+`swarm_tasks (thread, owner, seq)
			SELECT $1, $2, COALESCE(MAX(seq), 0) + 1 FROM `+m.prefix+`swarm_tasks`, thread, owner); err != nil {
			return err
		}
		// The owner's beyond the keep newest, then of the others the
		// ones beyond the keepTotal newest, counted by rows: seq has
		// gaps (a task recorded again moves last). The LIMITs only
		// bound the statement: there are at most keepTotal+1 tasks
		// unless the bounds were lowered or deletions failed, and then
		// the next finish returns more.
		rows, err := tx.QueryContext(ctx, `SELECT thread FROM `+m.prefix+`swarm_tasks WHERE seq IN (
				SELECT seq FROM `+m.prefix+`swarm_tasks WHERE owner = $1 ORDER BY seq DESC LIMIT $4 OFFSET $2)
			OR seq IN (
				SELECT seq FROM `+m.prefix+`swarm_tasks WHERE seq NOT IN (
					SELECT seq FROM `+m.prefix+`swarm_tasks WHERE owner = $1 ORDER BY seq DESC LIMIT $4 OFFSET $2)
				ORDER BY seq DESC LIMIT $4 OFFSET $3)
			ORDER BY seq LIMIT $5`, owner, keep, keepTotal, max(keep, keepTotal)+1, MaxTaskDeletions)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			drop = append(drop, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("swarm: recording the task %q: %w", thread, err)
	}
	return drop, nil
}

// Forget implements TaskLog.
func (m *Memory) Forget(ctx context.Context, thread string) error {
	if _, err := m.db.ExecContext(ctx, `DELETE FROM `+m.prefix+`swarm_tasks WHERE thread = $1`, thread); err != nil {
		return fmt.Errorf("swarm: forgetting the task %q: %w", thread, err)
	}
	return nil
}
