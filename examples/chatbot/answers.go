package chatbot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agentgraph/agentgraph/mcp"
)

// maxAnswerBytes bounds an answer's content, as JSON: a form of a few
// primitive fields needs far less.
const maxAnswerBytes = 64 << 10

// checkAnswer validates an accepted answer to a question with schema,
// before it is delivered, so that the client learns at once, in words
// about its own fields, what is wrong (and can correct it: the question
// stays open). The answer must be at most maxAnswerBytes as JSON and hold
// only the properties the schema declares (an MCP elicitation schema is a
// flat object of primitive properties); an answer to a question whose
// schema does not compile, or declares no top-level properties while the
// answer holds some, is refused, since it cannot be checked (the user can
// still decline or cancel).
func checkAnswer(schema json.RawMessage, content map[string]any) error {
	if raw, err := json.Marshal(content); err != nil {
		return &RequestError{Field: "content", Reason: "must be a JSON object"}
	} else if len(raw) > maxAnswerBytes {
		return &RequestError{Field: "content", Reason: fmt.Sprintf("is %d bytes as JSON, more than the limit of %d; send only the fields the question asks for", len(raw), maxAnswerBytes)}
	}
	if len(schema) == 0 {
		return nil
	}
	out, err := mcp.CompleteAnswer(nil, content) // content as plain JSON values
	if err != nil {
		return &RequestError{Field: "content", Reason: "must be a JSON object"}
	}
	unusable := func(why string) error {
		return &RequestError{Field: "content", Reason: "cannot be checked: the question's schema " + clip(why, 2*maxQuoted) + "; decline or cancel the question"}
	}
	var shape struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &shape); err != nil {
		return unusable("is not an object schema: " + err.Error())
	}
	if shape.Properties == nil && len(out) > 0 {
		// {"type":"object"}, or fields behind $ref or allOf: which fields
		// it asks for is not known, so no answer holding any is checked.
		return unusable("has no top-level properties, so the fields it asks for are not known")
	}
	for name := range out {
		if _, ok := shape.Properties[name]; !ok {
			asked := "it asks for none: send an empty content"
			if len(shape.Properties) > 0 {
				asked = "send only " + strings.Join(slices.Sorted(maps.Keys(shape.Properties)), ", ")
			}
			return &RequestError{Field: "content." + clip(name, maxQuoted), Reason: "is not a field the question asks for; " + asked}
		}
	}
	for name, p := range shape.Properties {
		if _, ok := out[name]; !ok && p.Default != nil {
			out[name] = p.Default
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return unusable("is not JSON: " + err.Error())
	}
	comp := jsonschema.NewCompiler()
	comp.AssertFormat()
	const url = "urn:chatbot:question" // not a file: no path in any message
	if err := comp.AddResource(url, doc); err != nil {
		return unusable("does not compile: " + err.Error())
	}
	sch, err := comp.Compile(url)
	if err != nil {
		return unusable("does not compile: " + err.Error())
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(any(out)); errors.As(err, &ve) {
		return &RequestError{Field: "content", Reason: strings.Join(answerProblems(ve), "; ")}
	}
	return nil
}

// answerProblems says what is wrong with an answer, one phrase per
// failed rule, naming the answer's fields and never the schema's
// location.
func answerProblems(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) > 0 {
		var out []string
		for _, c := range ve.Causes {
			out = append(out, answerProblems(c)...)
		}
		return slices.Compact(out)
	}
	field := cmpField(strings.Join(ve.InstanceLocation, "."))
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) == 1 {
			return []string{fmt.Sprintf("%s is required", k.Missing[0])}
		}
		return []string{strings.Join(k.Missing, ", ") + " are required"}
	case *kind.Format:
		return []string{fmt.Sprintf("%s must be a valid %s", field, k.Want)}
	case *kind.Type:
		return []string{fmt.Sprintf("%s must be of type %s", field, strings.Join(k.Want, " or "))}
	case *kind.Enum:
		return []string{fmt.Sprintf("%s must be one of %v", field, k.Want)}
	case *kind.MinLength:
		return []string{fmt.Sprintf("%s must be at least %d characters long", field, k.Want)}
	case *kind.Pattern:
		return []string{fmt.Sprintf("%s must match %s", field, k.Want)}
	case nil:
		return nil
	}
	return []string{fmt.Sprintf("%s does not satisfy the schema's %q rule", field, strings.Join(ve.ErrorKind.KeywordPath(), "/"))}
}

// cmpField names the answer itself when the problem is not in a field.
func cmpField(field string) string {
	if field == "" {
		return "the answer"
	}
	return field
}
