package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/internal/distinct"
	"github.com/agentgraph/agentgraph/memory/jsonnum"
)

// Items keeps long-term memory: JSON objects filed under a namespace (a
// path of labels such as ["users", "u42", "preferences"]) and a key, which
// an agent writes in one conversation and reads in another. It is the store
// behind LangGraph's Store API.
//
// Implementations are safe for concurrent use and check their arguments
// with [CheckRecord], [CheckKey], [CheckItemQuery] and
// [CheckNamespaceQuery], so that every implementation rejects the same
// input with the same [*ValidationError].
//
// This package has an in-memory Items ([NewInMemoryItems]); the sqlite and
// postgres packages keep items in SQLite and PostgreSQL, and the memorytest
// package checks any implementation against the contract below.
type Items interface {
	// Put stores r.Value under r.Namespace and r.Key, replacing the record
	// there, if any. It sets Created (kept from the record it replaces
	// when that has not expired), Updated and, when r.TTL > 0, Expires;
	// any values the caller set there are ignored.
	Put(ctx context.Context, r Record) error
	// Get returns the record under namespace and key, or an error
	// matching [ErrNotFound] when there is none or it has expired. With
	// refreshTTL, a record that has a TTL expires TTL from now.
	Get(ctx context.Context, namespace []string, key string, refreshTTL bool) (Record, error)
	// Delete removes the record under namespace and key. Deleting a
	// missing record is not an error.
	Delete(ctx context.Context, namespace []string, key string) error
	// Search returns the records whose namespace starts with q.Prefix and
	// whose value passes q.Filter and q.Query, ordered by namespace
	// (label by label, bytewise) then key, skipping q.Offset and returning
	// at most q.Limit.
	Search(ctx context.Context, q ItemQuery) ([]Record, error)
	// Namespaces returns the distinct namespaces that hold records,
	// matching q.Prefix and q.Suffix and cut to q.MaxDepth labels, in the
	// order of Search, skipping q.Offset and returning at most q.Limit.
	Namespaces(ctx context.Context, q NamespaceQuery) ([][]string, error)
}

// Record is one document of long-term memory ([Items]).
type Record struct {
	// Namespace is the record's path of labels, outermost first. It has
	// at least one label; a label is non-empty valid UTF-8 with no dot
	// (the HTTP API joins labels with dots) and no control character
	// below U+0020.
	Namespace []string
	// Key names the record within its namespace: non-empty valid UTF-8
	// without NUL bytes.
	Key string
	// Value is a JSON object. A store gives it back as an equal object,
	// but not necessarily with the same formatting or key order.
	Value json.RawMessage
	// Created is when the record was first put; Updated, when it was last
	// put. Set by the store. SQL stores keep microsecond precision.
	Created, Updated time.Time
	// TTL, when positive, makes the record expire TTL after it is put (or
	// after a read that refreshes it); zero means it never expires.
	TTL time.Duration
	// Expires is when the record stops being visible; zero when TTL is
	// zero. Set by the store.
	Expires time.Time
}

