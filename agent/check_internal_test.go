package agent

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/google/go-cmp/cmp"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
)

// referenceCheck is check without any fast path: it parses the candidate
// twice with encoding/json (into a tree for the full schema validator, then
// strictly into dst). The fast paths of check must be invisible: same
// rejection, same value.
func referenceCheck(s *typeSchema, raw string, dst any) *rejection {
	if strings.TrimSpace(raw) == "" {
		return &rejection{FailureJSONParse, "Invalid JSON: the reply was empty"}
	}
	start, end, _ := extractJSON(raw, s.want, false)
	candidate := raw[start:end]
	if s.want != 0 && !strings.ContainsAny(candidate, "{[") {
		what := "object"
		if s.want == '[' {
			what = "array"
		}
		return &rejection{FailureJSONParse, "Invalid JSON: no JSON " + what + " found in the reply"}
	}
	dec := json.NewDecoder(strings.NewReader(candidate))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return &rejection{FailureJSONParse, "Invalid JSON: " + syntaxMessage(err, start, len(raw))}
	}
	doc = dropNulls(doc)
	if err := s.compiled.Validate(doc); err != nil {
		var ve *sjson.ValidationError
		if errors.As(err, &ve) {
			return &rejection{FailureSchemaValidation, schemaMessage(ve)}
		}
		return &rejection{FailureSchemaValidation, "- " + err.Error()}
	}
	strict := json.NewDecoder(strings.NewReader(candidate))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil {
		return &rejection{FailureSchemaValidation, decodeMessage(err)}
	}
	if s.isStruct {
		if err := validate.Struct(structOf(dst)); err != nil {
			var ves validator.ValidationErrors
			if errors.As(err, &ves) {
				return &rejection{FailureSchemaValidation, tagMessage(ves)}
			}
			return &rejection{FailureSchemaValidation, "- " + err.Error()}
		}
	}
	if err := runValidate(dst); err != nil {
		return &rejection{FailureSchemaValidation, validateMessage(err)}
	}
	return nil
}

type qDecision struct {
	Action    string           `json:"action" jsonschema:"enum=ANSWER,enum=CALL_TOOL,enum=CLARIFY"`
	Reasoning string           `json:"reasoning" validate:"required"`
	Operator  string           `json:"operator,omitempty"`
	Params    map[string]any   `json:"params,omitempty"`
	Steps     []map[string]any `json:"steps,omitempty"`
	Extra     any              `json:"extra,omitempty"`
}

func (d qDecision) Validate() error {
	if d.Action == "CALL_TOOL" && d.Operator == "" {
		return &FieldError{Field: "operator", Message: "operator is required when action is CALL_TOOL"}
	}
	return nil
}

type qStep struct {
	Tool  string            `json:"tool" jsonschema:"minLength=1,maxLength=12"`
	Input map[string]string `json:"input,omitempty"`
	N     int               `json:"n,omitempty" jsonschema:"minimum=1"`
	U     uint8             `json:"u,omitempty"`
	F32   float32           `json:"f32,omitempty"`
	Flag  *bool             `json:"flag,omitempty"`
	Tags  []string          `json:"tags,omitempty" jsonschema:"maxItems=3"`
}

type qPlan struct {
	Goal  string  `json:"goal" validate:"min=2"`
	Steps []qStep `json:"steps" jsonschema:"minItems=1" validate:"dive"`
	Score float64 `json:"score" jsonschema:"minimum=0,exclusiveMaximum=1"`
	Next  *qStep  `json:"next,omitempty"`
	Pair  [2]int  `json:"pair,omitempty"`
}

type qTask struct {
	ID   int    `json:"id"`
	Goal string `json:"goal"`
}

type qTimed struct {
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

type qPattern struct {
	Code string `json:"code" jsonschema:"pattern=^[A-Z]{3}$"`
}

type qKey string

type qKeyed struct {
	M   map[qKey]int `json:"m"`
	Arr [2]string    `json:"arr,omitempty"`
	Any any          `json:"any,omitempty"`
	P   **int        `json:"p,omitempty"`
	Sub []*qTask     `json:"sub,omitempty"`
}

type qMisc struct {
	Raw []byte      `json:"raw,omitempty"`
	Num json.Number `json:"num,omitempty"`
}

type qBase struct {
	Kind string `json:"kind"`
}

type qEmbedded struct {
	qBase
	Count int    `json:"count,string"`
	Name  string `json:"name"`
}

// checkBoth runs check and referenceCheck on raw and reports any difference.
func checkBoth[T any](t *testing.T, raw string) {
	t.Helper()
	s, err := schemaFor(reflect.TypeFor[T]())
	if err != nil {
		t.Fatal(err)
	}
	var got, want T
	gr := s.check(raw, &got)
	wr := referenceCheck(s, raw, &want)
	if diff := cmp.Diff(wr, gr, cmp.AllowUnexported(rejection{})); diff != "" {
		t.Fatalf("%T reply %q: rejection (-reference +check):\n%s", want, raw, diff)
	}
	if wr == nil {
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(qEmbedded{})); diff != "" {
			t.Fatalf("%T reply %q: value (-reference +check):\n%s", want, raw, diff)
		}
	}
}

