package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
)

func TestSynchronousMode(t *testing.T) {
	for _, c := range []struct {
		full bool
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{false, 1}, {true, 2}} {
		db, err := sql.Open("sqlite", sqlitedb.DSN(filepath.Join(t.TempDir(), "m.db"), options(0, c.full)))
		if err != nil {
			t.Fatal(err)
		}
		var mode int
		err = db.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&mode)
		db.Close()
		if err != nil || mode != c.want {
			t.Errorf("SyncFull %v: synchronous = %d, %v; want %d", c.full, mode, err, c.want)
		}
	}
}
