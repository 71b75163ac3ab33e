// Package documenttest checks implementations of [document.Store] against
// the contract documented on the interface. Every store in this module
// passes it; run it against your own:
//
//	func TestStore(t *testing.T) {
//		documenttest.Run(t, func(t *testing.T) document.Store {
//			return newMyStore(t) // empty, released with t.Cleanup
//		})
//	}
//
// Run starts goroutines (the concurrency checks), all of which have ended
// when it returns.
package documenttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/internal/conformance"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Run runs the conformance checks as subtests of t. newStore is called once
// per subtest and must return an empty store.
func Run(t *testing.T, newStore func(t *testing.T) document.Store) {
	t.Helper()
	conformance.Run(t, newStore, []conformance.Check[document.Store]{
		{Name: "CreateGet", Fn: testCreateGet},
		{Name: "CreateValidation", Fn: testCreateValidation},
		{Name: "CreateDuplicate", Fn: testCreateDuplicate},
		{Name: "Limit", Fn: testLimit},
		{Name: "ConcurrentLimit", Fn: testConcurrentLimit},
		{Name: "OwnerQuota", Fn: testOwnerQuota},
		{Name: "ConcurrentOwnerQuota", Fn: testConcurrentOwnerQuota},
		{Name: "List", Fn: testList},
		{Name: "Conversations", Fn: testConversations},
		{Name: "Usage", Fn: testUsage},
		{Name: "Unfinished", Fn: testUnfinished},
		{Name: "Content", Fn: testContent},
		{Name: "Complete", Fn: testComplete},
		{Name: "SetStatus", Fn: testSetStatus},
		{Name: "Delete", Fn: testDelete},
		{Name: "NotFound", Fn: testNotFound},
		{Name: "Canceled", Fn: testCanceled},
	})
}

// base is the creation time of test documents; whole microseconds, which
// every store keeps exactly.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newDoc(id, conv string, i int, content []byte) document.Document {
	at := base.Add(time.Duration(i) * time.Second)
	return document.Document{
		ID: id, ConversationID: conv, Owner: "user-1", Name: id + ".md", ContentType: "text/markdown",
		Size: int64(len(content)), Status: document.StatusPending, Tokens: document.EstimateTokens(string(content)),
		Created: at, Updated: at,
	}
}

func create(t *testing.T, s document.Store, id, conv string, i int, content string) document.Document {
	t.Helper()
	d := newDoc(id, conv, i, []byte(content))
	if err := s.Create(t.Context(), d, []byte(content), document.Quota{}); err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	return d
}

// sameTime compares times by instant, ignoring location and monotonic
// clock readings.
var sameTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// checkGet checks that Get returns want, the document of id as op (the
// method called last) left it.
func checkGet(t *testing.T, s document.Store, id, op string, want document.Document) {
	t.Helper()
	got, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, sameTime); diff != "" {
		t.Errorf("Get after %s (-want +got):\n%s", op, diff)
	}
}

func testCreateGet(t *testing.T, s document.Store) {
	checkGet(t, s, "d1", "Create", create(t, s, "d1", "c1", 0, "# Prices\n\nÜber 2.50 €."))
}

func testCreateValidation(t *testing.T, s document.Store) {
	good := newDoc("d1", "c1", 0, []byte("x"))
	for name, mut := range map[string]func(*document.Document){
		"no id":           func(d *document.Document) { d.ID = "" },
		"no conversation": func(d *document.Document) { d.ConversationID = "" },
		"bad status":      func(d *document.Document) { d.Status = "uploading" },
		"wrong size":      func(d *document.Document) { d.Size = 7 },
	} {
		d := good
		mut(&d)
		if err := s.Create(t.Context(), d, []byte("x"), document.Quota{}); err == nil {
			t.Errorf("Create with %s succeeded; want an error", name)
		}
	}
	// Ids every store holds alike: a *ValidationError, not the database's.
	for name, mut := range map[string]func(*document.Document){
		"NUL in id":           func(d *document.Document) { d.ID = "d\x00" },
		"bad UTF-8 id":        func(d *document.Document) { d.ID = "d\xff" },
		"NUL in conversation": func(d *document.Document) { d.ConversationID = "c\x00" },
		"long conversation":   func(d *document.Document) { d.ConversationID = strings.Repeat("c", document.MaxIDBytes+1) },
		"bad UTF-8 owner":     func(d *document.Document) { d.Owner = "o\xff" },
	} {
		d := good
		mut(&d)
		var ve *document.ValidationError
		if err := s.Create(t.Context(), d, []byte("x"), document.Quota{}); !errors.As(err, &ve) {
			t.Errorf("Create with %s: %v; want a *document.ValidationError", name, err)
		}
	}
	if _, err := s.Get(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Get after rejected creates: err = %v; want ErrNotFound", err)
	}
}

