package chatbot

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// storeFiles are the SQLite files of DataDir that /health checks.
var storeFiles = []string{"conversations.db", "checkpoints.db", "documents.db", "cognition.db"}

// storeCheckInterval is how long a check's result is reused: a check
// reads every page of the files.
const storeCheckInterval = 30 * time.Second

// StoreHealth is one SQLite file's entry in GET /health.
type StoreHealth struct {
	File  string `json:"file"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// storeCheck checks the integrity of the bot's SQLite files (PRAGMA
// quick_check, on a read-only connection of its own), at most once per
// storeCheckInterval.
type storeCheck struct {
	dir string // DataDir; empty: nothing to check

	mu   sync.Mutex
	at   time.Time
	last []StoreHealth
}

// check returns each file's health, checking again when the last check
// is older than storeCheckInterval.
func (c *storeCheck) check(ctx context.Context) []StoreHealth {
	if c.dir == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && time.Since(c.at) < storeCheckInterval {
		return c.last
	}
	var out []StoreHealth
	for _, f := range storeFiles {
		path := filepath.Join(c.dir, f)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		h := StoreHealth{File: f, OK: true}
		if err := quickCheck(ctx, path); err != nil {
			h.OK, h.Error = false, err.Error()
		}
		out = append(out, h)
	}
	c.at, c.last = time.Now(), out
	return out
}

// quickCheck runs PRAGMA quick_check on the SQLite file at path.
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(2000)")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []error
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, errors.New(s))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.Join(append([]error{errors.New("the file is corrupt")}, problems[:min(len(problems), 3)]...)...)
	}
	return nil
}
