package schemacheck_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-playground/validator/v10"
	"github.com/google/go-cmp/cmp"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
)

// TestViolations flattens a nested validation error to one violation per
// failed check, one per missing or extra property, sorted by field path.
func TestViolations(t *testing.T) {
	schema, err := schemacheck.Compile([]byte(`{
		"type": "object",
		"required": ["goal", "steps"],
		"additionalProperties": false,
		"properties": {
			"goal": {"type": "string"},
			"steps": {"type": "array", "items": {
				"type": "object", "required": ["tool"], "additionalProperties": false,
				"properties": {"tool": {"type": "string"}, "n": {"type": "integer", "minimum": 1}}}}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"extra": true, "steps": []any{map[string]any{"n": 0, "x": 1}}}
	err = schema.Validate(doc)
	var ve *sjson.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *ValidationError", err)
	}
	type row struct{ Path, Kind string }
	var got []row
	for _, v := range schemacheck.Violations(ve) {
		got = append(got, row{v.Path, reflect.TypeOf(v.Kind).Elem().Name()})
	}
	want := []row{
		{"extra", "AdditionalProperties"},
		{"goal", "Required"},
		{"steps[0].n", "Minimum"},
		{"steps[0].tool", "Required"},
		{"steps[0].x", "AdditionalProperties"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if _, ok := schemacheck.Violations(ve)[0].Kind.(*kind.AdditionalProperties); !ok {
		t.Errorf("the first violation's Kind is not the validator's kind")
	}
}

func TestFieldPath(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"steps", "0", "tool"}, "steps[0].tool"},
		{[]string{"0"}, "[0]"},
	} {
		if got := schemacheck.FieldPath(tt.in); got != tt.want {
			t.Errorf("FieldPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTagPath names a validate-tag failure by its JSON path below the root.
func TestTagPath(t *testing.T) {
	type step struct {
		Tool string `json:"tool" validate:"required"`
	}
	type plan struct {
		Steps []step `json:"steps" validate:"dive"`
	}
	if !schemacheck.HasValidateTags(reflect.TypeFor[plan]()) {
		t.Fatal("HasValidateTags(plan) = false, want true")
	}
	err := schemacheck.NewTagValidator().Struct(plan{Steps: []step{{}}})
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) || len(ves) != 1 {
		t.Fatalf("validating a step without a tool = %v, want one field error", err)
	}
	if got := schemacheck.TagPath(ves[0]); got != "steps[0].tool" {
		t.Errorf("TagPath = %q, want steps[0].tool (JSON names, no root type)", got)
	}
}

// TestToolParameters makes a schema the parameters of a tool: $schema
// dropped, type object, properties present, "<" and ">" kept as they are;
// and refuses a schema of another type, naming it by the subject given.
func TestToolParameters(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"empty", map[string]any{}, `{"properties":{},"type":"object"}`},
		{"kept", map[string]any{"$schema": "x", "type": "object", "description": "a <b>", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
			`{"description":"a <b>","properties":{"q":{"type":"string"}},"type":"object"}`},
	} {
		got, err := schemacheck.ToolParameters(tc.doc, "the schema")
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: ToolParameters = %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	_, err := schemacheck.ToolParameters(map[string]any{"type": "array"}, "its input schema")
	if want := "its input schema has type array; a tool's arguments are an object"; err == nil || err.Error() != want {
		t.Errorf("ToolParameters of an array schema: err = %v, want %q", err, want)
	}
}

// TestCompileLoadsNothingOutside: a $ref to a file is a compile error, not
// a read of the file; a $ref inside the schema compiles.
func TestCompileLoadsNothingOutside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	if _, err := schemacheck.Compile([]byte(`{"properties":{"a":{"$ref":"` + ref + `"}}}`)); err == nil || !strings.Contains(err.Error(), "outside itself") {
		t.Errorf("Compile with a $ref to a file: %v, want an error saying the schema refers outside itself", err)
	}
	s, err := schemacheck.Compile([]byte(`{"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"a": 1.0}); err == nil {
		t.Error("the $ref inside the schema was not followed")
	}
}
