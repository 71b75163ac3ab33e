package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/memory"
)

// countsItems reports whether puts count the principal's items
// (Config.MaxItems, Config.MaxItemBytes).
func (s *Server) countsItems() bool { return s.cfg.MaxItems >= 0 || s.cfg.MaxItemBytes >= 0 }

// itemsEnabled reports whether the Store endpoints are served.
func (s *Server) itemsEnabled() bool { return s.cfg.Items != nil }

func (s *Server) itemRoutes() {
	m := s.mux
	m.HandleFunc("PUT /store/items", s.putItem)
	m.HandleFunc("GET /store/items", s.getItem)
	m.HandleFunc("DELETE /store/items", s.deleteItem)
	m.HandleFunc("POST /store/items/search", s.searchItems)
	m.HandleFunc("POST /store/namespaces", s.listNamespaces)
}

// scope is the hidden first label of a principal's items when the server
// authenticates: each principal sees only its own namespaces.
func (s *Server) scope(r *http.Request) []string {
	if s.cfg.Authenticate == nil {
		return nil
	}
	h := sha256.Sum256([]byte(principal(r)))
	return []string{"principal-" + hex.EncodeToString(h[:12])}
}

func (s *Server) scoped(r *http.Request, ns []string) []string {
	sc := s.scope(r)
	if sc == nil {
		return ns
	}
	return append(sc, ns...)
}

func (s *Server) unscoped(r *http.Request, ns []string) []string {
	return ns[len(s.scope(r)):]
}

func (s *Server) items(w http.ResponseWriter) memory.Items {
	if s.cfg.Items == nil {
		writeError(w, errorf(http.StatusNotFound, "this server has no store; set Config.Items to serve /store"))
		return nil
	}
	return s.cfg.Items
}

// itemsBody returns the item store of a request with a JSON body, and
// decodes the body into body; or, with the error written, nil when the
// server has no store or the body does not decode.
func (s *Server) itemsBody(w http.ResponseWriter, r *http.Request, body any) memory.Items {
	it := s.items(w)
	if it == nil {
		return nil
	}
	if err := decodeBody(r, body); err != nil {
		writeError(w, err)
		return nil
	}
	return it
}

// errEmptyNamespace refuses a put or delete of an item without a
// namespace.
var errEmptyNamespace = errorf(http.StatusUnprocessableEntity, "namespace: is empty; give at least one label")

// writeItemError writes the response of err, an item store's error for
// r (itemError).
func (s *Server) writeItemError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, itemError(err, len(s.scope(r))))
}

// itemError maps a memory error: a validation error is 422 naming the
// field as the API spells it, with label indexes as the client sent them
// (hidden is how many scope labels the server put in front).
// labelIndex matches the label index that starts a namespace field path.
var labelIndex = regexp.MustCompile(`^\[\d+\]`)

func itemError(err error, hidden int) error {
	var ve *memory.ValidationError
	if errors.As(err, &ve) {
		field := ve.Field
		for goName, api := range map[string]string{"Namespace": "namespace", "Key": "key", "Value": "value", "TTL": "ttl", "Prefix": "namespace_prefix", "Suffix": "suffix", "Filter": "filter", "Limit": "limit", "Offset": "offset", "MaxDepth": "max_depth", "Query": "query"} {
			if strings.HasPrefix(field, goName) {
				rest := strings.TrimPrefix(field, goName)
				if (goName == "Namespace" || goName == "Prefix") && hidden > 0 {
					rest = labelIndex.ReplaceAllStringFunc(rest, func(m string) string {
						n, _ := strconv.Atoi(m[1 : len(m)-1])
						return "[" + strconv.Itoa(n-hidden) + "]"
					})
				}
				field = api + rest
				break
			}
		}
		return errorf(http.StatusUnprocessableEntity, "%s: %s", field, ve.Problem)
	}
	if errors.Is(err, memory.ErrNotFound) {
		return errorf(http.StatusNotFound, "%v", err)
	}
	if errors.Is(err, memory.ErrFull) {
		// The store's own bound, not a fault of the server's: 507, as
		// WebDAV answers a store that cannot hold what it is sent.
		return errorf(http.StatusInsufficientStorage, "the item store is full (its MaxRecords): delete items, or put them with a ttl, then retry")
	}
	return err
}