func testCreateDuplicate(t *testing.T, s document.Store) {
	create(t, s, "d1", "c1", 0, "first")
	d := newDoc("d1", "c2", 1, []byte("second"))
	if err := s.Create(t.Context(), d, []byte("second"), document.Quota{}); !errors.Is(err, document.ErrExists) {
		t.Fatalf("second Create of d1: err = %v; want ErrExists", err)
	}
	// An id the store holds is ErrExists before any bound: the document
	// exists, whatever the quota would say of a new one.
	full := []document.Quota{
		{PerConversation: 1},
		{Owner: document.Usage{Documents: 1}},
		{Owner: document.Usage{Bytes: 5}},
		{PerConversation: 1, Owner: document.Usage{Documents: 1, Bytes: 5}},
	}
	for _, q := range full {
		d := newDoc("d1", "c1", 1, []byte("again"))
		if err := s.Create(t.Context(), d, []byte("again"), q); !errors.Is(err, document.ErrExists) {
			t.Errorf("Create of d1 again with %+v, which d1 fills: err = %v; want ErrExists", q, err)
		}
	}
	got, err := s.Content(t.Context(), "d1")
	if err != nil || string(got) != "first" {
		t.Errorf("Content(d1) = %q, %v; want the first upload kept", got, err)
	}
}

func testLimit(t *testing.T, s document.Store) {
	for i := range 2 {
		id := fmt.Sprint("d", i)
		if err := s.Create(t.Context(), newDoc(id, "c1", i, []byte("x")), []byte("x"), document.Quota{PerConversation: 2}); err != nil {
			t.Fatalf("Create %s under the limit: %v", id, err)
		}
	}
	if err := s.Create(t.Context(), newDoc("d2", "c1", 2, []byte("x")), []byte("x"), document.Quota{PerConversation: 2}); !errors.Is(err, document.ErrTooMany) {
		t.Errorf("third Create with limit 2: err = %v; want ErrTooMany", err)
	}
	if err := s.Create(t.Context(), newDoc("d3", "c2", 3, []byte("x")), []byte("x"), document.Quota{PerConversation: 2}); err != nil {
		t.Errorf("Create in another conversation: %v; the limit is per conversation", err)
	}
	if err := s.Delete(t.Context(), "d0"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(t.Context(), newDoc("d4", "c1", 4, []byte("x")), []byte("x"), document.Quota{PerConversation: 2}); err != nil {
		t.Errorf("Create after a Delete freed a place: %v", err)
	}
}

func testConcurrentLimit(t *testing.T, s document.Store) {
	const n, limit = 12, 5
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprint("d", i)
			errs[i] = s.Create(context.Background(), newDoc(id, "c1", i, []byte("x")), []byte("x"), document.Quota{PerConversation: limit})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, document.ErrTooMany):
			t.Errorf("Create d%d: %v; want success or ErrTooMany", i, err)
		}
	}
	docs, err := s.List(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if ok != limit || len(docs) != limit {
		t.Errorf("%d concurrent creates with limit %d: %d succeeded, %d stored; want %d and %d", n, limit, ok, len(docs), limit, limit)
	}
}

// ownedDoc is document i of owner in conversation conv, of content.
func ownedDoc(id, conv, owner string, i int, content string) document.Document {
	d := newDoc(id, conv, i, []byte(content))
	d.Owner = owner
	return d
}