func checkAll(t *testing.T, raw string) {
	t.Helper()
	checkBoth[qDecision](t, raw)
	checkBoth[qPlan](t, raw)
	checkBoth[[]qTask](t, raw)
	checkBoth[qTimed](t, raw)
	checkBoth[qEmbedded](t, raw)
	checkBoth[map[string]int](t, raw)
	checkBoth[int](t, raw)
	checkBoth[string](t, raw)
	checkBoth[*qTask](t, raw)
	checkBoth[any](t, raw)
	checkBoth[qPattern](t, raw)
	checkBoth[qKeyed](t, raw)
	checkBoth[qMisc](t, raw)
}

var checkSeeds = []string{
	`{"action": "CALL_TOOL", "reasoning": "r", "operator": "web", "params": {"query": "go", "n": 3, "x": 1.5e3}}`,
	"Here:\n```json\n{\"action\": \"ANSWER\", \"reasoning\": \"ok\"}\n```",
	`{"action": "ANSWER", "reasoning": "r", "params": null, "operator": null}`,
	`{"action": "ANSWER", "reasoning": "r", "params": {"a": null}}`,
	`{"action": "ANSWER", "reasoning": "r", "params": {"a": 1}, "params": {"b": 2}}`,
	`{"action": "ANSWER", "reasoning": "r", "action": "CLARIFY"}`,
	`{"action": "SEARCH", "reasoning": "..."}`,
	`{"action": "ANSWER", "reasoning": ""}`,
	`{"action": "ANSWER", "Reasoning": "case"}`,
	`{"action": "ANSWER", "reasoning": "r", "steps": [{"a": [1, null, {"b": true}]}], "extra": [1, "x", null]}`,
	`{"action": "ANSWER", "reasoning": "caf\u00e9 \"quoted\" \ud83d\ude00 \ud800 tab\t"}`,
	"{\"action\": \"ANSWER\", \"reasoning\": \"bad utf8 \xff\xfe\"}",
	"{\"action\": \"ANSWER\", \"reasoning\": \"ctl \x01\"}",
	`{"action": "ANSWER", "reasoning": "r", "confidence": 0.9}`,
	`{"goal": "go", "steps": [{"tool": "search", "n": 2, "u": 7, "f32": 1.5, "flag": true, "tags": ["a"]}], "score": 0.5}`,
	`{"goal": "go", "steps": [{"tool": "search", "n": 1.0}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": "search", "n": 1e2}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": "search", "u": 300}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": "search", "u": -1}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": "search", "f32": 1e39}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": "search", "n": 99999999999999999999}], "score": 0}`,
	`{"goal": "go", "steps": [{"tool": ""}], "score": 1}`,
	`{"goal": "go", "steps": [], "score": 0.1}`,
	`{"goal": "go", "steps": [{"tool": "t", "tags": ["a", "b", "c", "d"]}], "score": 0.1}`,
	`{"goal": "go", "steps": [{"tool": "t"}], "score": 0.1, "next": {"tool": "u"}, "pair": [1, 2]}`,
	`{"goal": "go", "steps": [{"tool": "t", "input": {"k": "v", "n": 1}}], "score": -0.5}`,
	`{"goal": "g", "steps": [{"tool": "t"}], "score": 0.1}`,
	`[{"id": 1, "goal": "find {x}"}, {"id": 2, "goal": "sum"}]`,
	`Tasks: [{"id": 1, "goal": "a"}] and more [2]`,
	`[]`,
	`{"at": "2026-01-02T03:04:05Z", "note": "n"}`,
	`{"at": "yesterday"}`,
	`{"kind": "k", "count": "12", "name": "n"}`,
	`{"kind": "k", "count": 12, "name": "n"}`,
	`{"a": 1, "b": -2}`,
	`{"a": 1.5}`,
	`42`,
	`42 abc`,
	`"text"`,
	`  {"id": 7, "goal": "x"}  `,
	`{"action": "ANSWER", "reasoning": "r"`,
	`{action: CALL_TOOL...`,
	`{"items" []}`,
	`{"a": [tru]}`,
	`{"a": 01}`,
	`{"a": -}`,
	`{"a": 1.}`,
	`{"a": "\x"}`,
	"",
	"no json here",
	`null`,
	`{"id": null, "goal": null}`,
	`{"id": 1, "goal": "x", "id": 2}`,
	`{"code": "ABC"}`,
	`{"m": {"a": 1, "b": 2}, "arr": ["x", "y"], "any": {"n": [1, 2.5, {"d": -0}]}, "p": 5, "sub": [{"id": 1, "goal": "g"}]}`,
	`{"m": {"a": 1, "b": 2}, "arr": ["x", "y", "z"]}`,
	`{"m": {}, "any": 1e999}`,
	`{"m": {"a": 1}, "any": [1, "x", true, {}]}`,
	`{"m": {"a": 1.5}}`,
	`{"raw": "aGVsbG8=", "num": "12"}`,
	`{"raw": "aGVsbG8=", "num": "twelve"}`,
	`{"num": 12}`,
	`{"code": "abc"}`,
}

