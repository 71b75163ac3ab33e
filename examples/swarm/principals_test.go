package swarm_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// Two principals of the web API, by their tokens.
var (
	aliceToken = strings.Repeat("a", swarm.MinTokenLen)
	bobToken   = strings.Repeat("b", swarm.MinTokenLen)
	twoTokens  = swarm.HTTPConfig{Tokens: map[string]string{aliceToken: "alice", bobToken: "bob"}}
)

// postTask runs task over the API as the principal of token and returns
// its outcome.
func postTask(t *testing.T, url, token, task string) swarm.Outcome {
	t.Helper()
	resp := post(t, url+"/tasks", `{"task": "`+task+`"}`, map[string]string{"Authorization": "Bearer " + token})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%q: status %d: %+v", task, resp.StatusCode, decode[apiErr](t, resp))
	}
	return decode[swarm.Outcome](t, resp)
}

// storages opens a swarm.Storage of each kind the package tests (SQLite
// files, PostgreSQL) for check, and also runs check with none (nil: the
// in-memory stores).
func storages(t *testing.T, check func(t *testing.T, st *swarm.Storage)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		check(t, nil)
	})
	databases(t, check)
}

// databases runs check on a storage in SQLite and one in PostgreSQL (the
// storages that keep what an earlier start saved).
func databases(t *testing.T, check func(t *testing.T, st *swarm.Storage)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			cfg := swarm.StorageConfig{DataDir: t.TempDir()}
			if kind == "postgres" {
				cfg.DSN, cfg.Schema = postgresSchema(t)
			}
			st, err := swarm.OpenStorage(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			check(t, st)
		})
	}
}

// withStorage is cfg keeping its runs, skills, teams and finished tasks
// in st (nil: in memory).
func withStorage(cfg swarm.Config, st *swarm.Storage) swarm.Config {
	if st != nil {
		cfg.Checkpointer, cfg.Skills, cfg.Workflows, cfg.Tasks = st.Checkpointer, st.Memory, st.Memory, st.Memory
	}
	return cfg
}

// TestSkillsPerPrincipal: a skill learnt from alice's task is hers: bob's
// similar task neither sees it nor is steered by its lesson (it needs the
// retry), nor does a run without a principal, while alice's next similar
// task reuses it.
func TestSkillsPerPrincipal(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		s := newSwarm(t, withStorage(swarm.Config{}, st))
		srv := apiServer(t, s, twoTokens)
		postTask(t, srv.URL, aliceToken, "What is 15% of 240?")

		bob := postTask(t, srv.URL, bobToken, "What is 20% of 350?")
		if r := bob.Results[0]; len(r.Skills) != 0 || r.Attempts != 2 {
			t.Errorf("bob's task: skills %q, %d attempts; want none of alice's, 2 attempts", r.Skills, r.Attempts)
		}
		_, out := run(t, s, "What is 30% of 90?")
		if r := out.Results[0]; len(r.Skills) != 0 {
			t.Errorf("a run without a principal was given skills %q; want none of alice's", r.Skills)
		}
		alice := postTask(t, srv.URL, aliceToken, "What is 25% of 80?")
		if r := alice.Results[0]; !slices.Contains(r.Skills, "What is 15% of 240") || r.Attempts != 1 {
			t.Errorf("alice's second task: skills %q, %d attempts; want her first task's skill, 1 attempt", r.Skills, r.Attempts)
		}
	})
}

// oldSkillsColumns are swarm_skills' columns before skills had owners.
const oldSkillsColumns = ` (agent TEXT NOT NULL, task TEXT NOT NULL, skill TEXT NOT NULL, seq BIGINT NOT NULL)`