// ItemQuery selects the records [Items.Search] returns.
type ItemQuery struct {
	// Prefix keeps records whose namespace starts with these labels; empty
	// means every namespace.
	Prefix []string
	// Filter keeps records whose value has, for every entry, a top-level
	// field of that name that matches. An entry's value is either a JSON
	// scalar (string, number, bool or nil), which the field must equal, or
	// a map of operators to scalars: "$eq", "$ne", "$gt", "$gte", "$lt",
	// "$lte", all of which must hold. Numbers compare as float64s, each
	// side rounded to its nearest (in every store: 9007199254740993, stored
	// or in the filter, equals 9007199254740992), strings bytewise; "$gt", "$gte", "$lt" and "$lte" hold only between two
	// numbers or two strings. A missing field matches only "$ne". Objects
	// and arrays are not compared: such a filter value is invalid. A
	// number is one a Put accepts (see [CheckRecord]): NaN, an infinity,
	// or a json.Number beyond a float64's range, rounded to zero by one,
	// a zero with an exponent beyond ±400 or written in more than 1000
	// characters is invalid.
	Filter map[string]any
	// Query, when set, keeps records whose value, as JSON text, contains
	// every space-separated term of Query, ASCII letters matching in either
	// case. It is a plain text match, keys included, not a semantic search.
	// A term repeated counts once; more than [MaxQueryTerms] distinct
	// terms, invalid UTF-8 or a NUL character is invalid.
	Query string
	// Limit is the most records returned: 0 means [DefaultSearchLimit];
	// more than [MaxSearchLimit] is invalid.
	Limit int
	// Offset is how many matching records to skip first.
	Offset int
	// RefreshTTL makes every returned record that has a TTL expire TTL
	// from now.
	RefreshTTL bool
	// MaxBytes, when positive, bounds the page by bytes: the page stops
	// at the record that takes the sum of its records' Value lengths
	// past MaxBytes. That record is returned too (as is the first
	// whatever its size), so that a caller that cuts the page at a
	// budget of its own, counting at least the values' bytes, learns
	// that it was cut. The store decodes no more records than it
	// returns; a SQL store's database may still read and send up to
	// Limit rows (and, with RefreshTTL, refresh them all).
	MaxBytes int
}

// NamespaceQuery selects the namespaces [Items.Namespaces] returns.
type NamespaceQuery struct {
	// Prefix keeps namespaces that start with these labels.
	Prefix []string
	// Suffix keeps namespaces that end with these labels.
	Suffix []string
	// MaxDepth, when positive, cuts every namespace to its first MaxDepth
	// labels; namespaces that become equal are returned once.
	MaxDepth int
	// Limit is the most namespaces returned: 0 means
	// [DefaultNamespaceLimit]; more than [MaxNamespaceLimit] is invalid.
	Limit int
	// Offset is how many namespaces to skip first.
	Offset int
}

// Bounds of [Items] arguments.
const (
	// DefaultSearchLimit is ItemQuery.Limit when it is zero.
	DefaultSearchLimit = 10
	// MaxSearchLimit is the largest ItemQuery.Limit.
	MaxSearchLimit = 1000
	// DefaultNamespaceLimit is NamespaceQuery.Limit when it is zero.
	DefaultNamespaceLimit = 100
	// MaxNamespaceLimit is the largest NamespaceQuery.Limit.
	MaxNamespaceLimit = 1000
	// MaxNamespaceBytes bounds a namespace: its labels' bytes plus one
	// per label.
	MaxNamespaceBytes = 1024
	// MaxKeyBytes bounds Record.Key.
	MaxKeyBytes = 1024
	// MaxValueBytes bounds Record.Value.
	MaxValueBytes = 1 << 20
	// MaxFilterFields bounds the entries of ItemQuery.Filter.
	MaxFilterFields = 32
	// MaxQueryTerms bounds the distinct terms of ItemQuery.Query: each is
	// one more test of every record (one more parameter of a SQL
	// statement).
	MaxQueryTerms = 256
)

// ErrInvalid is matched by every [*ValidationError].
var ErrInvalid = errors.New("memory: invalid argument")

// ValidationError reports an argument of an [Items] method that breaks the
// rules documented on [Record], [ItemQuery] or [NamespaceQuery]. It names
// the field at fault and says how to fix it, and matches [ErrInvalid].
type ValidationError struct {
	// Field is the field at fault, as a Go expression on the argument:
	// "Namespace", "Namespace[2]", "Key", "Value", "TTL", "Prefix[0]",
	// "Suffix[1]", `Filter["score"]`, "Limit", "Offset" or "MaxDepth".
	Field string
	// Problem says what is wrong and how to fix it.
	Problem string
}

