package swarm_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/swarm"
)

// teamKeys lists teams as owner/name, in their order.
func teamKeys(teams []swarm.TeamSpec) []string {
	var out []string
	for _, t := range teams {
		out = append(out, t.Owner+"/"+t.Name)
	}
	return out
}

// TestTotalTeamsBound: beyond Config.MaxTotalTeams (and Memory.MaxTeams)
// a new team drops the least recently registered team of another
// principal, in the swarm and in its store; registering a team again
// makes it the most recent; a principal never loses a team to their own,
// so the total passes the bound only by their own (at most MaxTeams). A
// swarm started on the store has the same teams, and one with a lower
// bound keeps the most recent.
func TestTotalTeamsBound(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		cfg := withStorage(swarm.Config{Servers: stockServers(t), MaxTotalTeams: 3}, st)
		if st != nil {
			st.Memory.MaxTeams = 3
		}
		s := newSwarm(t, cfg)
		register := func(owner string, i int) {
			t.Helper()
			if err := s.Register(t.Context(), fillerTeam(owner, i)); err != nil {
				t.Fatal(err)
			}
		}
		check := func(step string, want ...string) {
			t.Helper()
			if got := teamKeys(s.Teams()); !slices.Equal(got, want) {
				t.Errorf("%s: the swarm's teams %v; want %v", step, got, want)
			}
			if st == nil {
				return
			}
			saved, err := st.Memory.Teams(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := teamKeys(saved); !slices.Equal(got, want) {
				t.Errorf("%s: the stored teams %v; want %v", step, got, want)
			}
		}
		register("alice", 0)
		register("bob", 0)
		register("", 0) // a team of runs without a principal
		register("alice", 0)
		check("at the bound, alice's registered again", "bob/filler_0_team", "/filler_0_team", "alice/filler_0_team")
		register("dave", 0)
		check("dave's first", "/filler_0_team", "alice/filler_0_team", "dave/filler_0_team")
		register("", 1)
		check("a second team without a principal: alice's goes, not its own", "/filler_0_team", "dave/filler_0_team", "/filler_1_team")
		register("dave", 1)
		register("dave", 2)
		register("dave", 3)
		check("dave's four", "dave/filler_0_team", "dave/filler_1_team", "dave/filler_2_team", "dave/filler_3_team")
		if st == nil {
			return
		}
		again := newSwarm(t, cfg)
		if got, want := teamKeys(again.Teams()), teamKeys(s.Teams()); !slices.Equal(got, want) {
			t.Errorf("after a restart: teams %v; want %v", got, want)
		}
		register("erin", 0) // the store keeps dave's three newest and erin's
		cfg.MaxTotalTeams = 2
		lower := newSwarm(t, cfg)
		if got, want := teamKeys(lower.Teams()), []string{"dave/filler_3_team", "erin/filler_0_team"}; !slices.Equal(got, want) {
			t.Errorf("a swarm bounded to 2 teams on the store: %v; want the 2 most recent %v", got, want)
		}
	})
}

// TestTotalSkillsBound: the skills kept of all owners together are
// bounded (Memory.MaxTotalSkills, SkillLibrary.MaxTotal): the oldest go
// first, whoever's.
func TestTotalSkillsBound(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		var store swarm.SkillStore = &swarm.SkillLibrary{MaxTotal: 2}
		if st != nil {
			st.Memory.MaxTotalSkills = 2
			store = st.Memory
		}
		for _, owner := range []string{"alice", "bob", "carol"} {
			if err := store.Save(t.Context(), swarm.Skill{Owner: owner, Agent: "math", Task: "What is 15% of 240", Tool: "calculate"}); err != nil {
				t.Fatal(err)
			}
		}
		for owner, want := range map[string]int{"alice": 0, "bob": 1, "carol": 1} {
			if got, err := store.Find(t.Context(), owner, "math", "What is 20% of 350", 5); err != nil || len(got) != want {
				t.Errorf("%s finds %+v, %v; want %d skills (the oldest, alice's, dropped)", owner, got, err, want)
			}
		}
	})
}

// TestStorageFirstOpenWaits opens a storage while another connection
// holds the write lock of its new memory.db (another process opening
// the same DataDir): SQLite answers the switch to WAL with SQLITE_BUSY at
// once, and OpenStorage must wait for the lock rather than fail.
func TestStorageFirstOpenWaits(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "memory.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(t.Context(), `CREATE TABLE other_store (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		st  *swarm.Storage
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DataDir: dir})
		done <- result{st, err}
	}()
	var r result
	select {
	case r = <-done: // an OpenStorage that fails does so at once
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if r.st == nil && r.err == nil {
		r = <-done
	}
	if r.err != nil {
		t.Fatalf("OpenStorage while another connection held memory.db's write lock: %v; want it to wait", r.err)
	}
	r.st.Close()
}