// checkItems refuses the Put of a new item (one not yet under rec's
// namespace and key) to a principal that holds Config.MaxItems items
// already, so that one principal cannot fill the store for the others,
// and a Put that would take the principal's items past
// Config.MaxItemBytes. It returns how many bytes the Put adds (less
// than zero for a smaller replacement), counting the value as the store
// keeps it (memory.CheckRecord's form, not the request's text, whose
// spaces the store drops), as a recount reads it back. A replacement of
// an item that expired after it was counted adds its whole size (the
// expired one is not found to take off): the count errs high, and the
// recount a put past the bound makes sets it right. The caller holds the
// principal's items lock of this instance.
func (s *Server) checkItems(r *http.Request, it memory.Items, rec memory.Record) (int64, error) {
	if s.cfg.MaxItems < 0 && s.cfg.MaxItemBytes < 0 {
		return 0, nil
	}
	ctx := r.Context()
	val, err := memory.CheckRecord(rec)
	if err != nil {
		return 0, itemError(err, len(s.scope(r)))
	}
	stored := rec
	stored.Value = val
	grow := recordBytes(stored)
	old, err := it.Get(ctx, rec.Namespace, rec.Key, false)
	switch {
	case err == nil:
		grow -= recordBytes(old) // a replacement adds no item
	case !errors.Is(err, memory.ErrNotFound):
		return 0, itemError(err, len(s.scope(r)))
	case s.cfg.MaxItems >= 0:
		// The item at index MaxItems-1 of the principal's exists when it
		// holds MaxItems items: one record read, not all of them.
		got, err := it.Search(ctx, memory.ItemQuery{Prefix: s.scope(r), Offset: s.cfg.MaxItems - 1, Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(got) > 0 {
			return 0, &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: this principal holds %d items or more (Config.MaxItems); delete some, or put them with a ttl, before putting new ones", ErrLimit, s.cfg.MaxItems)}
		}
	}
	if s.cfg.MaxItemBytes < 0 || grow <= 0 {
		return grow, nil
	}
	held, err := s.itemBytes(r, it, false)
	if err != nil {
		return 0, err
	}
	if held+grow > s.cfg.MaxItemBytes {
		// Counted again, at most once per itemRecount: items may have
		// expired, or been deleted through another instance.
		if held, err = s.itemBytes(r, it, true); err != nil {
			return 0, err
		}
	}
	if held+grow > s.cfg.MaxItemBytes {
		return 0, &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: this principal's items hold %d bytes, and this one would take them past %d (Config.MaxItemBytes); delete some, or put them with a ttl, before putting more", ErrLimit, held, s.cfg.MaxItemBytes)}
	}
	return grow, nil
}

// recordBytes is the bytes of rec that Config.MaxItemBytes counts: its
// value's, its key's and its namespace's.
func recordBytes(rec memory.Record) int64 {
	n := len(rec.Value) + len(rec.Key)
	for _, l := range rec.Namespace {
		n += len(l) + 1
	}
	return int64(n)
}

// itemTally is the bytes of a principal's items as this instance counts
// them (Config.MaxItemBytes), and when it counted them last.
type itemTally struct {
	bytes int64
	at    time.Time
}

// itemRecount is how often a principal's item bytes may be counted
// again, when a put would pass Config.MaxItemBytes.
var itemRecount = time.Minute // a variable for the tests

// maxItemTallies bounds the principals whose item bytes an instance
// keeps; past it one is forgotten (and counted again at its next put).
const maxItemTallies = 4096

// itemBytes returns the bytes of the request's principal's items: as
// counted before, or counted now by reading them when they were never
// counted (or forgotten), or when recount is set and the last count is
// older than itemRecount. The caller holds the principal's items lock.
func (s *Server) itemBytes(r *http.Request, it memory.Items, recount bool) (int64, error) {
	who := principal(r)
	s.imu.Lock()
	t, ok := s.itemTallies[who]
	s.imu.Unlock()
	if ok && (!recount || time.Since(t.at) < itemRecount) {
		return t.bytes, nil
	}
	var total int64
	for offset := 0; ; offset += memory.MaxSearchLimit {
		got, err := it.Search(r.Context(), memory.ItemQuery{Prefix: s.scope(r), Offset: offset, Limit: memory.MaxSearchLimit})
		if err != nil {
			return 0, itemError(err, len(s.scope(r)))
		}
		for _, rec := range got {
			total += recordBytes(rec)
		}
		if len(got) < memory.MaxSearchLimit {
			break
		}
	}
	s.imu.Lock()
	defer s.imu.Unlock()
	if _, ok := s.itemTallies[who]; !ok && len(s.itemTallies) >= maxItemTallies {
		for k := range s.itemTallies {
			delete(s.itemTallies, k) // any one: it is counted again when needed
			break
		}
	}
	s.itemTallies[who] = itemTally{bytes: total, at: time.Now()}
	return total, nil
}

// addItemBytes adds n (negative: takes) to the request's principal's
// item bytes, when this instance counts them.
func (s *Server) addItemBytes(r *http.Request, n int64) {
	s.imu.Lock()
	defer s.imu.Unlock()
	if t, ok := s.itemTallies[principal(r)]; ok {
		t.bytes = max(t.bytes+n, 0)
		s.itemTallies[principal(r)] = t
	}
}

func (s *Server) itemJSON(r *http.Request, rec memory.Record) map[string]any {
	return map[string]any{"namespace": s.unscoped(r, rec.Namespace), "key": rec.Key, "value": rec.Value,
		"created_at": stamp(rec.Created), "updated_at": stamp(rec.Updated)}
}

// maxTTLMinutes is the longest ttl, in minutes, a time.Duration holds.
const maxTTLMinutes = float64(math.MaxInt64/int64(time.Minute)) - 1

func (s *Server) putItem(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Namespace []string        `json:"namespace"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		TTL       *float64        `json:"ttl"`
		// Index is LangGraph's list of the value's fields to embed for
		// semantic search, or false for none. The item stores have no
		// semantic index: false (or null) is accepted, a list refused.
		Index json.RawMessage `json:"index"`
	}
	it := s.itemsBody(w, r, &body)
	if it == nil {
		return
	}
	if len(body.Namespace) == 0 {
		writeError(w, errEmptyNamespace)
		return
	}
	if idx := strings.TrimSpace(string(body.Index)); idx != "" && idx != "null" && idx != "false" {
		writeError(w, errorf(422, "index: asks for semantic indexing, which this server's item store does not have (search's query is a plain text match); leave index out or set it to false"))
		return
	}
	rec := memory.Record{Namespace: s.scoped(r, body.Namespace), Key: body.Key, Value: body.Value}
	if body.TTL != nil {
		if *body.TTL < 0 {
			writeError(w, errorf(422, "ttl: must not be negative (minutes)"))
			return
		}
		// A float beyond time.Duration's range converts to an undefined
		// (on amd64 negative) duration: refuse it by name instead.
		if *body.TTL > maxTTLMinutes {
			writeError(w, errorf(422, "ttl: %v minutes is more than the most allowed (%d, about 290 years); use 0 or leave it out for a record that never expires", *body.TTL, int64(maxTTLMinutes)))
			return
		}
		rec.TTL = time.Duration(*body.TTL * float64(time.Minute))
	}
	if s.countsItems() {
		// The count and the put under one lock: puts of a principal
		// are serialised only while they are counted.
		unlock, err := s.locks.local.Lock(r.Context(), "items:"+principal(r))
		if err != nil {
			writeError(w, err)
			return
		}
		defer unlock()
	}
	grow, err := s.checkItems(r, it, rec)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := it.Put(r.Context(), rec); err != nil {
		s.writeItemError(w, r, err)
		return
	}
	s.addItemBytes(r, grow)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getItem(w http.ResponseWriter, r *http.Request) {
	it := s.items(w)
	if it == nil {
		return
	}
	q := r.URL.Query()
	ns := q.Get("namespace")
	if ns == "" {
		writeError(w, errorf(422, "namespace: required, its labels joined with dots"))
		return
	}
	refresh, err := queryBool(r, "refresh_ttl", false)
	if err != nil {
		writeError(w, err)
		return
	}
	rec, err := it.Get(r.Context(), s.scoped(r, strings.Split(ns, ".")), q.Get("key"), refresh)
	if errors.Is(err, memory.ErrNotFound) {
		writeJSON(w, 200, nil) // the JS server's answer, which the SDK turns into null
		return
	}
	if err != nil {
		s.writeItemError(w, r, err)
		return
	}
	writeJSON(w, 200, s.itemJSON(r, rec))
}

func (s *Server) deleteItem(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Namespace []string `json:"namespace"`
		Key       string   `json:"key"`
	}
	it := s.itemsBody(w, r, &body)
	if it == nil {
		return
	}
	if len(body.Namespace) == 0 {
		writeError(w, errEmptyNamespace)
		return
	}
	ns := s.scoped(r, body.Namespace)
	var freed int64
	if s.cfg.MaxItemBytes >= 0 {
		// The bytes the delete frees, read under the lock the puts
		// count under.
		unlock, err := s.locks.local.Lock(r.Context(), "items:"+principal(r))
		if err != nil {
			writeError(w, err)
			return
		}
		defer unlock()
		if old, err := it.Get(r.Context(), ns, body.Key, false); err == nil {
			freed = recordBytes(old)
		}
	}
	if err := it.Delete(r.Context(), ns, body.Key); err != nil {
		s.writeItemError(w, r, err)
		return
	}
	s.addItemBytes(r, -freed)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) searchItems(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prefix     []string   `json:"namespace_prefix"`
		Filter     jsonObject `json:"filter"` // numbers as sent, checked by memory.CheckItemQuery, compared as float64
		Limit      int        `json:"limit"`
		Offset     int        `json:"offset"`
		Query      string     `json:"query"`
		RefreshTTL bool       `json:"refresh_ttl"`
	}
	it := s.itemsBody(w, r, &body)
	if it == nil {
		return
	}
	recs, cut, err := s.searchPage(r, it, memory.ItemQuery{Prefix: s.scoped(r, body.Prefix), Filter: map[string]any(body.Filter), Query: body.Query,
		Limit: body.Limit, Offset: body.Offset, RefreshTTL: body.RefreshTTL})
	if err != nil {
		s.writeItemError(w, r, err)
		return
	}
	markTruncated(w, cut)
	out := make([]map[string]any, 0, len(recs))
	for _, rec := range recs {
		out = append(out, s.itemJSON(r, rec))
	}
	writeJSON(w, 200, map[string]any{"items": out})
}

// itemSize estimates the bytes rec takes in an answer, as JSON.
func itemSize(rec memory.Record) int {
	return 120 + len(rec.Value) + len(rec.Key) + jsonSize(rec.Namespace)
}

// searchPage is it.Search(q), one call for the whole page, cut at
// Config.MaxResponseBytes: it stops before the record that would pass
// it (keeping the first whatever its size), and cut reports that it did.
// One call, not several offset pages, so that an insert, delete or
// expiry between calls cannot repeat or skip a record within one answer.
// The store stops reading at the budget too (memory.ItemQuery.MaxBytes,
// which counts the values' bytes, fewer than itemSize: the record it
// stops at is past the budget here as well), so that the page held is
// the budget and one record, not q.Limit records of up to
// memory.MaxValueBytes each; a store that reads on is cut here. With
// q.RefreshTTL the store may refresh the records it cut off too; the
// client's next page reads them again.
func (s *Server) searchPage(r *http.Request, it memory.Items, q memory.ItemQuery) (recs []memory.Record, cut bool, err error) {
	budget := s.responseBudget()
	if budget < math.MaxInt {
		q.MaxBytes = budget
	}
	got, err := it.Search(r.Context(), q)
	if err != nil {
		return nil, false, err
	}
	recs, cut = cutBytes(got, budget, itemSize)
	return recs, cut, nil
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prefix   []string `json:"prefix"`
		Suffix   []string `json:"suffix"`
		MaxDepth int      `json:"max_depth"`
		Limit    int      `json:"limit"`
		Offset   int      `json:"offset"`
	}
	it := s.itemsBody(w, r, &body)
	if it == nil {
		return
	}
	if slices.Contains(body.Prefix, "*") || slices.Contains(body.Suffix, "*") {
		s.listNamespacesWild(w, r, it, body.Prefix, body.Suffix, body.MaxDepth, body.Limit, body.Offset)
		return
	}
	depth := body.MaxDepth
	if depth > 0 {
		// Past the scope's labels; a depth beyond every namespace's
		// (up to math.MaxInt) is no limit, not an overflow.
		depth = min(depth, math.MaxInt-len(s.scope(r))) + len(s.scope(r))
	}
	nss, err := it.Namespaces(r.Context(), memory.NamespaceQuery{Prefix: s.scoped(r, body.Prefix), Suffix: body.Suffix, MaxDepth: depth, Limit: body.Limit, Offset: body.Offset})
	if err != nil {
		s.writeItemError(w, r, err)
		return
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		if u := s.unscoped(r, ns); len(u) > 0 {
			out = append(out, u)
		}
	}
	writeJSON(w, 200, map[string]any{"namespaces": out})
}

// maxWildNamespaces bounds the namespaces a wildcard listing reads
// (listNamespacesWild).
const maxWildNamespaces = 100_000

// listNamespacesWild is POST /store/namespaces with "*" in prefix or
// suffix, which LangGraph reads as a wildcard matching any one label:
// the store lists the namespaces that match the labels before the
// prefix's first "*" and after the suffix's last, page by page, and the
// server keeps those that match the whole prefix and suffix, then cuts
// them to max_depth (each once) and pages them. A listing that would read
// more than maxWildNamespaces namespaces is refused with 422.
func (s *Server) listNamespacesWild(w http.ResponseWriter, r *http.Request, it memory.Items, prefix, suffix []string, maxDepth, limit, offset int) {
	if limit < 0 || limit > memory.MaxNamespaceLimit {
		writeError(w, errorf(422, "limit: %d is out of range; use 1 to %d", limit, memory.MaxNamespaceLimit))
		return
	}
	if offset < 0 {
		writeError(w, errorf(422, "offset: %d is negative; use 0 or more", offset))
		return
	}
	if limit == 0 {
		limit = memory.DefaultNamespaceLimit
	}
	fixedPrefix := prefix
	if i := slices.Index(prefix, "*"); i >= 0 {
		fixedPrefix = prefix[:i]
	}
	fixedSuffix := suffix
	if i := slices.Index(suffix, "*"); i >= 0 {
		fixedSuffix = suffix[lastIndex(suffix, "*")+1:]
	}
	out := [][]string{}
	seen := map[string]bool{}
	matched := 0
	for read := 0; ; read += memory.MaxNamespaceLimit {
		if read >= maxWildNamespaces {
			writeError(w, errorf(422, "prefix, suffix: the wildcard \"*\" would read more than %d namespaces; give more labels before it", maxWildNamespaces))
			return
		}
		nss, err := it.Namespaces(r.Context(), memory.NamespaceQuery{Prefix: s.scoped(r, fixedPrefix), Suffix: fixedSuffix, Limit: memory.MaxNamespaceLimit, Offset: read})
		if err != nil {
			s.writeItemError(w, r, err)
			return
		}
		for _, ns := range nss {
			u := s.unscoped(r, ns)
			if len(u) == 0 || !labelsMatch(u, prefix, suffix) {
				continue
			}
			if maxDepth > 0 && len(u) > maxDepth {
				u = u[:maxDepth]
			}
			k := strings.Join(u, "\x00")
			if seen[k] {
				continue
			}
			seen[k] = true
			if matched++; matched > offset && len(out) < limit {
				out = append(out, slices.Clone(u))
			}
		}
		if len(nss) < memory.MaxNamespaceLimit || len(out) == limit {
			break
		}
	}
	writeJSON(w, 200, map[string]any{"namespaces": out})
}

// lastIndex is the index of the last v in xs, or -1.
func lastIndex(xs []string, v string) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i] == v {
			return i
		}
	}
	return -1
}

// labelsMatch reports whether namespace ns starts with prefix and ends
// with suffix, a "*" in either matching any one label.
func labelsMatch(ns, prefix, suffix []string) bool {
	if len(ns) < len(prefix) || len(ns) < len(suffix) {
		return false
	}
	for i, p := range prefix {
		if p != "*" && ns[i] != p {
			return false
		}
	}
	for i, x := range suffix {
		if x != "*" && ns[len(ns)-len(suffix)+i] != x {
			return false
		}
	}
	return true
}
