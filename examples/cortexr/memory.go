package cortexr

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
	"go.uber.org/zap"
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
// append writing only the new items as JSON lines at the end of the
// session's file (<dir>/YYYY/MM/DD/session-<unix>-<id>.jsonl), never
// rewriting it. Items are indexed for Search as they are added. It is safe
// for concurrent use.
//
// A session never fills up: the items held in memory are the newest ones
// whose lines come to at most MaxSessionBytes (older ones are forgotten),
// and once the file reaches MaxSessionBytes it is no longer appended to
// (a warning is logged once) while the session goes on in memory.
type Memory struct {
	mu    sync.Mutex
	id    string
	dir   string
	path  string // empty: not persisted
	items []MemoryItem
	sizes []int // sizes[i]: bytes of items[i]'s line
	base  int   // items forgotten from the front; index keys are base+i
	size  int64 // bytes of the items' lines, bounded by MaxSessionBytes
	file  int64 // bytes of the file, bounded by MaxSessionBytes
	full  bool  // the file reached MaxSessionBytes: no longer appended
	index *rag.ExactIndex
	emb   rag.Embedder
	log   *zap.Logger
}

// NewSessionID returns a session id in the seed's format,
// "YYYY/MM/DD/session-<unix seconds>-<6 hex digits>".
func NewSessionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/session-%d-%s", now.UTC().Format("2006/01/02"), now.Unix(), hex.EncodeToString(b[:]))
}

// OpenMemory opens session id's memory under dir, loading the session's
// file if it exists. Other sessions are read only by
// RecentSuccessesAcrossSessions. An empty dir keeps memory in this process
// only.
//
// The session's own file is read whatever its size: only its newest items
// up to MaxSessionBytes are kept, and a line longer than the lines Add
// writes, or not an item, is skipped.
func OpenMemory(dir, id string) (*Memory, error) {
	return openMemory(dir, id, nil)
}

// openMemory is OpenMemory logging to log (nil: no logging).
func openMemory(dir, id string, log *zap.Logger) (*Memory, error) {
	if log == nil {
		log = zap.NewNop()
	}
	m := &Memory{id: id, dir: dir, index: rag.NewExactIndex(), emb: rag.HashEmbedder{}, log: log}
	if dir == "" {
		return m, nil
	}
	if strings.Contains(id, "..") || filepath.IsAbs(id) {
		return nil, fmt.Errorf("cortexr: session id %q must be a relative path without ..", id)
	}
	m.path = filepath.Join(dir, filepath.FromSlash(id)+".jsonl")
	f, err := os.Open(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cortexr: session memory: %w", err)
	}
	defer f.Close()
	n, skipped, err := scanSession(f, func(it MemoryItem, size int) { m.keep(it, size) })
	if err != nil {
		return nil, fmt.Errorf("cortexr: session memory %s: %w", m.path, err)
	}
	m.file = n
	if skipped > 0 {
		m.log.Warn("cortexr: session memory: skipped lines that are too long or not items",
			zap.String("path", m.path), zap.Int("skipped", skipped), zap.Int("max_line_bytes", maxMemoryLine))
	}
	m.indexItems(0)
	return m, nil
}

// keep appends it, whose line is size bytes, to the items held, forgetting
// the oldest ones past MaxSessionBytes. The caller indexes the new item.
func (m *Memory) keep(it MemoryItem, size int) {
	m.items = append(m.items, it)
	m.sizes = append(m.sizes, size)
	m.size += int64(size)
	for m.size > MaxSessionBytes && len(m.items) > 1 {
		m.index.Delete(strconv.Itoa(m.base))
		m.size -= int64(m.sizes[0])
		m.items[0] = MemoryItem{}
		m.items, m.sizes = m.items[1:], m.sizes[1:]
		m.base++
	}
}

