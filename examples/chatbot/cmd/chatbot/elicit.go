package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	neturl "net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// errNoInput is why a question is declined when stdin has nothing more to
// read.
var errNoInput = errors.New("stdin is closed or empty")

// lines reads stdin one line at a time in its own goroutine, so that
// waiting for a line can stop when the context ends (Ctrl-C) even though a
// read from a terminal cannot be interrupted. The goroutine starts at the
// first question; a turn that asks nothing never reads stdin.
type lines struct {
	r       io.Reader
	started bool
	ch      chan string   // closed when the reader ends
	err     error         // why the reader ended; read after ch is closed
	stop    chan struct{} // closed when the command no longer reads
}

func newLines(r io.Reader) *lines {
	return &lines{r: r, ch: make(chan string), stop: make(chan struct{})}
}

// next returns the next line without its line ending, errNoInput at the end
// of stdin, or ctx's error when it ends first.
func (l *lines) next(ctx context.Context) (string, error) {
	if !l.started {
		l.started = true
		go l.read()
	}
	select {
	case line, ok := <-l.ch:
		if !ok {
			if l.err != nil {
				return "", fmt.Errorf("%w: %v", errNoInput, l.err)
			}
			return "", errNoInput
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (l *lines) read() {
	defer close(l.ch)
	if l.r == nil {
		return
	}
	sc := bufio.NewScanner(l.r)
	for sc.Scan() {
		select {
		case l.ch <- strings.TrimSuffix(sc.Text(), "\r"):
		case <-l.stop:
			return
		}
	}
	l.err = sc.Err()
}

// close lets the reading goroutine end once its current read returns. A
// read blocked on a terminal ends only when the process exits.
func (l *lines) close() { close(l.stop) }

// interactive reports whether r is a terminal (a character device), where
// the user sees what they type; answers read from a pipe or file are echoed
// after the prompt instead, so the transcript reads like a conversation.
func interactive(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// asker asks a turn's questions (elicitation.request events) on the
// terminal and turns the user's input into an answer.
type asker struct {
	in   *lines
	out  io.Writer // stderr: the questions are not part of the answer
	echo bool      // echo each answer: stdin is not a terminal
	// noInput declines every question without reading stdin (-no-input).
	noInput bool
}

// ask shows q and reads its answer: y/n for a yes/no question, a number or
// the value for a choice, each field of a form schema in turn. Invalid
// input is explained and asked again. When stdin ends the question is
// declined; when ctx ends (Ctrl-C) ask returns ctx's error and no answer.
func (a *asker) ask(ctx context.Context, q chatevent.ElicitationRequest) (chatevent.ElicitationResponse, error) {
	resp := chatevent.ElicitationResponse{Response: elicit.Response{ElicitationID: q.ElicitationID}}
	from := ""
	if q.Tool != "" {
		from = " [" + q.Tool + "]"
	}
	fmt.Fprintf(a.out, "? %s%s\n", q.Message, from)
	if a.noInput {
		fmt.Fprintln(a.out, "  ✗ declined: -no-input is set")
		resp.Action = elicit.Decline
		return resp, nil
	}
	content, err := a.content(ctx, q)
	switch {
	case errors.Is(err, errNoInput):
		fmt.Fprintf(a.out, "\n  ✗ declined: no answer (%v)\n", err)
		resp.Action = elicit.Decline
		return resp, nil
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(a.out)
		return resp, ctx.Err()
	case err != nil:
		// The question cannot be answered here (a schema this terminal
		// does not know how to fill in): say so and decline.
		fmt.Fprintf(a.out, "  ✗ declined: %v\n", err)
		resp.Action = elicit.Decline
		return resp, nil
	}
	resp.Action, resp.Content = elicit.Accept, content
	return resp, nil
}

// content reads the answer's content for q.
func (a *asker) content(ctx context.Context, q chatevent.ElicitationRequest) (map[string]any, error) {
	switch {
	case len(q.Schema) > 0 && !bytes.Equal(bytes.TrimSpace(q.Schema), []byte("null")):
		fields, err := parseSchema(q.Schema)
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(a.out, "  (Enter takes the value in [brackets]; Ctrl-D declines)")
		content := map[string]any{}
		for _, f := range fields {
			v, ok, err := a.field(ctx, f)
			if err != nil {
				return nil, err
			}
			if ok {
				content[f.name] = v
			}
		}
		return content, nil
	case len(q.Options) > 0:
		opt := &field{name: "answer", title: "answer", typ: "string", enum: q.Options, required: true}
		if isYesNo(q.Options) {
			opt = &field{name: "answer", title: "answer", typ: "boolean", required: true}
		}
		v, _, err := a.field(ctx, opt)
		if err != nil {
			return nil, err
		}
		if b, ok := v.(bool); ok {
			// Confirm's options are "yes" and "no"; answer with the option.
			v = q.Options[0]
			if !b {
				v = q.Options[1]
			}
		}
		return map[string]any{"answer": v}, nil
	default:
		v, _, err := a.field(ctx, &field{name: "answer", title: "answer", typ: "string", required: true})
		if err != nil {
			return nil, err
		}
		return map[string]any{"answer": v}, nil
	}
}

func isYesNo(options []string) bool {
	return len(options) == 2 && strings.EqualFold(options[0], "yes") && strings.EqualFold(options[1], "no")
}

// field asks for one value until the input is valid. ok is false for an
// optional field left empty.
func (a *asker) field(ctx context.Context, f *field) (v any, ok bool, err error) {
	for {
		fmt.Fprint(a.out, f.prompt())
		line, err := a.in.next(ctx)
		if err != nil {
			return nil, false, err
		}
		if a.echo {
			fmt.Fprintln(a.out, line)
		}
		v, ok, err := f.parse(strings.TrimSpace(line))
		if err == nil {
			return v, ok, nil
		}
		fmt.Fprintf(a.out, "  ✗ %v; try again\n", err)
	}
}

// field is one property of a form's JSON schema, or the single answer of
// a yes/no question or a choice. MCP elicitation schemas are flat objects
// of primitive properties: strings (with an optional format, length bounds,
// pattern or enum), numbers, integers, booleans, and arrays of enum values.
type field struct {
	name, title, description string
	typ                      string // "string", "number", "integer", "boolean" or "array"
	format                   string // "email", "uri", "date" or "date-time" for strings
	enum                     []string
	enumTitles               []string // the labels of enum, when the schema names them
	def                      any      // nil: no default
	required                 bool
	minLength, maxLength     *int
	minimum, maximum         *float64
	pattern                  *regexp.Regexp
}

// property is the part of a JSON schema property that field reads.
type property struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Format      string   `json:"format"`
	Enum        []any    `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	OneOf       []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	AnyOf []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"anyOf"`
	Items     *property `json:"items"`
	Default   any       `json:"default"`
	MinLength *int      `json:"minLength"`
	MaxLength *int      `json:"maxLength"`
	Minimum   *float64  `json:"minimum"`
	Maximum   *float64  `json:"maximum"`
	Pattern   string    `json:"pattern"`
}

// parseSchema reads the fields of an object schema in the order its
// properties are written.
func parseSchema(raw json.RawMessage) ([]*field, error) {
	var s struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the question's schema is not a JSON object: %v", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("the question's schema has type %q; this terminal fills in object schemas only", s.Type)
	}
	names, props, err := orderedProperties(s.Properties)
	if err != nil {
		return nil, err
	}
	fields := make([]*field, 0, len(names))
	for i, name := range names {
		f, err := newField(name, props[i], slices.Contains(s.Required, name))
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// orderedProperties decodes a JSON object of properties, keeping the order
// of its keys (a map would lose it, and forms read best in the order the
// tool wrote them).
func orderedProperties(raw json.RawMessage) ([]string, []property, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New(`the question's schema has "properties" that are not a JSON object`)
	}
	var names []string
	var props []property
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("the question's schema: %v", err)
		}
		name, _ := t.(string)
		var p property
		if err := dec.Decode(&p); err != nil {
			return nil, nil, fmt.Errorf("the question's schema: property %q: %v", name, err)
		}
		names, props = append(names, name), append(props, p)
	}
	return names, props, nil
}

func newField(name string, p property, required bool) (*field, error) {
	f := &field{name: name, title: p.Title, description: p.Description, typ: p.Type, format: p.Format,
		required: required, def: p.Default, minLength: p.MinLength, maxLength: p.MaxLength,
		minimum: p.Minimum, maximum: p.Maximum}
	if f.title == "" {
		f.title = name
	}
	choices := p
	if p.Type == "array" {
		if p.Items == nil {
			return nil, fmt.Errorf("field %q is an array without items; this terminal cannot fill it in", name)
		}
		choices = *p.Items
	}
	for _, e := range choices.Enum {
		f.enum = append(f.enum, fmt.Sprint(e))
	}
	if len(choices.EnumNames) == len(f.enum) {
		f.enumTitles = choices.EnumNames
	}
	for _, o := range append(choices.OneOf, choices.AnyOf...) {
		f.enum = append(f.enum, fmt.Sprint(o.Const))
		f.enumTitles = append(f.enumTitles, cmpOr(o.Title, fmt.Sprint(o.Const)))
	}
	if len(f.enumTitles) != len(f.enum) {
		f.enumTitles = nil
	}
	switch p.Type {
	case "", "string":
		f.typ = "string"
	case "number", "integer", "boolean":
	case "array":
		if len(f.enum) == 0 {
			return nil, fmt.Errorf("field %q is an array of free values; this terminal fills in arrays of enum values only", name)
		}
	default:
		return nil, fmt.Errorf("field %q has type %q; this terminal fills in strings, numbers, integers, booleans and enum arrays", name, p.Type)
	}
	if p.Pattern != "" {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, fmt.Errorf("field %q has an invalid pattern %q: %v", name, p.Pattern, err)
		}
		f.pattern = re
	}
	return f, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// prompt is the line asking for f, ending where the input goes.
func (f *field) prompt() string {
	var sb strings.Builder
	sb.WriteString("  " + cmpOr(f.title, f.name))
	if f.description != "" {
		sb.WriteString(" — " + f.description)
	}
	var hints []string
	switch {
	case f.typ == "boolean":
		hints = append(hints, "y/n")
	case len(f.enum) > 0:
		var opts []string
		for i := range f.enum {
			opts = append(opts, fmt.Sprintf("%d: %s", i+1, f.label(i)))
		}
		if f.typ == "array" {
			hints = append(hints, "one or more, separated by commas: "+strings.Join(opts, ", "))
		} else {
			hints = append(hints, strings.Join(opts, ", "))
		}
	case f.format == "date" && strings.Contains(f.description, "YYYY-MM-DD"):
	case f.format == "date":
		hints = append(hints, "YYYY-MM-DD")
	case f.format == "date-time":
		hints = append(hints, "RFC 3339, e.g. 2026-01-02T15:04:05Z")
	case f.format != "":
		hints = append(hints, f.format)
	case f.typ == "number" || f.typ == "integer":
		hints = append(hints, f.typ)
	}
	if f.required {
		hints = append(hints, "required")
	}
	if len(hints) > 0 {
		sb.WriteString(" (" + strings.Join(hints, "; ") + ")")
	}
	if f.def != nil {
		fmt.Fprintf(&sb, " [%s]", defaultText(f.def))
	}
	sb.WriteString(": ")
	return sb.String()
}

func (f *field) label(i int) string {
	if f.enumTitles != nil && f.enumTitles[i] != f.enum[i] {
		return f.enumTitles[i] + " (" + f.enum[i] + ")"
	}
	return f.enum[i]
}

func defaultText(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "y"
		}
		return "n"
	case []any:
		var s []string
		for _, x := range v {
			s = append(s, fmt.Sprint(x))
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

// parse turns the user's input into f's value. An empty input takes the
// default; without one it leaves an optional field out (ok false) and is
// an error for a required one.
func (f *field) parse(in string) (v any, ok bool, err error) {
	if in == "" {
		switch {
		case f.def != nil:
			return f.def, true, nil
		case f.required:
			return nil, false, errors.New("an answer is required")
		default:
			return nil, false, nil
		}
	}
	switch f.typ {
	case "boolean":
		switch strings.ToLower(in) {
		case "y", "yes", "true":
			return true, true, nil
		case "n", "no", "false":
			return false, true, nil
		}
		return nil, false, fmt.Errorf("%q is not y or n", in)
	case "array":
		var out []string
		for _, part := range strings.Split(in, ",") {
			c, err := f.choice(strings.TrimSpace(part))
			if err != nil {
				return nil, false, err
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out, true, nil
	case "number", "integer":
		n, err := strconv.ParseFloat(in, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, false, fmt.Errorf("%q is not a number", in)
		}
		if f.typ == "integer" && n != math.Trunc(n) {
			return nil, false, fmt.Errorf("%q is not a whole number", in)
		}
		if f.minimum != nil && n < *f.minimum {
			return nil, false, fmt.Errorf("%s is less than the minimum %v", in, *f.minimum)
		}
		if f.maximum != nil && n > *f.maximum {
			return nil, false, fmt.Errorf("%s is more than the maximum %v", in, *f.maximum)
		}
		if f.typ == "integer" {
			return int64(n), true, nil
		}
		return n, true, nil
	}
	if len(f.enum) > 0 {
		c, err := f.choice(in)
		return c, err == nil, err
	}
	if n := len([]rune(in)); f.minLength != nil && n < *f.minLength {
		return nil, false, fmt.Errorf("%q is shorter than %d characters", in, *f.minLength)
	} else if f.maxLength != nil && n > *f.maxLength {
		return nil, false, fmt.Errorf("%q is longer than %d characters", in, *f.maxLength)
	}
	if f.pattern != nil && !f.pattern.MatchString(in) {
		return nil, false, fmt.Errorf("%q does not match the pattern %s", in, f.pattern)
	}
	switch f.format {
	case "email":
		if a, err := mail.ParseAddress(in); err != nil || a.Address != in {
			return nil, false, fmt.Errorf("%q is not an email address like name@company.com", in)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, in); err != nil {
			return nil, false, fmt.Errorf("%q is not a date in YYYY-MM-DD form", in)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, in); err != nil {
			return nil, false, fmt.Errorf("%q is not a date and time like 2026-01-02T15:04:05Z", in)
		}
	case "uri":
		if u, err := neturl.Parse(in); err != nil || u.Scheme == "" {
			return nil, false, fmt.Errorf("%q is not an absolute URI like https://example.com", in)
		}
	}
	return in, true, nil
}

// choice returns the enum value the input names: its number in the list,
// the value itself or its label, ignoring case.
func (f *field) choice(in string) (string, error) {
	if n, err := strconv.Atoi(in); err == nil && n >= 1 && n <= len(f.enum) {
		return f.enum[n-1], nil
	}
	for i, e := range f.enum {
		if strings.EqualFold(in, e) || (f.enumTitles != nil && strings.EqualFold(in, f.enumTitles[i])) {
			return e, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices; type its number (1 to %d) or its name", in, len(f.enum))
}