// TestSkillsOwnerMigration: a swarm_skills table made before skills had
// owners gets the owner column when the storage opens (twice: the
// migration is idempotent); its rows belong to no principal.
func TestSkillsOwnerMigration(t *testing.T) {
	check := func(t *testing.T, db *sql.DB, table string, cfg swarm.StorageConfig) {
		for _, q := range []string{
			`CREATE TABLE ` + table + oldSkillsColumns,
			`INSERT INTO ` + table + ` VALUES ('math', 'What is 15% of 240', '{"agent":"math","task":"What is 15% of 240","tool":"calculate"}', 1)`,
		} {
			if _, err := db.ExecContext(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			st, err := swarm.OpenStorage(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
		}
		st, err := swarm.OpenStorage(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if got, err := st.Memory.Find(t.Context(), "alice", "math", "What is 20% of 350", 5); err != nil || len(got) != 0 {
			t.Errorf("alice finds %+v, %v; want none of the old skills", got, err)
		}
		got, err := st.Memory.Find(t.Context(), "", "math", "What is 20% of 350", 5)
		if err != nil || len(got) != 1 || got[0].Owner != "" {
			t.Errorf("a run without a principal finds %+v, %v; want the old skill, of no owner", got, err)
		}
		if err := st.Memory.Save(t.Context(), swarm.Skill{Owner: "alice", Agent: "math", Task: "What is 15% of 240", Tool: "calculate"}); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Memory.Find(t.Context(), "alice", "math", "What is 20% of 350", 5); err != nil || len(got) != 1 || got[0].Owner != "alice" {
			t.Errorf("alice finds %+v, %v; want her skill", got, err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, db, "swarm_skills", swarm.StorageConfig{DataDir: dir})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn, schema := postgresSchema(t)
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
			t.Fatal(err)
		}
		check(t, db, schema+".swarm_skills", swarm.StorageConfig{DSN: dsn, Schema: schema})
	})
}

// fillerTeam is a valid team of owner, named after i.
func fillerTeam(owner string, i int) swarm.TeamSpec {
	return swarm.TeamSpec{Owner: owner, Name: fmt.Sprintf("filler_%d_team", i), Description: "Fills a place.",
		Agents:   []swarm.AgentSpec{{Name: "One", Role: "Writes."}, {Name: "Two", Role: "Reads."}},
		Workflow: []swarm.Step{{ID: "step_1", Agent: "One", Task: "Write."}}}
}

// TestTeamsPerPrincipal: teams are their principal's. Bob with MaxTeams-1
// teams does not stop alice from building one; alice's team is offered to
// her runs only, so bob's request for a stock report team builds his own
// rather than running hers, and it does not replace hers; bob's cap is
// his own (also after a restart on the same storage).
func TestTeamsPerPrincipal(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		cfg := withStorage(swarm.Config{Servers: stockServers(t)}, st)
		s := newSwarm(t, cfg)
		for i := range swarm.MaxTeams - 1 {
			if err := s.Register(t.Context(), fillerTeam("bob", i)); err != nil {
				t.Fatal(err)
			}
		}
		srv := apiServer(t, s, twoTokens)
		out := postTask(t, srv.URL, aliceToken, seedTeamRequest)
		if len(out.Results) != 1 || out.Results[0].Agent != swarm.Architect || !out.Results[0].OK {
			t.Fatalf("alice's team request: results %+v; want the architect's, ok", out.Results)
		}
		const aliceNode = "team_alice.stock_report_team"
		if out := postTask(t, srv.URL, aliceToken, "Use the stock report team on this week's stocks"); len(out.Results) != 1 || out.Results[0].Agent != aliceNode {
			t.Fatalf("alice's use of her team: results %+v; want her team run as one node", out.Results)
		}
		out = postTask(t, srv.URL, bobToken, seedTeamRequest)
		if len(out.Results) != 1 || out.Results[0].Agent != swarm.Architect || !out.Results[0].OK {
			t.Fatalf("bob's team request: results %+v; want the architect's building his own, ok", out.Results)
		}
		if out := postTask(t, srv.URL, bobToken, "Use the stock report team on this week's stocks"); len(out.Results) != 1 || out.Results[0].Agent != "team_bob.stock_report_team" {
			t.Errorf("bob's use of the stock report team: results %+v; want his own team run, not alice's", out.Results)
		}
		if err := s.Register(t.Context(), fillerTeam("bob", swarm.MaxTeams)); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("bob's team beyond MaxTeams: %v; want the limit", err)
		}

		check := func(s *swarm.Swarm) {
			t.Helper()
			owners := map[string][]string{}
			for _, tm := range s.Teams() {
				owners[tm.Owner] = append(owners[tm.Owner], tm.Name)
			}
			if !slices.Equal(owners["alice"], []string{"stock_report_team"}) || len(owners["bob"]) != swarm.MaxTeams ||
				!slices.Contains(owners["bob"], "stock_report_team") {
				t.Errorf("teams by owner = %v; want alice's stock_report_team and bob's %d with his own", owners, swarm.MaxTeams)
			}
		}
		check(s)
		if st == nil {
			return
		}
		again := newSwarm(t, cfg)
		check(again)
		if err := again.Register(t.Context(), fillerTeam("alice", 1)); err != nil {
			t.Errorf("after a restart, alice's second team: %v", err)
		}
		if err := again.Register(t.Context(), fillerTeam("bob", swarm.MaxTeams)); err == nil {
			t.Error("after a restart, bob's team beyond MaxTeams was registered")
		}
	})
}