// Bounds of session memory.
const (
	// MaxMemoryText bounds each text an item stores (Text, FinalAnswer)
	// and the JSON of its ToolArgs and ToolResult, in bytes: Add clips a
	// longer one at a UTF-8 boundary and marks it with the size it had.
	MaxMemoryText = 4 << 10
	// MaxSessionBytes bounds a session's file and the items a session
	// holds in memory: past it, the file is no longer appended to and the
	// oldest items are forgotten (see Memory). An earlier session's file
	// longer than that is not read by RecentSuccessesAcrossSessions.
	MaxSessionBytes = 32 << 20
	// maxMemoryLine bounds one item's JSON line, written and read. A
	// clipped item comes well under it: four clipped fields of
	// MaxMemoryText bytes, each at most six bytes a byte once escaped.
	maxMemoryLine = 256 << 10
)

// clipText cuts s to MaxMemoryText bytes at a UTF-8 boundary, saying how
// long it was.
func clipText(s string) string {
	if len(s) <= MaxMemoryText {
		return s
	}
	return clipUTF8(s, MaxMemoryText) + fmt.Sprintf("… (clipped; %d bytes in all)", len(s))
}

// clipValue returns v, or, when its JSON is longer than MaxMemoryText, the
// clipped JSON as a string.
func clipValue(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) <= MaxMemoryText {
		return v
	}
	return clipText(string(b))
}

// clip bounds what it stores (see MaxMemoryText).
func (it MemoryItem) clip() MemoryItem {
	it.Text, it.FinalAnswer = clipText(it.Text), clipText(it.FinalAnswer)
	if it.ToolArgs != nil {
		if c, ok := clipValue(it.ToolArgs).(string); ok {
			it.ToolArgs = map[string]any{"clipped": c}
		}
	}
	it.ToolResult = clipValue(it.ToolResult)
	return it
}

// readSession reads an earlier session's file, one JSON item a line,
// skipping lines that are too long or not items.
func readSession(path string) ([]MemoryItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxSessionBytes {
		return nil, fmt.Errorf("cortexr: session memory %s is %d bytes, more than MaxSessionBytes (%d); not read", path, st.Size(), MaxSessionBytes)
	}
	var items []MemoryItem
	if _, _, err := scanSession(io.LimitReader(f, MaxSessionBytes), func(it MemoryItem, _ int) { items = append(items, it) }); err != nil {
		return nil, fmt.Errorf("cortexr: session memory %s: %w", path, err)
	}
	return items, nil
}

// scanSession calls add with each item of a session file read from r and
// the size of its line. It skips and counts the lines longer than
// maxMemoryLine (older versions wrote longer ones) and those that are not
// items, and returns the bytes read.
func scanSession(r io.Reader, add func(MemoryItem, int)) (n int64, skipped int, err error) {
	br := bufio.NewReaderSize(r, maxMemoryLine+1)
	for {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			// Too long: skip the rest of the line.
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				n += int64(len(line))
			}
			skipped++
			if err == io.EOF {
				return n, skipped, nil
			}
			if err != nil {
				return n, skipped, err
			}
			continue
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var it MemoryItem
			if jerr := json.Unmarshal(t, &it); jerr != nil {
				skipped++
			} else {
				add(it, len(line))
			}
		}
		if err == io.EOF {
			return n, skipped, nil
		}
		if err != nil {
			return n, skipped, err
		}
	}
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