// testOwnerQuota: Quota.Owner bounds one owner's documents over every
// conversation, in number and in bytes, with the new document counted; a
// refusal is a *QuotaError naming the field and stores nothing; other
// owners are not bound by it, and a deletion makes room again.
func testOwnerQuota(t *testing.T, s document.Store) {
	ctx := t.Context()
	byNumber := document.Quota{Owner: document.Usage{Documents: 2}}
	for i, conv := range []string{"c1", "c2"} {
		if err := s.Create(ctx, ownedDoc(fmt.Sprint("a", i), conv, "ada", i, "12345"), []byte("12345"), byNumber); err != nil {
			t.Fatalf("Create a%d within the quota: %v", i, err)
		}
	}
	err := s.Create(ctx, ownedDoc("a2", "c3", "ada", 2, "1"), []byte("1"), byNumber)
	var qe *document.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, document.ErrQuota) || qe.Field != "Documents" || qe.Limit != 2 || qe.Owner != "ada" ||
		qe.Held != (document.Usage{Documents: 2, Bytes: 10}) {
		t.Fatalf("third document of ada with Quota.Owner.Documents 2: %v (%+v); want a *QuotaError on Documents, limit 2, held 2 documents of 10 bytes", err, qe)
	}
	if _, err := s.Get(ctx, "a2"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Get of the refused document: %v; want ErrNotFound", err)
	}
	if err := s.Create(ctx, ownedDoc("b0", "c1", "bob", 3, "1"), []byte("1"), byNumber); err != nil {
		t.Errorf("Create of another owner: %v; the quota is per owner", err)
	}
	for i := range 3 {
		if err := s.Create(ctx, ownedDoc(fmt.Sprint("n", i), "c1", "", 10+i, "1"), []byte("1"), byNumber); err != nil {
			t.Errorf("Create %d of a document without an owner: %v; Quota.Owner does not bind it", i, err)
		}
	}
	byBytes := document.Quota{Owner: document.Usage{Bytes: 14}}
	err = s.Create(ctx, ownedDoc("a3", "c1", "ada", 4, "12345"), []byte("12345"), byBytes)
	if !errors.As(err, &qe) || qe.Field != "Bytes" || qe.Limit != 14 || qe.Size != 5 {
		t.Fatalf("5 more bytes over 10 with Quota.Owner.Bytes 14: %v; want a *QuotaError on Bytes, limit 14, size 5", err)
	}
	if err := s.Create(ctx, ownedDoc("a4", "c1", "ada", 5, "1234"), []byte("1234"), byBytes); err != nil {
		t.Errorf("4 more bytes over 10 with Quota.Owner.Bytes 14: %v; want it stored (the bound holds the new document)", err)
	}
	for _, id := range []string{"a0", "a4"} { // ada holds a1 alone
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, ownedDoc("a5", "c1", "ada", 6, "1"), []byte("1"), byNumber); err != nil {
		t.Errorf("Create after a deletion made room: %v", err)
	}
}

// testConcurrentOwnerQuota: creations of one owner racing in different
// conversations never pass Quota.Owner.
func testConcurrentOwnerQuota(t *testing.T, s document.Store) {
	const n, limit = 12, 5
	q := document.Quota{PerConversation: 3, Owner: document.Usage{Documents: limit}}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Create(context.Background(), ownedDoc(fmt.Sprint("d", i), fmt.Sprint("c", i%4), "ada", i, "x"), []byte("x"), q)
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, document.ErrQuota) && !errors.Is(err, document.ErrTooMany):
			t.Errorf("Create d%d: %v; want success, ErrQuota or ErrTooMany", i, err)
		}
	}
	u, err := s.Usage(t.Context(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if ok != limit || u.Documents != limit {
		t.Errorf("%d concurrent creates of one owner with Quota.Owner.Documents %d: %d succeeded, %d stored; want %d and %d", n, limit, ok, u.Documents, limit, limit)
	}
}

func testList(t *testing.T, s document.Store) {
	// Created out of id order, two at the same instant.
	c := create(t, s, "c", "c1", 2, "third")
	a := create(t, s, "a", "c1", 0, "first")
	b := create(t, s, "b", "c1", 0, "first too")
	create(t, s, "x", "c2", 1, "other conversation")
	got, err := s.List(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]document.Document{a, b, c}, got, sameTime); diff != "" {
		t.Errorf("List(c1) (-want +got):\n%s", diff)
	}
	none, err := s.List(t.Context(), "nobody")
	if err != nil || len(none) != 0 {
		t.Errorf("List(unknown) = %v, %v; want none, nil", none, err)
	}
}