// Error returns "memory: invalid argument: Namespace[1]: ...".
func (e *ValidationError) Error() string {
	return fmt.Sprintf("memory: invalid argument: %s: %s", e.Field, e.Problem)
}

// Is reports whether target is [ErrInvalid].
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// checkLabels checks the labels of a namespace, a prefix or a suffix named
// field; empty reports whether no labels is allowed.
func checkLabels(field string, labels []string, empty bool) error {
	if len(labels) == 0 {
		if empty {
			return nil
		}
		return invalid(field, "is empty; give at least one label, e.g. []string{\"users\", \"u42\"}")
	}
	n := 0
	for i, l := range labels {
		n += len(l) + 1
		f := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case l == "":
			return invalid(f, "is an empty label; every label needs at least one character")
		case !utf8.ValidString(l):
			return invalid(f, "%q is not valid UTF-8", l)
		case strings.Contains(l, "."):
			return invalid(f, "label %q contains a dot; the HTTP API joins labels with dots, so use another character such as '-' or '_'", l)
		case strings.IndexFunc(l, func(r rune) bool { return r < 0x20 }) >= 0:
			return invalid(f, "label %q contains a control character; labels are printable text", l)
		}
	}
	if n > MaxNamespaceBytes {
		return invalid(field, "is %d bytes long (labels plus one per label), more than MaxNamespaceBytes (%d); use shorter labels", n, MaxNamespaceBytes)
	}
	return nil
}

// CheckKey validates the namespace and key of an [Items] Get or Delete.
func CheckKey(namespace []string, key string) error {
	if err := checkLabels("Namespace", namespace, false); err != nil {
		return err
	}
	switch {
	case key == "":
		return invalid("Key", "is empty; name the record within its namespace")
	case len(key) > MaxKeyBytes:
		return invalid("Key", "is %d bytes long, more than MaxKeyBytes (%d)", len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return invalid("Key", "%q is not valid UTF-8", key)
	case strings.IndexByte(key, 0) >= 0:
		return invalid("Key", "%q contains a NUL byte", key)
	}
	return nil
}

// CheckRecord validates the record of an [Items.Put] and returns its value
// in canonical form: compact JSON, object keys sorted, strings escaped
// only where JSON requires it, numbers as written. Stores keep that form.
// It refuses a number not every store holds alike: beyond a float64's
// range (1e999999999, which PostgreSQL's jsonb refuses and JavaScript
// reads as Infinity), rounded to zero by a float64 (1e-400), a zero with
// an exponent beyond ±400 (0e-20000), or written in more than 1000
// characters.
func CheckRecord(r Record) (json.RawMessage, error) {
	if err := CheckKey(r.Namespace, r.Key); err != nil {
		return nil, err
	}
	if r.TTL < 0 {
		return nil, invalid("TTL", "is negative (%v); use 0 for a record that never expires", r.TTL)
	}
	if len(r.Value) > MaxValueBytes {
		return nil, invalid("Value", "is %d bytes long, more than MaxValueBytes (%d)", len(r.Value), MaxValueBytes)
	}
	obj, err := parseObject(r.Value)
	if err != nil {
		return nil, err
	}
	if err := checkNoNUL(obj); err != nil {
		return nil, err
	}
	if rev, num, why, found := jsonnum.Find(obj, jsonnum.Bad); found {
		return nil, invalid("Value"+jsonnum.Path(rev), "the number %s %s; store a number a float64 holds, or the value as a string", clip(num), why)
	}
	return canonical(obj)
}

// clip shortens a number's text to its first 40 characters for an error.
func clip(num string) string {
	if len(num) <= 40 {
		return num
	}
	return num[:40] + "…"
}

// parseObject decodes a JSON object, numbers as json.Number.
func parseObject(v json.RawMessage) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, invalid("Value", "is not valid JSON: %v", err)
	}
	if d.More() {
		return nil, invalid("Value", "holds more than one JSON value; give one object")
	}
	if _, err := d.Token(); err == nil {
		return nil, invalid("Value", "has text after the JSON object")
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return nil, invalid("Value", "is %s, not a JSON object; wrap it, e.g. {\"value\": ...}", jsonKind(x))
	}
	return obj, nil
}

