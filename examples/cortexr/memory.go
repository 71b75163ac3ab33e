package cortexr

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kinds of MemoryItem.
const (
	ItemRunStart    = "run_metadata"
	ItemToolCall    = "tool_call"
	ItemToolOutput  = "tool_output"
	ItemPlanOutput  = "plan_output"
	ItemFinalAnswer = "final_answer"
)

// MemoryItem is one entry of a session's memory, the seed's MemoryItem.
type MemoryItem struct {
	Time       time.Time      `json:"timestamp"`
	Type       string         `json:"type"`
	Text       string         `json:"text"`
	ToolName   string         `json:"tool_name,omitempty"`
	ToolArgs   map[string]any `json:"tool_args,omitempty"`
	ToolResult any            `json:"tool_result,omitempty"`
	// Success is set on tool and plan outputs.
	Success     *bool    `json:"success,omitempty"`
	FinalAnswer string   `json:"final_answer,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// Memory is one session's memory: items appended as the loop runs, each
// append rewriting the session's JSON file
// (<dir>/YYYY/MM/DD/session-<unix>-<id>.json) atomically. It is safe for
// concurrent use.
type Memory struct {
	mu    sync.Mutex
	id    string
	path  string // empty: not persisted
	items []MemoryItem
	prior []string // successful tools of earlier sessions, newest first
}

// NewSessionID returns a session id in the seed's format,
// "YYYY/MM/DD/session-<unix seconds>-<6 hex digits>".
func NewSessionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/session-%d-%s", now.UTC().Format("2006/01/02"), now.Unix(), hex.EncodeToString(b[:]))
}

// OpenMemory opens session id's memory under dir, loading the session's
// file if it exists and the successful tools of the other sessions stored
// there (the memory fallback). An empty dir keeps memory in this process
// only.
func OpenMemory(dir, id string) (*Memory, error) {
	m := &Memory{id: id}
	if dir == "" {
		return m, nil
	}
	if strings.Contains(id, "..") || filepath.IsAbs(id) {
		return nil, fmt.Errorf("cortexr: session id %q must be a relative path without ..", id)
	}
	m.path = filepath.Join(dir, filepath.FromSlash(id)+".json")
	b, err := os.ReadFile(m.path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &m.items); err != nil {
			return nil, fmt.Errorf("cortexr: session memory %s: %w", m.path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cortexr: session memory: %w", err)
	}
	prior, err := loadPrior(dir, m.path)
	if err != nil {
		return nil, err
	}
	m.prior = prior
	return m, nil
}

// loadPrior reads every other session file under dir, newest first, and
// returns its successful tools' items.
func loadPrior(dir, self string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") && p != self {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cortexr: session memory: %w", err)
	}
	// Paths sort by date, then by unix time: sorted descending is newest first.
	slices.Sort(files)
	slices.Reverse(files)
	var items []MemoryItem
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("cortexr: session memory: %w", err)
		}
		var its []MemoryItem
		if err := json.Unmarshal(b, &its); err != nil {
			return nil, fmt.Errorf("cortexr: session memory %s: %w", f, err)
		}
		// recentSuccesses reads newest last.
		items = append(its, items...)
	}
	return recentSuccesses(items, 0), nil
}

// ID returns the session id.
func (m *Memory) ID() string { return m.id }

// Path returns the session's file, or "" when it is not persisted.
func (m *Memory) Path() string { return m.path }

// Items returns a copy of the session's items.
func (m *Memory) Items() []MemoryItem {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.items)
}

// Add appends items and saves the session. An item with a zero Time gets
// the current time.
func (m *Memory) Add(items ...MemoryItem) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range items {
		if it.Time.IsZero() {
			it.Time = time.Now().UTC()
		}
		m.items = append(m.items, it)
	}
	return m.save()
}

func (m *Memory) save() error {
	if m.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(m.items, "", "  ")
	if err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	return nil
}

// RecentSuccesses returns up to limit names of tools that succeeded, newest
// first, from this session and then from earlier sessions in the same
// directory: the seed's find_recent_successes, the tools the decision falls
// back to after a failed attempt. limit <= 0 means 5.
func (m *Memory) RecentSuccesses(limit int) []string {
	if limit <= 0 {
		limit = 5
	}
	m.mu.Lock()
	names := recentSuccesses(m.items, 0)
	m.mu.Unlock()
	for _, n := range m.prior {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names[:min(limit, len(names))]
}

func recentSuccesses(items []MemoryItem, limit int) []string {
	var names []string
	for _, it := range slices.Backward(items) {
		if it.Type == ItemToolOutput && it.Success != nil && *it.Success && it.ToolName != "" && !slices.Contains(names, it.ToolName) {
			names = append(names, it.ToolName)
			if limit > 0 && len(names) >= limit {
				break
			}
		}
	}
	return names
}