func TestCheckMatchesReference(t *testing.T) {
	for _, raw := range checkSeeds {
		checkAll(t, raw)
	}
}

func FuzzCheckMatchesReference(f *testing.F) {
	for _, raw := range checkSeeds {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkAll(t, raw)
	})
}

// TestParseTreeMatchesEncodingJSON compares the fast parser's tree with
// encoding/json's on every input the fast parser accepts, and checks that it
// accepts the well-formed ones.
func TestParseTreeMatchesEncodingJSON(t *testing.T) {
	for _, in := range checkSeeds {
		compareTree(t, in)
	}
}

func FuzzParseTree(f *testing.F) {
	for _, in := range checkSeeds {
		f.Add(in)
	}
	f.Fuzz(compareTree)
}

func compareTree(t *testing.T, in string) {
	got, plain, ok := parseTree(in)
	want, err := jsonTree(in)
	if !ok {
		if err == nil && json.Valid([]byte(in)) && !strings.Contains(in, `\`) {
			t.Fatalf("parseTree(%q) declined well-formed JSON", in)
		}
		return
	}
	if err != nil || !json.Valid([]byte(in)) {
		t.Fatalf("parseTree(%q) accepted what encoding/json rejects (%v)", in, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("parseTree(%q) (-encoding/json +parseTree):\n%s", in, diff)
	}
	if plain {
		// Nothing was dropped: the tree is encoding/json's before dropNulls.
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var full any
		if err := dec.Decode(&full); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full, got); diff != "" {
			t.Fatalf("parseTree(%q) reported plain, but dropped (-encoding/json +parseTree):\n%s", in, diff)
		}
	}
}

// TestQuickSchemaCoversReflectedSchemas checks that the schemas of ordinary
// result types reduce to a quickSchema (so that they take the fast path) and
// that those with keywords it does not know do not.
func TestQuickSchemaCoversReflectedSchemas(t *testing.T) {
	for _, tt := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[qDecision](), true},
		{reflect.TypeFor[qPlan](), true},
		{reflect.TypeFor[[]qTask](), true},
		{reflect.TypeFor[map[string]int](), true},
		{reflect.TypeFor[qTimed](), true}, // format is an annotation in 2020-12
		{reflect.TypeFor[qPattern](), false},
	} {
		s, err := schemaFor(tt.typ)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.quick != nil; got != tt.want {
			t.Errorf("%v: quick schema = %v, want %v", tt.typ, got, tt.want)
		}
	}
}

// TestTreeDecoderCoverage checks which types are decoded from the parsed
// tree and which are left to encoding/json.
func TestTreeDecoderCoverage(t *testing.T) {
	for _, tt := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[qDecision](), true},
		{reflect.TypeFor[qPlan](), true},
		{reflect.TypeFor[[]qTask](), true},
		{reflect.TypeFor[*qTask](), true},
		{reflect.TypeFor[map[string]int](), true},
		{reflect.TypeFor[qKeyed](), true},
		{reflect.TypeFor[any](), true},
		{reflect.TypeFor[qTimed](), false},    // time.Time unmarshals itself
		{reflect.TypeFor[qEmbedded](), false}, // embedded struct, ",string"
		{reflect.TypeFor[qMisc](), false},     // []byte, json.Number
		{reflect.TypeFor[map[int]string](), false},
		{reflect.TypeFor[error](), false},
	} {
		if got := newTreeDecoder(tt.typ) != nil; got != tt.want {
			t.Errorf("%v: tree decoder = %v, want %v", tt.typ, got, tt.want)
		}
	}
}

type qValuer struct{ v string }

func (q qValuer) ValidatorValue() any { return q.v }

type qNested struct {
	Inner struct {
		Name string `json:"name" validate:"required"`
	} `json:"inner"`
}

// TestHasValidateTags checks which types the tag validator is run for.
func TestHasValidateTags(t *testing.T) {
	for _, tt := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[qDecision](), true},
		{reflect.TypeFor[qPlan](), true},
		{reflect.TypeFor[qNested](), true},
		{reflect.TypeFor[*qNested](), true},
		{reflect.TypeFor[struct{ V qValuer }](), true},
		{reflect.TypeFor[qTask](), false},
		{reflect.TypeFor[*qTask](), false},
		{reflect.TypeFor[qKeyed](), false},
		{reflect.TypeFor[struct{ E error }](), true},
	} {
		if got := hasValidateTags(tt.typ, map[reflect.Type]bool{}); got != tt.want {
			t.Errorf("%v: hasValidateTags = %v, want %v", tt.typ, got, tt.want)
		}
	}
}