// checkNoNUL rejects a NUL character in any string or key: PostgreSQL's
// jsonb cannot hold one, and every store rejects the same values.
func checkNoNUL(x any) error {
	switch v := x.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return invalid("Value", "holds a string with a NUL character (\\u0000), which stores cannot keep")
		}
	case map[string]any:
		for k, e := range v {
			if err := checkNoNUL(k); err != nil {
				return err
			}
			if err := checkNoNUL(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkNoNUL(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func canonical(obj map[string]any) (json.RawMessage, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(obj); err != nil {
		return nil, invalid("Value", "cannot be encoded: %v", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", x)
}

// Operators of a [Condition].
const (
	OpEq  = "$eq"
	OpNe  = "$ne"
	OpGt  = "$gt"
	OpGte = "$gte"
	OpLt  = "$lt"
	OpLte = "$lte"
)

// Condition is one test of an ItemQuery.Filter, as [CheckItemQuery]
// returns it: the top-level field Field of the value, compared by Op (one
// of OpEq ... OpLte) with Value, which is nil, a bool, a float64 or a
// string.
type Condition struct {
	Field string
	Op    string
	Value any
}

// CheckItemQuery validates q and returns it with defaults applied (Limit)
// and its filter as conditions, ordered by field then operator.
func CheckItemQuery(q ItemQuery) (ItemQuery, []Condition, error) {
	if err := checkLabels("Prefix", q.Prefix, true); err != nil {
		return q, nil, err
	}
	if err := checkPage(&q.Limit, q.Offset, DefaultSearchLimit, MaxSearchLimit); err != nil {
		return q, nil, err
	}
	if strings.IndexByte(q.Query, 0) >= 0 {
		return q, nil, invalid("Query", "holds a NUL character (\\u0000), which no stored text has; remove it")
	}
	if !utf8.ValidString(q.Query) {
		return q, nil, invalid("Query", "is not valid UTF-8, which no stored text is; convert it to UTF-8")
	}
	if n := len(queryTerms(q.Query, MaxQueryTerms+1)); n > MaxQueryTerms {
		return q, nil, invalid("Query", "has more than MaxQueryTerms (%d) distinct terms; search with fewer words", MaxQueryTerms)
	}
	if len(q.Filter) > MaxFilterFields {
		return q, nil, invalid("Filter", "has %d fields, more than MaxFilterFields (%d)", len(q.Filter), MaxFilterFields)
	}
	var conds []Condition
	for _, field := range slices.Sorted(maps.Keys(q.Filter)) {
		f := "Filter[" + strconv.Quote(field) + "]"
		if field == "" {
			return q, nil, invalid(f, "names no field")
		}
		if strings.IndexByte(field, 0) >= 0 {
			return q, nil, invalid(f, "holds a NUL character (\\u0000), which no stored field has; remove it")
		}
		v := q.Filter[field]
		ops, isOps := v.(map[string]any)
		if !isOps {
			s, err := scalar(f, v)
			if err != nil {
				return q, nil, err
			}
			conds = append(conds, Condition{Field: field, Op: OpEq, Value: s})
			continue
		}
		if len(ops) == 0 {
			return q, nil, invalid(f, "is an empty map; give a value, or operators such as {\"$gt\": 3}")
		}
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			switch op {
			case OpEq, OpNe, OpGt, OpGte, OpLt, OpLte:
			default:
				return q, nil, invalid(f, "has unknown operator %q; use $eq, $ne, $gt, $gte, $lt or $lte (objects are not compared)", op)
			}
			s, err := scalar(f+"["+strconv.Quote(op)+"]", ops[op])
			if err != nil {
				return q, nil, err
			}
			conds = append(conds, Condition{Field: field, Op: op, Value: s})
		}
	}
	return q, conds, nil
}

// scalar converts a filter value to nil, bool, float64 or string.
func scalar(field string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return nil, invalid(field, "holds a NUL character (\\u0000), which no stored value has; remove it")
		}
		return x, nil
	case nil, bool:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, invalid(field, "is %v, which no stored number equals; compare with a finite number", x)
		}
		return x, nil
	case float32:
		return scalar(field, float64(x))
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.Number:
		s := string(x)
		if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') || !json.Valid([]byte(s)) {
			return nil, invalid(field, "%q is not a JSON number; compare with one, e.g. 3 or 2.5", clip(s))
		}
		// The rule of the values put (CheckRecord's): a number beyond
		// what every store holds (range, length, exponent) is refused.
		// Within it the filter compares as a float64, with the stored
		// number read as a float64 too, in every store: a number with
		// more significant digits than a float64 keeps (an integer
		// beyond 2^53, say) is rounded on either side.
		if why, bad := jsonnum.Bad(s); bad {
			return nil, invalid(field, "the number %s %s; compare with a number a float64 holds", clip(s), why)
		}
		f, _ := strconv.ParseFloat(s, 64) // within range: Bad checked it
		return f, nil
	}
	return nil, invalid(field, "is %s; filters compare strings, numbers, booleans and null only", jsonKind(v))
}