// Add appends items to the session and to its file. An item with a zero
// Time gets the current time. Texts and values longer than MaxMemoryText
// are stored clipped. Past MaxSessionBytes, Add forgets the oldest items
// and stops appending to the file (see Memory); it fails only when an
// item cannot be stored or the file cannot be written.
func (m *Memory) Add(items ...MemoryItem) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var buf bytes.Buffer
	clipped := make([]MemoryItem, 0, len(items))
	sizes := make([]int, 0, len(items))
	for _, it := range items {
		if it.Time.IsZero() {
			it.Time = time.Now().UTC()
		}
		it = it.clip()
		b, err := json.Marshal(it)
		if err != nil {
			return fmt.Errorf("cortexr: session memory: %w", err)
		}
		if len(b) >= maxMemoryLine {
			return fmt.Errorf("cortexr: session memory: a %s item is %d bytes once clipped, more than %d; shorten its tool name and tags", it.Type, len(b), maxMemoryLine)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		clipped = append(clipped, it)
		sizes = append(sizes, len(b)+1)
	}
	forgotten := m.base
	from := len(m.items)
	for i, it := range clipped {
		m.keep(it, sizes[i])
	}
	m.indexItems(max(0, from-(m.base-forgotten)))
	if m.path == "" || m.full {
		return nil
	}
	if m.file+int64(buf.Len()) > MaxSessionBytes {
		m.full = true
		m.log.Warn("cortexr: session memory file reached MaxSessionBytes; no longer written, the session goes on in memory",
			zap.String("path", m.path), zap.Int64("bytes", m.file), zap.Int("max_bytes", MaxSessionBytes))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cortexr: session memory: %w", err)
	}
	m.file += int64(buf.Len())
	return nil
}

// indexItems embeds items[from:] for Search. The embedding is the offline
// lexical one (rag.HashEmbedder), which cannot fail.
func (m *Memory) indexItems(from int) {
	for i := from; i < len(m.items); i++ {
		t := m.items[i].Text
		if t == "" {
			continue
		}
		v, err := m.emb.Embed(context.Background(), []string{t})
		if err != nil {
			continue
		}
		key := strconv.Itoa(m.base + i)
		m.index.Put(key, v, []rag.Hit{{Text: t, Source: key, ChunkID: key}})
	}
}

// MemoryHit is an item found by Memory.Search.
type MemoryHit struct {
	Item MemoryItem
	// Score is the cosine similarity of the item's text and the query.
	Score float64
}

// Search returns up to k items of this session whose text is most similar
// to query, best first: the seed's semantic memory search, over the
// offline lexical embedding (rag.HashEmbedder). k <= 0 means 3.
func (m *Memory) Search(query string, k int) []MemoryHit {
	if k <= 0 {
		k = 3
	}
	v, err := m.emb.Embed(context.Background(), []string{query})
	if err != nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []MemoryHit
	for _, h := range m.index.Search(v[0], k) {
		i, _ := strconv.Atoi(h.Source)
		i -= m.base
		if h.Score > 0 && i >= 0 && i < len(m.items) {
			out = append(out, MemoryHit{Item: m.items[i], Score: h.Score})
		}
	}
	return out
}

// RecentSuccesses returns up to limit names of tools that succeeded in
// this session, newest first: the seed's find_recent_successes, the tools
// the decision falls back to after a failed attempt when the memory
// fallback is on. limit <= 0 means 5.
func (m *Memory) RecentSuccesses(limit int) []string {
	if limit <= 0 {
		limit = 5
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return recentSuccesses(m.items, limit)
}

// MaxEarlierSessions bounds the earlier session files
// RecentSuccessesAcrossSessions reads.
const MaxEarlierSessions = 50

// RecentSuccessesAcrossSessions is RecentSuccesses continued with the
// successful tools of earlier sessions in the same directory, newest first
// (at most MaxEarlierSessions files). An earlier session that cannot be
// read is skipped: the names come from the others, and the error names
// each skipped file.
func (m *Memory) RecentSuccessesAcrossSessions(limit int) ([]string, error) {
	if limit <= 0 {
		limit = 5
	}
	names := m.RecentSuccesses(limit)
	if m.dir == "" || len(names) >= limit {
		return names, nil
	}
	var files []string
	err := filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") && p != m.path {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return names, fmt.Errorf("cortexr: session memory: %w", err)
	}
	// Paths sort by date, then by unix time: sorted descending is newest first.
	slices.Sort(files)
	slices.Reverse(files)
	var skipped []error
	for _, f := range files[:min(len(files), MaxEarlierSessions)] {
		items, err := readSession(f)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("skipped: %w", err))
			continue
		}
		for _, n := range recentSuccesses(items, 0) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
			if len(names) >= limit {
				return names, errors.Join(skipped...)
			}
		}
	}
	return names, errors.Join(skipped...)
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
