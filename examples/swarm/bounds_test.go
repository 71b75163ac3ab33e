package swarm_test

import (
	"database/sql"
	"fmt"
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

// TestTotalTeamsBound: beyond Config.MaxTotalTeams a new team drops the
// least recently registered team of another principal, in the swarm and
// in its store; registering a team again makes it the most recent; a
// principal never loses a team to their own, so the total passes the
// bound only by their own (at most MaxTeams). A swarm started on the
// store has the same teams, and one with a lower bound keeps the most
// recent and deletes the others from the store, so that its next
// registration drops the same team from both (the store deciding on its
// own dropped others) and a restart finds the swarm's teams.
func TestTotalTeamsBound(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		cfg := withStorage(swarm.Config{Servers: stockServers(t), MaxTotalTeams: 3}, st)
		s := newSwarm(t, cfg)
		register := func(owner string, i int) {
			t.Helper()
			if err := s.Register(t.Context(), fillerTeam(owner, i)); err != nil {
				t.Fatal(err)
			}
		}
		check := func(step string, want ...string) {
			t.Helper()
			checkTeams(t, step, s, st, want...)
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
		register("erin", 0)
		check("erin's first", "dave/filler_2_team", "dave/filler_3_team", "erin/filler_0_team")
		cfg.MaxTotalTeams = 2
		lower := newSwarm(t, cfg)
		checkTeams(t, "a swarm bounded to 2 teams on the store (the 2 most recent)", lower, st, "dave/filler_3_team", "erin/filler_0_team")
		if err := lower.Register(t.Context(), fillerTeam("frank", 0)); err != nil {
			t.Fatal(err)
		}
		checkTeams(t, "frank's first, in the swarm bounded to 2", lower, st, "erin/filler_0_team", "frank/filler_0_team")
		checkTeams(t, "a restart bounded to 2", newSwarm(t, cfg), st, "erin/filler_0_team", "frank/filler_0_team")
	})
}

// checkTeams checks that s, and st's store when st is not nil, hold the
// teams want (owner/name, least recent first).
func checkTeams(t *testing.T, step string, s *swarm.Swarm, st *swarm.Storage, want ...string) {
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

// TestSkippedSavedTeamsDeleted: the saved teams a swarm does not register
// at its start (not valid, over their owner's MaxTeams) are deleted from
// its store, so the store holds the swarm's teams: a later registration
// at the bound drops the same team from both.
func TestSkippedSavedTeamsDeleted(t *testing.T) {
	// The in-memory store starts empty: only the databases hold saved teams.
	databases(t, func(t *testing.T, st *swarm.Storage) {
		ctx := t.Context()
		bad := fillerTeam("alice", 0)
		bad.Agents = nil // not valid
		saves := []swarm.TeamSpec{bad, fillerTeam("bob", 0)}
		for i := range swarm.MaxTeams + 1 {
			saves = append(saves, fillerTeam("carol", i))
		}
		for _, team := range saves {
			if err := st.Memory.SaveTeam(ctx, team, nil); err != nil {
				t.Fatal(err)
			}
		}
		cfg := withStorage(swarm.Config{Servers: stockServers(t), MaxTotalTeams: swarm.MaxTeams + 1}, st)
		s := newSwarm(t, cfg)
		want := []string{"bob/filler_0_team"}
		for i := range swarm.MaxTeams {
			want = append(want, fmt.Sprintf("carol/filler_%d_team", i))
		}
		checkTeams(t, "a start on a store with a team not valid and one over carol's MaxTeams", s, st, want...)
		if err := s.Register(ctx, fillerTeam("dave", 0)); err != nil {
			t.Fatal(err)
		}
		checkTeams(t, "dave's first, at the bound", s, st, append(want[1:], "dave/filler_0_team")...)
	})
}