// checkPage applies the default limit and checks the bounds.
func checkPage(limit *int, offset, def, most int) error {
	switch {
	case *limit < 0:
		return invalid("Limit", "is negative (%d); use 0 for the default (%d)", *limit, def)
	case *limit > most:
		return invalid("Limit", "is %d, more than the most allowed (%d); page through with Offset", *limit, most)
	case offset < 0:
		return invalid("Offset", "is negative (%d)", offset)
	}
	if *limit == 0 {
		*limit = def
	}
	return nil
}

// CheckNamespaceQuery validates q and returns it with defaults applied.
func CheckNamespaceQuery(q NamespaceQuery) (NamespaceQuery, error) {
	if err := checkLabels("Prefix", q.Prefix, true); err != nil {
		return q, err
	}
	if err := checkLabels("Suffix", q.Suffix, true); err != nil {
		return q, err
	}
	if q.MaxDepth < 0 {
		return q, invalid("MaxDepth", "is negative (%d); use 0 for no limit", q.MaxDepth)
	}
	if err := checkPage(&q.Limit, q.Offset, DefaultNamespaceLimit, MaxNamespaceLimit); err != nil {
		return q, err
	}
	return q, nil
}

// QueryTerms returns the distinct terms of an ItemQuery.Query with ASCII
// letters in lower case, in the order they first appear, at most
// [MaxQueryTerms] of them (a query [CheckItemQuery] accepts has no more):
// what a store looks for in the lower-cased JSON text of a value.
func QueryTerms(query string) []string {
	return queryTerms(query, MaxQueryTerms)
}

// queryTerms returns the first limit distinct terms of query. A store
// keeps a record only if it holds every term (an AND filter), so
// [CheckItemQuery] refuses a query with more than MaxQueryTerms rather than
// cut it, which would return records the query does not match; compare
// cognition, whose recall ranks by any shared word and so cuts.
func queryTerms(query string, limit int) []string {
	var terms distinct.Terms
	for f := range strings.FieldsSeq(query) {
		if terms.Add(lowerASCII(f)) && terms.Len() == limit {
			break
		}
	}
	return terms.List()
}

func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// NotFound returns the error an [Items.Get] returns for a missing record:
// it names the record and matches [ErrNotFound].
func NotFound(namespace []string, key string) error {
	return fmt.Errorf("memory: no record %q in namespace %q: %w", key, strings.Join(namespace, "."), ErrNotFound)
}
