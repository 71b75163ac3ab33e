package bm25

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestStem checks words of the Porter and Snowball English vocabularies
// against their published stems.
func TestStem(t *testing.T) {
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "cats": "cat", "caress": "caress",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled",
		"motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "troubl",
		"sized": "size", "hopping": "hop", "falling": "fall", "hissing": "hiss",
		"filing": "file", "failing": "fail", "happy": "happi", "sky": "sky", "generously": "generous", "started": "start", "starter": "starter",
		"pricing": "price", "prices": "price", "priced": "price", "price": "price",
		"policies": "polici", "policy": "polici", "is": "is", "café": "café",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := Stem(in); got != want {
				t.Errorf("Stem(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Don't compare the Pricing-tiers of ACME's 2 plans!", []string{"don", "compar", "price", "tier", "acm", "2", "plan"}},
		{"", []string{}},
		{"the a of", []string{}},
		{"SSO/SAML, 99.9% uptime", []string{"sso", "saml", "99", "9", "uptim"}},
		{"Zürich Straße", []string{"zürich", "straße"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tokenize(tt.in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Tokenize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The scores below are computed by hand from the formula in the package
// documentation for this three-document corpus:
//
//	d0 "apple banana apple"          |d0| = 3
//	d1 "banana cherry"               |d1| = 2
//	d2 "cherry cherry cherry durian" |d2| = 4      N = 3, avgdl = 3
var corpus = []Document{
	{ID: "d0", Text: "apple banana apple"},
	{ID: "d1", Text: "banana cherry"},
	{ID: "d2", Text: "cherry cherry cherry durian"},
}

func TestSearchScores(t *testing.T) {
	var (
		idf1 = math.Log(1 + (3-1+0.5)/(1+0.5)) // a term in one document
		idf2 = math.Log(1 + (3-2+0.5)/(2+0.5)) // a term in two documents
	)
	tests := []struct {
		name   string
		params Params
		query  string
		k      int
		want   []Hit
	}{
		{
			name:  "one term, average length",
			query: "apple",
			// tf 2, norm 1 - .75 + .75·3/3 = 1: 2·2.2 / (2 + 1.2)
			want: []Hit{{ID: "d0", Index: 0, Score: idf1 * 4.4 / 3.2}},
		},
		{
			name:  "two terms, length normalisation",
			query: "cherry banana",
			want: []Hit{
				// tf 1 each, norm .25 + .75·2/3 = .75: 2.2 / (1 + .9)
				{ID: "d1", Index: 1, Score: 2 * idf2 * 2.2 / 1.9},
				// tf 3, norm .25 + .75·4/3 = 1.25: 6.6 / (3 + 1.5)
				{ID: "d2", Index: 2, Score: idf2 * 6.6 / 4.5},
				// tf 1, norm 1: 2.2 / 2.2
				{ID: "d0", Index: 0, Score: idf2},
			},
		},
		{
			name:   "no length normalisation",
			params: Params{NoLengthNorm: true},
			query:  "cherry",
			want: []Hit{
				{ID: "d2", Index: 2, Score: idf2 * 6.6 / 4.2},
				{ID: "d1", Index: 1, Score: idf2 * 2.2 / 2.2},
			},
		},
		{
			name:   "k1 and b",
			params: Params{K1: 2, B: 1},
			query:  "cherry",
			want: []Hit{
				// norm 4/3: 3·3 / (3 + 2·4/3)
				{ID: "d2", Index: 2, Score: idf2 * 9 / (3 + 8.0/3)},
				// norm 2/3: 1·3 / (1 + 2·2/3)
				{ID: "d1", Index: 1, Score: idf2 * 3 / (1 + 4.0/3)},
			},
		},
		{
			name:  "top k and repeated query terms",
			query: "banana banana cherry",
			k:     1,
			want:  []Hit{{ID: "d1", Index: 1, Score: 2 * idf2 * 2.2 / 1.9}},
		},
		{name: "no match", query: "elderberry"},
		{name: "only stop words", query: "the of and"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := New(corpus, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			got := ix.Search(tt.query, tt.k)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Search(%q) mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestSearchTiesKeepDocumentOrder(t *testing.T) {
	ix, err := New([]Document{{ID: "b", Text: "same words"}, {ID: "a", Text: "same words"}, {ID: "c", Text: "other"}}, Params{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range ix.Search("words", 0) {
		ids = append(ids, h.ID)
	}
	if diff := cmp.Diff([]string{"b", "a"}, ids); diff != "" {
		t.Errorf("tie order (-want +got):\n%s", diff)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		docs   []Document
		params Params
		want   error
	}{
		{"duplicate id", []Document{{ID: "x"}, {ID: "x"}}, Params{}, ErrDuplicateID},
		{"negative k1", nil, Params{K1: -1}, ErrParams},
		{"b above one", nil, Params{B: 1.5}, ErrParams},
		{"NaN b", nil, Params{B: math.NaN()}, ErrParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.docs, tt.params); !errors.Is(err, tt.want) {
				t.Errorf("New error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestEmptyIndex(t *testing.T) {
	ix, err := New(nil, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if hits := ix.Search("anything", 3); len(hits) != 0 {
		t.Errorf("Search on empty index = %v, want none", hits)
	}
	if ix.Len() != 0 || ix.AvgLen() != 0 {
		t.Errorf("Len, AvgLen = %d, %v; want 0, 0", ix.Len(), ix.AvgLen())
	}
}
