package server

import (
	"encoding/json"
	"math"
	"net/http"
)

// TruncatedHeader is the header a list answer (a thread search, a
// history, a thread's runs, a store search) carries, set to "true", when
// it stopped before its limit at Config.MaxResponseBytes: the client
// pages on from its last item (offset, or before for a history) to get
// the rest. A list answered without it holds fewer items than its limit
// only when there are no more.
//
// A client that pages until an answer holds fewer items than its limit,
// and does not read this header (a loop over the official LangGraph
// SDK's search calls, which answer the items and not the headers, is
// one), takes a cut answer for the last and stops paging early: for
// such clients raise Config.MaxResponseBytes above the largest page they
// ask for (their limit times their largest item), or set it negative
// for no bound.
const TruncatedHeader = "X-Pagination-Truncated"

// responseBudget is the bytes a list answer may hold: Config.MaxResponseBytes,
// or the most an int holds when it is negative (no bound).
func (s *Server) responseBudget() int {
	if s.cfg.MaxResponseBytes < 0 {
		return math.MaxInt
	}
	return s.cfg.MaxResponseBytes
}

// cutBytes returns the first items of xs whose sizes add up to at most
// max, and at least the first (an item larger than max is answered
// alone, so that a client paging on always gets on); cut reports that
// items were left off.
func cutBytes[T any](xs []T, max int, size func(T) int) (out []T, cut bool) {
	total := 0
	for i, x := range xs {
		total += size(x)
		if i > 0 && total > max {
			return xs[:i], true
		}
	}
	return xs, false
}

// markTruncated sets TruncatedHeader on w when cut.
func markTruncated(w http.ResponseWriter, cut bool) {
	if cut {
		w.Header().Set(TruncatedHeader, "true")
	}
}

// Size estimates the bytes t takes in an answer, as JSON: its values',
// its interrupts', its metadata's and its config's, and a fixed part for
// its other fields. A [Store] honouring ThreadQuery.MaxBytes adds up the
// sizes of the threads it returns.
func (t *Thread) Size() int {
	n := 200 + len(t.ID) + len(t.Values) + jsonSize(t.Metadata) + jsonSize(t.Config)
	for task, ins := range t.Interrupts {
		n += len(task) + 4
		for _, in := range ins {
			n += 20 + len(in.ID) + len(in.Value)
		}
	}
	return n
}

// Size estimates the bytes r takes in an answer, as JSON: its kwargs',
// its metadata's, and a fixed part for its other fields. A [Store]
// honouring RunQuery.MaxBytes adds up the sizes of the runs it returns.
func (r *Run) Size() int {
	return 250 + len(r.ID) + len(r.ThreadID) + len(r.AssistantID) + len(r.Kwargs) + jsonSize(r.Metadata) + len(r.MultitaskStrategy)
}

// minStateSize is the least threadState.size of any state: a history
// with less than this left of its budget can hold no more state, which
// it knows without reading one.
const minStateSize = 400

// size estimates the bytes st takes in an answer, as JSON; its
// interrupts are counted twice, as they are written under interrupts
// and under their tasks. It is at least minStateSize.
func (st *threadState) size() int {
	n := minStateSize + len(st.Values) + jsonSize(st.Metadata)
	for _, nx := range st.Next {
		n += len(nx) + 200 // the name, and its task
	}
	for _, in := range st.Interrupts {
		n += 2 * (20 + len(in.ID) + len(in.Value))
	}
	return n
}

// jsonSize estimates the length of v's JSON text: exact for strings
// without escapes, numbers, booleans and null, and the structures made
// of them.
func jsonSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return len(v) + 2
	case json.Number:
		return len(v)
	case json.RawMessage:
		return len(v)
	case bool:
		return 5
	case float64, int, int64:
		return 24
	case map[string]any:
		n := 2
		for k, x := range v {
			n += len(k) + 4 + jsonSize(x)
		}
		return n
	case map[string]string:
		n := 2
		for k, x := range v {
			n += len(k) + len(x) + 6
		}
		return n
	case []any:
		n := 2
		for _, x := range v {
			n += 1 + jsonSize(x)
		}
		return n
	case []string:
		n := 2
		for _, x := range v {
			n += 3 + len(x)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
