package chatbot

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// storeFiles are the SQLite files of DataDir that /health checks.
var storeFiles = []string{"conversations.db", "documents.db", "cognition.db"}

// storeCheckInterval is how long a check's result is reused: a check
// reads every page of the files.
const storeCheckInterval = 30 * time.Second

// StoreHealth is one store's entry in GET /health: a SQLite file of
// DataDir, or, with Config.Postgres and Config.NATS, "postgres" and
// "nats", the servers the instance shares with the others.
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
	// servers are checked on every call (a ping each), by name.
	servers []serverCheck

	mu   sync.Mutex
	at   time.Time
	last []StoreHealth
}

// check returns each file's health, checking again when the last check
// is older than storeCheckInterval.
func (c *storeCheck) check(ctx context.Context) []StoreHealth {
	servers := c.checkServers(ctx)
	if c.dir == "" {
		return servers
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && time.Since(c.at) < storeCheckInterval {
		return append(slices.Clone(c.last), servers...)
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
	return append(slices.Clone(out), servers...)
}

// serverCheck pings a server the bot depends on.
type serverCheck struct {
	name string
	ping func(context.Context) error
}

// serverPingTimeout bounds a server's ping in GET /health.
const serverPingTimeout = 2 * time.Second

// checkServers pings each server.
func (c *storeCheck) checkServers(ctx context.Context) []StoreHealth {
	var out []StoreHealth
	for _, s := range c.servers {
		pctx, cancel := context.WithTimeout(ctx, serverPingTimeout)
		h := StoreHealth{File: s.name, OK: true}
		if err := s.ping(pctx); err != nil {
			h.OK, h.Error = false, err.Error()
		}
		cancel()
		out = append(out, h)
	}
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