// testUsage: Usage counts and sums the documents of one owner, in every
// conversation and whatever their status, and follows creations and
// deletions; another owner's documents do not count.
func testUsage(t *testing.T, s document.Store) {
	ctx := t.Context()
	usage := func(owner string) document.Usage {
		t.Helper()
		u, err := s.Usage(ctx, owner)
		if err != nil {
			t.Fatalf("Usage(%q): %v", owner, err)
		}
		return u
	}
	if u := usage("ada"); u != (document.Usage{}) {
		t.Fatalf("Usage of an empty store = %+v, want zero", u)
	}
	put := func(id, conv, owner, content string, i int) {
		t.Helper()
		d := newDoc(id, conv, i, []byte(content))
		d.Owner = owner
		if err := s.Create(ctx, d, []byte(content), document.Quota{}); err != nil {
			t.Fatalf("Create(%q): %v", id, err)
		}
	}
	put("a1", "conv-1", "ada", "12345", 0)
	put("a2", "conv-2", "ada", "1234567890", 1)
	put("b1", "conv-1", "bob", "123", 2)
	put("n1", "conv-3", "", "1234", 3)
	if _, err := s.SetStatus(ctx, "a2", document.StatusFailed, "broken"); err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[string]document.Usage{
		"ada": {Documents: 2, Bytes: 15}, "bob": {Documents: 1, Bytes: 3}, "": {Documents: 1, Bytes: 4}, "carol": {},
	} {
		if diff := cmp.Diff(want, usage(owner)); diff != "" {
			t.Errorf("Usage(%q) (-want +got):\n%s", owner, diff)
		}
	}
	// What fails or changes no document's owner and size leaves Usage as
	// it is: a duplicate id (under another owner), a Create the limit
	// refuses, a Delete of an unknown id, and Complete.
	dup := newDoc("a1", "conv-9", 4, []byte("123456789"))
	dup.Owner = "bob"
	if err := s.Create(ctx, dup, []byte("123456789"), document.Quota{}); !errors.Is(err, document.ErrExists) {
		t.Fatalf("Create of a duplicate id: %v, want ErrExists", err)
	}
	over := newDoc("a9", "conv-1", 5, []byte("1234567"))
	over.Owner = "ada"
	if err := s.Create(ctx, over, []byte("1234567"), document.Quota{PerConversation: 2}); !errors.Is(err, document.ErrTooMany) {
		t.Fatalf("Create over the limit: %v, want ErrTooMany", err)
	}
	if err := s.Delete(ctx, "unknown"); !errors.Is(err, document.ErrNotFound) {
		t.Fatalf("Delete of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.Complete(ctx, "b1", "summary", []document.Chunk{{Index: 0, Text: "123", End: 3, RuneEnd: 3, Tokens: 1}}); err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[string]document.Usage{"ada": {Documents: 2, Bytes: 15}, "bob": {Documents: 1, Bytes: 3}} {
		if diff := cmp.Diff(want, usage(owner)); diff != "" {
			t.Errorf("Usage(%q) after a refused Create, a failed Delete and Complete (-want +got):\n%s", owner, diff)
		}
	}
	if err := s.Delete(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(document.Usage{Documents: 1, Bytes: 10}, usage("ada")); diff != "" {
		t.Errorf("Usage after a deletion (-want +got):\n%s", diff)
	}
	if err := s.Delete(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if u := usage("ada"); u != (document.Usage{}) {
		t.Errorf("Usage after deleting every document = %+v, want zero", u)
	}
}

func testConversations(t *testing.T, s document.Store) {
	none, err := s.Conversations(t.Context())
	if err != nil || len(none) != 0 {
		t.Fatalf("Conversations of an empty store = %v, %v; want none, nil", none, err)
	}
	create(t, s, "b1", "conv-b", 0, "one")
	create(t, s, "a1", "conv-a", 1, "two")
	create(t, s, "b2", "conv-b", 2, "three")
	create(t, s, "c1", "conv-c", 3, "four")
	if err := s.Delete(t.Context(), "c1"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Conversations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"conv-a", "conv-b"}, got); diff != "" {
		t.Errorf("Conversations (-want +got):\n%s", diff)
	}
}

func testUnfinished(t *testing.T, s document.Store) {
	text := "Some text that is long enough for a few chunks."
	late := create(t, s, "late", "c1", 5, text)
	create(t, s, "ready", "c1", 1, text)
	early := create(t, s, "early", "c2", 0, text)
	create(t, s, "failed", "c2", 2, text)
	if _, err := s.Complete(t.Context(), "ready", "sum", chunksOf(text)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetStatus(t.Context(), "failed", document.StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	processing, err := s.SetStatus(t.Context(), "late", document.StatusProcessing, "")
	if err != nil {
		t.Fatal(err)
	}
	late = processing
	got, err := s.Unfinished(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]document.Document{early, late}, got, sameTime); diff != "" {
		t.Errorf("Unfinished (-want +got):\n%s", diff)
	}
}

func testContent(t *testing.T, s document.Store) {
	content := []byte("line 1\nlíne 2 ✓\n")
	d := newDoc("d1", "c1", 0, content)
	if err := s.Create(t.Context(), d, content, document.Quota{}); err != nil {
		t.Fatal(err)
	}
	content[0] = 'X' // the store must have copied it
	got, err := s.Content(t.Context(), "d1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "line 1\nlíne 2 ✓\n" {
		t.Errorf("Content = %q; want the bytes given to Create", got)
	}
}

func chunksOf(text string) []document.Chunk {
	cs, err := document.Chunker{Size: 4, Overlap: 1}.Split(text)
	if err != nil {
		panic(err)
	}
	for i := range cs {
		cs[i].Summary = fmt.Sprintf("summary %d", i)
	}
	return cs
}

func testComplete(t *testing.T, s document.Store) {
	text := "Prices rose in March. Über alles: costs fell in April, and again in May."
	d := create(t, s, "d1", "c1", 0, text)
	if _, err := s.SetStatus(t.Context(), "d1", document.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	chunks := chunksOf(text)
	if len(chunks) < 3 {
		t.Fatalf("test text cut into %d chunks; want at least 3", len(chunks))
	}
	got, err := s.Complete(t.Context(), "d1", "Prices and costs by month.", chunks)
	if err != nil {
		t.Fatal(err)
	}
	want := d
	want.Status, want.Summary, want.Chunks = document.StatusReady, "Prices and costs by month.", len(chunks)
	if diff := cmp.Diff(want, got, sameTime, cmpopts.IgnoreFields(document.Document{}, "Updated")); diff != "" {
		t.Errorf("Complete returned (-want +got):\n%s", diff)
	}
	if got.Updated.Before(d.Created) {
		t.Errorf("Updated = %v, before Created %v", got.Updated, d.Created)
	}
	checkGet(t, s, "d1", "Complete", got)
	gotChunks, err := s.Chunks(t.Context(), "d1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(chunks, gotChunks); diff != "" {
		t.Errorf("Chunks (-want +got):\n%s", diff)
	}
	// Completing again replaces the chunks.
	fewer := chunksOf("short text")
	if _, err := s.Complete(t.Context(), "d1", "again", fewer); err != nil {
		t.Fatal(err)
	}
	gotChunks, err = s.Chunks(t.Context(), "d1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fewer, gotChunks); diff != "" {
		t.Errorf("Chunks after a second Complete (-want +got):\n%s", diff)
	}
	// Misnumbered chunks are refused and change nothing.
	bad := chunksOf(text)
	bad[1].Index = 5
	if _, err := s.Complete(t.Context(), "d1", "bad", bad); err == nil {
		t.Error("Complete with chunk 1 numbered 5 succeeded; want an error")
	}
	if d, _ := s.Get(t.Context(), "d1"); d.Summary != "again" {
		t.Errorf("after a refused Complete, Summary = %q; want %q", d.Summary, "again")
	}
}

func testSetStatus(t *testing.T, s document.Store) {
	text := "Some text that is long enough for a few chunks of four tokens."
	create(t, s, "d1", "c1", 0, text)
	if _, err := s.Complete(t.Context(), "d1", "sum", chunksOf(text)); err != nil {
		t.Fatal(err)
	}
	got, err := s.SetStatus(t.Context(), "d1", document.StatusFailed, "summarize chunk 2: model down")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != document.StatusFailed || got.Error != "summarize chunk 2: model down" || got.Summary != "" || got.Chunks != 0 {
		t.Errorf("after SetStatus(failed): %+v; want failed with the error, no summary, no chunks", got)
	}
	if cs, err := s.Chunks(t.Context(), "d1"); err != nil || len(cs) != 0 {
		t.Errorf("Chunks after SetStatus(failed) = %d chunks, %v; want none", len(cs), err)
	}
	got, err = s.SetStatus(t.Context(), "d1", document.StatusProcessing, "ignored")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != document.StatusProcessing || got.Error != "" {
		t.Errorf("after SetStatus(processing, \"ignored\"): status %q error %q; want processing with no error", got.Status, got.Error)
	}
	checkGet(t, s, "d1", "SetStatus", got)
	for _, st := range []document.Status{document.StatusReady, "uploading"} {
		if _, err := s.SetStatus(t.Context(), "d1", st, ""); err == nil {
			t.Errorf("SetStatus(%q) succeeded; want an error", st)
		}
	}
}

func testDelete(t *testing.T, s document.Store) {
	text := "Some text that is long enough for a few chunks."
	create(t, s, "d1", "c1", 0, text)
	create(t, s, "d2", "c1", 1, "kept")
	if _, err := s.Complete(t.Context(), "d1", "sum", chunksOf(text)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "d1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Get after Delete: %v; want ErrNotFound", err)
	}
	if _, err := s.Content(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Content after Delete: %v; want ErrNotFound", err)
	}
	if _, err := s.Chunks(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Chunks after Delete: %v; want ErrNotFound", err)
	}
	if err := s.Delete(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("second Delete: %v; want ErrNotFound", err)
	}
	docs, err := s.List(t.Context(), "c1")
	if err != nil || len(docs) != 1 || docs[0].ID != "d2" {
		t.Errorf("List after Delete = %v, %v; want only d2", docs, err)
	}
	// The id may be used again.
	create(t, s, "d1", "c1", 2, "new")
}

func testNotFound(t *testing.T, s document.Store) {
	for _, id := range []string{"nope", "a\x00b", "a\xffb"} {
		checkNotFound(t, s, id)
	}
	// An id no store holds finds nothing rather than failing.
	ctx := t.Context()
	for _, id := range []string{"a\x00b", "a\xffb"} {
		if docs, err := s.List(ctx, id); err != nil || len(docs) != 0 {
			t.Errorf("List(%q) = %v, %v; want nothing", id, docs, err)
		}
		if u, err := s.Usage(ctx, id); err != nil || u != (document.Usage{}) {
			t.Errorf("Usage(%q) = %v, %v; want nothing", id, u, err)
		}
	}
}

func checkNotFound(t *testing.T, s document.Store, id string) {
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"Get":       func() error { _, err := s.Get(ctx, id); return err },
		"Content":   func() error { _, err := s.Content(ctx, id); return err },
		"Chunks":    func() error { _, err := s.Chunks(ctx, id); return err },
		"SetStatus": func() error { _, err := s.SetStatus(ctx, id, document.StatusFailed, "x"); return err },
		"Complete":  func() error { _, err := s.Complete(ctx, id, "x", nil); return err },
		"Delete":    func() error { return s.Delete(ctx, id) },
	} {
		if err := call(); !errors.Is(err, document.ErrNotFound) {
			t.Errorf("%s(%q): %v; want ErrNotFound", name, id, err)
		}
	}
}

func testCanceled(t *testing.T, s document.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := newDoc("d1", "c1", 0, []byte("x"))
	if err := s.Create(ctx, d, []byte("x"), document.Quota{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Create with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := s.Get(t.Context(), "d1"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Get after a cancelled Create: %v; want ErrNotFound", err)
	}
	create(t, s, "d1", "c1", 0, "x")
	if _, err := s.Get(ctx, "d1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := s.List(ctx, "c1"); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := s.Usage(ctx, "user-1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Usage with a cancelled context: %v; want context.Canceled", err)
	}
}