// TestSkillsBoundPerOwner: the bound on the skills kept is per owner: bob's
// many skills push out his own oldest, never alice's.
func TestSkillsBoundPerOwner(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		var store swarm.SkillStore = &swarm.SkillLibrary{Max: 2}
		if st != nil {
			st.Memory.MaxSkills = 2
			store = st.Memory
		}
		save := func(owner, task string) {
			if err := store.Save(t.Context(), swarm.Skill{Owner: owner, Agent: "math", Task: task, Tool: "calculate"}); err != nil {
				t.Fatal(err)
			}
		}
		save("alice", "What is 15% of 240")
		for _, task := range []string{"convert 3 miles to km", "What is 20% of 350", "What is 25% of 80"} {
			save("bob", task)
		}
		if got, err := store.Find(t.Context(), "alice", "math", "What is 30% of 90", 5); err != nil || len(got) != 1 {
			t.Errorf("alice finds %+v, %v; want her one skill, kept though bob saved more than the bound", got, err)
		}
		got, err := store.Find(t.Context(), "bob", "math", "convert 3 miles to km", 5)
		if err != nil || len(got) != 0 {
			t.Errorf("bob finds %+v, %v; want his oldest skill dropped", got, err)
		}
		if got, err := store.Find(t.Context(), "bob", "math", "What is 30% of 90", 5); err != nil || len(got) != 2 {
			t.Errorf("bob finds %+v, %v; want his two newest", got, err)
		}
	})
}

// TestSkillsOwnerMigrationConcurrentOpens: SQLite files of the shape from
// before skills had owners, each opened by several storages at once (as
// by processes starting together), all open: the one that adds the owner
// column second does not fail with "duplicate column name". The
// checkpoints.db of each is made first: the test is of memory.db.
func TestSkillsOwnerMigrationConcurrentOpens(t *testing.T) {
	t.Parallel()
	for range 10 {
		dir := t.TempDir()
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.ExecContext(t.Context(), `CREATE TABLE swarm_skills`+oldSkillsColumns)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		saver, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "checkpoints.db")})
		if err != nil {
			t.Fatal(err)
		}
		saver.Close()
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DataDir: dir})
				if err == nil {
					err = st.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("opening at once: %v", err)
		}
	}
}

// TestSkillsOwnerMigrationTakesNoLock: opening a PostgreSQL storage whose
// swarm_skills already has the owner column alters nothing, so it does not
// wait for a transaction reading the table (an ALTER TABLE would, for its
// ACCESS EXCLUSIVE lock, until the DSN's lock_timeout).
func TestSkillsOwnerMigrationTakesNoLock(t *testing.T) {
	t.Parallel()
	dsn, schema := postgresSchema(t)
	cfg := swarm.StorageConfig{DSN: dsn, Schema: schema}
	st, err := swarm.OpenStorage(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reader, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback()
	var n int
	if err := reader.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+schema+`.swarm_skills`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	cfg.DSN = dsn + sep + "lock_timeout=10s"
	st, err = swarm.OpenStorage(t.Context(), cfg)
	if err != nil {
		t.Fatalf("opening while a transaction reads swarm_skills: %v", err)
	}
	st.Close()
}
